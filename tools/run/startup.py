"""What the book's build sets up in each of its kernels before the first cell: the
build's needs, not a reader's (tools/run/kernel.py has each kernel run this file in a
namespace of its own, ``STARTUP_LINE``; it imports nothing of tools/ and leaves no name in
the notebook's).

After every cell, before matplotlib-inline shows that cell's figures, the figure formats
are selected again: SVG, which the HTML and the PDFs show, and a PNG beside it at twice
the resolution ('retina'), which a downloaded notebook shows before it is trusted
(Jupyter draws no SVG in an untrusted notebook). Then each figure's text/plain becomes
its ``d2l_mini.plotting.describe`` text, the HTML's alt text: selecting formats drops
every other formatter of a figure, so it comes second. The callback is registered here,
before any cell imports pyplot, so it runs before matplotlib-inline's own.
"""

import sys


def book_figures():
    """After a cell: SVG and PNG, and the figures' alt text (once pyplot is in use)."""
    if 'matplotlib.pyplot' not in sys.modules:
        return
    from IPython import get_ipython
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    from d2l_mini.plotting import describe_figures

    set_matplotlib_formats('svg', 'retina')
    describe_figures(get_ipython())


if __name__ == '__main__':  # in the kernel
    from IPython import get_ipython

    get_ipython().events.register('post_execute', book_figures)
