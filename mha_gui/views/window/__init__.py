"""The main window and what hangs off it: menus and their actions (file, edit, export),
the view registry the docks announce themselves in, autosave and the application's look."""
