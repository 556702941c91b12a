"""The exercise dock: hide cells of a stage, let a student type them, grade the answers."""
