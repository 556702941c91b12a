"""The editors of what a user can change: the matrices (X, W^Q, W^K, W^V, W_O, biases) and
the layer's configuration. Every edit goes to the document as an undo command."""
