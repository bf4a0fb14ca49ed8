"""Progress bars for loops that take a while, shared by both frameworks.

``progress`` is ``tqdm.auto.tqdm``: a widget in Jupyter and Colab, a line of
text in a terminal. A bar shows up only once its loop has run for
``DELAY_S`` seconds, so quick loops print nothing. ``TQDM_DISABLE=1`` in the
environment (set before the first import of d2l_mini) turns every bar off;
the book's build does that, so its pages show no bars.
"""
from tqdm.auto import tqdm

DELAY_S = 2.0


def progress(iterable=None, total=None, desc=None, leave=True, **options):
    """A progress bar over ``iterable`` (or one to ``update`` by hand, of
    ``total`` steps), labelled ``desc``; ``leave=False`` removes it when the
    loop ends. Other keyword arguments go to ``tqdm.auto.tqdm``."""
    if desc is not None and not isinstance(desc, str):
        raise TypeError(f'desc must be a str or None, got {desc!r}')
    if total is not None and (isinstance(total, bool)
                              or not isinstance(total, int) or total < 0):
        raise ValueError(f'total must be an int >= 0 or None, got {total!r}')
    options.setdefault('delay', DELAY_S)
    return tqdm(iterable, total=total, desc=desc, leave=leave, **options)
