"""The book's derived facts (tools/facts.py): each from _config.yml, in one place that
imports no Sphinx."""

import subprocess
import sys

import pytest

from tools import facts
from tools.paths import ROOT


@pytest.mark.parametrize(
    'url',
    [
        'https://github.com/owner/book',
        'https://github.com/owner/book.git/',
        'https://github.com/owner/book/',
    ],
)
def test_a_github_url_gives_owner_and_name(url):
    assert facts.github_repo(url) == 'owner/book'


@pytest.mark.parametrize('url', [None, '', 'https://example.org/owner/book', 'git@github.com:o/b'])
def test_any_other_url_is_refused_naming_the_setting(url):
    with pytest.raises(facts.NotGitHub, match=r'repository\.url'):
        facts.github_repo(url)


def test_the_facts_of_a_github_repository(project):
    project.layout.config.write_text(
        'title: A book\nrepository:\n  url: https://github.com/owner/book.git\n'
        'sphinx:\n  config:\n    notebooks_branch: nb\n'
    )
    assert facts.repository_url(project.layout) == 'https://github.com/owner/book.git'
    assert facts.repo_name(project.layout) == 'book'
    assert facts.site_url(project.layout) == 'https://owner.github.io/book/'
    assert facts.notebooks_branch(project.layout) == 'nb'
    assert facts.download_name('book', 'jax', 'pdf') == 'book-jax.pdf'
    assert facts.download_name('book', 'jax', 'notebooks') == 'book-jax-notebooks.zip'
    assert facts.colab_url('owner/book', 'nb', 'jax', 'ch/a') == (
        'https://colab.research.google.com/github/owner/book/blob/nb/jax/ch/a.ipynb'
    )


def test_the_facts_of_another_repository(project):
    project.layout.config.write_text('title: A book\nrepository:\n  url: /srv/git/book/\n')
    assert facts.repo_name(project.layout) == 'book'
    assert facts.site_url(project.layout) is None
    assert facts.notebooks_branch(project.layout) == facts.NOTEBOOKS_BRANCH


def test_only_the_site_extension_imports_sphinx():
    """Every module of tools/ outside tools/site/ imports without Sphinx, so that the
    steps that need a fact of the book do not load the site's engine for it."""
    modules = sorted(
        '.'.join(path.relative_to(ROOT).with_suffix('').parts)
        for path in (ROOT / 'tools').rglob('*.py')
        if 'site' not in path.relative_to(ROOT / 'tools').parts[:1] and path.name != '__main__.py'
    )
    script = (
        'import importlib, sys\n'
        f'for name in {modules!r}:\n'
        '    importlib.import_module(name)\n'
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sphinx'))\n"
    )
    result = subprocess.run(
        [sys.executable, '-c', script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]', f'imported by tools outside tools/site: {result.stdout}'
