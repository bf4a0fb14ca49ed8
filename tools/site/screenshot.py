"""A screenshot of a rendered section page, for the README.

    python -m tools screenshot [--page how-to-use] [--out docs/screenshot.png]
    python -m tools screenshot --framework both --width 1700 --out docs/side-by-side.png

Serves the built HTML (_build/site/_build/html) on 127.0.0.1, opens the page in
headless Chromium (tools/site/browser.py, through Playwright) 1200 pixels wide (or
`width`), showing the tab script's choice `framework` if one is given (a framework's name
or "both"), with the first tab group that holds a figure (or the first one) at the bottom
of the view, and saves the viewport as a PNG.
"""

from pathlib import Path
from urllib.parse import urlencode

from tools.frameworks import FRAMEWORKS
from tools.site.browser import CHROMIUM, CHROMIUM_ARGS, script, served
from tools.steps import UsageError

# What ?framework= selects: a framework, or every one side by side (frameworks.js).
CHOICES = (*FRAMEWORKS, 'both')
SCROLL_TO_FIGURE = 'scroll-to-figure'  # tools/site/js/scroll-to-figure.js


def screenshot(
    html: Path,
    page: str,
    out: Path,
    *,
    browser: object = None,
    framework: str | None = None,
    width: int = 1200,
    height: int = 900,
    chromium: str = CHROMIUM,
) -> Path:
    """Save a screenshot of <html>/<page>.html to `out`; returns its path.

    browser: a Playwright browser to use; by default Chromium is started and closed here.
    """
    from playwright.sync_api import sync_playwright

    html, out = Path(html), Path(out)
    if not (html / f'{page}.html').is_file():
        raise UsageError(f'page {page!r}: no {html / page}.html; build the book first (make book)')
    if framework is not None and framework not in CHOICES:
        raise UsageError(f'framework must be one of {CHOICES}, got {framework!r}')
    query = f'?{urlencode({"framework": framework})}' if framework else ''
    with served(html) as base:
        url = f'{base}/{page}.html{query}'
        if browser is not None:
            shoot(browser, url, out, width, height)
        else:
            with sync_playwright() as playwright:
                own = playwright.chromium.launch(
                    executable_path=chromium, headless=True, args=CHROMIUM_ARGS
                )
                shoot(own, url, out, width, height)
                own.close()
    return out


def shoot(browser: object, url: str, out: Path, width: int, height: int) -> None:
    context = browser.new_context(viewport={'width': width, 'height': height})
    view = context.new_page()
    view.goto(url)
    view.wait_for_load_state('load')
    view.evaluate(script(SCROLL_TO_FIGURE))
    view.wait_for_timeout(300)
    out.parent.mkdir(parents=True, exist_ok=True)
    view.screenshot(path=str(out))
    context.close()
