"""Progress bars for loops that take a while, shared by both frameworks.

``progress`` is ``tqdm.auto.tqdm``: a widget in Jupyter and Colab, a line of
text in a terminal. A bar shows up only once its loop has run for
``DELAY_S`` seconds, so quick loops print nothing. ``TQDM_DISABLE`` set in
the environment (to anything but ``''`` or ``'0'``) turns every bar off; the
book's build sets it, so its pages show no bars.
"""

import os

from tqdm.auto import tqdm

from d2l_mini.checks import count

DELAY_S = 2.0


def disabled_by_environment():
    """Whether ``TQDM_DISABLE`` asks for no bars. tqdm reads it itself, but
    its Jupyter bar overrides it with ``disable=False``: we pass it on."""
    return os.environ.get('TQDM_DISABLE', '') not in ('', '0')


def progress(iterable=None, total=None, desc=None, leave=True, **options):
    """A progress bar over ``iterable`` (or one to ``update`` by hand, of
    ``total`` steps), labelled ``desc``; ``leave=False`` removes it when the
    loop ends. Other keyword arguments go to ``tqdm.auto.tqdm``."""
    if desc is not None and not isinstance(desc, str):
        raise TypeError(f'desc must be a str or None, got {desc!r}')
    if total is not None:
        count('total', total)
    options.setdefault('delay', DELAY_S)
    options.setdefault('disable', disabled_by_environment())
    return tqdm(iterable, total=total, desc=desc, leave=leave, **options)
