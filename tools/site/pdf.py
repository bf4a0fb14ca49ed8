"""The book as a PDF per framework, printed from the built HTML by headless Chromium.

    python -m tools pdf [--force]

For each framework, tools/site/book_html.py assembles the site's pages into one document
(title page, colophon, table of contents, that framework's code only), and Chromium
prints it (Playwright's ``page.pdf``) with the print style of ``pdf.css``: page numbers
and running heads in the page's margin boxes (CSS paged media, which Chromium prints:
the reason this route is kept), a PDF outline made from the headings, a tagged PDF,
links inside the document. Before the first printing, the prose gets soft hyphens
(tools/site/hyphenate.py: Chromium has no hyphenation dictionary here) and each output
wider than the text is
set in a smaller size until it fits (a table's columns kept; one that is too wide at
``MIN_OUTPUT_PT``, or whose lines are too long only once or twice, wraps), and each
block shorter than a third of a page is kept on one page (a longer one breaks across
pages, so that none leaves a page nearly empty). Chromium names a bookmark by the
heading's text as laid out, which runs the lines of a heading that wraps together and
doubles some; the outline's titles are set afterwards to the headings' own
(``data-book-title``, tools/site/book_html.py), one for one. The table of contents and
the prose's references get their page numbers in a second printing: the first one's
named destinations (Chromium writes one for every element a link points at, with its
page and height) give the page of each entry. From the same destinations come each
page's folio (roman in the front matter, arabic from the body's first page, which is
page 1; the PDF's page labels say the same) and its running heads (the chapter on a
left page, the section on a right one, none where a chapter opens), which Chromium's
margin boxes print as the symbols of counter styles (book_html.heads_css), since it has
neither ``string-set`` nor ``:nth()`` pages. And a figure that a printing put at the top
of a page below a page left more than ``FLOAT_GAP`` empty floats: it moves after the
prose that follows it, which fills the gap (``float-figures.js``; after the first
``FLOAT_PRINTINGS`` printings only). Each printing starts from a layout made afresh:
from what the previous printing left of the layout, Chromium breaks a long book's pages
a little differently every other time (181 and 180 pages in turn on this book), and the
contents would never settle. The PDFs go to
_build/downloads/ (tools/site/downloads.py copies them into the HTML's ``downloads/``
folder). They are printed again only when the HTML, the print style or the code that
assembles and prints them (with the functions it runs in the page, tools/site/js/), or
Chromium changed since (``pdf-stamp.json``; ``--force`` prints anyway).
"""

from __future__ import annotations

import dataclasses
import io
import time
from pathlib import Path

from tools import facts
from tools.frameworks import FRAMEWORKS
from tools.paths import Layout, read_config, write_atomic
from tools.site import book_html, edition, hyphenate
from tools.site.browser import CHROMIUM, CHROMIUM_ARGS, script, script_path, served
from tools.site.render import html_is_current
from tools.stamps import Digest, read_stamp, write_stamp
from tools.steps import Progress, StepFailed

STAMP = 'pdf-stamp.json'
PRINT_PAGE = '__book-print__.html'  # the document's address on the local server
MAX_PRINTINGS = 5  # the page numbers settle after the figures floated and two more
FLOAT_PRINTINGS = 2  # the printings after which figures may float
FLOAT_GAP = 0.3  # a share of the text's height left empty at a page's foot: a gap
AT_TOP = 24  # pt: a figure this close to the text's top starts its page
MM = 72 / 25.4
PAGE_HEIGHT = 297 * MM  # pdf.css: A4
TOP_MARGIN = BOTTOM_MARGIN = 22 * MM
TEXT_HEIGHT_PX = 253 / 25.4 * 96  # pdf.css: --book-text-height, in CSS pixels
FRONT_UNNUMBERED = 2  # the title page and its back carry no folio
# What Chromium is given besides the page size and margins of pdf.css.
PDF_OPTIONS = {
    'outline': True,
    'tagged': True,
    'prefer_css_page_size': True,
    'print_background': True,
}
# The smallest size an output is set in to keep its lines whole, in points.
MIN_OUTPUT_PT = 5.25
# A block shorter than this share of the page's text height is kept on one page.
KEEP_SHARE = 1 / 3
# The functions it runs in the page, each a file of tools/site/js/ (browser.script).
SETTLED = 'settled'  # waits for MathJax and the fonts
HYPHENATE = 'hyphenate'  # the prose's words; then writes them back with soft hyphens
PREPARE = 'prepare'  # sets wide outputs smaller or wraps them; keeps short blocks whole
HEADING_TITLES = 'heading-titles'  # the titles of the headings that become bookmarks
TOC_TARGETS = 'toc-targets'  # what each entry of the table of contents points at
FRESH_LAYOUT = 'fresh-layout'  # throws the layout away before each printing
FILL_TOC = 'fill-toc'  # writes the page numbers, the folios and the running heads
FLOAT = 'float-figures'  # moves a figure that left a gap after the prose that follows it
SCRIPTS = (
    SETTLED,
    HYPHENATE,
    PREPARE,
    HEADING_TITLES,
    TOC_TARGETS,
    FRESH_LAYOUT,
    FILL_TOC,
    FLOAT,
)
SLOTS = f'.{book_html.PAGE_SLOT}, .{book_html.REF_SLOT}'  # the page-number slots


class PdfError(StepFailed):
    """The PDF could not be printed: no browser, an HTML older than its sources, ..."""


def pdf_path(layout: Layout, framework: str, folder: Path | None = None) -> Path:
    name = facts.download_name(facts.repo_name(layout), framework, 'pdf')
    return Path(folder or layout.book_downloads) / name


@dataclasses.dataclass
class Printing:
    """Where a printing put what links point at: ``{id: (page index, top in pt)}``."""

    pages: dict[str, tuple[int, float | None]]
    count: int
    data: bytes = b''

    def depth(self, index: int) -> float:
        """How far down the text area page ``index``'s ink reaches, from 0 to 1."""
        return ink_depth(self.data, index)


def read_printing(pdf: bytes) -> Printing:
    """The named destinations of a PDF Chromium printed, and its number of pages."""
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(pdf))
    pages = {}
    for name, destination in reader.named_destinations.items():
        top = destination.get('/Top')
        pages[name.lstrip('/')] = (
            reader.get_destination_page_number(destination),
            None if top is None else float(top),
        )
    return Printing(pages, len(reader.pages), pdf)


def ink_depth(pdf: bytes, index: int) -> float:
    """How far down the text area a page's ink reaches, from 0 (none) to 1 (its foot)."""
    import pypdfium2

    scale = 0.25
    page = pypdfium2.PdfDocument(pdf)[index]
    image = page.render(scale=scale).to_pil().convert('L')
    top, bottom = int(TOP_MARGIN * scale), int((PAGE_HEIGHT - BOTTOM_MARGIN) * scale)
    area = image.crop((0, top, image.width, bottom)).point(lambda v: 255 if v < 250 else 0)
    box = area.getbbox()
    return 0.0 if box is None else box[3] / (bottom - top)


def roman(number: int) -> str:
    numerals = (
        (1000, 'm'), (900, 'cm'), (500, 'd'), (400, 'cd'), (100, 'c'), (90, 'xc'),
        (50, 'l'), (40, 'xl'), (10, 'x'), (9, 'ix'), (5, 'v'), (4, 'iv'), (1, 'i'),
    )  # fmt: skip
    out = ''
    for value, numeral in numerals:
        while number >= value:
            out, number = out + numeral, number - value
    return out


def folios(count: int, body_start: int) -> list[str]:
    """What each page's foot says: nothing on the title page and its back, roman numbers
    in the rest of the front matter, arabic from the body's first page, which is 1."""
    return [
        '' if i < min(FRONT_UNNUMBERED, body_start)
        else roman(i + 1) if i < body_start
        else str(i - body_start + 1)
        for i in range(count)
    ]  # fmt: skip


def running_heads(
    marks: list[book_html.Mark], pages: dict[str, int], count: int, body_start: int
) -> tuple[list[str], list[str]]:
    """(left, right): each page's heads. A left page names the chapter in force at its
    foot, a right page the first section that starts on it, else the one in force; a
    page where a chapter opens, and the front matter, none (the contents' later pages:
    "Contents")."""
    left, right = [''] * count, [''] * count
    for i in range(FRONT_UNNUMBERED + 1, min(body_start, count)):
        left[i] = right[i] = 'Contents'
    placed = [(pages[mark.target], mark) for mark in marks if mark.target in pages]
    for i in range(body_start, count):
        opening = [mark for page, mark in placed if page == i]
        before = [mark for page, mark in placed if page <= i]
        if not before or any(mark.chapter for mark in opening):
            continue
        left[i] = before[-1].left
        right[i] = (opening[0] if opening else before[-1]).right
    return left, right


def floats(printed: Printing, figures: list[str], floated: set[str]) -> list[dict]:
    """The figures that start a page below a page left more than FLOAT_GAP empty, with
    the room (CSS pixels) that the prose after them may fill."""
    moves = []
    text_top = PAGE_HEIGHT - TOP_MARGIN
    for figure in figures:
        index, top = printed.pages.get(figure, (0, None))
        if figure in floated or index == 0 or top is None or top < text_top - AT_TOP:
            continue
        depth = printed.depth(index - 1)
        if depth < 1 - FLOAT_GAP:
            moves.append({'id': figure, 'room': round((1 - depth) * TEXT_HEIGHT_PX)})
    return moves


def page_numbers(pdf: bytes) -> dict[str, int]:
    """``{id: printed page}`` of every named destination of a PDF Chromium printed."""
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(pdf))
    return {
        name.lstrip('/'): reader.get_destination_page_number(destination) + 1
        for name, destination in reader.named_destinations.items()
    }


def outline_items(writer: object) -> list:
    """The outline items of a PDF, in the order of the document (depth first)."""
    items = []

    def visit(node: object) -> None:
        while node is not None:
            node = node.get_object()
            items.append(node)
            if '/First' in node:
                visit(node['/First'])
            node = node.get('/Next')

    root = writer._root_object  # pypdf's catalog: the outline is rewritten in it
    outlines = root.get('/Outlines')
    if outlines is not None and '/First' in outlines.get_object():
        visit(outlines.get_object()['/First'])
    return items


def retitle_outline(pdf: bytes, titles: list[str], body_start: int | None = None) -> bytes:
    """The PDF with its bookmarks named ``titles``, one for one, in order; with
    ``body_start``, its page labels the printed folios (roman, then arabic from 1)."""
    import pypdf
    from pypdf.generic import NameObject, TextStringObject

    writer = pypdf.PdfWriter(clone_from=io.BytesIO(pdf))
    items = outline_items(writer)
    if len(items) != len(titles):
        raise PdfError(
            f'the PDF has {len(items)} bookmarks for {len(titles)} headings: '
            'their titles cannot be set one for one'
        )
    for item, title in zip(items, titles, strict=True):
        item[NameObject('/Title')] = TextStringObject(title)
    if body_start:
        writer.set_page_label(0, body_start - 1, style='/r', start=1)
        writer.set_page_label(body_start, len(writer.pages) - 1, style='/D', start=1)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def print_document(
    browser: object,
    base: str,
    document: str,
    progress: Progress | None = None,
    plan: book_html.Document | None = None,
) -> bytes:
    """Print ``document`` (served at ``base``, beside the site's files) with the page
    numbers of its contents and references filled in; with ``plan`` (the Document that
    made it), with its folios and running heads, and its figures floated."""
    view = browser.new_page()
    try:
        view.route(
            f'{base}/{PRINT_PAGE}',
            lambda route: route.fulfill(body=document, content_type='text/html; charset=utf-8'),
        )
        view.emulate_media(media='print')  # what the script measures is laid out as printed
        view.goto(f'{base}/{PRINT_PAGE}', wait_until='load')
        view.evaluate(script(SETTLED))
        words = view.evaluate(script(HYPHENATE))
        if words:
            view.evaluate(script(HYPHENATE), hyphenate.hyphenated(words))
        done = view.evaluate(script(PREPARE), [MIN_OUTPUT_PT, KEEP_SHARE])
        if progress is not None and done:
            progress(
                f'pdf: {done["smaller"]} outputs set smaller to fit, {done["wrapped"]} '
                f'wrapped; {done["kept"]} blocks kept on one page; {done["wide"]} still '
                'wider than the text'
            )
        titles = view.evaluate(script(HEADING_TITLES))
        targets = list(dict.fromkeys(view.eval_on_selector_all(SLOTS, script(TOC_TARGETS))))
        marks = plan.marks if plan is not None else []
        figures = list(plan.figures) if plan is not None else []
        refs = plan.refs if plan is not None else {}
        # What the printed numbers and heads depend on: where the targets and the pages of
        # the site fell. (Where the figures and references fell decides only the floats
        # and which references name no page, in the first printings.)
        watched = list(dict.fromkeys(targets + [mark.target for mark in marks]))
        numbers: dict[str, int] = {}
        count, floated, moved, here = 0, set(), [], set()
        for printing in range(MAX_PRINTINGS):
            view.evaluate(script(FRESH_LAYOUT))
            pdf = view.pdf(**PDF_OPTIONS)
            printed = read_printing(pdf)
            missing = [target for target in watched if target not in printed.pages]
            if missing:
                raise PdfError(
                    f'the printed PDF has no destination for {", ".join(missing[:5])}: '
                    'the table of contents cannot name their pages'
                )
            now = {target: printed.pages[target][0] for target in watched}
            body_start = now[marks[0].target] if marks else 0
            moves, on_its_page = [], set()
            if printing < FLOAT_PRINTINGS:
                moves = floats(printed, figures, floated)
                on_its_page = {
                    ref
                    for ref, target in refs.items()
                    if printed.pages.get(ref, (None,))[0] == now[target]
                }
            if now == numbers and printed.count == count and not moves and on_its_page <= here:
                return retitle_outline(pdf, titles, body_start) if titles else pdf
            moved = [
                f'{t} {numbers[t] + 1 if t in numbers else None}->{now[t] + 1}'
                for t in watched
                if numbers.get(t) != now[t]
            ]
            numbers, count = now, printed.count
            shown = folios(count, body_start) if marks else [str(i + 1) for i in range(count)]
            css = book_html.heads_css(shown, *running_heads(marks, now, count, body_start))
            # Once on its target's page, a reference names no page for good: the set only
            # grows, so that the printings settle.
            here |= on_its_page
            fill = {
                'numbers': {t: shown[now[t]] for t in targets},
                'css': css,
                'here': sorted(here),
            }
            view.evaluate(script(FILL_TOC), fill)
            if moves:
                floated |= {move['id'] for move in moves}
                view.evaluate(script(FLOAT), moves)
                if progress is not None:
                    progress(f'pdf: {len(moves)} figures floated past the prose after them')
        raise PdfError(
            f'the page numbers still changed after {MAX_PRINTINGS} printings '
            f'({len(moved)} entries in the last, e.g. {", ".join(moved[:5])})'
        )
    finally:
        view.close()


def stamp(layout: Layout, browser_version: str) -> dict[str, str]:
    """What the PDFs are made from (a tools.stamps digest of the HTML's own digest, the
    print style and the code that assembles and prints the document, its scripts
    included), and the browser."""
    inputs = Digest(layout).text('html', read_stamp(layout.render_stamp).get('inputs', ''))
    inputs.file(book_html.PRINT_CSS).file(hyphenate.PATTERNS).code('tools.site.pdf')
    inputs.files(script_path(name) for name in SCRIPTS)
    return {'inputs': inputs.hexdigest(), 'browser': browser_version}


def printed_from(layout: Layout) -> dict[str, str]:
    """The stamp of the PDFs in _build/downloads/ ({} when one of them is missing)."""
    if not all(pdf_path(layout, fw).is_file() for fw in FRAMEWORKS):
        return {}
    return read_stamp(layout.book_downloads / STAMP)


def pdfs_are_current(layout: Layout) -> bool:
    """Whether the PDFs were printed from the HTML as it is now, in the print style as it
    is now (whichever browser printed them)."""
    if not html_is_current(layout):
        return False
    return printed_from(layout).get('inputs') == stamp(layout, '')['inputs']


def launch(playwright: object, chromium: str) -> object:
    if not Path(chromium).is_file():
        raise PdfError(
            f'no browser at {chromium} to print the PDFs: install Chromium '
            '(apt-get install chromium) or name one with BOOK_CHROMIUM'
        )
    return playwright.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)


def write_pdfs(
    layout: Layout,
    *,
    force: bool = False,
    chromium: str = CHROMIUM,
    progress: Progress = print,
) -> dict[str, Path]:
    """Print one PDF per framework into _build/downloads/; returns their paths."""
    from playwright.sync_api import sync_playwright

    if not html_is_current(layout):
        raise PdfError(
            f"the HTML in {layout.html} is missing, older than its sources or a quick render's: "
            'render it in full first (python -m tools render, or make book)'
        )
    paths = {fw: pdf_path(layout, fw) for fw in FRAMEWORKS}
    title = str(read_config(layout).get('title') or 'The book')
    with sync_playwright() as playwright:
        browser = launch(playwright, chromium)
        try:
            now = stamp(layout, browser.version)
            if not force and printed_from(layout) == now:
                progress('pdf: nothing changed since the last printing; PDFs kept')
                return paths
            (layout.book_downloads / STAMP).unlink(missing_ok=True)
            with served(layout.html) as base:
                for framework, path in paths.items():
                    start = time.perf_counter()
                    made = edition.edition(layout, framework, f'Chromium {browser.version}')
                    plan = book_html.Document(
                        layout.html, book_html.site_pages(layout.site), framework, title, made
                    )
                    document = plan.html()
                    small = [
                        f'{figure} ({size:.1f} pt)'
                        for figure, _, size in plan.plots
                        if size < book_html.MIN_PLOT_TEXT_PT - 0.05
                    ]
                    if small:
                        progress(
                            f'pdf: {len(small)} plots print text under '
                            f"{book_html.MIN_PLOT_TEXT_PT:g} pt even at the text's width "
                            f'(a smaller figsize in their cells helps): {", ".join(small)}'
                        )
                    pdf = print_document(browser, base, document, progress, plan)
                    write_atomic(path, pdf)
                    progress(
                        f'pdf: {path} ({len(pdf) / 1e6:.1f} MB) printed in '
                        f'{time.perf_counter() - start:.0f} s'
                    )
        finally:
            browser.close()
    write_stamp(layout.book_downloads / STAMP, **now)
    return paths
