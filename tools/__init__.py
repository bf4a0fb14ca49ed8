"""The book's build: split, execute, merge, render, publish (``python -m tools <step>``).

``python -m tools build`` runs every step; ``python -m tools --help`` lists them.
"""
