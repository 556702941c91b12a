"""Exports shared by the window and `mha-gui export`: figures (PNG/SVG/PDF), the GIF
walkthrough, LaTeX, the PDF handout. Start at `mha_gui.export.files.export_to`."""

from mha_gui.export.files import SUFFIXES, export_to

__all__ = ["SUFFIXES", "export_to"]
