"""Small reusable widgets and helpers: the figure widget, a flow layout, literal rich text, a
token list model, and retiring a control at once."""
