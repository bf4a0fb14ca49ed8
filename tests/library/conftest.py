"""Fixtures of the library's tests: each framework's side (tests/library/twins.py)."""

import pytest

from tests.library.twins import SIDES


@pytest.fixture(params=list(SIDES))
def fw(request):
    """The side of each framework in turn: a test that asks for it runs once per
    framework, with the same assertions."""
    return SIDES[request.param]
