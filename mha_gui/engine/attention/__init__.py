"""The forward pass: forward (the validating front door), trace (the Trace and its
buffers), steps (one function per step), scheduler (large layers on every core),
incremental (an edit recomputes only what it reaches), validation, buffers, row_softmax
and rope."""
