"""tools.source.colab: the install cell that opens every notebook.

The cell runs here with the machine faked around it: the installed distributions
(importlib.metadata.distributions: their versions and the direct_url.json that records
the commit d2l_mini came from) and pip (subprocess.run), which "installs" what it is
given. The readers' runs (tests/pipeline/test_readers.py, slow) run it for real in fresh
environments.
"""

import importlib.metadata
import json
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
REPOSITORY = 'git+https://example.org/owner/book'
NEWEST = '9.9.9'  # the version the fake pip installs


class Machine:
    """What the install cell finds and does: ``installed`` maps package -> version,
    and ``d2l_mini`` -> 'local' (a checkout), a commit, or nothing (absent)."""

    def __init__(self, monkeypatch, installed, pip_says=None):
        self.installed = dict(installed)
        self.pip_calls, self.printed = [], []
        self.pip_says = pip_says

        real_distributions = importlib.metadata.distributions

        def distributions(name=None):
            if name is None:  # the build's own look-ups (packages_distributions)
                return real_distributions()
            if name not in self.installed:
                return iter([])
            source = self.installed[name]
            record = (
                None
                if source == 'local'
                else {'url': 'https://example.org/owner/book', 'vcs_info': {'commit_id': source}}
            )
            read = {'direct_url.json': json.dumps(record) if record else None}.get
            version = '0.1.0' if name == 'd2l_mini' else source
            dist = type(
                'Distribution', (), {'version': version, 'read_text': lambda s, f: read(f)}
            )
            return iter([dist()])

        def run(command, **options):
            assert command[:3] == [sys.executable, '-m', 'pip'] and options['capture_output']
            self.pip_calls.append(' '.join(command[3:]))
            if self.pip_says:
                return subprocess.CompletedProcess(command, 1, '', self.pip_says)
            if command[3] == 'uninstall':
                del self.installed[command[-1]]
            for requirement in command[3:]:
                if requirement.startswith('d2l_mini['):
                    self.installed['d2l_mini'] = requirement.rpartition('@')[2]
                elif not requirement.startswith('-') and command[3] == 'install':
                    self.installed[requirement] = NEWEST
            return subprocess.CompletedProcess(command, 0, '', '')

        monkeypatch.setattr(importlib.metadata, 'distributions', distributions)
        monkeypatch.setattr(subprocess, 'run', run)

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


# The longest the cell may be, as a reader sees it: a third of the 106 lines it had.
MAX_LINES = 35


def test_the_cell_is_short_and_is_the_linted_module_with_this_notebooks_values(project):
    """The cell is tools/source/install_cell.py (which `ruff check tools` lints) but for
    the lines of LIBRARY, COMMIT and PACKAGES, at most MAX_LINES lines long."""
    module = colab.CELL.read_text(encoding='utf-8').splitlines()
    for framework in ('pytorch', 'jax'):
        sources = ['import sklearn', 'import yaml']
        for commit in (None, COMMIT):
            cell = colab.install_source(framework, project.layout, commit, sources=sources)
            lines = cell.splitlines()
            assert len(lines) == len(module) <= MAX_LINES
            compile(cell, '<install cell>', 'exec')
            changed = [n for n, (a, b) in enumerate(zip(lines, module, strict=True)) if a != b]
            names = [lines[n].split(' = ')[0] for n in changed]
            assert set(names) <= {'LIBRARY', 'COMMIT', 'PACKAGES'}, names
            assert f'COMMIT = {commit!r}' in lines
    assert (
        'ruff' in (colab.CELL.parents[2] / 'Makefile').read_text()
        and 'tools' in (colab.CELL.parents[2] / 'Makefile').read_text()
    )


def test_does_nothing_in_the_books_own_environment(cells, monkeypatch):
    for source in cells.values():
        machine = Machine(monkeypatch, book_environment()).run(source)
        assert machine.pip_calls == [] and machine.printed == []


def test_installs_the_framework_the_library_and_the_notebooks_imports_in_a_bare_jupyter(
    cells, monkeypatch
):
    machine = Machine(monkeypatch, {}).run(cells['pytorch'])
    assert machine.pip_calls == [
        f'install --quiet --upgrade d2l_mini[torch] @ {REPOSITORY} '
        'torch==2.13.0 scikit-learn==1.9.1'
    ]
    assert machine.printed == [
        f'The outputs shown were made with torch 2.13.0, scikit-learn {colab_sklearn()}'
    ]
    machine = Machine(monkeypatch, {}).run(cells['jax'])
    assert machine.pip_calls == [
        f'install --quiet --upgrade d2l_mini[jax] @ {REPOSITORY} '
        'jax==0.10.2 jaxlib==0.10.2 flax==0.12.8 optax==0.2.8'
    ]


def colab_sklearn():
    return importlib.metadata.version('scikit-learn').split('+')[0]


def test_keeps_what_is_there_and_names_the_versions_that_made_the_outputs(cells, monkeypatch):
    """Colab: its framework and scikit-learn stay; d2l_mini alone is installed."""
    colab_torch = {'torch': '2.5.1+cu121', 'scikit-learn': '1.6.1'}
    machine = Machine(monkeypatch, colab_torch).run(cells['pytorch'])
    assert machine.pip_calls == [f'install --quiet --upgrade d2l_mini[torch] @ {REPOSITORY}']
    assert machine.printed == [
        f'The outputs shown were made with torch 2.13.0, scikit-learn {colab_sklearn()}'
    ]
    # Where d2l_mini is there too, no pip runs; the line about the versions stays.
    colab_jax = dict(PINNED_JAX, jax='0.11.0', jaxlib='0.11.0', d2l_mini='local')
    machine = Machine(monkeypatch, colab_jax).run(cells['jax'])
    assert machine.pip_calls == []
    assert machine.printed == ['The outputs shown were made with jax 0.10.2, jaxlib 0.10.2']


def test_installs_what_is_missing_or_older_than_its_lower_bound(cells, monkeypatch):
    old_torch = {'torch': '1.13.1', 'scikit-learn': '1.9.1', 'd2l_mini': 'local'}
    machine = Machine(monkeypatch, old_torch).run(cells['pytorch'])
    assert machine.pip_calls == ['install --quiet --upgrade torch==2.13.0']
    old_flax = dict(PINNED_JAX, flax='0.10.4', d2l_mini=COMMIT)
    machine = Machine(monkeypatch, old_flax).run(cells['jax'])
    assert machine.pip_calls == ['install --quiet --upgrade flax==0.12.8']
    # At the lower bound: kept.
    lowest = {'jax': '0.7.1', 'jaxlib': '0.7.1', 'flax': '0.12.0', 'optax': '0.2.5'}
    machine = Machine(monkeypatch, dict(lowest, d2l_mini='local')).run(cells['jax'])
    assert machine.pip_calls == []


def test_reads_the_lower_bounds_from_pyproject(project, cells, monkeypatch):
    pyproject = project.layout.pyproject
    pyproject.write_text(pyproject.read_text().replace('torch>=2.0', 'torch>=2.14'))
    source = colab.install_source('pytorch', project.layout)
    machine = Machine(monkeypatch, {'torch': '2.13.0', 'd2l_mini': 'local'}).run(source)
    assert machine.pip_calls == ['install --quiet --upgrade torch==2.13.0']
    pyproject.write_text(pyproject.read_text().replace('torch>=2.14', 'torch'))
    with pytest.raises(ValueError, match=r"pyproject.toml.*'torch' needs one lower bound"):
        colab.install_source('pytorch', project.layout)


def test_the_published_cell_replaces_d2l_mini_from_another_commit(project, monkeypatch):
    source = colab.install_source(
        'pytorch', project.layout, commit=COMMIT, repository='file://localhost/srv/book.git'
    )
    library = f'd2l_mini[torch] @ git+file://localhost/srv/book.git@{COMMIT}'
    for have, calls in (
        (COMMIT, []),
        ('local', []),  # a checkout of the book: its own environment
        (
            OTHER_COMMIT,
            ['uninstall --quiet --yes d2l_mini', f'install --quiet --upgrade {library}'],
        ),
    ):
        machine = Machine(monkeypatch, dict(PINNED_TORCH, d2l_mini=have)).run(source)
        assert machine.pip_calls == calls
        assert machine.printed == []
    assert machine.installed['d2l_mini'] == COMMIT
    machine = Machine(monkeypatch, {}).run(source)
    assert machine.pip_calls == [f'install --quiet --upgrade {library} torch==2.13.0']
    # The split notebook names no commit: any d2l_mini will do.
    unpublished = colab.install_source('pytorch', project.layout)
    assert 'COMMIT = None' in unpublished.splitlines()
    machine = Machine(monkeypatch, dict(PINNED_TORCH, d2l_mini=OTHER_COMMIT)).run(unpublished)
    assert machine.pip_calls == []


def test_a_failing_pip_stops_the_cell_with_its_command_and_message(cells, monkeypatch):
    said = (
        'WARNING: Retrying... Failed to establish a new connection: [Errno -3] Temporary '
        'failure in name resolution\nERROR: No matching distribution found for torch'
    )
    machine = Machine(monkeypatch, {}, pip_says=said)
    with pytest.raises(RuntimeError) as raised:
        machine.run(cells['pytorch'])
    message = str(raised.value)
    assert message.startswith(
        f'pip install --quiet --upgrade d2l_mini[torch] @ {REPOSITORY} '
        'torch==2.13.0 scikit-learn==1.9.1 failed:'
    )
    assert said in message
    assert len(machine.pip_calls) == 1 and machine.printed == []  # nothing runs after it


def test_a_failing_real_pip_stops_the_cell(project, tmp_path, monkeypatch):
    """Not faked: pip itself cannot fetch d2l_mini from a repository that is not there."""
    source = colab.install_source(
        'pytorch', project.layout, commit=COMMIT, repository=f'file://localhost{tmp_path}/gone.git'
    )
    real_distributions = importlib.metadata.distributions

    def distributions(name):
        return iter([]) if name == 'd2l_mini' else real_distributions(name=name)

    monkeypatch.setattr(importlib.metadata, 'distributions', distributions)
    with pytest.raises(RuntimeError) as raised:
        exec(source, {'print': lambda *args: None})
    message = str(raised.value)
    assert f'd2l_mini[torch] @ git+file://localhost{tmp_path}/gone.git@{COMMIT} failed' in message
    assert 'git clone' in message


def test_the_cell_provides_what_the_notebook_imports(project):
    code = project.code
    project.section('ch/yaml', '# Y\n', code('import yaml\nimport json\nfrom d2l_mini import x'))
    needed = colab.needed_packages('pytorch', project.layout, ['import yaml', 'import json'])
    assert needed['pyyaml'] == (None, importlib.metadata.version('pyyaml'))
    assert needed['torch'] == ('2.0', '2.13.0')
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
    providers = colab.module_providers()
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
            packages = next(line for line in cell.splitlines() if line.startswith('PACKAGES = '))
            exec(packages, namespace)
            checked = set(namespace['PACKAGES'])
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
