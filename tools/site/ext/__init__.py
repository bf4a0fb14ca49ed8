"""The modules of the book's Sphinx extension, one job each; tools/site/render_ext.py
sets them all up (see its docstring for the list)."""
