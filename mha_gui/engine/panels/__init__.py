"""The seven stages and their panels: stages (the catalogue: panels, operands, FLOPs,
growth), panel_kinds (what a panel shows and which edits reach it), notation,
colour_scale, stage_panels (the one description the window, figures, LaTeX and tooltips
read), stage_data, and the numbers of `mha-gui info` (stats, info)."""
