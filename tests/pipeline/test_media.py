"""Prose for some media only: ``web-only`` (the HTML page), ``notebook-only`` (the
notebooks), ``print-only`` (the PDFs), one class per medium that shows it
(book/_static/media.css, tools/source/myst.py, tools/site/book_html.py); and notebooks
that speak of what a notebook reader sees, not of the page's tabs and hidden cells."""

import re

import pytest
import yaml
from bs4 import BeautifulSoup

from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.site import book_html
from tools.source.myst import References
from tools.source.sections import find_sections, read_section
from tools.source.split import build_notebook

MEDIA_CSS = Layout().book / '_static' / 'media.css'
# Elements marked for media, by their classes, and whether each medium shows them.
MARKED = {
    'web-only': {'screen': True, 'browser print': False, 'pdf': False},
    'notebook-only': {'screen': False, 'browser print': False, 'pdf': False},
    'print-only': {'screen': False, 'browser print': False, 'pdf': True},
    'web-only print-only': {'screen': True, 'browser print': True, 'pdf': True},
    'notebook-only print-only': {'screen': False, 'browser print': False, 'pdf': True},
    'unmarked': {'screen': True, 'browser print': True, 'pdf': True},
}


def hidden_selectors(css: str) -> dict[str, list[str]]:
    """The selectors of the rules that hide (``display: none``), on screen and in print:
    the top-level rules apply to both, those in ``@media print`` to print."""
    css = re.sub(r'/\*.*?\*/', '', css, flags=re.S)
    found = {'screen': [], 'print': []}
    printed = re.search(r'@media\s+print\s*\{(?P<body>(?:[^{}]|\{[^{}]*\})*)\}', css)
    top = css.replace(printed.group(0), '') if printed else css
    for where, text in (('top', top), ('print', printed['body'] if printed else '')):
        for selectors, body in re.findall(r'([^{}]+)\{([^{}]*)\}', text):
            if re.search(r'display\s*:\s*none', body):
                for selector in selectors.split(','):
                    for medium in ('screen', 'print') if where == 'top' else ('print',):
                        found[medium].append(selector.strip())
    return found


def marked_page() -> BeautifulSoup:
    return BeautifulSoup(
        ''.join(f'<p class="{classes}">{classes}</p>' for classes in MARKED), 'html.parser'
    )


@pytest.mark.parametrize('medium', ['screen', 'browser print'])
def test_the_site_shows_what_is_marked_for_the_web_page_only(medium):
    hidden = hidden_selectors(MEDIA_CSS.read_text(encoding='utf-8'))
    selectors = hidden['screen' if medium == 'screen' else 'print']
    page = marked_page()
    gone = {element.text for selector in selectors for element in page.select(selector)}
    shown = {classes for classes, media in MARKED.items() if media[medium]}
    assert set(MARKED) - gone == shown


def test_the_pdf_drops_what_is_marked_for_the_web_page_or_the_notebooks_only(tmp_path):
    html, site = tmp_path / 'html', tmp_path / 'site'
    html.mkdir()
    site.mkdir()
    (site / '_toc.yml').write_text(yaml.safe_dump({'format': 'jb-book', 'root': 'index'}))
    article = '<section id="a"><h1>A</h1>' + str(marked_page()) + '</section>'
    (html / 'index.html').write_text(
        '<html><head><title>x</title></head><body>'
        f'<article class="bd-article">{article}</article></body></html>'
    )
    document = BeautifulSoup(
        book_html.book_document(html, site, 'pytorch', 'A book'), 'html.parser'
    )
    printed = {p.text for p in document.select('section.book-page p')}
    assert printed == {classes for classes, media in MARKED.items() if media['pdf']}


# What a notebook does not have: tabs, a page that hides cells, links under a title,
# buttons and folded boxes. (The standard aside says where the outputs "on this page"
# were computed: as true of a notebook's outputs as of the page's.)
NOT_IN_A_NOTEBOOK = re.compile(
    r'\btabs?\b|on this page|page does not show|the page hides|hidden (?:cell|check)s?'
    r'|under the title|\bbuttons?\b|\bclick|folded|collapsed box|sidebar',
    re.I,
)
ALLOWED = ('The outputs on this page were computed when the book was built',)
CODE = re.compile(r'```.*?```|`[^`\n]*`', re.S)


def notebook_prose(monkeypatch):
    """(notebook, prose) of every Markdown cell of every notebook, without code."""
    from tools.source import split

    # The install cell is code, and working out what it installs takes seconds a notebook.
    monkeypatch.setattr(split.colab, 'install_source', lambda *args, **kwargs: '')
    layout = Layout()
    references = References.load(layout)
    for rel in find_sections(layout):
        section = read_section(layout, rel)
        for framework in FRAMEWORKS:
            notebook = build_notebook(section, framework, layout, references)
            for cell in notebook.cells:
                if cell.cell_type == 'markdown':
                    text = ' '.join(CODE.sub(' ', cell.source).split())
                    for allowed in ALLOWED:
                        text = text.replace(allowed, '')
                    yield f'{framework}/{rel}', text


def test_no_notebook_speaks_of_the_page_s_tabs_hidden_cells_links_or_buttons(monkeypatch):
    found = [
        f'{where}: ...{text[max(0, m.start() - 60) : m.end() + 20]}...'
        for where, text in notebook_prose(monkeypatch)
        for m in NOT_IN_A_NOTEBOOK.finditer(text)
    ]
    assert found == [], '\n'.join(found)
