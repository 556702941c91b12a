"""mha-gui: a desktop simulator of multi-head attention for teaching."""

__version__ = "0.1.0"
