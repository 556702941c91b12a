"""Docked views that explain why a head attends and what it adds, one folder each: the
widget lives here, its figure in mha_gui/export/figures (named in
export/figures/registry.py), and its registration is one `register_view(ViewSpec(...))`
line at the end of its own module (views/window/registry.py lists the modules)."""
