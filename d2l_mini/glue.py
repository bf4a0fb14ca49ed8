"""Values that the book's prose quotes from a run, the same for both frameworks.

A cell calls ``d2l.glue('swiglu_gap', gap)``, and the prose writes, where the number
belongs::

    {value}`swiglu_gap:.2f`

The book's build reads the
value from the executed notebook of each framework, so that the PyTorch page shows
PyTorch's number and the JAX page JAX's.  In Jupyter the call shows nothing.
"""

import numbers
import re

MIME_TYPE = 'application/vnd.d2l-mini.value+json'
NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z')


def plain_value(value):
    """``value`` as a JSON number, string or bool: framework scalars (0-d
    arrays and tensors) become Python numbers through ``.item()``."""
    if getattr(value, 'ndim', None) == 0:
        value = value.item()
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(
        f'value must be a number, a string or a scalar array, got {type(value).__name__}'
    )


def glue(name, value):
    """Record ``value`` under ``name`` for the prose of the book."""
    if not isinstance(name, str):
        raise TypeError(f'name must be a str, got {type(name).__name__}')
    if not NAME.match(name):
        raise ValueError(f'name must be a Python identifier, got {name!r}')
    try:
        from IPython.display import display
    except ImportError:  # plain Python, where there is no prose to fill in
        return
    display({MIME_TYPE: {'name': name, 'value': plain_value(value)}}, raw=True)
