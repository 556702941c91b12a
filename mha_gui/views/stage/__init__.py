"""The central stage area: the stage bar, every head's heatmaps for the current stage
(built and kept per stage), their titles, hover and right-click actions, and the query strip."""
