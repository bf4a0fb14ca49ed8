"""Progress bars for loops that take a while, shared by both frameworks.

``progress`` makes a tqdm bar: tqdm's widget in a Jupyter kernel that has ipywidgets
(Colab, JupyterLab), and tqdm's text bar elsewhere, which in a notebook is a single
line that overwrites itself, redrawn at most every ``TEXT_REFRESH_S`` seconds (of bars
inside one another there, only the outermost shows). Unlike
``tqdm.auto``, it warns about nothing when ipywidgets is missing. A bar shows up only
once its loop has run for ``DELAY_S`` seconds, so quick loops print nothing.
``TQDM_DISABLE`` set in the environment (to anything but ``''`` or ``'0'``) turns
every bar off; the book's build sets it, so its pages show no bars.
"""

import importlib.util
import os
import sys
import weakref

from tqdm import std

from d2l_mini.checks import count

DELAY_S = 2.0
TEXT_REFRESH_S = 1.0
_text_bars = weakref.WeakSet()  # the text bars made in a notebook (closed ones disabled)


def disabled_by_environment():
    """Whether ``TQDM_DISABLE`` asks for no bars. tqdm reads it itself, but
    its Jupyter bar overrides it with ``disable=False``: we pass it on."""
    return os.environ.get('TQDM_DISABLE', '') not in ('', '0')


def in_jupyter_kernel():
    """Whether this code runs in a Jupyter kernel (the test tqdm.auto makes)."""
    ipython = sys.modules.get('IPython')
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and 'IPKernelApp' in shell.config


def bar_class():
    """tqdm's widget bar in a Jupyter kernel with ipywidgets, its text bar elsewhere."""
    if in_jupyter_kernel() and importlib.util.find_spec('ipywidgets') is not None:
        from tqdm.notebook import tqdm

        return tqdm
    return std.tqdm


def progress(iterable=None, total=None, desc=None, leave=True, **options):
    """A progress bar over ``iterable`` (or one to ``update`` by hand, of
    ``total`` steps), labelled ``desc``; ``leave=False`` removes it when the
    loop ends. Other keyword arguments go to the tqdm bar."""
    if desc is not None and not isinstance(desc, str):
        raise TypeError(f'desc must be a str or None, got {desc!r}')
    if total is not None:
        count('total', total)
    options.setdefault('delay', DELAY_S)
    options.setdefault('disable', disabled_by_environment())
    tqdm = bar_class()
    text_in_notebook = tqdm is std.tqdm and in_jupyter_kernel()
    if text_in_notebook:
        # Each redraw of a text bar is a message to the notebook: a few, not hundreds.
        options.setdefault('mininterval', TEXT_REFRESH_S)
        # A notebook cannot move its cursor up, so a bar inside another (train_lm inside
        # a sweep) would print a line at every redraw: only the outer one shows.
        if any(not bar.disable for bar in _text_bars):
            options['disable'] = True
    bar = tqdm(iterable, total=total, desc=desc, leave=leave, **options)
    if text_in_notebook:
        _text_bars.add(bar)
    return bar
