"""tools.publish: what it pushes and what it refuses, on a hand-made build.

The tests stand up a small project whose build is written by hand: split notebooks
from tools.source.split, "executed" copies carrying the cache hash, an HTML folder and
the render stamp, all as the build would leave them. The published notebooks run as
readers run them in tests/pipeline/test_readers.py (slow).
"""

import json
import subprocess
import zipfile

import nbformat
import pytest

from tools.cli import main
from tools.frameworks import FRAMEWORKS
from tools.frameworks import framework as framework_row
from tools.publish import PublishError, publish
from tools.run.cache import METADATA_KEY, notebook_hash
from tools.site import bundle, downloads, pdf
from tools.site.render import inputs_hash
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


@pytest.mark.parametrize(
    'url, said',
    [
        ('x" && rm -rf ~ "', '--install-from must be a git URL without spaces or quotes'),
        # The pip of Python 3.11 says "Invalid requirement" to git+file:///path.
        ('file:///srv/book.git', 'write file://localhost/srv/book.git'),
    ],
)
def test_publish_checks_install_from_before_anything_else(project, capsys, url, said):
    # The project is no git repository: publish must stop at the argument first.
    assert main(['publish', '--install-from', url], project.layout) == 2
    err = capsys.readouterr().err
    assert said in err
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
        # What the zips' requirements pin besides the frameworks: d2l_mini's dependencies
        # and the kernel their README registers.
        requirements.write('ipykernel==7.4.0\nmatplotlib==3.11.2\nnumpy==2.4.6\ntqdm==4.70.1\n')
    for framework, path in split_section('ch/sec', layout).items():
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == 'code' and cell.id != 'install':
                cell.outputs = [
                    nbformat.v4.new_output('stream', name='stdout', text=f'{framework}\n')
                ]
        notebook.metadata[METADATA_KEY] = {
            'hash': notebook_hash(notebook, framework, layout),
            'wall_s': 1.0,
        }
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
        extra = framework_row(framework).extra
        assert (
            f"LIBRARY = 'd2l_mini[{extra}] @ git+https://github.com/owner/book@{built.commit}'"
            in notebook.cells[0].source.splitlines()
        )
        assert f"COMMIT = '{built.commit}'" in notebook.cells[0].source.splitlines()
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
        install_from='file://localhost/srv/mirror.git',
        progress=lambda line: None,
    )
    assert remote_state(built.remote) == before
    assert sorted(p.name for p in out.iterdir()) == ['gh-pages', 'notebooks']
    assert (out / 'gh-pages' / '.nojekyll').is_file() and (
        out / 'gh-pages' / 'index.html'
    ).is_file()
    published = out / 'notebooks' / 'jax' / 'ch' / 'sec.ipynb'
    cell = nbformat.read(published, as_version=4).cells[0]
    assert f'git+file://localhost/srv/mirror.git@{built.commit}' in cell.source
    # The zips hold the published notebooks; the PDFs are the build's.
    downloads_folder = out / 'gh-pages' / 'downloads'
    with zipfile.ZipFile(downloads_folder / 'book-jax-notebooks.zip') as archive:
        assert archive.read('book-jax-notebooks/ch/sec.ipynb') == published.read_bytes()
        requirements = archive.read('book-jax-notebooks/requirements.txt').decode()
        assert requirements.endswith(f'git+file://localhost/srv/mirror.git@{built.commit}\n')
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
    # HTML rendered after d2l_mini changed, from notebooks executed before: their hashes
    # are out of date.
    (built.layout.library / '__init__.py').write_text('X = 1\n')
    layout = built.layout
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
