"""tools.publish: the refusals (fast, on a hand-made build) and the reader's run (slow).

The fast tests stand up a small project whose build is written by hand: split
notebooks from tools.source.split, "executed" copies carrying the cache hash, an HTML folder
and the render stamp, all as the build would leave them. The slow test publishes a
real build to a local bare repository and runs the published notebooks as a Colab
reader would.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from d2l_mini.data import data_dir
from tools.cli import main
from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.publish import PublishError, publish
from tools.run.cache import METADATA_KEY, notebook_hash
from tools.site import bundle, downloads, pdf
from tools.site.render import inputs_hash
from tools.source.colab import pinned_versions
from tools.source.sections import find_sections
from tools.source.split import split_section

CONFIG = """repository:
  url: https://github.com/owner/book
sphinx:
  config:
    notebooks_branch: notebooks
"""
TOC = 'format: jb-book\nroot: index\nchapters:\n  - file: ch/sec\n'
IDENTITY = {
    'GIT_AUTHOR_NAME': 'Book',
    'GIT_AUTHOR_EMAIL': 'book@example.org',
    'GIT_COMMITTER_NAME': 'Book',
    'GIT_COMMITTER_EMAIL': 'book@example.org',
}


def test_publish_checks_install_from_before_anything_else(project, capsys):
    # The project is no git repository: publish must stop at the argument first.
    assert main(['publish', '--install-from', 'x" && rm -rf ~ "'], project.layout) == 2
    err = capsys.readouterr().err
    assert '--install-from must be a git URL without spaces or quotes' in err
    assert 'Traceback' not in err


def git(cwd, *args):
    return subprocess.run(
        ['git', *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def remote_state(remote):
    """Every ref of a bare repository and what it points at."""
    return git(remote, 'for-each-ref', '--format=%(refname) %(objectname)')


def fake_build(project):
    """Split notebooks, executed copies, HTML and render stamp, the zips and two stand-in
    PDFs with their stamp, as a fresh build leaves them."""
    layout = project.layout
    with layout.requirements.open('a') as requirements:
        requirements.write('ipykernel==7.4.0\n')  # the zips' README registers a kernel
    for framework, path in split_section('ch/sec', layout).items():
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == 'code' and cell.id != 'install':
                cell.outputs = [
                    nbformat.v4.new_output('stream', name='stdout', text=f'{framework}\n')
                ]
        notebook.metadata[METADATA_KEY] = {'hash': notebook_hash(notebook, layout), 'wall_s': 1.0}
        target = layout.executed(framework, 'ch/sec')
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)
    html = layout.html
    (html / 'ch').mkdir(parents=True)
    (html / 'index.html').write_text('<html>index</html>\n')
    (html / 'ch' / 'sec.html').write_text('<html>section</html>\n')
    layout.render_stamp.write_text(json.dumps({'inputs': inputs_hash(layout)}) + '\n')
    bundle.write_bundles(layout, ['ch/sec'])
    for framework in FRAMEWORKS:
        pdf.pdf_path(layout, framework).write_bytes(f'%PDF-1.7 {framework}\n'.encode())
    stamp = pdf.stamp(layout, 'a browser')
    (layout.book_downloads / pdf.STAMP).write_text(json.dumps(stamp))
    downloads.copy_downloads(layout)


@pytest.fixture
def built(project, tmp_path, monkeypatch):
    """A committed project with a fresh build, and a bare remote that has its commit."""
    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)
    root = project.root
    project.layout.config.write_text(CONFIG)
    project.layout.toc.write_text(TOC)
    project.page('index', '# Index\n')
    project.section('ch/sec', '# Section\n', project.code('print(1)'))
    (root / '.gitignore').write_text('_build/\n')
    fake_build(project)
    git(root, 'init', '-q', '-b', 'main')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'book')
    remote = tmp_path / 'remote.git'
    git(tmp_path, 'init', '-q', '--bare', '-b', 'main', str(remote))
    git(root, 'push', '-q', str(remote), 'main')
    project.remote = remote
    project.commit = git(root, 'rev-parse', 'HEAD').strip()
    return project


def refused(project, match, remote=None):
    """Publishing fails with ``match`` and leaves the remote as it was."""
    remote = remote or project.remote
    before = remote_state(remote)
    with pytest.raises(PublishError, match=match):
        publish(project.layout, remote=str(remote), progress=lambda line: None)
    assert remote_state(remote) == before


def test_publishes_the_site_and_the_notebooks_at_the_links_paths(built, tmp_path, capsys):
    assert main(['publish', '--remote', str(built.remote)], built.layout) == 0
    out = capsys.readouterr().out
    assert 'https://owner.github.io/book/' in out
    assert (
        'https://colab.research.google.com/github/owner/book/blob/notebooks/pytorch/ch/sec.ipynb'
        in out
    )
    site = git(built.remote, 'ls-tree', '-r', '--name-only', 'gh-pages').split()
    assert {'index.html', 'ch/sec.html', '.nojekyll'} <= set(site)
    assert {
        f'downloads/book-{framework}{kind}'
        for framework in FRAMEWORKS
        for kind in ('.pdf', '-notebooks.zip')
    } <= set(site)
    files = git(built.remote, 'ls-tree', '-r', '--name-only', 'notebooks').split()
    assert sorted(files) == ['jax/ch/sec.ipynb', 'pytorch/ch/sec.ipynb']
    for framework in FRAMEWORKS:
        text = git(built.remote, 'show', f'notebooks:{framework}/ch/sec.ipynb')
        notebook = nbformat.reads(text, as_version=4)
        assert (
            f'"d2l_mini @ git+https://github.com/owner/book@{built.commit}"'
            in notebook.cells[0].source
        )
        assert notebook.cells[0].outputs == []
        assert notebook.cells[-1].outputs[0]['text'] == f'{framework}\n'  # the executed copy
        assert git(built.remote, 'show', f'gh-pages:notebooks/{framework}/ch/sec.ipynb') == text
    # A second publish of the same commit builds on the remote's branches.
    first = git(built.remote, 'rev-parse', 'gh-pages').strip()
    assert main(['publish', '--remote', str(built.remote)], built.layout) == 0
    assert git(built.remote, 'rev-parse', 'gh-pages^').strip() == first


def test_dry_run_writes_both_trees_and_pushes_nothing(built, tmp_path):
    before = remote_state(built.remote)
    out = tmp_path / 'dry'
    publish(
        built.layout,
        remote=str(built.remote),
        dry_run=out,
        install_from='file:///srv/mirror.git',
        progress=lambda line: None,
    )
    assert remote_state(built.remote) == before
    assert sorted(p.name for p in out.iterdir()) == ['gh-pages', 'notebooks']
    assert (out / 'gh-pages' / '.nojekyll').is_file() and (
        out / 'gh-pages' / 'index.html'
    ).is_file()
    published = out / 'notebooks' / 'jax' / 'ch' / 'sec.ipynb'
    cell = nbformat.read(published, as_version=4).cells[0]
    assert f'git+file:///srv/mirror.git@{built.commit}' in cell.source
    # The zips hold the published notebooks; the PDFs are the build's.
    downloads_folder = out / 'gh-pages' / 'downloads'
    with zipfile.ZipFile(downloads_folder / 'book-jax-notebooks.zip') as archive:
        assert archive.read('book-jax-notebooks/ch/sec.ipynb') == published.read_bytes()
        requirements = archive.read('book-jax-notebooks/requirements.txt').decode()
        assert requirements.endswith(f'git+file:///srv/mirror.git@{built.commit}\n')
    for framework in FRAMEWORKS:
        assert (downloads_folder / f'book-{framework}.pdf').read_bytes() == (
            pdf.pdf_path(built.layout, framework).read_bytes()
        )
    with pytest.raises(PublishError, match='not empty'):
        publish(built.layout, dry_run=out, progress=lambda line: None)


def test_refuses_a_stale_html(built):
    source = built.layout.source('ch/sec')
    source.write_text(source.read_text().replace('# Section', '# A renamed section'))
    git(built.root, 'commit', '-qam', 'retitle')
    git(built.root, 'push', '-q', str(built.remote), 'main')
    refused(built, r'HTML .* older than the sources.*make book')


def test_refuses_pdfs_older_than_the_html(built):
    stamp = built.layout.book_downloads / pdf.STAMP
    stamp.write_text(stamp.read_text().replace('"inputs": "', '"inputs": "0'))
    refused(built, r'the PDFs are missing or older than the HTML.*make book')


def test_refuses_an_html_without_its_downloads(built):
    (built.layout.html / 'downloads' / 'book-jax-notebooks.zip').unlink()
    refused(built, r'downloads lacks book-jax-notebooks.zip.*make book')


def test_refuses_outputs_older_than_the_library(built):
    # The HTML is rendered again from the new library (its reference page documents
    # d2l_mini), but the notebooks were not executed with it: their hashes say so.
    layout = built.layout
    (layout.library / 'extra.py').write_text('X = 1\n')
    layout.render_stamp.write_text(json.dumps({'inputs': inputs_hash(layout)}) + '\n')
    (layout.book_downloads / pdf.STAMP).write_text(json.dumps(pdf.stamp(layout, 'a browser')))
    git(built.root, 'add', '-A')
    git(built.root, 'commit', '-qm', 'library')
    git(built.root, 'push', '-q', str(built.remote), 'main')
    refused(
        built,
        r'executed notebook .*pytorch/ch/sec.ipynb is missing or older than its section'
        r'.*make book',
    )


def test_refuses_a_dirty_tree(built):
    (built.root / 'notes.txt').write_text('draft\n')
    refused(built, r'uncommitted changes \(\?\? notes.txt\).*Commit or stash')


def test_refuses_an_unreachable_remote(built, tmp_path):
    with pytest.raises(PublishError, match=r'cannot reach the remote .*no-such.git.*--remote'):
        publish(built.layout, remote=str(tmp_path / 'no-such.git'), progress=lambda line: None)
    assert not (tmp_path / 'no-such.git').exists()


def test_refuses_a_commit_the_remote_lacks(built):
    (built.root / 'notes.txt').write_text('more\n')
    git(built.root, 'add', '-A')
    git(built.root, 'commit', '-qm', 'unpushed')
    refused(built, r'not the tip of any branch.*Push it first')


def test_a_rejected_push_updates_neither_branch(built):
    hook = built.remote / 'hooks' / 'pre-receive'
    hook.write_text(
        '#!/bin/sh\nwhile read old new ref; do\n'
        '  [ "$ref" = refs/heads/gh-pages ] && { echo "gh-pages is protected" >&2; exit 1; }\n'
        'done\nexit 0\n'
    )
    hook.chmod(0o755)
    refused(
        built,
        r'rejected the push of gh-pages and notebooks; neither branch was updated'
        r'(.|\n)*gh-pages is protected(.|\n)*protected',
    )


def test_refuses_a_repository_url_that_is_not_github(built, capsys):
    built.layout.config.write_text(
        CONFIG.replace('https://github.com/owner/book', 'https://gitlab.com/o/b')
    )
    git(built.root, 'commit', '-qam', 'move')
    refused(built, r"repository.url .* 'https://gitlab.com/o/b', not a GitHub repository")
    assert main(['publish', '--remote', str(built.remote)], built.layout) == 1
    assert 'publish failed: repository.url' in capsys.readouterr().err


# ---- The reader's run ------------------------------------------------------------
#
# A throwaway commit of the working tree, the whole book, built by the book's own steps
# (the executed notebooks of the repository's build are copied in, so the cache
# re-executes them only if they are out of date), published to a local bare repository. A fresh
# virtual environment with the pinned frameworks but without d2l_mini stands for a
# Colab runtime; the published notebooks run there, from a folder outside the project,
# and their install cell fetches d2l_mini from the bare repository at the commit.

REPO = Path(__file__).resolve().parents[2]
READER_RUNS = ('how-to-use', 'transformer-block/block-by-hand')
# What a Colab runtime has before the install cell runs: the frameworks, the notebook
# machinery, no d2l_mini.
READER_PACKAGES = ('torch', 'jax', 'jaxlib', 'flax', 'optax', 'numpy', 'matplotlib', 'ipykernel')


def snapshot(root):
    """The working tree's files as git sees them (tracked and new, not ignored),
    committed in a repository of their own."""
    listed = git(REPO, 'ls-files', '-z', '--cached', '--others', '--exclude-standard')
    for rel in filter(None, listed.split('\0')):
        source = REPO / rel
        if source.is_file() and not source.is_symlink():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / rel)
    git(root, 'init', '-q', '-b', 'main')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'the book')


def build_snapshot(layout):
    """Split, execute (cached where the repository's copies are up to date), merge, render."""
    from tools.run.execute import execute
    from tools.site.merge import merge_all
    from tools.site.render import render as render_html

    names = find_sections(layout)
    assert set(READER_RUNS) <= set(names)
    for framework in FRAMEWORKS:
        for rel in names:
            built = Layout().executed(framework, rel)
            if built.is_file():
                layout.executed(framework, rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(built, layout.executed(framework, rel))
    execute(names, layout, progress=lambda line: None)
    merge_all(names, layout)
    return render_html(layout, progress=lambda line: None)


def reader_environment(folder):
    """A virtual environment with the pinned frameworks, as a Colab runtime has them.

    pip-installing them takes one to two minutes here, so the environment is kept in
    ``folder`` and made again only when the pins change; d2l_mini, which the notebooks
    install, is removed before each use.
    """
    pins = pinned_versions(Layout())
    packages = [f'{name}=={pins[name]}' for name in READER_PACKAGES]
    python = folder / 'bin' / 'python'
    stamp = folder / 'reader-packages.txt'
    if not (python.is_file() and stamp.is_file() and stamp.read_text() == '\n'.join(packages)):
        # Made in place (a virtual environment's scripts name its folder); the stamp,
        # written last, marks it complete.
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([sys.executable, '-m', 'venv', str(folder)], check=True)
        # No byte-compiling of every installed module (a third of the time): imports do it.
        subprocess.run(
            [str(python), '-m', 'pip', 'install', '--quiet', '--no-compile', *packages], check=True
        )
        stamp.write_text('\n'.join(packages))
    subprocess.run(
        [str(python), '-m', 'pip', 'uninstall', '--quiet', '-y', 'd2l_mini'],
        check=True,
        capture_output=True,
    )
    return python


def run_as_reader(path, python, workdir, env):
    """Execute a published notebook top to bottom in a kernel of ``python``."""
    spec = workdir.parent / 'kernels' / 'reader'
    spec.mkdir(parents=True, exist_ok=True)
    (spec / 'kernel.json').write_text(
        json.dumps(
            {
                'argv': [str(python), '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
                'display_name': 'reader',
                'language': 'python',
            }
        )
    )
    manager = AsyncKernelManager(
        kernel_name='reader', kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)])
    )
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == 'code':
            cell.outputs = []
    client = NotebookClient(
        notebook,
        km=manager,
        timeout=900,
        allow_errors=False,
        resources={'metadata': {'path': str(workdir)}},
    )
    try:
        client.execute(env=env)
    except CellExecutionError as error:
        said = ''.join(o.get('text', '') for o in notebook.cells[0].outputs)
        pytest.fail(
            f'{path} failed for a reader (the install cell printed {said!r}):\n{error}',
            pytrace=False,
        )
    return notebook


def installed_commit(python):
    """The commit d2l_mini was installed from in ``python``'s environment (None: absent)."""
    code = (
        'from importlib import metadata; import json\n'
        "try: print(json.loads(metadata.distribution('d2l_mini').read_text('direct_url.json'))"
        "['vcs_info']['commit_id'])\nexcept metadata.PackageNotFoundError: print('absent')"
    )
    found = subprocess.run(
        [str(python), '-c', code], check=True, capture_output=True, text=True, cwd=python.parent
    ).stdout.strip()
    return None if found == 'absent' else found


@pytest.mark.slow
def test_a_reader_runs_the_published_notebooks(tmp_path, monkeypatch):
    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)
    timings = {}
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The environment (pip, mostly waiting on the disk) is made while the book builds.
        environment = pool.submit(reader_environment, Layout().build / 'reader-env')
        root = tmp_path / 'book'
        snapshot(root)
        layout = Layout(root)
        html = build_snapshot(layout)
        timings['build'] = time.monotonic() - started
        python = environment.result()
    timings['environment'] = time.monotonic() - started

    remote = tmp_path / 'book.git'
    git(tmp_path, 'init', '-q', '--bare', '-b', 'main', str(remote))
    git(root, 'push', '-q', str(remote), 'main')
    commit = git(root, 'rev-parse', 'HEAD').strip()
    # pip's URL check wants a host in a git+file URL (git itself accepts localhost).
    publish(
        layout,
        remote=str(remote),
        install_from=f'file://localhost{remote}',
        progress=lambda line: None,
    )
    site = set(git(remote, 'ls-tree', '-r', '--name-only', 'gh-pages').split())
    assert {'index.html', '.nojekyll'} <= site
    published = set(git(remote, 'ls-tree', '-r', '--name-only', 'notebooks').split())
    assert published == {f'{fw}/{rel}.ipynb' for fw in FRAMEWORKS for rel in find_sections(layout)}

    links = set()
    for page in html.rglob('*.html'):
        soup = BeautifulSoup(page.read_text(encoding='utf-8'), 'html.parser')
        links |= {a['href'] for a in soup.select('a.fw-colab')}
    prefix = (
        'https://colab.research.google.com/github/d2l-mini/transformer-block-book/blob/notebooks/'
    )
    assert len(links) == len(published) and all(link.startswith(prefix) for link in links)
    assert {link.removeprefix(prefix) for link in links} <= published

    assert installed_commit(python) is None
    clone = tmp_path / 'reader'
    git(
        tmp_path,
        'clone',
        '-q',
        '--branch',
        'notebooks',
        '--single-branch',
        remote.as_uri(),
        str(clone),
    )
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'VIRTUAL_ENV')}
    env['D2L_MINI_DATA'] = str(data_dir())
    for framework in FRAMEWORKS:
        # The first notebook of each framework installs d2l_mini, as on a fresh runtime;
        # the second finds it there, as in a runtime that ran the first.
        subprocess.run(
            [str(python), '-m', 'pip', 'uninstall', '--quiet', '-y', 'd2l_mini'],
            check=True,
            capture_output=True,
        )
        for rel in READER_RUNS:
            started = time.monotonic()
            workdir = tmp_path / 'work' / framework / rel
            workdir.mkdir(parents=True)
            notebook = run_as_reader(clone / framework / f'{rel}.ipynb', python, workdir, env)
            assert installed_commit(python) == commit
            printed = ''.join(o.get('text', '') for o in notebook.cells[0].outputs)
            assert 'outputs shown were made with' not in printed  # the pinned versions are there
            timings[f'{framework} {rel}'] = time.monotonic() - started
    print(
        "reader's run: "
        + ', '.join(f'{step} {seconds:.0f} s' for step, seconds in timings.items())
        + ' (build and environment side by side)'
    )
