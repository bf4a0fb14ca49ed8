"""Sphinx extension for the book's HTML, ``tools.site.render_ext`` in _config.yml.

tools/site/render.py puts the repository on Sphinx's path, so that Sphinx imports this
module from the tools that build the site. What the build's other steps need too (the
repository, the downloads' names, Colab's URLs) comes from tools/facts.py.

- Every page built from a notebook gets, under its title, links to its PyTorch and JAX
  notebooks: a download of the split notebook that tools/site/render.py copied to
  ``notebooks/<framework>/<page>.ipynb``, and "Open in Colab" on the branch named by the
  ``notebooks_branch`` setting of the repository in ``repository.url``. Each framework's
  links carry the class ``fw-only-<framework>``, so that the framework style shows only
  those of the selected tab. Pages written in Markdown get no links.
- The frameworks (names and labels) come from the ``book_frameworks`` setting, which
  tools/site/render.py writes into the site's _config.yml from tools/frameworks.py. Every page
  gets them as ``window.bookFrameworks`` before frameworks.js runs, and
  ``_static/frameworks-table.css`` holds the style rules that name a framework: hide the
  other frameworks' cells and prose, label both versions when JavaScript is off.
- MathJax 3 is copied from the sphinx-mathjax-offline package into ``_static/mathjax``,
  which ``mathjax_path`` points at, so that the book reads without a network.
- Image outputs of notebooks get their output's ``text/plain`` as alt text when it
  describes the image (d2l_mini.plotting makes a figure's text/plain say what it plots),
  and a generic one when it is only a Python repr (``<Figure size ...>``).
- Side by side: the code of each pair of twin cells is laid out at build time for the tab
  script's "Both" view (tools/site/twins.py: its Pygments formatter and post-transform).
- Accessibility of the theme's HTML: each collapsible section of the sidebar's table of
  contents gets a name (its ``<summary>`` holds only an icon); the bibliography's
  entries are list items of its ``role="list"`` and myst-nb's toggles of hidden cell
  sources are named by their visible text (both through the HTML of their nodes).
- The directive ``{book-downloads}`` links each framework's PDF and notebooks' zip
  (``downloads/<repo>-<framework>.pdf`` and ``-notebooks.zip``), which the build makes
  after the HTML (tools/site/pdf.py, tools/site/bundle.py) and puts into the HTML folder.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from bs4 import BeautifulSoup, Tag
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.fileutil import copy_asset
from sphinx.util.osutil import relative_uri

from tools import facts
from tools.site import twins

if TYPE_CHECKING:
    from myst_nb.sphinx_ import HideCodeCellNode
    from sphinx.writers.html5 import HTML5Translator

logger = logging.getLogger(__name__)

TABLE_CSS = 'frameworks-table.css'
MATHJAX_DIST = 'sphinx-mathjax-offline'
MATHJAX_ENTRY = 'tex-chtml.js'
PYTHON_REPR = re.compile(r'<.*>', re.DOTALL)
UNDESCRIBED_IMAGE = 'Image output of the code cell'


def github_repo(app: Sphinx) -> str:
    """'owner/name' of the repository that the theme's options name (repository.url)."""
    try:
        return facts.github_repo(app.config.html_theme_options.get('repository_url'))
    except facts.NotGitHub as error:
        raise ExtensionError(str(error)) from None


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


def split_notebooks_present(app: Sphinx, docname: str) -> list[str]:
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
    missing = split_notebooks_present(app, docname)
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


def frameworks(config: Config) -> list[tuple[str, str]]:
    """``[(name, label)]`` of the book's frameworks, in tab order."""
    table = config.book_frameworks
    if not table:
        raise ExtensionError(
            'book_frameworks is not set: build the site with `python -m tools render`, '
            'which writes it into _config.yml from tools/frameworks.py'
        )
    return [(row['name'], row['label']) for row in table]


NO_SCRIPT = 'html:not(.fw-js)'  # the page without JavaScript: every version shows
SIDE_BY_SIDE = 'html.fw-side'  # the tab script's "Both" on a wide screen
LABEL_BADGE = """ {
  display: inline-block; margin-bottom: 0.2rem; padding: 0 0.5rem; font-size: 0.8rem;
  font-weight: 600; border-radius: 0.25rem;
  color: var(--fw-on-accent); background: var(--fw-accent);
}"""


def framework_labels_css(table: list[tuple[str, str]], shown: str) -> list[str]:
    """Rules that label each framework's cells, prose and values where the page
    `shown` (a selector of <html>) shows every framework."""
    names = [name for name, _ in table]
    rules = []
    for i, (name, label) in enumerate(table):
        rules.append(
            f'{shown} div.cell.tag_{name}::before, '
            f'{shown} div.fw-only-{name}::before {{ content: {json.dumps(label)}; }}'
        )
        value_label = (' / ' if i else '') + f'{label}: '
        rules.append(
            f'{shown} .fw-value.fw-only-{name}::before {{ content: {json.dumps(value_label)}; }}'
        )
    rules.append(', '.join(f'{shown} div.cell.tag_{name}::before' for name in names) + LABEL_BADGE)
    rules.append(
        ', '.join(f'{shown} div.fw-only-{name}::before' for name in names)
        + ' { display: block; font-size: 0.8rem; font-weight: 600; }'
    )
    return rules


def frameworks_css(table: list[tuple[str, str]]) -> str:
    """The style rules that name a framework, for ``[(name, label)]``."""
    names = [name for name, _ in table]
    others = [
        (shown, f'{element}{other}')
        for shown in names
        for other in names
        if other != shown
        for element in ('div.cell.tag_', '.fw-only-')
    ]
    grid = f'repeat({len(names)}, minmax(0, 1fr))'
    columns = [f'{SIDE_BY_SIDE} .fw-group {{ grid-template-columns: {grid}; }}'] + [
        f'{SIDE_BY_SIDE} .fw-group > div.cell.tag_{name} {{ grid-column: {i + 1}; }}'
        for i, name in enumerate(names)
    ]
    rules = [
        "/* One framework shown (fw-<name>): the others' cells and prose hidden, on paper too. */",
        ',\n'.join(f'html.fw-{shown}:not(.fw-side) {hidden}' for shown, hidden in others)
        + ' { display: none; }',
        '@media print {',
        ',\n'.join(f'html.fw-{shown} {hidden}' for shown, hidden in others)
        + ' { display: none; }',
        '}',
        '/* Without JavaScript every version shows, labelled. */',
        *framework_labels_css(table, NO_SCRIPT),
        '/* Side by side: a column for each framework, labelled; prose shows every version. */',
        '@media screen {',
        *columns,
        *framework_labels_css(table, SIDE_BY_SIDE),
        '}',
    ]
    return (
        "/* Generated by render_ext.py from the book's framework table. */\n"
        + '\n'.join(rules)
        + '\n'
    )


def add_framework_table(app: Sphinx) -> None:
    table = frameworks(app.config)
    script = (
        'window.bookFrameworks = '
        + json.dumps([{'name': name, 'label': label} for name, label in table])
        + ';'
    )
    app.add_js_file(None, body=script, priority=200)  # before frameworks.js (html_js_files: 800)
    app.add_css_file(TABLE_CSS)


def write_framework_css(app: Sphinx, exc: Exception | None) -> None:
    if exc is None and app.builder.format == 'html':
        target = Path(app.outdir, '_static', TABLE_CSS)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(frameworks_css(frameworks(app.config)), encoding='utf-8')


def mathjax_source() -> Path:
    try:
        dist = metadata.distribution(MATHJAX_DIST)
    except metadata.PackageNotFoundError:
        raise ExtensionError(
            f'the book serves MathJax from the {MATHJAX_DIST} package: '
            'pip install -r requirements.txt'
        ) from None
    source = Path(dist.locate_file(f'{MATHJAX_DIST}/static/mathjax'))
    if not (source / MATHJAX_ENTRY).is_file():
        raise ExtensionError(
            f'{MATHJAX_DIST} is installed but {source / MATHJAX_ENTRY} is missing'
        )
    return source


def mathjax_unused(relpath: str) -> bool:
    """The other combined builds and the SVG output, which tex-chtml.js never loads."""
    if '/' not in relpath:
        return relpath.endswith('.js') and relpath != MATHJAX_ENTRY
    return relpath == 'output/svg.js' or relpath.startswith('output/svg/')


def copy_mathjax(app: Sphinx, exc: Exception | None) -> None:
    if exc is None and app.builder.format == 'html':
        target = Path(app.outdir, '_static', 'mathjax')
        copy_asset(str(mathjax_source()), str(target), excluded=mathjax_unused)


def check_mathjax(app: Sphinx, config: Config) -> None:
    if Path(config.mathjax_path).name == MATHJAX_ENTRY and '://' not in config.mathjax_path:
        mathjax_source()


def output_description(bundle: nodes.Element) -> str | None:
    """The text/plain of a notebook output's mime bundle, unless it is a bare repr."""
    for child in bundle.children:
        if child.get('mime_type') == 'text/plain':
            text = ' '.join(child.astext().split())
            return None if PYTHON_REPR.fullmatch(text) else text or None
    return None


class ImageOutputAlt(SphinxPostTransform):
    """Alt text for the images of notebook outputs, from the text/plain of the output.

    Runs before myst-nb's SelectMimeType (priority 4), which keeps only the richest type
    of each output's mime bundle and so drops the text/plain.
    """

    default_priority = 3

    def run(self, **kwargs: object) -> None:
        for bundle in self.document.findall(nodes.container):
            if bundle.get('nb_element') != 'mime_bundle':
                continue
            alt = output_description(bundle) or UNDESCRIBED_IMAGE
            for image in bundle.findall(nodes.image):
                image.setdefault('alt', alt)


def name_toc_toggles(toctree: Tag | str) -> Tag | str:
    """Name each sidebar <summary> that holds only its chevron icon after the entry it
    expands. `toctree`: the theme's toctree, a BeautifulSoup (changed in place) or HTML."""
    soup = toctree if isinstance(toctree, Tag) else BeautifulSoup(toctree or '', 'html.parser')
    for summary in soup.select('li > details > summary'):
        link = summary.parent.find_previous_sibling('a')
        if summary.get_text(strip=True) or summary.has_attr('aria-label') or link is None:
            continue
        summary['aria-label'] = f'Sections of {link.get_text(" ", strip=True)}'
    return toctree if isinstance(toctree, Tag) else str(soup)


def with_named_toc_toggles(generate: Callable[..., str]) -> Callable[..., str]:
    def generate_named(*args: object, **kwargs: object) -> str:
        return name_toc_toggles(generate(*args, **kwargs))

    return generate_named


def name_theme_toc_toggles(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: nodes.document | None
) -> None:
    """The sidebar's toggles get their names as the theme's toctree function writes them.

    pydata-sphinx-theme (0.17) makes each collapsible entry of the sidebar a <details>
    whose <summary> holds only a presentational chevron (its toctree.py, since
    pydata/pydata-sphinx-theme#1582): a control without a name, which axe-core's
    summary-name rule (dequelabs/axe-core#4510) reports. No template or option of the
    theme names it, so the function it puts into the page context is wrapped.
    """
    if 'generate_toctree_html' in context:
        context['generate_toctree_html'] = with_named_toc_toggles(context['generate_toctree_html'])


def visit_citation(self: HTML5Translator, node: nodes.citation) -> None:
    """docutils' citation, as a list item of the citation list.

    docutils (0.21, writers/_html_base.py) gives each entry the role doc-biblioentry,
    which DPUB-ARIA 1.1 deprecates (w3c/dpub-aria#22): it is no valid child of the
    ``role="list"`` around the entries, so the list would have no items. The entry is a
    listitem instead; depart_citation stays docutils'.
    """
    if not isinstance(node.previous_sibling(), type(node)):
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, 'div', classes=[node.tagname], role='listitem'))


def visit_hidden_cell(self: HTML5Translator, node: HideCodeCellNode) -> None:
    """myst-nb's toggle of a hidden cell, named by its visible text.

    myst-nb (1.4, sphinx_.py) labels the toggle's <summary> "Toggle hidden content",
    which does not hold its visible text ("Show code cell source"): a name that must
    contain the visible label (WCAG 2.5.3). Without the label the name is that text;
    everything else is myst-nb's markup, and its depart_HideCellInput closes it.
    """
    classes = ' '.join(node['classes'])
    self.body.append(f'<details class="admonition hide {classes}">\n')
    self.body.append('<summary>\n')
    for state, prompt in (('collapsed', node['prompt_show']), ('expanded', node['prompt_hide'])):
        self.body.append(f'<p class="{state} admonition-title">{html.escape(prompt)}</p>\n')
    self.body.append('</summary>\n')


# Side by side: twin cells' lines aligned at build time.


def setup(app: Sphinx) -> dict:
    # Here, not with the module, which the build's other steps import for its names.
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    app.add_config_value('notebooks_branch', facts.NOTEBOOKS_BRANCH, 'html', types=[str])
    app.add_config_value('book_frameworks', [], 'html', types=[list])
    app.connect('builder-inited', add_framework_table)
    app.connect('build-finished', write_framework_css)
    app.connect('config-inited', check_mathjax)
    app.connect('doctree-resolved', add_notebook_links)
    app.connect('build-finished', copy_mathjax)
    # After the theme put its functions into the page context (default priority 500).
    app.connect('html-page-context', name_theme_toc_toggles, priority=900)
    app.add_post_transform(ImageOutputAlt)
    # The HTML of these nodes, in place of docutils' and myst-nb's (myst_nb is an
    # extension listed before this one, so this registration comes last and wins).
    app.add_node(nodes.citation, override=True, html=(visit_citation, None))
    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_HideCellInput))
    app.connect('builder-inited', twins.use_twin_rows_formatter)
    app.add_post_transform(twins.AlignTwinCells)
    app.add_directive('book-downloads', BookDownloads)
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
