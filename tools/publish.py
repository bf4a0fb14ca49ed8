"""Publish a finished build: the HTML to ``gh-pages``, the notebooks to ``notebooks``.

    python -m tools publish [--remote REMOTE] [--install-from URL] [--dry-run DIR]

From the build of a clean commit (``make book`` first), commits two trees with
ghp-import and pushes both branches to REMOTE (default ``origin``) in one atomic push:

- ``gh-pages``: the HTML site (``_build/site/_build/html``) and ``.nojekyll``, with the
  book's downloads in ``downloads/``: each framework's PDF, and its notebooks' zip made
  again from the published notebooks;
- ``notebooks``: ``pytorch/<page>.ipynb`` and ``jax/<page>.ipynb`` for every section
  of the book, the paths of its "Open in Colab" links.  They are the executed
  notebooks, so that a reader sees the outputs before running anything, and their
  install cell installs ``d2l_mini`` at the published commit.

Refuses, leaving the remote as it was, when ``repository.url`` in _config.yml is not a
GitHub repository, the working tree has uncommitted changes, the build is older than
the sources (the PDFs included), the remote cannot be reached or lacks the commit, or the push is
rejected.  ``--dry-run DIR`` writes the two trees into DIR/gh-pages and DIR/notebooks
and pushes nothing.  ``--install-from`` makes the install cell fetch d2l_mini from
another git URL than ``repository.url`` (a mirror, or a local repository in tests).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import ghp_import
import nbformat

from tools import facts
from tools.frameworks import FRAMEWORKS
from tools.paths import Layout, write_atomic
from tools.run.cache import notebook_hash, recorded
from tools.site import bundle, downloads, render
from tools.source import colab
from tools.source.myst import References
from tools.source.sections import read_section
from tools.source.split import build_notebook
from tools.steps import Progress, StepFailed

SITE_BRANCH = 'gh-pages'
GIT_TIMEOUT = 120  # seconds for one network operation


class PublishError(StepFailed):
    """Publishing was refused or failed; the message says why and what to do."""


def git(layout: Layout, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    # Never wait for a password prompt: an unreachable remote must fail, not hang.
    env = dict(os.environ, GIT_TERMINAL_PROMPT='0')
    try:
        result = subprocess.run(
            ['git', *args],
            cwd=layout.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise PublishError(f'`git {" ".join(args)}` did not finish in {GIT_TIMEOUT} s') from None
    if check and result.returncode != 0:
        raise PublishError(f'`git {" ".join(args)}` failed: {result.stderr.strip()}')
    return result


def branches(layout: Layout) -> dict[str, str]:
    """The branch of each tree: ``gh-pages`` for the site; for the notebooks, the
    ``notebooks_branch`` that the HTML's Colab links name (_config.yml)."""
    return {'site': SITE_BRANCH, 'notebooks': facts.notebooks_branch(layout)}


def github_repository(layout: Layout) -> str:
    """'owner/name' of ``repository.url`` in _config.yml (the one the HTML's links use)."""
    url = facts.configured_url(layout)
    try:
        return facts.github_repo(url)
    except facts.NotGitHub:
        raise PublishError(
            f'repository.url in {layout.config} is {url!r}, not a GitHub repository: the Colab '
            "links and the site's address need https://github.com/<owner>/<name>; set it there, "
            'then `make book` and publish again'
        ) from None


def check_clean(layout: Layout) -> str:
    """The commit of HEAD, if the working tree has no uncommitted changes."""
    if git(layout, 'rev-parse', '--is-inside-work-tree', check=False).returncode != 0:
        raise PublishError(f'{layout.root} is not a git working tree: publish from a clone')
    changes = git(layout, 'status', '--porcelain', '--untracked-files=normal').stdout.splitlines()
    if changes:
        shown = '; '.join(line.strip() for line in changes[:5]) + (
            '; ...' if len(changes) > 5 else ''
        )
        raise PublishError(
            f'the working tree has uncommitted changes ({shown}): the published notebooks install '
            'd2l_mini at a commit, which must be what was built. Commit or stash them, '
            'then `make book` and publish again'
        )
    return git(layout, 'rev-parse', 'HEAD').stdout.strip()


def published_sections(layout: Layout) -> list[str]:
    """The sections the HTML holds, in the toc's order (as tools.site.render chose them)."""
    return render.site_toc(layout)[1]


def check_fresh(layout: Layout, sections: list[str]) -> Path:
    """The HTML folder, if the build is up to date with the sources; else PublishError."""
    rebuild = 'run `make book` (python -m tools build), then publish again'
    html = layout.html
    if not layout.render_stamp.is_file() or not (html / 'index.html').is_file():
        raise PublishError(
            f'no finished build: {layout.render_stamp} or {html / "index.html"} '
            f'is missing; {rebuild}'
        )
    if not render.html_is_current(layout):
        raise PublishError(
            f'the HTML in {html} is older than the sources it is made from '
            f'(the book, the tools or the notebooks changed since it was rendered); {rebuild}'
        )
    problems = downloads.missing_or_stale(layout)
    if problems:
        raise PublishError(f'{"; ".join(problems)}; {rebuild}')
    references = References.load(layout)
    for rel in sections:
        section = read_section(layout, rel)
        for framework in FRAMEWORKS:
            path = layout.executed(framework, rel)
            executed = nbformat.read(path, as_version=4) if path.is_file() else None
            current = notebook_hash(
                build_notebook(section, framework, layout, references), framework, layout
            )
            if executed is None or recorded(executed).get('hash') != current:
                raise PublishError(
                    f'the executed notebook {path} is missing or older than its section '
                    '(its code, d2l_mini, the pinned versions or the installed frameworks '
                    f'changed); {rebuild}'
                )
    return html


def check_remote(layout: Layout, remote: str, commit: str) -> dict[str, str]:
    """``{ref: commit}`` of the remote's branches, if it can be reached and has ``commit``."""
    listed = git(layout, 'ls-remote', '--heads', remote, check=False)
    if listed.returncode != 0:
        said = ' '.join(listed.stderr.split())
        raise PublishError(
            f'cannot reach the remote {remote!r} (git ls-remote: {said}); nothing was '
            'written. Check the name or URL (--remote), the network and your credentials'
        )
    heads = {}
    for line in listed.stdout.splitlines():
        sha, _, ref = line.partition('\t')
        heads[ref] = sha
    if commit not in heads.values():
        raise PublishError(
            f'commit {commit[:12]} is not the tip of any branch of {remote!r}: the notebooks '
            'would install d2l_mini at a commit readers cannot fetch. Push it first '
            f'(git push {remote} HEAD:main), then publish again'
        )
    return heads


def write_notebooks(
    layout: Layout,
    sections: list[str],
    commit: str,
    install_from: str | None,
    target: Path,
    executed: bool = True,
) -> None:
    """The executed notebooks (``executed=False``: the split ones), with ``commit`` in
    their install cell, as <framework>/<page>.ipynb."""
    for framework in FRAMEWORKS:
        for rel in sections:
            path = (layout.executed if executed else layout.notebook)(framework, rel)
            notebook = nbformat.read(path, as_version=4)
            install = next((c for c in notebook.cells if c.get('id') == colab.CELL_ID), None)
            if install is None:
                raise PublishError(
                    f'{path} has no install cell '
                    f'(id {colab.CELL_ID!r}); run `make book`, then publish again'
                )
            sources = [
                c.source for c in notebook.cells if c.cell_type == 'code' and c is not install
            ]
            cell = colab.install_source(
                framework, layout, commit=commit, repository=install_from, sources=sources
            )
            install.source, install.outputs, install.execution_count = cell, [], None
            write_atomic(target / framework / f'{rel}.ipynb', nbformat.writes(notebook) + '\n')


def write_trees(
    layout: Layout,
    html: Path,
    sections: list[str],
    commit: str,
    install_from: str | None,
    target: Path,
) -> dict[str, Path]:
    """The two branches' trees below ``target``: ``{"site": ..., "notebooks": ...}``."""
    trees = {'site': target / 'site', 'notebooks': target / 'notebooks'}
    shutil.copytree(html, trees['site'])
    (trees['site'] / '.nojekyll').touch()
    write_notebooks(layout, sections, commit, install_from, trees['notebooks'])
    # The pages' download links serve the same notebooks as their Colab links, and so do
    # the zips.
    shutil.copytree(trees['notebooks'], trees['site'] / facts.NOTEBOOKS_DIR, dirs_exist_ok=True)
    bundle.write_bundles(
        layout,
        sections,
        folder=trees['site'] / facts.DOWNLOADS_DIR,
        notebooks=trees['notebooks'],
        commit=commit,
        repository=install_from,
    )
    return trees


def commit_trees(
    layout: Layout,
    remote: str,
    heads: dict[str, str],
    trees: dict[str, Path],
    names: dict[str, str],
    commit: str,
) -> None:
    """One new commit per branch (ghp-import), on top of the remote's branch where it has one."""
    for kind, tree in trees.items():
        branch = names[kind]
        if f'refs/heads/{branch}' in heads:
            git(layout, 'fetch', '--quiet', remote, f'+refs/heads/{branch}:refs/heads/{branch}')
        before = git(
            layout, 'rev-parse', '--verify', '--quiet', f'refs/heads/{branch}', check=False
        ).stdout
        try:
            with contextlib.chdir(
                layout.root
            ):  # ghp-import works on the current directory's repository
                ghp_import.ghp_import(
                    str(tree),
                    branch=branch,
                    remote=remote,
                    push=False,
                    nojekyll=kind == 'site',
                    mesg=f'The book built from {commit}',
                )
        except ghp_import.GhpError as error:
            raise PublishError(
                f'ghp-import could not commit the {branch} branch: {error}; nothing was pushed'
            ) from None
        after = git(
            layout, 'rev-parse', '--verify', '--quiet', f'refs/heads/{branch}', check=False
        ).stdout
        if not after or after == before:
            raise PublishError(
                f'ghp-import did not commit the {branch} branch; nothing was pushed'
            )


def push(layout: Layout, remote: str, names: dict[str, str]) -> None:
    """Both branches in one atomic push: either both are updated or neither."""
    refs = [f'refs/heads/{b}:refs/heads/{b}' for b in names.values()]
    result = git(layout, 'push', '--atomic', '--porcelain', remote, *refs, check=False)
    if result.returncode != 0:
        raise PublishError(
            f'the remote {remote!r} rejected the push of {" and ".join(names.values())}; neither '
            f'branch was updated:\n{(result.stderr + result.stdout).strip()}\n'
            'If a branch is protected, allow pushes to it by whoever publishes (in CI, the '
            "workflow's token); if someone published meanwhile, publish again"
        )


def publish(
    layout: Layout,
    remote: str = 'origin',
    install_from: str | None = None,
    dry_run: Path | None = None,
    progress: Progress = print,
) -> dict[str, str]:
    """Check, write and (unless ``dry_run``) push; returns the site's and a Colab URL."""
    if install_from is not None:
        colab.check_repository(install_from, name='--install-from')
    repo = github_repository(layout)
    names = branches(layout)
    commit = check_clean(layout)
    sections = published_sections(layout)
    html = check_fresh(layout, sections)
    if dry_run is not None:
        dry_run = Path(dry_run)
        if dry_run.exists() and any(dry_run.iterdir()):
            raise PublishError(
                f'--dry-run folder {dry_run} is not empty: name a new or empty folder'
            )
        dry_run.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=dry_run, prefix='.publish-'))
        try:
            trees = write_trees(layout, html, sections, commit, install_from, staging)
            for kind, tree in trees.items():
                tree.rename(dry_run / names[kind])
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        progress(f'wrote {" and ".join(str(dry_run / n) for n in names.values())}; pushed nothing')
    else:
        heads = check_remote(layout, remote, commit)
        with tempfile.TemporaryDirectory(prefix='publish-') as staging:
            trees = write_trees(layout, html, sections, commit, install_from, Path(staging))
            commit_trees(layout, remote, heads, trees, names, commit)
        push(layout, remote, names)
        progress(f'published {commit[:12]} to {remote}: branches {" and ".join(names.values())}')
    urls = {'site': facts.site_url(layout)}
    if sections:
        urls['colab'] = facts.colab_url(repo, names['notebooks'], FRAMEWORKS[0], sections[0])
    for kind, url in urls.items():
        progress(f'{kind}: {url}')
    return urls
