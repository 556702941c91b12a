"""The neuron dock: why the followed query attends to a key, one dimension at a time."""
