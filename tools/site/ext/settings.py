"""The book's own Sphinx settings, and reading them: ``book_frameworks`` (the frameworks'
names and labels, in tab order) and ``notebooks_branch``, and the repository that the
theme's options name.

tools/site/render.py writes ``book_frameworks`` into the site's _config.yml from
tools/frameworks.py; ``notebooks_branch`` is the book's _config.yml's. What the build's
other steps need too (the repository, Colab's URLs) comes from tools/facts.py, which
knows no Sphinx.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

from tools import facts


def frameworks(config: Config) -> list[tuple[str, str]]:
    """``[(name, label)]`` of the book's frameworks, in tab order."""
    table = config.book_frameworks
    if not table:
        raise ExtensionError(
            'book_frameworks is not set: build the site with `python -m tools render`, '
            'which writes it into _config.yml from tools/frameworks.py'
        )
    return [(row['name'], row['label']) for row in table]


def github_repo(app: Sphinx) -> str:
    """'owner/name' of the repository that the theme's options name (repository.url)."""
    try:
        return facts.github_repo(app.config.html_theme_options.get('repository_url'))
    except facts.NotGitHub as error:
        raise ExtensionError(str(error)) from None


def setup(app: Sphinx) -> dict:
    app.add_config_value('notebooks_branch', facts.NOTEBOOKS_BRANCH, 'html', types=[str])
    app.add_config_value('book_frameworks', [], 'html', types=[list])
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
