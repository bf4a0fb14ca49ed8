"""Fixtures of the HTML tests: the built books of book_site.py."""

import pytest

from tests.site import book_site
from tools.site.browser import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope='module', params=['demo', 'real'])
def site(request):
    """The hand-made demo book, then the book itself (book_site.py builds both)."""
    if request.param == 'demo':
        return book_site.demo_site()
    request.getfixturevalue('corpus')  # the book's notebooks read it
    return book_site.real_site()


@pytest.fixture(scope='module')
def browser():
    from tests.site.test_browser import chromium_or_skip

    chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()
