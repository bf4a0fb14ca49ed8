"""Fixtures of the pipeline's tests: the repository's book, executed."""

import pytest

from tools.paths import Layout


@pytest.fixture(scope='session')
def executed_book() -> Layout:
    """The repository's book, split, executed and merged once per session.

    Under ``make test`` the book was just built, so this only confirms that nothing
    changed (every notebook cached).  A failing notebook fails every test that uses
    the fixture, with the framework, notebook, cell and traceback.
    """
    from tools.build import build
    from tools.steps import StepFailed, UsageError

    layout = Layout()
    try:
        build(layout, progress=lambda line: None, render_html=False)
    except (StepFailed, UsageError) as error:
        pytest.fail(f'building the book failed:\n{error}', pytrace=False)
    return layout
