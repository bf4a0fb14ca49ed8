"""Each framework's PDF and notebooks' zip, checked from the files themselves.

The PDF's structure is read with pypdf; its pages' text, text boxes and pixels with
pypdfium2 (which reads the text in a twentieth of pypdf's time). The tests check the
section titles in the order of the HTML, the HTML's section, equation and figure numbers,
one framework's code only, every figure (by its alt text in the tagged PDF), the
outline, the table of contents' page numbers, page numbers on every page but the title
page, links that land, no code past the right margin, embedded fonts.

Runs on the hand-made book of tests/site/book_site.py (its PDFs printed here) and on the
book itself (whose build printed them).
"""

import collections
import io
import re
import zipfile
from pathlib import Path

import pypdf
import pypdfium2
import pytest
from bs4 import BeautifulSoup

from tests.site.test_browser import chromium_or_skip
from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.site import book_html, bundle, downloads, pdf

pytestmark = [pytest.mark.slow, pytest.mark.browser]

MM = 72 / 25.4  # PDF points per millimetre
RIGHT_MARGIN = 18 * MM  # pdf.css
BOTTOM_MARGIN = 22 * MM
# Code that only one framework's PDF may hold.
ONLY = {'pytorch': ('import torch',), 'jax': ('from flax import nnx', 'jnp.')}
MAX_MB = 20


class Printed:
    """One framework's PDF, read once."""

    def __init__(self, path: Path):
        self.path = path
        self.data = path.read_bytes()
        self.reader = pypdf.PdfReader(io.BytesIO(self.data))
        self.document = pypdfium2.PdfDocument(self.data)
        self.pages = [text_of(page) for page in self.document]
        self.destinations = {
            name.lstrip('/'): self.reader.get_destination_page_number(dest)
            for name, dest in self.reader.named_destinations.items()
        }

    @property
    def body_start(self) -> int:
        """The index of the first page after the table of contents."""
        return min(page for name, page in self.destinations.items() if name != book_html.TOC_ID)

    def body(self) -> str:
        return squeeze(''.join(self.pages[self.body_start :]))

    def first_page(self, page: str) -> int | None:
        """The index of the first page of a book page (``d2l-mini``), by its ids; None
        when the document does not hold it."""
        numbers = [n for name, n in self.destinations.items() if name.startswith(f'{page}--')]
        return min(numbers, default=None)

    def body_without(self, page: str, next_page: str) -> str:
        """The body without the pages from ``page`` up to ``next_page`` (if it has them)."""
        start, end = self.first_page(page), self.first_page(next_page)
        if start is None:
            return self.body()
        return squeeze(''.join(self.pages[self.body_start : start] + self.pages[end:]))


def text_of(page: pypdfium2.PdfPage) -> str:
    # pdfium writes a hyphen that ends a line as U+FFFE.
    return page.get_textpage().get_text_range().replace('\ufffe', '-')


def squeeze(text: str) -> str:
    return re.sub(r'\s+', '', text)


def in_order(needles, haystack):
    """The needles that are not found in ``haystack`` after the previous one."""
    missing, at = [], 0
    for needle in needles:
        found = haystack.find(squeeze(needle), at)
        if found < 0:
            missing.append(needle)
        else:
            at = found + len(squeeze(needle))
    return missing


@pytest.fixture(scope='module')
def layout(site):
    layout = Layout(root=site.build.parent)
    if not site.real:
        chromium_or_skip()
        downloads.write_zips(layout, progress=lambda line: None)
        downloads.write_pdfs(layout, progress=lambda line: None)
    return layout


@pytest.fixture(scope='module')
def printed(layout):
    return {fw: Printed(pdf.pdf_path(layout, fw)) for fw in FRAMEWORKS}


def html_articles(site, framework):
    """``(page, article)`` of every page of the site, as that framework's reader sees it."""
    for page in book_html.site_pages(site.site):
        document = BeautifulSoup(
            (site.html / f'{page.rel}.html').read_text(encoding='utf-8'), 'html.parser'
        )
        article = document.select_one('article.bd-article')
        for other in FRAMEWORKS:
            if other != framework:
                for element in article.select(f'div.cell.tag_{other}, .fw-only-{other}'):
                    element.decompose()
        for element in article.select('a.headerlink, .fw-notebooks, .book-downloads'):
            element.decompose()
        yield page, article


def test_the_section_titles_and_numbers_follow_the_html(site, printed):
    for framework, book in printed.items():
        titles, numbers = [], []
        for _, article in html_articles(site, framework):
            titles += [h.get_text(' ', strip=True) for h in article.find_all(['h1', 'h2'])]
            for element in article.select('span.eqno, span.caption-number, span.section-number'):
                numbers.append(element.get_text(strip=True))
        assert titles and in_order(titles, book.body()) == [], framework
        assert in_order(numbers, book.body()) == [], f'{framework}: numbers missing'


def test_each_pdf_holds_its_framework_s_code_only(printed):
    for framework, book in printed.items():
        # The d2l_mini reference documents both modules in both PDFs, as its HTML does.
        text = book.body_without('d2l-mini', 'references')
        for marker in ONLY[framework]:
            assert squeeze(marker) in text, f'{framework}: no {marker!r}'
        for other, markers in ONLY.items():
            if other != framework:
                for marker in markers:
                    assert squeeze(marker) not in text, f'{framework} PDF holds {marker!r}'
        assert 'openinColab' not in text and 'notebook:download' not in text
        for page in book.reader.pages:
            for annotation in page.get('/Annots') or []:
                uri = annotation.get_object().get('/A', {}).get('/URI', '')
                assert 'colab.research.google.com' not in uri, uri


def figure_alts(reader):
    """The alt texts of the tagged PDF's figures."""
    alts = []

    def visit(node):
        node = node.get_object() if isinstance(node, pypdf.generic.IndirectObject) else node
        if isinstance(node, list):
            for kid in node:
                visit(kid)
        elif isinstance(node, dict):
            if node.get('/S') == '/Figure' and node.get('/Alt') is not None:
                alts.append(' '.join(str(node['/Alt']).split()))
            if '/K' in node:
                visit(node['/K'])

    visit(reader.trailer['/Root']['/StructTreeRoot'])
    return alts


def test_every_figure_of_the_html_is_in_the_pdf(site, printed):
    for framework, book in printed.items():
        expected = [
            ' '.join(image.get('alt', '').split())
            for _, article in html_articles(site, framework)
            for image in article.find_all('img')
        ]
        assert expected, 'the book has figures'
        assert collections.Counter(figure_alts(book.reader)) == collections.Counter(expected)


def outline(reader, items=None, depth=0):
    """``[(depth, title, page index)]`` of the PDF's outline, in order."""
    found = []
    for item in reader.outline if items is None else items:
        if isinstance(item, list):
            found += outline(reader, item, depth + 1)
        else:
            found.append((depth, item.title, reader.get_destination_page_number(item)))
    return found


def test_the_outline_nests_parts_chapters_and_sections(site, printed):
    pages = book_html.site_pages(site.site)
    parts = list(dict.fromkeys(page.part for page in pages if page.part))
    for framework, book in printed.items():
        entries = outline(book.reader)
        top = [title for depth, title, _ in entries if depth == 0]
        assert top[0] == 'Contents' and [t for t in top if t in parts] == parts, top
        order = [page for _, _, page in entries]
        assert order == sorted(order), f'{framework}: the outline goes back in the book'
        assert 0 <= min(order) and max(order) < len(book.reader.pages)
        assert max(depth for depth, _, _ in entries) >= 2, 'sections sit below chapters'
        assert 3 <= len(book.reader.pages) <= 1000


def test_the_contents_give_each_entry_s_page(printed):
    for framework, book in printed.items():
        document = book.document
        checked = 0
        for index in range(1, book.body_start):  # the contents follow the title page
            text = document[index].get_textpage()
            for annotation in book.reader.pages[index].get('/Annots') or []:
                annotation = annotation.get_object()
                target = book.reader.get_destination_page_number(
                    book.reader.named_destinations[annotation['/Dest']]
                )
                left, bottom, right, top = (float(v) for v in annotation['/Rect'])
                line = text.get_text_bounded(left, bottom, right, top).strip()
                number = re.search(r'(\d+)$', line)
                assert number and int(number[1]) == target + 1, f'{framework}: {line!r}'
                checked += 1
        assert checked >= 3


def test_every_page_but_the_title_page_is_numbered(printed):
    for framework, book in printed.items():
        document = book.document
        for index in range(len(document)):
            text = document[index].get_textpage()
            # The characters drawn inside the bottom margin (a stretched delimiter's pieces
            # report boxes taller than the page, wherever they are drawn: they are left out).
            boxes = [text.get_charbox(i) for i in range(text.count_chars())]
            footer = ''.join(
                text.get_text_range(i, 1)
                for i, (_, bottom, _, top) in enumerate(boxes)
                if 0 <= bottom and top <= BOTTOM_MARGIN
            )
            assert footer.strip() == ('' if index == 0 else str(index + 1)), (framework, index)


def test_links_inside_the_document_land_on_a_page(printed):
    for framework, book in printed.items():
        internal = 0
        for page in book.reader.pages:
            for annotation in page.get('/Annots') or []:
                annotation = annotation.get_object()
                if '/Dest' in annotation:
                    assert str(annotation['/Dest']).lstrip('/') in book.destinations
                    internal += 1
        # The toc's entries, and the prose's references and citations.
        assert internal > len(outline(book.reader)), framework
        assert 'references--' in ' '.join(book.destinations), 'a citation links its entry'


def test_nothing_runs_past_the_right_margin(printed):
    for framework, book in printed.items():
        document = book.document
        for index in range(len(document)):
            page = document[index]
            width, _ = page.get_size()
            edge = width - RIGHT_MARGIN + 1
            text = page.get_textpage()
            for i in range(text.count_chars()):
                char = text.get_text_range(i, 1)
                # MathJax draws stretched delimiters and braces from pieces in its fonts'
                # private use area, whose text boxes pdfium reports off the page; the
                # image check below sees where their ink is.
                if char.strip() and not '\ue000' <= char <= '\uf8ff':
                    _, _, right, _ = text.get_charbox(i)
                    around = text.get_text_range(max(0, i - 30), 40)
                    assert right <= edge, (
                        f'{framework} page {index + 1}: {around!r} runs into the right margin'
                    )
            image = page.render(scale=0.5).to_pil().convert('L')
            strip = image.crop((int(edge * 0.5) + 1, 0, image.width, image.height))
            assert strip.getextrema()[0] > 240, f'{framework} page {index + 1}: ink in the margin'


def fonts(resources, seen):
    resources = resources.get_object() if resources is not None else {}
    for font in (resources.get('/Font') or {}).values():
        yield font.get_object()
    for xobject in (resources.get('/XObject') or {}).values():
        xobject = xobject.get_object()
        if id(xobject) not in seen and '/Resources' in xobject:
            seen.add(id(xobject))
            yield from fonts(xobject['/Resources'], seen)


def test_fonts_are_embedded_and_the_size_is_fit_to_download(printed):
    for framework, book in printed.items():
        seen = set()
        for page in book.reader.pages:
            for font in fonts(page.get('/Resources'), seen):
                if font['/Subtype'] == '/Type3':
                    continue
                described = (
                    font['/DescendantFonts'][0].get_object()
                    if '/DescendantFonts' in font
                    else font
                )
                descriptor = described['/FontDescriptor'].get_object()
                assert {'/FontFile', '/FontFile2', '/FontFile3'} & set(descriptor), (
                    f'{framework}: {font.get("/BaseFont")} is not embedded'
                )
        assert len(book.data) < MAX_MB * 1e6, f'{framework}: {len(book.data) / 1e6:.1f} MB'


def test_the_pages_link_the_downloads_that_the_build_made(site, layout):
    folder = site.html / 'downloads'
    linked = set()
    for path in site.html.rglob('*.html'):
        document = BeautifulSoup(path.read_text(encoding='utf-8'), 'html.parser')
        for link in document.select('.book-downloads a[href]'):
            target = (path.parent / link['href']).resolve()
            assert target.is_file(), f'{path}: {link["href"]}'
            linked.add(target)
    expected = {pdf.pdf_path(layout, fw, folder) for fw in FRAMEWORKS}
    expected |= {bundle.zip_path(layout, fw, folder) for fw in FRAMEWORKS}
    assert linked == {path.resolve() for path in expected}
    for path in expected:
        assert path.read_bytes() == (layout.book_downloads / path.name).read_bytes()


def test_each_zip_holds_the_executed_notebooks_of_the_book(site, layout):
    for framework in FRAMEWORKS:
        path = bundle.zip_path(layout, framework)
        folder = path.stem
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            assert {f'{folder}/README.md', f'{folder}/requirements.txt'} <= names
            notebooks = sorted(n for n in names if n.endswith('.ipynb'))
            assert notebooks == sorted(f'{folder}/{rel}.ipynb' for rel in site.sections)
            for rel in site.sections:
                assert archive.read(f'{folder}/{rel}.ipynb') == (
                    layout.executed(framework, rel).read_bytes()
                ), rel
