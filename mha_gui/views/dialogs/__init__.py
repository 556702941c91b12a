"""Dialogs: open a real model, the formulas of every stage, the identity windows."""
