"""Links under the title of every page built from a notebook to its PyTorch and its JAX
notebook.

Each framework gets a download of the split notebook that tools/site/render.py copied to
``notebooks/<framework>/<page>.ipynb`` (served from ``html_extra_path``) and "Open in
Colab" on the branch named by the ``notebooks_branch`` setting of the repository in
``repository.url``. Each framework's links carry the class ``fw-only-<framework>``, so
that the framework style shows only those of the selected tab. Pages written in
Markdown get no links.
"""

from __future__ import annotations

import html
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.osutil import relative_uri

from tools import facts
from tools.site.ext.settings import frameworks, github_repo

logger = logging.getLogger(__name__)


def notebook_links_html(app: Sphinx, docname: str) -> str:
    repo = github_repo(app)
    page_uri = app.builder.get_target_uri(docname)
    parts = []
    for framework, label in frameworks(app.config):
        download = relative_uri(page_uri, f'{facts.NOTEBOOKS_DIR}/{framework}/{docname}.ipynb')
        colab = facts.colab_url(repo, app.config.notebooks_branch, framework, docname)
        name = f'{Path(docname).name}.ipynb'
        parts.append(
            f'<span class="fw-notebook fw-only-{framework}" data-framework="{framework}">'
            f'<span class="fw-notebook-label">{label} notebook:</span> '
            f'<a class="fw-download" href="{html.escape(download)}" '
            f'download="{html.escape(name)}">'
            f'download</a> · '
            f'<a class="fw-colab" href="{html.escape(colab)}" target="_blank" rel="noopener">'
            f'open in Colab</a></span>'
        )
    return '<div class="fw-notebooks">' + ''.join(parts) + '</div>\n'


def missing_split_notebooks(app: Sphinx, docname: str) -> list[str]:
    """The page's split notebooks that no folder of ``html_extra_path`` holds."""
    extra_dirs = [Path(app.srcdir, path) for path in app.config.html_extra_path]
    missing = []
    for framework, _ in frameworks(app.config):
        relpath = Path(facts.NOTEBOOKS_DIR, framework, f'{docname}.ipynb')
        if not any((extra / relpath).is_file() for extra in extra_dirs):
            missing.append(relpath.as_posix())
    return missing


def add_notebook_links(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != 'html':
        return
    if Path(app.env.doc2path(docname)).suffix != '.ipynb':
        return
    missing = missing_split_notebooks(app, docname)
    if missing:
        logger.warning(
            'no split notebook to offer for %s: %s is not in html_extra_path',
            docname,
            ', '.join(missing),
            location=docname,
        )
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    raw = nodes.raw('', notebook_links_html(app, docname), format='html')
    if section is not None and section.children and isinstance(section[0], nodes.title):
        section.insert(1, raw)
    else:
        doctree.insert(0, raw)


def setup(app: Sphinx) -> dict:
    app.setup_extension('tools.site.ext.settings')
    app.connect('doctree-resolved', add_notebook_links)
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
