"""Facts about the book that several steps need, each derived in one place from the
book's configuration or its library; no Sphinx here, so that every step may import it.
``python -m tools facts NAME`` prints one of them (``FACTS``), for scripts such as the
workflow on the repository host.

- the repository: ``repository.url`` of _config.yml (:func:`repository_url`), its
  GitHub ``owner/name`` (:func:`github_repo`) and its name (:func:`repo_name`), which
  names the downloads;
- the published site's address (:func:`site_url`);
- the notebooks' branch (:func:`notebooks_branch`) and Colab's address of a notebook on
  it (:func:`colab_url`);
- the folders of the site that hold the split notebooks and the downloads, and the
  downloads' file names (:func:`download_name`);
- the corpus's SHA-1, which d2l_mini checks it against (:func:`corpus_sha1`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tools.paths import Layout, read_config
from tools.steps import UsageError

# The site's copies of the split notebooks, <framework>/<page>.ipynb, and its downloads,
# made after the HTML (tools/site/pdf.py and bundle.py): {kind: (file name, link text)}.
NOTEBOOKS_DIR = 'notebooks'
DOWNLOADS_DIR = 'downloads'
DOWNLOADS = {
    'pdf': ('{repo}-{framework}.pdf', 'the book as a PDF'),
    'notebooks': ('{repo}-{framework}-notebooks.zip', 'all its notebooks, executed (zip)'),
}
NOTEBOOKS_BRANCH = 'notebooks'  # the default of notebooks_branch in _config.yml
COLAB_URL = (
    'https://colab.research.google.com/github/{repo}/blob/{branch}/{framework}/{page}.ipynb'
)
GITHUB_URL = re.compile(r'https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?')


class NotGitHub(ValueError):
    """``repository.url`` is not the address of a GitHub repository."""


def github_repo(url: str | None) -> str:
    """'owner/name' of a GitHub repository's URL; NotGitHub for any other URL."""
    match = GITHUB_URL.fullmatch(url or '')
    if match is None:
        raise NotGitHub(
            f'repository.url in _config.yml must be https://github.com/<owner>/<name> '
            f'for the Colab links and the site address, got {url!r}'
        )
    return f'{match[1]}/{match[2]}'


def configured_url(layout: Layout) -> str | None:
    """``repository.url`` of _config.yml as written, or None."""
    url = (read_config(layout).get('repository') or {}).get('url')
    return str(url) if url else None


def repository_url(layout: Layout) -> str:
    """``repository.url`` of _config.yml, without a trailing slash; UsageError when it is
    not set."""
    url = configured_url(layout)
    if not url:
        raise UsageError(
            f'repository.url is not set in {layout.config}: the install cell installs '
            'd2l_mini from that repository; set it to https://github.com/<owner>/<name>'
        )
    return url.rstrip('/')


def repo_name(layout: Layout) -> str:
    """The name of the book's repository (any git URL's last part), which names its
    downloads."""
    return repository_url(layout).rsplit('/', 1)[-1].removesuffix('.git')


def site_url(layout: Layout) -> str | None:
    """The published site's address, from ``repository.url``; None if it is not GitHub's."""
    try:
        owner, name = github_repo(configured_url(layout)).split('/')
    except NotGitHub:
        return None
    return f'https://{owner}.github.io/{name}/'


def notebooks_branch(layout: Layout) -> str:
    """The branch that holds the published notebooks (``notebooks_branch`` in the sphinx
    config of _config.yml), which the HTML's Colab links name."""
    sphinx_config = (read_config(layout).get('sphinx') or {}).get('config') or {}
    return str(sphinx_config.get('notebooks_branch', NOTEBOOKS_BRANCH))


def download_name(repo: str, framework: str, kind: str) -> str:
    """The file name of one of the book's downloads: ``kind`` is 'pdf' or 'notebooks'."""
    return DOWNLOADS[kind][0].format(repo=repo, framework=framework)


def colab_url(repo: str, branch: str, framework: str, page: str) -> str:
    """Colab's address of the notebook of ``page`` (e.g. 'transformer-block/vit') on the
    notebooks branch of the GitHub repository ``repo`` ('owner/name')."""
    return COLAB_URL.format(repo=repo, branch=branch, framework=framework, page=page)


def corpus_sha1() -> str:
    """The SHA-1 of the corpus, as d2l_mini.data checks it (the workflow's corpus cache is
    keyed on it)."""
    from d2l_mini import data

    return data.TIME_MACHINE_SHA1


# What ``python -m tools facts NAME`` prints: {NAME: the fact of a layout}.
FACTS: dict[str, Callable[[Layout], str]] = {
    'corpus-sha1': lambda layout: corpus_sha1(),
    'repository-url': repository_url,
    'notebooks-branch': notebooks_branch,
}
