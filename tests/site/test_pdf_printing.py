"""How tools/site/pdf.py prints until the table of contents' page numbers settle.

The browser is a stand-in that behaves as Chromium does on the real book: a printing
that starts from what the previous printing left of the layout breaks one page
differently (every other printing, the entries after it move by a page), while a
printing from a layout made afresh is the same every time.
"""

import json
import shutil

import pytest

from tools.paths import Layout
from tools.site import browser as page_scripts
from tools.site import pdf

TARGETS = ('intro', 'methods', 'results')
PAGES = {'intro': 3, 'methods': 9, 'results': 14}


class View:
    """A page of the stand-in browser; its "PDF" is the JSON of its named destinations."""

    def __init__(self, pages_of):
        self.pages_of = pages_of  # (printings so far, laid out afresh?) -> {target: page}
        self.printings = 0
        self.carried = False  # whether a previous printing's layout is left over
        self.toc: dict[str, int] = {}
        self.closed = False

    def route(self, url, handler):
        pass

    def goto(self, url, wait_until):
        pass

    def emulate_media(self, media):
        pass

    def eval_on_selector_all(self, selector, script):
        return list(TARGETS)

    def evaluate(self, script, argument=None):
        if script == page_scripts.script(pdf.FRESH_LAYOUT):
            self.carried = False
        elif script == page_scripts.script(pdf.FILL_TOC):
            self.toc = {target: int(page) for target, page in argument['numbers'].items()}

    def pdf(self, **options):
        pages = self.pages_of(self.printings, not self.carried)
        self.printings += 1
        self.carried = not self.carried  # Chromium alternates between two breaks
        return json.dumps({'pages': pages, 'toc': self.toc}).encode()

    def close(self):
        self.closed = True


class Browser:
    def __init__(self, pages_of):
        self.view = View(pages_of)

    def new_page(self):
        return self.view


def printing_from_json(data):
    pages = json.loads(data)['pages']
    return pdf.Printing({t: (page - 1, None) for t, page in pages.items()}, max(pages.values()))


@pytest.fixture(autouse=True)
def destinations_from_json(monkeypatch):
    monkeypatch.setattr(pdf, 'read_printing', printing_from_json)


def alternating(printings, afresh):
    """Chromium on the real book: a page later from 'methods' on, unless laid out afresh."""
    return {t: page + (0 if afresh or t == 'intro' else 1) for t, page in PAGES.items()}


def test_the_contents_settle_in_two_printings_and_name_the_printed_pages():
    browser = Browser(alternating)
    printed = json.loads(pdf.print_document(browser, 'http://book.test', '<html></html>'))
    assert browser.view.printings == 2
    assert printed['toc'] == printed['pages'] == PAGES
    assert browser.view.closed


def test_contents_that_never_settle_are_reported_with_the_entries_that_moved():
    browser = Browser(lambda printings, afresh: {**PAGES, 'results': 14 + printings})
    with pytest.raises(pdf.PdfError, match=r'still changed after 5 printings.*results 17->18'):
        pdf.print_document(browser, 'http://book.test', '<html></html>')
    assert browser.view.printings == pdf.MAX_PRINTINGS
    assert browser.view.closed


def test_an_entry_without_a_destination_is_named():
    browser = Browser(lambda printings, afresh: {'intro': 3, 'methods': 9})
    with pytest.raises(pdf.PdfError, match='no destination for results'):
        pdf.print_document(browser, 'http://book.test', '<html></html>')


class Plan:
    """What book_html.Document tells the printing: no marks, one figure."""

    def __init__(self):
        self.marks = []
        self.figures = {'results': 1}
        self.refs = {}


def figure_at_a_page_s_top(data):
    printing = printing_from_json(data)
    index, _ = printing.pages['results']
    printing.pages['results'] = (index, pdf.PAGE_HEIGHT - pdf.TOP_MARGIN)
    return printing


def test_a_figure_below_a_gap_floats_once(monkeypatch):
    # 'results' starts the text of its page, below a page whose text ends at 40 %.
    monkeypatch.setattr(pdf, 'ink_depth', lambda data, index: 0.4)
    monkeypatch.setattr(pdf, 'read_printing', figure_at_a_page_s_top)
    floated = []
    browser = Browser(alternating)
    evaluate = browser.view.evaluate

    def spy(script, argument=None):
        if script == page_scripts.script(pdf.FLOAT):
            floated.append(argument)
        return evaluate(script, argument)

    browser.view.evaluate = spy
    pdf.print_document(browser, 'http://book.test', '<html></html>', plan=Plan())
    assert floated == [[{'id': 'results', 'room': round(0.6 * pdf.TEXT_HEIGHT_PX)}]]


def test_every_script_it_runs_in_the_page_is_one_that_the_stamp_follows(monkeypatch):
    run = []
    monkeypatch.setattr(pdf, 'script', lambda name: run.append(name) or page_scripts.script(name))
    monkeypatch.setattr(pdf, 'ink_depth', lambda data, index: 0.4)
    monkeypatch.setattr(pdf, 'read_printing', figure_at_a_page_s_top)
    pdf.print_document(Browser(alternating), 'http://book.test', '<html></html>', plan=Plan())
    assert set(run) == set(pdf.SCRIPTS)


def test_the_stamp_follows_each_script(tmp_path, monkeypatch):
    layout = Layout(root=tmp_path)
    scripts = tmp_path / 'js'
    shutil.copytree(page_scripts.SCRIPTS, scripts)
    monkeypatch.setattr(page_scripts, 'SCRIPTS', scripts)
    before = pdf.stamp(layout, 'Chromium 1')
    for name in pdf.SCRIPTS:
        path = page_scripts.script_path(name)
        text = path.read_text()
        path.write_text(text.replace('=>', '=>  ', 1))
        assert pdf.stamp(layout, 'Chromium 1') != before, name
        path.write_text(text)
    assert pdf.stamp(layout, 'Chromium 1') == before
