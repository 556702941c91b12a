"""Qt views of the document: stage bar, attention heatmaps, query strip."""
