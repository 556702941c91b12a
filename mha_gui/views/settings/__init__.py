"""Display settings (theme, colour map, zoom, values, weights range): the state and its menu."""
