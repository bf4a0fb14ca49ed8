"""d2l_mini: the small library that every section of the book imports.

Use ``from d2l_mini import torch as d2l`` or ``from d2l_mini import jax as d2l``.
"""
