"""The layer being edited: its configuration (config), numbers (parameters, values,
numbers), presets, the Session value (session_value) and its files (session,
session_codec)."""
