"""A small search backend over the Python standard library's help, evaluated online with joust."""
