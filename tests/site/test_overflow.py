"""Code and outputs fit their column, in a real browser (headless Chromium, as in
test_browser.py): on every page, every visible code box (``div.highlight pre``, the
cells' inputs and their text outputs) and output box is no wider than the space it has,
``scrollWidth <= clientWidth + 1``, so that no closing quote or last value hides behind
a scrollbar.

Measured at the width where "Both" starts to show the frameworks side by side
(frameworks.js's SIDE_BY_SIDE_MIN), at 1600 and 1920 px with "Both" chosen, and at
1280 px with each framework alone. The light colour scheme stands for both: the dark one
changes colours, not the fonts or the boxes.
"""

from __future__ import annotations

import re

import pytest

from tests.site.book_site import REPO, WIDE_TABLE
from tests.site.test_browser import Session
from tools.site.browser import served

pytestmark = [pytest.mark.slow, pytest.mark.browser]

FRAMEWORKS_JS = REPO / 'book' / '_static' / 'frameworks.js'


def side_by_side_min() -> int:
    """The width (px) from which "Both" shows two columns, as frameworks.js sets it."""
    found = re.search(r'SIDE_BY_SIDE_MIN = (\d+);', FRAMEWORKS_JS.read_text(encoding='utf-8'))
    assert found, f'{FRAMEWORKS_JS}: no SIDE_BY_SIDE_MIN'
    return int(found.group(1))


def views() -> list[tuple[str, int]]:
    """(choice, window width) of every view measured."""
    both = sorted({side_by_side_min(), 1600, 1920})
    return [('both', width) for width in both] + [('pytorch', 1280), ('jax', 1280)]


# Every visible box that overflows sideways: its kind, widths and first line.
OVERFLOWING = """() => {
  const boxes = document.querySelectorAll(
    'div.cell div.highlight pre, div.cell .cell_output > .output');
  return [...boxes].filter(box => box.getClientRects().length > 0)
    .filter(box => box.scrollWidth > box.clientWidth + 1)
    .map(box => ({
      kind: box.closest('.cell_output') ? 'output' : 'code',
      framework: box.closest('div.cell.tag_jax') ? 'jax'
        : box.closest('div.cell.tag_pytorch') ? 'pytorch' : 'both',
      scroll: box.scrollWidth, client: box.clientWidth,
      line: (box.textContent.split('\\n').find(l => l.trim()) || '').trim().slice(0, 120),
    }));
}"""

SIDE = "() => document.documentElement.classList.contains('fw-side')"


def overflowing(session: Session, rel: str, choice: str) -> list[dict]:
    page = session.open(rel, f'?framework={choice}')
    page.wait_for_function('() => document.fonts.status === "loaded"')
    return page.evaluate(OVERFLOWING)


def describe(rel: str, choice: str, width: int, box: dict) -> str:
    return (
        f'{rel} at {width} px, {choice}: {box["kind"]} box ({box["framework"]}) '
        f'{box["scroll"]} px wide in {box["client"]} px: {box["line"]}'
    )


def check_site(browser, base: str, pages: list[str]) -> dict[tuple, list[str]]:
    """{(choice, width): [description of each overflowing box]} over `pages`."""
    found = {}
    for choice, width in views():
        session = Session(browser, base, viewport={'width': width, 'height': 900})
        try:
            boxes = []
            for rel in pages:
                boxes += [
                    describe(rel, choice, width, box) for box in overflowing(session, rel, choice)
                ]
            if choice == 'both' and width >= side_by_side_min():
                assert session.page.evaluate(SIDE), f'{width} px: no side-by-side view'
            found[choice, width] = boxes
            assert session.errors == [], session.errors
        finally:
            session.close()
    return found


def test_code_and_outputs_fit_their_column(browser, site):
    with served(site.html) as base:
        found = check_site(browser, base, site.sections)
    # The demo's wide table is wider than any column on purpose (the PDF test keeps its
    # rows): on screen it scrolls, behind the shade that says there is more.
    allowed = () if site.real else (WIDE_TABLE.splitlines()[0].strip()[:120],)
    problems = [line for boxes in found.values() for line in boxes if not line.endswith(allowed)]
    counts = ', '.join(
        f'{choice} {width} px: {len(boxes)}' for (choice, width), boxes in found.items()
    )
    assert not problems, (
        f'{len(problems)} boxes wider than their column ({counts}):\n' + '\n'.join(problems)
    )
    if not site.real:
        assert len(found['pytorch', 1280]) == 1, "the demo's wide table is measured"


def test_the_breakpoint_is_where_79_characters_fit():
    """frameworks.css states the arithmetic of the breakpoint; the two agree."""
    css = (REPO / 'book' / '_static' / 'frameworks.css').read_text(encoding='utf-8')
    assert f'offered from {side_by_side_min()} px' in css
