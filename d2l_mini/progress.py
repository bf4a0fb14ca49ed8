"""Progress bars for loops that take a while, shared by both frameworks.

``progress`` makes a tqdm text bar. Outside a Jupyter kernel it is tqdm's own, on
stderr. In a kernel (JupyterLab with or without its widget extension, the classic
Notebook, Colab, VS Code, nbclient and nbconvert) the bar writes its line into one
display output, which it updates in place (``update_display_data``, which every front
end supports and nbconvert saves in its final state): no widget, which a front end
without ipywidgets' extension shows as frozen text, and no stderr stream, which a
front end cannot overwrite in place and draws as a strip. A bar that ends keeps its
last line (``leave=True``) or empties its output (``leave=False``); it is redrawn at
most every ``TEXT_REFRESH_S`` seconds, each redraw being a message to the front end.
Of bars inside one another in a kernel, only the outermost shows: every inner loop
(``train_lm`` inside a sweep) would leave an output of its own. A bar shows up only
once its loop has run for ``DELAY_S`` seconds, so quick loops print nothing.
``TQDM_DISABLE`` set in the environment (to anything but ``''`` or ``'0'``) turns
every bar off; the book's build sets it, so its pages show no bars.
IPython is imported only in a kernel, where it is loaded already.
"""

import os
import re
import sys
import weakref

from tqdm import std

from d2l_mini.checks import count

DELAY_S = 2.0
TEXT_REFRESH_S = 1.0
_kernel_bars = weakref.WeakSet()  # the bars made in a kernel (closed ones disabled)
_CURSOR_MOVES = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')  # tqdm's moves between nested bars


def disabled_by_environment():
    """Whether ``TQDM_DISABLE`` asks for no bars (passed on explicitly, so that a
    ``disable=`` of the caller's still wins)."""
    return os.environ.get('TQDM_DISABLE', '') not in ('', '0')


def in_jupyter_kernel():
    """Whether this code runs in a Jupyter kernel (the test tqdm.auto makes)."""
    ipython = sys.modules.get('IPython')
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and 'IPKernelApp' in shell.config


def bar_class():
    """The class of the bars ``progress`` makes: tqdm's text bar, everywhere."""
    return std.tqdm


class DisplayLine:
    """A file for a tqdm bar in a Jupyter kernel: the line the bar writes (``'\\r'``
    and the line, padded with spaces) is shown as ``text/plain`` in one display
    output, made at its first visible line and updated in place after that. A line
    that the bar ends (``'\\n'``, when it closes with ``leave=True``) stays shown; a
    line it blanks (when it closes with ``leave=False``) empties the output."""

    encoding = 'utf-8'  # tqdm then draws its bar with block characters

    def __init__(self):
        self.handle = None  # the display output, once there is a line to show
        self.shown = ''
        self._line = ''  # the line being written, after its last carriage return

    def write(self, text):
        *ended, current = _CURSOR_MOVES.sub('', str(text)).split('\n')
        if ended:  # an ended line stays shown; the next one starts empty
            self._line = ''
        if current:
            self._line = (self._line + current).rsplit('\r', 1)[-1]
            self._show(self._line.rstrip())
        return len(text)

    def flush(self):
        pass

    def _show(self, line):
        if line == self.shown:
            return
        data = {'text/plain': line}
        if self.handle is None:
            from IPython.display import display

            self.handle = display(data, raw=True, display_id=True)
        else:
            self.handle.update(data, raw=True)
        self.shown = line


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
    in_kernel = in_jupyter_kernel()
    if in_kernel:
        options.setdefault('file', DisplayLine())
        options.setdefault('mininterval', TEXT_REFRESH_S)
        if any(not bar.disable for bar in _kernel_bars):
            options['disable'] = True  # an inner bar: the outer one shows
    bar = bar_class()(iterable, total=total, desc=desc, leave=leave, **options)
    if in_kernel:
        _kernel_bars.add(bar)
    return bar
