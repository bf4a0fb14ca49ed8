"""The framework tabs in a real browser: headless Chromium (Debian's /usr/bin/chromium)
driven by Playwright, on the built HTML served from 127.0.0.1 with every other address
blocked.

Runs on the real book when the pipeline is there, and always on the hand-made book of
tests/book_site.py, whose twin cells differ in height so that switching moves the page.
Outside CI a machine without Chromium skips these tests; in CI (CI set) it fails them.
"""

import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = os.environ.get("BOOK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1200, "height": 800}

# Runs before any script of the page: notes the classes of <html> at the moment the
# first code cell is parsed, so we can tell that the tab choice applies before paint.
FIRST_CELL_PROBE = """
window.__classesAtFirstCell = null;
new MutationObserver((records, observer) => {
  if (document.querySelector('div.cell')) {
    window.__classesAtFirstCell = document.documentElement.className;
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""

# For each tab group: the frameworks of its active tabs and of its visible cells.
GROUP_STATE = """() => [...document.querySelectorAll('.fw-group')].map(group => ({
  active: [...group.querySelectorAll('.fw-tab.fw-active')].map(tab => tab.dataset.framework),
  visible: [...group.querySelectorAll(':scope > div.cell')]
    .filter(cell => cell.getClientRects().length > 0)
    .map(cell => cell.classList.contains('tag_jax') ? 'jax' : 'pytorch'),
}))"""

VISIBLE_TAGGED = """() => [...document.querySelectorAll('div.cell.tag_pytorch, div.cell.tag_jax')]
  .filter(cell => cell.getClientRects().length > 0)
  .map(cell => cell.classList.contains('tag_jax') ? 'jax' : 'pytorch')"""


def chromium_or_skip():
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("the playwright package is missing: pip install -r requirements.txt")
        pytest.skip("the playwright package is not installed")
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        if os.environ.get("CI"):
            pytest.fail(f"no browser at {CHROMIUM}: CI must install Debian's chromium (apt-get install chromium)")
        pytest.skip(f"no browser at {CHROMIUM} (apt-get install chromium); CI runs this test")


@pytest.fixture(scope="module")
def browser():
    chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(QuietHandler, directory=str(site.html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


class Session:
    """One browser context (its own localStorage) that records every console error,
    uncaught exception and attempt to reach another host."""

    def __init__(self, browser, base, javascript=True):
        self.base = base
        self.errors = []
        self.offsite = []
        self.context = browser.new_context(viewport=VIEWPORT, java_script_enabled=javascript)
        self.context.add_init_script(FIRST_CELL_PROBE)
        self.context.route("**/*", self.only_local)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

    def only_local(self, route):
        if route.request.url.startswith(self.base):
            route.continue_()
        else:
            self.offsite.append(route.request.url)
            route.abort()

    def open(self, rel, query=""):
        self.page.goto(f"{self.base}/{rel}.html{query}")
        self.page.wait_for_load_state("load")
        return self.page

    def close(self):
        self.context.close()


@pytest.fixture
def session(browser, server):
    opened = Session(browser, server)
    yield opened
    opened.close()


def assert_showing(page, framework, loaded=True):
    """Every group, cell and notebook link shows `framework`; if the page was just
    `loaded` (not switched by a click), the choice was applied before the cells parsed."""
    groups = page.evaluate(GROUP_STATE)
    assert groups, f"{page.url}: no tab group"
    for i, group in enumerate(groups):
        assert group["active"] == [framework], f"{page.url}: group {i} active tabs {group['active']}"
        assert group["visible"] and set(group["visible"]) == {framework}, f"{page.url}: group {i} shows {group['visible']}"
    assert set(page.evaluate(VISIBLE_TAGGED)) == {framework}
    other = {"pytorch": "jax", "jax": "pytorch"}[framework]
    assert page.locator(f".fw-notebooks .fw-only-{framework} a.fw-download").is_visible()
    assert not page.locator(f".fw-notebooks .fw-only-{other}").is_visible()
    if loaded:
        assert f"fw-{framework}" in page.evaluate("window.__classesAtFirstCell").split(), \
            "the framework class was not on <html> when the first cell was parsed"


def pages_with_tabs(site):
    first = site.sections[0]
    following = site.sections[1] if len(site.sections) > 1 else first
    return first, following


def test_choice_applies_to_every_group_and_page_and_persists(session, site):
    first, following = pages_with_tabs(site)
    page = session.open(first)
    assert_showing(page, "pytorch")

    page.locator(".fw-group").nth(0).get_by_role("tab", name="JAX").click()
    assert_showing(page, "jax", loaded=False)
    assert session.page.locator(".fw-notebooks .fw-only-jax a.fw-download").get_attribute("href") \
        .endswith(f"notebooks/jax/{first}.ipynb")

    assert_showing(session.open(following), "jax")
    page.reload()
    page.wait_for_load_state("load")
    assert_showing(page, "jax")

    assert_showing(session.open(first, "?framework=pytorch"), "pytorch")
    assert_showing(session.open(following), "pytorch")
    assert session.errors == [] and session.offsite == []


def test_url_choice_then_click_updates_the_address(session, site):
    first, _ = pages_with_tabs(site)
    page = session.open(first, "?framework=jax")
    assert_showing(page, "jax")
    page.locator(".fw-group").nth(0).get_by_role("tab", name="PyTorch").click()
    assert_showing(page, "pytorch", loaded=False)
    assert "framework=pytorch" in page.url
    page.reload()
    page.wait_for_load_state("load")
    assert_showing(page, "pytorch")
    assert session.errors == [] and session.offsite == []


def test_clicked_tab_bar_stays_in_place(session, site):
    if site.real:
        pytest.skip("checked on the hand-made book, whose twins differ in height by design")
    page = session.open("demo/twins")
    groups = page.locator(".fw-group")
    assert groups.count() >= 2
    bar = groups.nth(1).locator(".fw-tabbar")
    bar.evaluate("bar => window.scrollTo(0, bar.getBoundingClientRect().top + window.scrollY - 300)")
    above_before = groups.nth(0).bounding_box()["height"]
    before = bar.evaluate("bar => bar.getBoundingClientRect().top")
    assert abs(before - 300) < 2, "the page is too short to scroll the bar to mid-screen"

    bar.get_by_role("tab", name="JAX").click()
    after = bar.evaluate("bar => bar.getBoundingClientRect().top")
    above_after = groups.nth(0).bounding_box()["height"]
    assert above_after - above_before > 30, "the switch should have changed the height above the bar"
    assert abs(after - before) <= 3, f"the tab bar moved from {before} to {after} px"
    assert_showing(page, "jax", loaded=False)
    assert session.errors == []


def test_without_javascript_both_versions_show_labelled(browser, server, site):
    quiet = Session(browser, server, javascript=False)
    try:
        rel = site.sections[0]
        page = quiet.open(rel)
        assert page.locator(".fw-tabbar").count() == 0
        for framework, label in (("pytorch", "PyTorch"), ("jax", "JAX")):
            cells = page.locator(f"div.cell.tag_{framework}")
            assert cells.count() >= 1
            for i in range(cells.count()):
                assert cells.nth(i).is_visible()
                content = cells.nth(i).evaluate("cell => getComputedStyle(cell, '::before').content")
                assert content == f'"{label}"', content
            assert page.locator(f".fw-notebooks .fw-only-{framework}").is_visible()
        assert quiet.offsite == []
    finally:
        quiet.close()


def test_screenshot_script_writes_a_small_png(browser, site, tmp_path):
    from tools.screenshot import screenshot

    out = screenshot(site.html, site.sections[0], tmp_path / "shot.png", browser=browser)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 300_000
    assert int.from_bytes(data[16:20], "big") == 1200

