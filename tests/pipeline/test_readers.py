"""tools.readers: the published notebooks, run where readers run them.

The fast tests check the matrix's pieces: the environments it makes, what counts as
a failure, the table. The slow test is the readers' slice that `make test` runs: a
throwaway commit of the working tree, its split notebooks published to a local bare
repository (the install cell as tools.publish writes it; the outputs do not matter
for whether the code runs), and its shortest notebooks run in fresh environments: bare
(both orders), and the JAX notebooks at the lowest and at the newest versions.
"""

import contextlib
import os
import shutil
import subprocess
import time

import nbformat
import psutil
import pytest

from tools import readers
from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.source.sections import find_sections

REPO = Layout().root
IDENTITY = {
    'GIT_AUTHOR_NAME': 'Book',
    'GIT_AUTHOR_EMAIL': 'book@example.org',
    'GIT_COMMITTER_NAME': 'Book',
    'GIT_COMMITTER_EMAIL': 'book@example.org',
}
# The slice: the shortest notebooks (seconds each); at the lowest and newest versions
# also the guide whose JAX cells train with nnx.Optimizer in an nnx.jit step. JAX
# for the lowest and newest versions: its wheels are a tenth of the size of PyTorch's
# (whose older releases on PyPI are CUDA builds of gigabytes). The notebooks that train
# for minutes (d2l.train_lm) run at these versions in `make readers`.
SLICE = {
    'bare-pytorch-first': ['pytorch/how-to-use', 'jax/how-to-use'],
    'bare-jax-first': ['jax/how-to-use', 'pytorch/how-to-use'],
    'lowest-jax': ['jax/how-to-use', 'jax/pytorch-to-nnx'],
    'newest-jax': ['jax/how-to-use', 'jax/pytorch-to-nnx'],
}


def test_the_matrix_has_bare_lowest_and_newest_environments():
    layout = Layout()
    pages = find_sections(layout)
    matrix = readers.environments(layout, pages)
    assert sorted(matrix) == sorted(
        [f'bare-{fw}-first' for fw in FRAMEWORKS]
        + [f'{kind}-{fw}' for kind in ('lowest', 'newest') for fw in FRAMEWORKS]
    )
    bare = matrix['bare-pytorch-first']
    assert [p.split('==')[0] for p in bare.packages] == ['ipykernel']
    assert [nb.split('/')[0] for nb in bare.notebooks] == ['pytorch', 'jax']
    assert [nb.split('/')[0] for nb in matrix['bare-jax-first'].notebooks] == ['jax', 'pytorch']
    lowest = matrix['lowest-jax']
    assert {'jax==0.7.1', 'flax==0.12'} <= set(lowest.packages)
    assert lowest.notebooks == tuple(f'jax/{page}' for page in pages) and not lowest.newest
    newest = matrix['newest-pytorch']
    assert newest.newest and {'torch', 'numpy', 'matplotlib', 'scikit-learn'} <= set(
        newest.packages
    )
    assert newest.pip_env()['PIP_CONFIG_FILE'] == os.devnull  # no machine's cap on versions
    # Other notebooks: those of the environment's frameworks, in its frameworks' order.
    chosen = ['pytorch/how-to-use', 'jax/how-to-use', 'jax/transformer-block/vit']
    assert matrix['bare-jax-first'].running(chosen).notebooks == (
        'jax/how-to-use',
        'jax/transformer-block/vit',
        'pytorch/how-to-use',
    )
    assert lowest.running(chosen).notebooks == ('jax/how-to-use', 'jax/transformer-block/vit')


def cell(*outputs, id='c001'):
    code = nbformat.v4.new_code_cell('x', outputs=list(outputs))
    code.id = id
    return code


def test_a_notebook_fails_on_an_error_a_warning_or_a_flood_of_progress_lines():
    stream = lambda text: nbformat.v4.new_output('stream', name='stderr', text=text)  # noqa: E731
    error = nbformat.v4.new_output(
        'error', ename='AttributeError', evalue="module 'flax.nnx' has no attribute", traceback=[]
    )
    ok = cell(stream('loss 1.2\n'), id='c000')
    assert readers.first_failure(nbformat.v4.new_notebook(cells=[ok])) is None
    meant = cell(error, id='c009')
    meant.metadata['tags'] = ['raises-exception']
    assert readers.first_failure(nbformat.v4.new_notebook(cells=[meant, ok])) is None
    failed = nbformat.v4.new_notebook(cells=[ok, cell(error)])
    assert readers.first_failure(failed) == (
        "cell 1 (id c001): AttributeError: module 'flax.nnx' has no attribute"
    )
    warned = cell(stream('site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found\n'))
    assert 'a warning: ' in readers.first_failure(nbformat.v4.new_notebook(cells=[warned]))
    bars = ''.join(f'training:  {i}%|#    | {i}/100 [00:01<00:02]\n' for i in range(10))
    flood = nbformat.v4.new_notebook(cells=[cell(stream(bars))])
    assert readers.first_failure(flood) == (
        'cell 0 (id c001): 10 lines of unfinished progress bars in its output'
    )
    # One line that overwrites itself is what a saved notebook keeps of a text bar, and a
    # cell that trains several models keeps one finished line for each.
    line = bars.replace('\n', '\r') + 'training: 100%|#####| 100/100 [00:03<00:00]\n'
    assert readers.first_failure(nbformat.v4.new_notebook(cells=[cell(stream(line * 6))])) is None


def test_a_claim_not_met_passes_and_is_listed_as_readers_see_it(capsys):
    from d2l_mini.claims import claims

    with claims(strict=False):
        assert 0.5 < 0.7 < 0.6, 'the loss'
    printed = capsys.readouterr().out
    stdout = nbformat.v4.new_output('stream', name='stdout', text='loss 1.2\n' + printed)
    notebook = nbformat.v4.new_notebook(cells=[cell(stdout), cell(stdout, id='c002')])
    not_met = readers.claims_not_met(notebook)
    assert len(not_met) == 2 and readers.first_failure(notebook) is None
    said = readers.said_of(None, not_met)
    assert said.startswith('pass; 2 claim(s) not met, the first: Claim not met in this run:')
    assert 'this run gave the loss' in said
    assert readers.said_of(None, []) == 'pass'
    assert readers.said_of('cell 3 (id x): KeyError', not_met) == 'cell 3 (id x): KeyError'


def test_the_table_lists_every_run_and_each_environments_time():
    results = [
        readers.Result('lowest-jax', 'jax/how-to-use', True, 'pass', 21.4),
        readers.Result('lowest-jax', 'jax/vit', False, 'cell 3 (id c004): ImportError: x', 4.0),
    ]
    text = readers.table(results, {'lowest-jax': 95.0})
    lines = text.splitlines()
    assert lines[0].split() == ['environment', 'notebook', 'result', 'seconds']
    assert lines[2].split() == ['lowest-jax', 'jax/how-to-use', 'pass', '21']
    assert 'cell 3 (id c004): ImportError: x' in lines[3] and lines[3].endswith('4')
    assert lines[-1] == 'lowest-jax: 1.6 min in all'


def test_unknown_environments_and_notebooks_are_usage_errors():
    with pytest.raises(ValueError, match=r"no environment named \['oldest'\]"):
        readers.readers(Layout(), names=['oldest'])
    with pytest.raises(ValueError, match=r'no notebook .*<framework>/<page>'):
        readers.readers(Layout(), notebooks=['how-to-use'])


def git(cwd, *args):
    return subprocess.run(
        ['git', *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


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


def installed_commit(python):
    """The commit d2l_mini was installed from in ``python``'s environment."""
    code = (
        'from importlib import metadata; import json\n'
        "print(json.loads(metadata.distribution('d2l_mini').read_text('direct_url.json'))"
        "['vcs_info']['commit_id'])"
    )
    return subprocess.run(
        [str(python), '-c', code], check=True, capture_output=True, text=True, cwd=python.parent
    ).stdout.strip()


def kernels_left() -> list[int]:
    """The kernels that this process started and that still run."""
    left = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):  # it ended meanwhile, or is a zombie
            if 'ipykernel_launcher' in child.cmdline():
                left.append(child.pid)
    return left


def run_slice(tmp_path, monkeypatch, names):
    """The slice's notebooks in the environments ``names`` (which share their list of
    notebooks), published from a snapshot of the working tree: the results, each passed,
    and the snapshot's root."""
    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)
    started = time.monotonic()
    root = tmp_path / 'book'
    snapshot(root)
    log = []
    results = readers.readers(
        Layout(root),
        names=names,
        notebooks=SLICE[names[0]],
        unexecuted=True,
        envs=Layout().build / 'readers' / 'envs',  # kept between runs
        progress=log.append,
    )
    print('\n'.join(log))
    print(f"readers' slice, {' and '.join(names)}: {time.monotonic() - started:.0f} s")
    assert not kernels_left(), 'a kernel outlived its notebook'
    ran = [(r.environment, r.notebook) for r in results]
    assert ran == [(env, nb) for env in names for nb in SLICE[env]]
    assert all(r.passed for r in results), [r.said for r in results]
    return {(r.environment, r.notebook): r.install_output for r in results}, root


# The slice in two classes: make test's pytest-xdist processes take a class each
# (--dist loadscope), so that the two halves run side by side.
@pytest.mark.slow
@pytest.mark.minutes
class TestBareSlice:
    def test_a_bare_environment_runs_one_framework_then_the_other(self, tmp_path, monkeypatch):
        said, root = run_slice(tmp_path, monkeypatch, ['bare-pytorch-first', 'bare-jax-first'])
        # The first notebook installs its framework and d2l_mini, the second its own
        # framework only; neither names other versions (the pinned ones were installed).
        assert not any(said[('bare-pytorch-first', nb)] for nb in SLICE['bare-pytorch-first'])
        # The environment still holds what its notebooks installed: d2l_mini at the commit.
        envs = Layout().build / 'readers' / 'envs'
        python = next(envs.glob('bare-jax-first-*')) / 'bin' / 'python'
        assert {'torch', 'jax', 'flax', 'd2l-mini'} <= set(readers.installed(python))
        assert installed_commit(python) == git(root, 'rev-parse', 'HEAD').strip()


@pytest.mark.slow
@pytest.mark.minutes
class TestVersionsSlice:
    def test_the_lowest_and_the_newest_jax_train(self, tmp_path, monkeypatch):
        said, _ = run_slice(tmp_path, monkeypatch, ['lowest-jax', 'newest-jax'])
        # Lowest: the kept versions are named, in every notebook.
        for notebook in SLICE['lowest-jax']:
            assert (
                'The outputs shown were made with jax 0.10.2, jaxlib 0.10.2, flax 0.12.8'
                in said[('lowest-jax', notebook)]
            )
