"""The layer statistics dock: parameter count, FLOPs and memory, live."""
