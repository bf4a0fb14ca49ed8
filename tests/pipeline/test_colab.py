"""tools.source.colab: the install cell that opens every notebook.

The cell runs here with the machine faked around it: the installed versions
(importlib.metadata), the commit d2l_mini came from (its direct_url.json), pip
(subprocess.run), the imports it checks and nvidia-smi. The readers' runs
(tests/pipeline/test_readers.py, slow) run it for real in fresh environments.
"""

import importlib
import importlib.metadata
import json
import shutil
import subprocess
import sys

import nbformat
import pytest

from tools import facts
from tools.paths import Layout
from tools.source import colab
from tools.source.sections import find_sections, read_section
from tools.source.split import build_notebook, split_section

COMMIT = '0123456789abcdef0123456789abcdef01234567'
OTHER_COMMIT = 'fedcba9876543210fedcba9876543210fedcba98'
PINNED_TORCH = {'torch': '2.13.0+cpu'}
PINNED_JAX = {'jax': '0.10.2', 'jaxlib': '0.10.2', 'flax': '0.12.8', 'optax': '0.2.8'}
LIBRARY = 'd2l_mini @ git+https://example.org/owner/book'


class Machine:
    """What the install cell finds and does: ``installed`` maps package -> version,
    and ``d2l_mini`` -> 'local', a commit, or nothing (absent)."""

    def __init__(self, monkeypatch, installed, gpu=False, pip_says=None, broken=()):
        self.installed = dict(installed)
        self.pip_calls, self.printed, self.imported = [], [], []
        self.pip_says, self.broken = pip_says, broken

        def version(name):
            if name not in self.installed or name == 'd2l_mini':
                raise importlib.metadata.PackageNotFoundError(name)
            return self.installed[name]

        def distribution(name):
            assert name == 'd2l_mini'
            if 'd2l_mini' not in self.installed:
                raise importlib.metadata.PackageNotFoundError(name)
            source = self.installed['d2l_mini']
            record = (
                {'url': 'file:///src/book', 'dir_info': {'editable': True}}
                if source == 'local'
                else {'url': 'https://example.org/owner/book', 'vcs_info': {'commit_id': source}}
            )
            return type('Distribution', (), {'read_text': lambda self, f: json.dumps(record)})()

        def run(command, **options):
            assert command[:4] == [sys.executable, '-m', 'pip', 'install']
            self.pip_calls.append(' '.join(command[4:]))
            if self.pip_says:
                return subprocess.CompletedProcess(command, 1, '', self.pip_says)
            return subprocess.CompletedProcess(command, 0, '', '')

        def import_module(name):
            self.imported.append(name)
            if name in self.broken:
                raise ImportError(f'libcudart.so.12: cannot open shared object file ({name})')

        # As in a fresh kernel: none of the packages imported yet (other tests import them).
        for module in ('torch', 'jax', 'jaxlib', 'flax', 'optax', 'sklearn', 'yaml'):
            monkeypatch.delitem(sys.modules, module, raising=False)
        monkeypatch.setattr(importlib.metadata, 'version', version)
        monkeypatch.setattr(importlib.metadata, 'distribution', distribution)
        monkeypatch.setattr(subprocess, 'run', run)
        monkeypatch.setattr(importlib, 'import_module', import_module)
        monkeypatch.setattr(shutil, 'which', lambda c: '/usr/bin/nvidia-smi' if gpu else None)

    def run(self, source):
        namespace = {'print': lambda *args: self.printed.append(' '.join(map(str, args)))}
        exec(compile(source, '<install cell>', 'exec'), namespace)
        return self


@pytest.fixture
def cells(project):
    """The install cells of a section that imports scikit-learn in its PyTorch cells."""
    code = project.code
    project.section(
        'ch/sec',
        '# Section\n',
        code(
            'import math\nimport numpy as np\nfrom sklearn.datasets import load_digits', 'pytorch'
        ),
        code('from jax import numpy as jnp\n%timeit jnp.ones(3)', 'jax'),
    )
    paths = split_section('ch/sec', project.layout)
    return {fw: nbformat.read(path, as_version=4).cells[0].source for fw, path in paths.items()}


def book_environment(**extra):
    return {**PINNED_TORCH, **PINNED_JAX, 'scikit-learn': '1.9.1', 'd2l_mini': 'local', **extra}


def test_the_cell_is_folded_under_a_one_line_title(project):
    """A reader lands on one line saying what the cell does: Colab shows a titled form
    (first line "# @title", cellView "form"), JupyterLab a collapsed cell."""
    project.section('ch/sec', '# Section\n', project.code('x = 1'))
    for path in split_section('ch/sec', project.layout).values():
        install = nbformat.read(path, as_version=4).cells[0]
        assert install.id == colab.CELL_ID
        assert install.source.splitlines()[0] == colab.TITLE
        assert colab.TITLE.startswith('# @title ') and len(colab.TITLE) < 80
        assert install.metadata['jupyter'] == {'source_hidden': True}
        assert install.metadata['cellView'] == 'form'
        assert install.metadata['tags'] == ['remove-cell']


def test_does_nothing_in_the_books_own_environment(cells, monkeypatch):
    for framework, source in cells.items():
        machine = Machine(monkeypatch, book_environment()).run(source)
        assert machine.pip_calls == [] and machine.printed == []
        expected = {'pytorch': ['d2l_mini.torch', 'sklearn'], 'jax': ['d2l_mini.jax']}
        assert machine.imported == expected[framework]


def test_installs_the_library_and_the_notebooks_other_imports_where_missing(cells, monkeypatch):
    machine = Machine(monkeypatch, PINNED_TORCH).run(cells['pytorch'])
    assert machine.pip_calls == [f'--quiet scikit-learn==1.9.1 {LIBRARY} torch>=2.13.0']
    assert machine.printed == []
    machine = Machine(monkeypatch, PINNED_JAX, gpu=True).run(cells['jax'])
    keep = 'jax>=0.10.2 jaxlib>=0.10.2 flax>=0.12.8 optax>=0.2.8'
    assert machine.pip_calls == [f'--quiet {LIBRARY} {keep}']


def test_names_the_versions_that_made_the_outputs_when_others_are_installed(cells, monkeypatch):
    colab_torch = {'torch': '2.5.1+cu121', 'scikit-learn': '1.6.1', 'd2l_mini': 'local'}
    machine = Machine(monkeypatch, colab_torch).run(cells['pytorch'])
    assert machine.pip_calls == []
    assert machine.printed == [
        'The outputs shown were made with torch 2.13.0 (here: 2.5.1+cu121), '
        'scikit-learn 1.9.1 (here: 1.6.1)'
    ]
    colab_jax = dict(PINNED_JAX, jax='0.11.0', jaxlib='0.11.0')
    machine = Machine(monkeypatch, colab_jax).run(cells['jax'])
    assert machine.printed == [
        'The outputs shown were made with jax 0.10.2 (here: 0.11.0), jaxlib 0.10.2 (here: 0.11.0)'
    ]
    # Kept packages go to pip as lower bounds: it may upgrade them, never downgrade them.
    assert machine.pip_calls == [
        f'--quiet {LIBRARY} jax>=0.11.0 jaxlib>=0.11.0 flax>=0.12.8 optax>=0.2.8'
    ]


def test_installs_missing_or_too_old_frameworks_at_their_pinned_versions(cells, monkeypatch):
    machine = Machine(monkeypatch, {}).run(cells['pytorch'])
    assert machine.pip_calls == [f'--quiet torch==2.13.0 scikit-learn==1.9.1 {LIBRARY}']
    machine = Machine(monkeypatch, {'torch': '1.13.1', 'd2l_mini': 'local'}).run(cells['pytorch'])
    assert machine.pip_calls == ['--quiet torch==2.13.0 scikit-learn==1.9.1']
    assert machine.printed == [
        'torch 1.13.1 is older than 2.0, the oldest the book runs with: installing 2.13.0'
    ]
    old_flax = dict(PINNED_JAX, flax='0.10.4', d2l_mini='local')
    machine = Machine(monkeypatch, old_flax).run(cells['jax'])
    assert machine.pip_calls == ['--quiet flax==0.12.8 jax>=0.10.2 jaxlib>=0.10.2 optax>=0.2.8']


def test_installs_the_cuda_build_of_jax_only_on_a_gpu_machine(cells, monkeypatch):
    everything = 'jax{}==0.10.2 jaxlib==0.10.2 flax==0.12.8 optax==0.2.8'
    machine = Machine(monkeypatch, {}, gpu=True).run(cells['jax'])
    assert machine.pip_calls == [f'--quiet {everything.format("[cuda12]")} {LIBRARY}']
    machine = Machine(monkeypatch, {}, gpu=False).run(cells['jax'])
    assert machine.pip_calls == [f'--quiet {everything.format("")} {LIBRARY}']


def test_reads_the_lower_bounds_from_pyproject(project, cells, monkeypatch):
    pyproject = project.layout.pyproject
    pyproject.write_text(pyproject.read_text().replace('torch>=2.0', 'torch>=2.14'))
    source = colab.install_source('pytorch', project.layout)
    machine = Machine(monkeypatch, {'torch': '2.13.0', 'd2l_mini': 'local'}).run(source)
    assert machine.pip_calls == ['--quiet torch==2.13.0']
    pyproject.write_text(pyproject.read_text().replace('torch>=2.14', 'torch'))
    with pytest.raises(ValueError, match=r"pyproject.toml.*'torch' needs one lower bound"):
        colab.install_source('pytorch', project.layout)


def test_the_published_cell_replaces_d2l_mini_from_another_commit(project, monkeypatch):
    source = colab.install_source(
        'pytorch', project.layout, commit=COMMIT, repository='file://localhost/srv/book.git'
    )
    library = f'd2l_mini @ git+file://localhost/srv/book.git@{COMMIT}'
    for have, calls in (
        (COMMIT, []),
        ('local', []),  # a checkout of the book: its own environment
        (OTHER_COMMIT, [f'--quiet --force-reinstall --no-deps {library}']),
    ):
        machine = Machine(monkeypatch, dict(PINNED_TORCH, d2l_mini=have)).run(source)
        assert machine.pip_calls == calls
    assert machine.printed == [
        f"d2l_mini is installed from commit {OTHER_COMMIT[:12]}: installing {COMMIT[:12]}'s"
    ]
    machine = Machine(monkeypatch, PINNED_TORCH).run(source)
    assert machine.pip_calls == [f'--quiet {library} torch>=2.13.0']
    # The split notebook names no commit: any d2l_mini will do.
    unpublished = colab.install_source('pytorch', project.layout)
    assert '@' not in unpublished.split('LIBRARY = ')[1].splitlines()[0].split('git+')[1]
    machine = Machine(monkeypatch, dict(PINNED_TORCH, d2l_mini=OTHER_COMMIT)).run(unpublished)
    assert machine.pip_calls == []


@pytest.mark.parametrize(
    'pip_says, advice',
    [
        (
            'WARNING: Retrying... Failed to establish a new connection: [Errno -3] Temporary '
            'failure in name resolution\nERROR: No matching distribution found for torch==2.13.0',
            'There is no network here',
        ),
        (
            'ERROR: Cannot install torch==2.13.0 and numpy>=2.4 because these package versions '
            'have conflicting dependencies.\nERROR: ResolutionImpossible',
            'A version conflict with packages installed here',
        ),
        (
            'ERROR: Could not install packages due to an OSError: [Errno 30] Read-only file '
            "system: '/usr/lib/python3/dist-packages/torch'",
            'site-packages cannot be written: use a virtual environment',
        ),
        (
            "fatal: repository '/srv/gone.git' does not exist\nerror: subprocess-exited-with-error"
            '\n  × git clone --filter=blob:none --quiet did not run successfully.',
            'd2l_mini cannot be fetched from git+https://example.org/owner/book',
        ),
        (
            "ERROR: Invalid requirement: 'd2l_mini @ git+https://example.org/owner/book'",
            'This pip (23.0) may be too old',
        ),
        ('ERROR: something pip has never said', "Run this cell again once pip's error is fixed"),
    ],
)
def test_a_failing_pip_stops_the_cell_with_its_message_and_what_to_do(
    cells, monkeypatch, pip_says, advice
):
    machine = Machine(monkeypatch, {'pip': '23.0'}, pip_says=pip_says)
    with pytest.raises(RuntimeError) as raised:
        machine.run(cells['pytorch'])
    message = str(raised.value)
    assert message.startswith('pip could not install torch==2.13.0 scikit-learn==1.9.1 d2l_mini')
    assert pip_says in message and advice in message
    assert machine.imported == []  # nothing runs after a failed pip


def test_a_framework_that_is_installed_but_broken_stops_the_cell(cells, monkeypatch):
    machine = Machine(monkeypatch, book_environment(), broken={'d2l_mini.torch'})
    with pytest.raises(RuntimeError, match=r'd2l_mini.torch does not import \(ImportError: '):
        machine.run(cells['pytorch'])
    assert machine.pip_calls == []


def test_replacing_a_package_this_kernel_imported_asks_for_a_restart(cells, monkeypatch):
    machine = Machine(monkeypatch, {**PINNED_TORCH, 'd2l_mini': 'local'})
    monkeypatch.setitem(sys.modules, 'sklearn', object())  # imported by an earlier cell
    with pytest.raises(RuntimeError, match=r'Installed scikit-learn.*restart the kernel'):
        machine.run(cells['pytorch'])
    assert machine.pip_calls == ['--quiet scikit-learn==1.9.1 torch>=2.13.0']


def test_a_failing_real_pip_stops_the_cell(project, tmp_path, monkeypatch):
    """Not faked: pip itself cannot fetch d2l_mini from a repository that is not there."""
    source = colab.install_source(
        'pytorch', project.layout, commit=COMMIT, repository=f'file://localhost{tmp_path}/gone.git'
    )
    real_distribution = importlib.metadata.distribution

    def distribution(name):
        if name == 'd2l_mini':
            raise importlib.metadata.PackageNotFoundError(name)
        return real_distribution(name)

    monkeypatch.setattr(importlib.metadata, 'distribution', distribution)
    with pytest.raises(RuntimeError) as raised:
        exec(source, {'print': lambda *args: None})
    message = str(raised.value)
    assert f'pip could not install d2l_mini @ git+file://localhost{tmp_path}/gone.git' in message
    assert 'git clone' in message and 'd2l_mini cannot be fetched from' in message


def test_the_cell_provides_what_the_notebook_imports(project):
    code = project.code
    project.section('ch/yaml', '# Y\n', code('import yaml\nimport json\nfrom d2l_mini import x'))
    needed = colab.needed_packages('pytorch', project.layout, ['import yaml', 'import json'])
    assert needed['pyyaml'][:2] == ('yaml', None)
    assert list(needed) == ['torch', 'pyyaml']
    # d2l_mini's own dependencies come with it.
    assert 'numpy' not in colab.needed_packages('pytorch', project.layout, ['import numpy'])
    project.section('ch/bad', '# B\n', code('import no_such_module_here'))
    with pytest.raises(ValueError, match=r"imports 'no_such_module_here'.*requirements.txt"):
        split_section('ch/bad', project.layout)


def test_every_notebook_of_the_book_gets_what_it_imports():
    """For every notebook of the book: each module that its cells import comes from the
    standard library, from d2l_mini and its dependencies, or from a package that its
    install cell checks (read from the cell, as the reader's runtime sees it)."""
    layout = Layout()
    providers = importlib.metadata.packages_distributions()
    with_library = {
        name.split(';')[0].split('>')[0].split('=')[0].strip().lower()
        for name in importlib.metadata.requires('d2l_mini') or []
    }
    for rel in find_sections(layout):
        section = read_section(layout, rel)
        for framework in ('pytorch', 'jax'):
            notebook = build_notebook(section, framework, layout)
            namespace = {}
            cell = notebook.cells[0].source
            exec(cell[cell.index('NEEDED = ') : cell.index('\n}\n') + 2], namespace)
            checked = set(namespace['NEEDED'])
            code = [c.source for c in notebook.cells[1:] if c.cell_type == 'code']
            for module in colab.imported_modules(code) - set(sys.stdlib_module_names):
                if module == 'd2l_mini':
                    continue
                package = providers[module][0].lower()
                assert package in checked | with_library, (
                    f'{framework}/{rel} imports {module} ({package}), which its install cell '
                    f'does not provide (it checks {sorted(checked)})'
                )


@pytest.mark.parametrize(
    'url, message',
    [
        ('file:///srv/book.git', r'has no host.*write file://localhost/srv/book.git'),
        ('/srv/book.git', r'must be a git URL that pip can install.*file://localhost/srv/book'),
        ('git@github.com:owner/book.git', 'must be a git URL that pip can install'),
        ('https://github.com/owner/book@main', r'names a revision'),
        ('x" && rm -rf ~ "', 'without spaces or quotes'),
    ],
)
def test_refuses_a_repository_that_readers_pip_cannot_install(project, url, message):
    with pytest.raises(ValueError, match=message):
        colab.install_source('pytorch', project.layout, commit=COMMIT, repository=url)


@pytest.mark.parametrize(
    'url', ['https://github.com/owner/book', 'ssh://git@host/book.git', 'file://localhost/b.git']
)
def test_accepts_the_urls_pip_installs_from(project, url):
    assert f'git+{url}@{COMMIT}' in colab.install_source(
        'jax', project.layout, commit=COMMIT, repository=url
    )


def test_a_commit_must_be_a_full_commit_id(project):
    with pytest.raises(ValueError, match='commit'):
        colab.install_source('pytorch', project.layout, commit='main')


def test_the_repository_comes_from_the_config(project):
    assert facts.repository_url(project.layout) == 'https://example.org/owner/book'
    project.layout.config.unlink()
    with pytest.raises(ValueError, match=r'repository.url is not set in .*_config.yml'):
        colab.install_source('pytorch', project.layout)
    with pytest.raises(ValueError, match='framework'):
        colab.install_source('tensorflow', project.layout)
