"""The book as a PDF per framework, printed from the built HTML by headless Chromium.

    python -m tools pdf [--force]

For each framework, tools/site/book_html.py assembles the site's pages into one document
(title page, colophon, table of contents, that framework's code only), and Chromium
prints it (Playwright's ``page.pdf``) with the print style of ``pdf.css``: page numbers
and running heads in the page's margin boxes (CSS paged media, which Chromium prints:
the reason this route is kept), a PDF outline made from the headings, a tagged PDF,
links inside the document. Before the first printing, each output wider than the text is
set in a smaller size until it fits (a table's columns kept; one that is too wide at
``MIN_OUTPUT_PT``, or whose lines are too long only once or twice, wraps), and each
block shorter than a third of a page is kept on one page (a longer one breaks across
pages, so that none leaves a page nearly empty). Chromium names a bookmark by the
heading's text as laid out, which runs the lines of a heading that wraps together and
doubles some; the outline's titles are set afterwards to the headings' own
(``data-book-title``, tools/site/book_html.py), one for one. The table of contents gets
its page numbers in a second printing: the first one's named destinations (Chromium
writes one for every element a link points at) give the page of each entry. Each
printing starts from a layout made afresh: from what the previous printing left of the
layout, Chromium breaks a long book's pages a little differently every other time (181
and 180 pages in turn on this book), and the contents would never settle. The PDFs go to
_build/downloads/ (tools/site/downloads.py copies them into the HTML's ``downloads/``
folder). They are printed again only when the HTML, the print style or the code that
assembles and prints them (with the functions it runs in the page, tools/site/js/), or
Chromium changed since (``pdf-stamp.json``; ``--force`` prints anyway).
"""

from __future__ import annotations

import io
import time
from pathlib import Path

from tools import facts
from tools.frameworks import FRAMEWORKS
from tools.paths import Layout, read_config, write_atomic
from tools.site import book_html, edition
from tools.site.browser import CHROMIUM, CHROMIUM_ARGS, script, script_path, served
from tools.site.render import html_is_current
from tools.stamps import Digest, read_stamp, write_stamp
from tools.steps import Progress, StepFailed

STAMP = 'pdf-stamp.json'
PRINT_PAGE = '__book-print__.html'  # the document's address on the local server
MAX_PRINTINGS = 3  # the table of contents settles after two; a third checks
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
PREPARE = 'prepare'  # sets wide outputs smaller or wraps them; keeps short blocks whole
HEADING_TITLES = 'heading-titles'  # the titles of the headings that become bookmarks
TOC_TARGETS = 'toc-targets'  # what each entry of the table of contents points at
FRESH_LAYOUT = 'fresh-layout'  # throws the layout away before each printing
FILL_TOC = 'fill-toc'  # writes the page numbers into the table of contents
SCRIPTS = (SETTLED, PREPARE, HEADING_TITLES, TOC_TARGETS, FRESH_LAYOUT, FILL_TOC)


class PdfError(StepFailed):
    """The PDF could not be printed: no browser, an HTML older than its sources, ..."""


def pdf_path(layout: Layout, framework: str, folder: Path | None = None) -> Path:
    name = facts.download_name(facts.repo_name(layout), framework, 'pdf')
    return Path(folder or layout.book_downloads) / name


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


def retitle_outline(pdf: bytes, titles: list[str]) -> bytes:
    """The PDF with its bookmarks named ``titles``, one for one, in order."""
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
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def print_document(
    browser: object, base: str, document: str, progress: Progress | None = None
) -> bytes:
    """Print ``document`` (served at ``base``, beside the site's files) with its table of
    contents' page numbers filled in."""
    view = browser.new_page()
    try:
        view.route(
            f'{base}/{PRINT_PAGE}',
            lambda route: route.fulfill(body=document, content_type='text/html; charset=utf-8'),
        )
        view.emulate_media(media='print')  # what the script measures is laid out as printed
        view.goto(f'{base}/{PRINT_PAGE}', wait_until='load')
        view.evaluate(script(SETTLED))
        done = view.evaluate(script(PREPARE), [MIN_OUTPUT_PT, KEEP_SHARE])
        if progress is not None and done:
            progress(
                f'pdf: {done["smaller"]} outputs set smaller to fit, {done["wrapped"]} '
                f'wrapped; {done["kept"]} blocks kept on one page; {done["wide"]} still '
                'wider than the text'
            )
        titles = view.evaluate(script(HEADING_TITLES))
        targets = view.eval_on_selector_all(f'.{book_html.PAGE_SLOT}', script(TOC_TARGETS))
        numbers: dict[str, int] = {}
        for _ in range(MAX_PRINTINGS):
            view.evaluate(script(FRESH_LAYOUT))
            pdf = view.pdf(**PDF_OPTIONS)
            found = page_numbers(pdf)
            missing = [target for target in targets if target not in found]
            if missing:
                raise PdfError(
                    f'the printed PDF has no destination for {", ".join(missing[:5])}: '
                    'the table of contents cannot name their pages'
                )
            now = {target: found[target] for target in targets}
            if now == numbers:
                return retitle_outline(pdf, titles) if titles else pdf
            moved = [
                f'{t} {numbers.get(t)}->{now[t]}' for t in targets if numbers.get(t) != now[t]
            ]
            numbers = now
            view.evaluate(script(FILL_TOC), numbers)
        raise PdfError(
            f"the table of contents' page numbers still changed after {MAX_PRINTINGS} "
            f'printings ({len(moved)} entries in the last, e.g. {", ".join(moved[:5])})'
        )
    finally:
        view.close()


def stamp(layout: Layout, browser_version: str) -> dict[str, str]:
    """What the PDFs are made from (a tools.stamps digest of the HTML's own digest, the
    print style and the code that assembles and prints the document, its scripts
    included), and the browser."""
    inputs = Digest(layout).text('html', read_stamp(layout.render_stamp).get('inputs', ''))
    inputs.file(book_html.PRINT_CSS).code('tools.site.pdf')
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
                    document = book_html.book_document(
                        layout.html, layout.site, framework, title, made.site_url, made
                    )
                    pdf = print_document(browser, base, document, progress)
                    write_atomic(path, pdf)
                    progress(
                        f'pdf: {path} ({len(pdf) / 1e6:.1f} MB) printed in '
                        f'{time.perf_counter() - start:.0f} s'
                    )
        finally:
            browser.close()
    write_stamp(layout.book_downloads / STAMP, **now)
    return paths
