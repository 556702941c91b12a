"""Figures of the docked views, drawn with QPainter on any paint device (screen, PNG, SVG,
PDF): the same code paints the dock on screen and the exported file. Imports no widgets."""
