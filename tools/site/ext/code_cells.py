"""The HTML of code cells' sources: one Pygments formatter that adds, at build time, the
links of library names (tools/site/ext/library_links.py) and the rows of twin cells for
the side-by-side view (tools/site/twins.py), and the post-transform that gives each pair
of twin cells its rows.

Both ride on the formatter options that a post-transform puts into a literal block's
``highlight_args``: the rows (and marked tokens) of a twin, the targets of the names a
cell uses. Lines are linked first and laid out after, so that the marks of differing
tokens nest with the links as with Pygments' own spans.
"""

from __future__ import annotations

from collections.abc import Iterator

from pygments.formatters import HtmlFormatter
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from tools.site import twins
from tools.site.ext import library_links


class CodeCellFormatter(twins.TwinRowsFormatter):
    """Pygments' HTML formatter, linking library names (the ``d2l_links`` option) and
    laying out a twin cell's lines (``fw_rows``, ``fw_marks``)."""

    def wrap(self, source: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        links = self.options.get(library_links.LINKS_OPTION)
        if links:
            source = (
                (kind, library_links.link_library_names(line, links) if kind == 1 else line)
                for kind, line in source
            )
        return super().wrap(source)


def use_code_cell_formatter(app: Sphinx) -> None:
    highlighter = getattr(app.builder, 'highlighter', None)
    if app.builder.format != 'html' or highlighter is None:
        return
    if highlighter.formatter is not HtmlFormatter:
        raise ExtensionError(
            f'the book writes code cells with its own Pygments formatter '
            f'(tools/site/ext/code_cells.py), but another extension set '
            f'{highlighter.formatter!r}: remove one of them'
        )
    highlighter.formatter = CodeCellFormatter


def setup(app: Sphinx) -> dict:
    app.setup_extension('tools.site.ext.settings')
    app.setup_extension('tools.site.ext.library_links')
    app.connect('builder-inited', use_code_cell_formatter)
    app.add_post_transform(twins.AlignTwinCells)
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
