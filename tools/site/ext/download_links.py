"""The ``{book-downloads}`` directive: links to each framework's PDF and notebooks' zip.

The files (``downloads/<repo>-<framework>.pdf`` and ``-notebooks.zip``) are made after
the HTML (tools/site/pdf.py, tools/site/bundle.py) and put into the HTML folder by
tools/site/downloads.py; their names come from tools/facts.py. Other builders than
HTML get nothing.
"""

from __future__ import annotations

import html

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.osutil import relative_uri

from tools import facts
from tools.site.ext.settings import frameworks, github_repo


def downloads_html(app: Sphinx, docname: str) -> str:
    """One line per framework: its PDF and its notebooks' zip."""
    repo = github_repo(app).split('/')[1]
    page_uri = app.builder.get_target_uri(docname)
    lines = []
    for framework, label in frameworks(app.config):
        links = []
        for kind, (_, text) in facts.DOWNLOADS.items():
            name = facts.download_name(repo, framework, kind)
            href = relative_uri(page_uri, f'{facts.DOWNLOADS_DIR}/{name}')
            links.append(f'<a href="{html.escape(href)}" download="{name}">{text}</a>')
        lines.append(
            f'<li><span class="book-downloads-label">{label}:</span> {" · ".join(links)}</li>'
        )
    return (
        '<div class="book-downloads"><p>Download the book with the code of one framework, '
        f'or all its notebooks at once:</p><ul>{"".join(lines)}</ul></div>\n'
    )


class BookDownloads(SphinxDirective):
    """``{book-downloads}``: links to the book's PDFs and notebook zips (in the HTML)."""

    def run(self) -> list[nodes.Node]:
        if self.env.app.builder.format != 'html':
            return []
        return [nodes.raw('', downloads_html(self.env.app, self.env.docname), format='html')]


def setup(app: Sphinx) -> dict:
    app.setup_extension('tools.site.ext.settings')
    app.add_directive('book-downloads', BookDownloads)
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
