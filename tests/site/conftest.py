"""Fixtures of the HTML tests: the built books of book_site.py."""

import pytest

from tests.site import book_site


@pytest.fixture(scope='module', params=['demo', 'real'])
def site(request):
    """The hand-made demo book, then the book itself (book_site.py builds both)."""
    if request.param == 'demo':
        return book_site.demo_site()
    request.getfixturevalue('corpus')  # the book's notebooks read it
    return book_site.real_site()
