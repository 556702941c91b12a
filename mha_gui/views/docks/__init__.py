"""Docked views that explain why a head attends and what it adds, one folder each: the
widget lives here, its figure in mha_gui/export/figures, its registration in the module
itself (views/window/registry.py lists the modules)."""
