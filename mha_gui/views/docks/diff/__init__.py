"""The snapshot dock: pin the current numbers, then see now − snapshot for the stage shown."""
