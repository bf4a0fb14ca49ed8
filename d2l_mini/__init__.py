"""d2l_mini: the small library that every section of the book imports.

Use ``from d2l_mini import torch as d2l`` or ``from d2l_mini import jax as d2l``;
each imports only its own framework. Framework-free helpers live in
``d2l_mini.data`` (the Time Machine corpus, its cache folder, the vocabulary and
the windows), ``d2l_mini.plotting`` (``plot``, ``check_shape``) and
``d2l_mini.glue`` (``glue``, values that the book's prose quotes); both framework
modules re-export them.
"""
