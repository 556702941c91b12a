"""The train dock: gradient descent on one head's W^Q/W^K towards a target pattern."""
