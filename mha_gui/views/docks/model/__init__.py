"""The model dock: every layer × head of an opened real model, computed off the UI thread."""
