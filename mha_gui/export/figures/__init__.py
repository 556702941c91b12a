"""Every view's figure, drawn with QPainter on any paint device (screen, PNG, SVG, PDF):
the same code paints a dock on screen and the exported file. registry.py names them for
`mha-gui export --view NAME`. Imports no widgets and nothing of mha_gui.views."""
