"""The token-lines dock: which keys each query reads, every head at once."""
