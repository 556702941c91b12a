"""Accessibility: what a screen reader and a keyboard-only user get.

- `heatmap_table.py` — each heatmap panel as an accessible table of cells (name, value,
  worked formula), served to Qt's accessibility layer through QAccessible.installFactory;
- `heatmap_cursor.py` — the keyboard cell cursor over a canvas of heatmaps, whose moves
  the accessible focus follows;
- `heatmap_access.py` — what ties both to a stage's canvas (the one hook the stage uses)
  and describes its panels (tokens, blocked pairs, switched-off heads);
- `panes.py` — F6 / Shift+F6 between the panes, and names for the window's containers.
"""
