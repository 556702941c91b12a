"""The contributions dock: what each head adds to the output, and switches to turn heads off."""
