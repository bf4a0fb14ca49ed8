"""Each framework's PDF and notebooks' zip, checked from the files themselves.

The PDF's structure is read with pypdf; its pages' text, text boxes, fonts and pixels with
pypdfium2 (which reads the text in a twentieth of pypdf's time). The tests check the
section titles in the order of the HTML, the HTML's section and equation numbers, one
framework's code only and no other framework's names in the prose, no text that only a
browser has a use for, every figure (by its alt text in the tagged PDF) and its numbered
caption (and captions written for a reader, not generated), the outline (its titles the
headings'), the table of contents' page numbers, folios (roman in the front matter,
arabic from the body's first page), running heads but where a chapter opens, no page
less than a quarter full but a chapter's last and at most eight above half full, no talk
of tabs and no ``#@save``, a report table without words broken, links that land, no
code past the right margin, embedded fonts and the text face.

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
RIGHT_MARGIN = 30 * MM  # pdf.css
TOP_MARGIN = BOTTOM_MARGIN = 22 * MM
TEXT_FACE = 'CharisSIL'  # pdf.css's text face, as the PDF names its fonts
HEAD_SIZE = 9 * 4 / 3  # the running heads' 9 pt, in the units pdfium reports Chromium's in
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

    def folio(self, index: int) -> str:
        """What page ``index``'s foot says (pdf.folios)."""
        return pdf.folios(len(self.pages), self.body_start)[index]

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
    # pdfium writes a hyphen that ends a line as U+FFFE; where Chromium broke a word at a
    # soft hyphen (book_html's hyphenation), a U+2010 and the line's end: the word whole.
    text = page.get_textpage().get_text_range().replace('\ufffe', '-')
    return re.sub('\u2010\r?\n', '', text)


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
    """``(page, article)`` of every page of the site, as that framework's reader sees it
    on paper: without the other framework (but on the bridges, whose cells print in
    both editions), without the other framework's module in the library's reference and
    without web-only prose, the root page titled as the PDF titles it."""
    pages = book_html.site_pages(site.site)
    for page in pages:
        document = BeautifulSoup(
            (site.html / f'{page.rel}.html').read_text(encoding='utf-8'), 'html.parser'
        )
        article = document.select_one('article.bd-article')
        for other in FRAMEWORKS:
            if other != framework:
                both = page.rel in book_html.BOTH_CODE
                selector = (
                    f'.fw-only-{other}' if both else f'div.cell.tag_{other}, .fw-only-{other}'
                )
                for element in article.select(selector):
                    element.decompose()
        if page.rel == book_html.REFERENCE_PAGE:
            book_html.keep_reference(article, framework)
        dropped = 'a.headerlink, .fw-notebooks, .book-downloads, .web-only'
        for element in article.select(dropped):
            element.decompose()
        if page is pages[0] and page.part is None:
            article.find(book_html.HEADINGS).string = book_html.ROOT_TITLE
        yield page, article


def test_the_section_titles_and_numbers_follow_the_html(site, printed):
    for framework, book in printed.items():
        titles, numbers = [], []
        for _, article in html_articles(site, framework):
            titles += [h.get_text(' ', strip=True) for h in article.find_all(['h1', 'h2'])]
            # (Figures have numbers of their own in print: see the captions' test.)
            for element in article.select('span.eqno, span.section-number'):
                numbers.append(element.get_text(strip=True))
        assert titles and in_order(titles, book.body()) == [], framework
        assert in_order(numbers, book.body()) == [], f'{framework}: numbers missing'


def test_each_pdf_holds_its_framework_s_code_only(site, printed):
    for framework, book in printed.items():
        # The bridges print both frameworks' cells; the reference's "How the twins
        # differ" names both modules.
        chapters = site_page_ranges(site, book, depth=0)
        both = {*book_html.BOTH_CODE, book_html.REFERENCE_PAGE}
        left_out = {i for rel, pages in chapters.items() if rel in both for i in pages}
        text = squeeze(
            ''.join(
                page
                for i, page in enumerate(book.pages)
                if i >= book.body_start and i not in left_out
            )
        )
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


def test_the_bridges_print_both_frameworks_and_the_reference_one_module(site, printed):
    for framework, book in printed.items():
        chapters = site_page_ranges(site, book, depth=0)
        bridges = [i for rel in book_html.BOTH_CODE if rel in chapters for i in chapters[rel]]
        if bridges:
            text = squeeze(''.join(book.pages[i] for i in bridges))
            for markers in ONLY.values():
                assert squeeze(markers[0]) in text, f'{framework}, bridges: no {markers[0]}'
        titles = [title for _, title, _ in outline(book.reader)]
        for other in FRAMEWORKS:
            module = 'd2l_mini.' + other.replace('pytorch', 'torch')
            printed_module = any(title.endswith(module) for title in titles)
            if site.real:
                assert printed_module == (other == framework), (framework, module)


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
        # A part whose first chapter has its title is that chapter: "1 The Transformer Block".
        bare = [re.sub(r'^[\d.]+ ', '', title).casefold() for title in top]
        assert top[0] == 'Contents' and [t for t in bare if t in casefolded(parts)] == (
            casefolded(parts)
        ), top
        order = [page for _, _, page in entries]
        assert order == sorted(order), f'{framework}: the outline goes back in the book'
        assert 0 <= min(order) and max(order) < len(book.reader.pages)
        assert max(depth for depth, _, _ in entries) >= 2, 'sections sit below chapters'
        assert 3 <= len(book.reader.pages) <= 1000


def casefolded(titles):
    return [title.casefold() for title in titles]


def test_the_contents_give_each_entry_s_page(printed):
    for framework, book in printed.items():
        document = book.document
        checked = 0
        for index in range(1, book.body_start):  # the contents follow the title page
            text = document[index].get_textpage()
            for annotation in book.reader.pages[index].get('/Annots') or []:
                annotation = annotation.get_object()
                left, bottom, right, top = (float(v) for v in annotation['/Rect'])
                if '/Dest' not in annotation or top - bottom < 3:
                    continue  # the colophon's link to the site; a sliver of a link at a foot
                target = book.reader.get_destination_page_number(
                    book.reader.named_destinations[annotation['/Dest']]
                )
                line = text.get_text_bounded(left, bottom, right, top).strip()
                number = re.search(r'(\d+)$', line)
                assert number and number[1] == book.folio(target), f'{framework}: {line!r}'
                checked += 1
        assert checked >= 3


def test_every_page_but_the_title_page_and_its_back_is_numbered(printed):
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
            assert footer.strip() == book.folio(index), (framework, index)
        assert book.folio(2) == 'iii' and book.folio(book.body_start) == '1', framework


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


# What only a browser has a use for: the tab bar, what a browser remembers, boxes folded
# behind a button and their toggles, the developer's paths and commands.
WEB_ONLY = (
    'tab bar',
    'remembered by your browser',
    'folded away',
    'behind a button',
    'Show code cell',
    'Hide code cell',
    '_build/',
    'python -m tools',
    'Open the box below',  # the hand-made book's
    'Back to the exercise',  # a link back; print names the exercise, section and page
)
# The other framework's names, which a framework's prose does not use (the bridges and
# the back matter, BOTH, are about both frameworks).
OTHER_NAMES = {
    'pytorch': ('jnp.', 'nnx.', 'optax', 'jax.'),
    'jax': ('torch.', 'nn.Module', '.backward('),
}
BOTH = (
    'pytorch-to-nnx',
    'jax-to-nnx',
    'transformer-block/index',  # what to know first, in either framework
    'd2l-mini',
    'references',
    'report',
)


def site_page_ranges(site, book, depth=None):
    """``{page rel: range of its PDF page indices}``, for the pages the PDF holds (those
    of ``depth`` only: 0, the chapters with their sections). A section runs on from the
    page where the one before it ends: that page is in both ranges."""
    starts = []
    for page in book_html.site_pages(site.site):
        first = book.first_page(page.slug)
        if first is not None and (depth is None or page.depth <= depth):
            starts.append((first, page.rel))
    starts.sort()
    ends = [start for start, _ in starts[1:]] + [len(book.pages)]
    return {
        rel: range(start, max(end, start + 1) if depth is None else end)
        for (start, rel), end in zip(starts, ends, strict=True)
    }


def chapter_openings(site, book):
    """The indices of the pages where a chapter (or the book's first page) opens."""
    return {pages[0] for pages in site_page_ranges(site, book, depth=0).values()}


def chapter_ends(site, book):
    """The indices of the last page of each chapter (a chapter's sections included)."""
    return {pages[-1] for pages in site_page_ranges(site, book, depth=0).values() if pages}


def prose_of(page: pypdfium2.PdfPage) -> str:
    """The text of a page set in the prose's sizes: the text, its inline code, captions,
    headings (not the code and outputs, a size smaller)."""
    return _text_by_size(page, prose=True)


def _text_by_size(page: pypdfium2.PdfPage, prose: bool) -> str:
    """The characters of a page set at the prose's sizes (``prose``) or smaller."""
    text = page.get_textpage()
    count = text.count_chars()
    sizes = [pypdfium2.raw.FPDFText_GetFontSize(text.raw, i) for i in range(count)]
    body = collections.Counter(round(size, 1) for size in sizes if size > 2).most_common(1)
    if not body:
        return ''
    least = body[0][0] * 0.83  # code is 8.5 pt to the text's 10.5; inline code 0.86 em
    kept = [i for i in range(count) if (sizes[i] >= least if prose else 2 < sizes[i] < least)]
    return ''.join(text.get_text_range(i, 1) for i in kept)


def test_no_text_that_only_a_browser_has_a_use_for(site, printed):
    for framework, book in printed.items():
        text = squeeze(''.join(book.pages)).casefold()
        for phrase in WEB_ONLY:
            assert squeeze(phrase).casefold() not in text, f'{framework} PDF: {phrase!r}'
        lines = {line.strip() for page in book.pages for line in page.splitlines()}
        assert 'Details' not in lines, f'{framework}: a box printed with its toggle'
        if not site.real:
            assert 'theanswerfollows.' in text, 'print-only prose is printed'


def test_the_prose_names_no_other_framework(site, printed):
    for framework, book in printed.items():
        ranges = site_page_ranges(site, book)
        assert ranges, framework
        for rel, pages in ranges.items():
            if rel in BOTH:
                continue
            prose = squeeze(''.join(prose_of(book.document[i]) for i in pages))
            for name in OTHER_NAMES[framework]:
                at = prose.find(name)
                assert at < 0, f'{framework} PDF, {rel}: {prose[max(0, at - 60) : at + 40]!r}'


def test_body_pages_carry_running_heads_but_where_a_chapter_opens(site, printed):
    for framework, book in printed.items():
        titles = {title for _, title, _ in outline(book.reader)}
        openings = chapter_openings(site, book)
        for index in range(book.body_start, len(book.document)):
            page = book.document[index]
            _, height = page.get_size()
            text = page.get_textpage()
            # The characters in the top margin at the heads' size (MathJax's pieces of
            # stretched delimiters report boxes anywhere: they are left out).
            head = ''.join(
                text.get_text_range(i, 1)
                for i in range(text.count_chars())
                if text.get_charbox(i)[1] >= height - TOP_MARGIN
                and abs(pypdfium2.raw.FPDFText_GetFontSize(text.raw, i) - HEAD_SIZE) < 0.3
            )
            head = ' '.join(head.split())
            if index in openings:
                assert not head, f'{framework} page {index + 1}: a chapter opens under {head!r}'
                continue
            assert head, f'{framework} page {index + 1}: no running head'
            assert head in titles, f'{framework} page {index + 1}: {head!r} is no heading'


def bold_captions(page: pypdfium2.PdfPage) -> list[int]:
    """The numbers of the "Figure N." captions of a page (set bold, unlike a reference)."""
    text = page.get_textpage()
    whole = text.get_text_range()
    numbers = []
    for match in re.finditer(r'Figure\s(\d+)\.', whole):
        if pypdfium2.raw.FPDFText_GetFontWeight(text.raw, match.start()) >= 500:
            numbers.append(int(match[1]))
    return numbers


def test_every_figure_has_a_numbered_caption(printed):
    for framework, book in printed.items():
        figures = len(figure_alts(book.reader))
        captions = [n for i in range(len(book.document)) for n in bold_captions(book.document[i])]
        assert captions == list(range(1, figures + 1)), framework


def test_the_bookmarks_are_the_section_titles(site, printed):
    parts = {page.part for page in book_html.site_pages(site.site) if page.part}
    for framework, book in printed.items():
        expected = [
            book_html.full_title(*book_html.heading_text(heading))
            for _, article in html_articles(site, framework)
            for heading in article.find_all(book_html.HEADINGS)
        ]
        # A part's caption is a bookmark of its own, unless a chapter of that title stands
        # for the part.
        found = [
            title
            for depth, title, _ in outline(book.reader)
            if title != 'Contents' and not (depth == 0 and title in parts - set(expected))
        ]
        assert found == expected, framework
        for title in found:
            half = len(title) // 2
            assert title[:half] != title[half:], f'{framework}: {title!r} doubled'


def ink_depth(page: pypdfium2.PdfPage) -> float:
    """How far down the text area a page's ink reaches, from 0 (none) to 1 (its foot)."""
    scale = 0.5
    _, height = page.get_size()
    image = page.render(scale=scale).to_pil().convert('L')
    top, bottom = int(TOP_MARGIN * scale), int((height - BOTTOM_MARGIN) * scale)
    area = image.crop((0, top, image.width, bottom)).point(lambda v: 255 if v < 250 else 0)
    box = area.getbbox()
    return 0.0 if box is None else box[3] / (bottom - top)


def test_no_page_is_less_than_a_quarter_full_but_a_chapter_s_last(site, printed):
    for framework, book in printed.items():
        last = chapter_ends(site, book)
        for index in range(book.body_start, len(book.document)):
            if index not in last:
                depth = ink_depth(book.document[index])
                assert depth >= 0.25, f'{framework} page {index + 1}: {depth:.0%} full'


MAX_HALF_EMPTY = 8  # pages in an edition whose text ends above the middle, a chapter's
# last pages apart: sections run on, figures float, only short blocks are kept whole


def test_every_plot_prints_its_smallest_text_at_7_pt_or_more(site):
    """A plot is printed wide enough for its smallest text to be 7 pt (book_html's
    plot_width), at most at the text's width: a figure too wide for that needs a smaller
    figsize in its cell."""
    small = []
    for svg in sorted((site.html / '_images').glob('*.svg')):
        size = book_html.svg_size(svg)
        if size is not None and book_html.printed_text_pt(*size) < book_html.MIN_PLOT_TEXT_PT:
            small.append(
                f'{svg.name}: {size[0]:.0f} pt wide, {book_html.printed_text_pt(*size):.1f} pt'
            )
    assert not small, 'plots whose text prints under 7 pt:\n' + '\n'.join(small)


def test_few_pages_end_above_their_middle(site, printed):
    for framework, book in printed.items():
        last = chapter_ends(site, book)
        short = [
            f'{index + 1} ({depth:.0%})'
            for index in range(book.body_start, len(book.document))
            if index not in last and (depth := ink_depth(book.document[index])) < 0.5
        ]
        assert len(short) <= MAX_HALF_EMPTY, f'{framework}: pages {", ".join(short)}'


TAB = re.compile(r'\btabs?\b', re.IGNORECASE)


def code_of(page: pypdfium2.PdfPage) -> str:
    """The text of a page set smaller than its prose: its code and outputs."""
    return _text_by_size(page, prose=False)


def test_print_talks_of_no_tabs_and_prints_no_save_marks(site, printed):
    for framework, book in printed.items():
        code = ''.join(code_of(book.document[i]) for i in range(book.body_start, len(book.pages)))
        assert book_html.SAVE_MARK not in code, f'{framework}: a cell prints its #@save'
        talk = []
        for index in range(book.body_start, len(book.pages)):
            prose = prose_of(book.document[index])
            talk += [
                f'p. {book.folio(index)}: ...{prose[max(0, m.start() - 50) : m.end() + 20]}...'
                for m in TAB.finditer(prose)
            ]
        assert not talk, f'{framework}: ' + '\n'.join(talk)


def test_the_report_table_breaks_no_word(site, printed):
    html = (site.html / 'report.html').read_text(encoding='utf-8')
    document = BeautifulSoup(html, 'html.parser')
    table = document.select_one('article table')
    words = {word for cell in table.select('td, th') for word in cell.get_text(' ').split()}
    # A long name may break after its dots, underscores and slashes (book_html.py).
    pieces = {piece for word in words for piece in re.split(r'(?<=[._/])', word) if piece}
    for framework, book in printed.items():
        pages = site_page_ranges(site, book)['report']
        lines = [line for i in pages for line in book.pages[i].splitlines()]
        header = next(i for i, line in enumerate(lines) if line.startswith('Section'))
        broken = [
            token
            for line in lines[header : header + 4 * len(table.select('tr'))]
            for token in line.split()
            if token not in words and token not in pieces
            and any(word.startswith(token) or word.endswith(token) for word in words)
        ]  # fmt: skip
        assert not broken, f'{framework}: {broken[:10]}'


GENERATED = re.compile(
    r'^(Line plot|Image|Chart|Empty figure|Figure of \d+ plots)\b|^Image output of the code'
)


def test_no_figure_caption_is_a_generated_description(site, printed):
    if not site.real:
        pytest.skip("the hand-made book's plots keep their descriptions as captions")
    for framework, book in printed.items():
        alts = set(figure_alts(book.reader))
        generated = []
        for index in range(len(book.document)):
            text = ' '.join(book.pages[index].split())
            for match in re.finditer(r'Figure (\d+)\. (.+?\.)(?= |$)', text):
                caption = match[2].rstrip('.')
                if GENERATED.match(caption) or caption in alts:
                    generated.append(f'Figure {match[1]} (p. {book.folio(index)}): {caption}')
        assert not generated, f'{framework}: ' + '; '.join(generated)


def test_the_text_is_set_in_the_book_s_face(printed):
    for framework, book in printed.items():
        names = {
            str(font.get('/BaseFont', ''))
            for page in book.reader.pages[book.body_start : book.body_start + 5]
            for font in fonts(page.get('/Resources'), set())
        }
        assert any(TEXT_FACE in name for name in names), (framework, names)
