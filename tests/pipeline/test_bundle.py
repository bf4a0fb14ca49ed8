"""tools.site.bundle: each framework's executed notebooks in one zip, with a README and
requirements (fast, on the hand-made project of tests/site/book_site.py)."""

import io
import zipfile

import nbformat
import pytest

from tests.site.book_site import SECTIONS, make_project
from tools.cli import main
from tools.paths import Layout
from tools.site import bundle
from tools.source import colab
from tools.source.colab import pinned_versions

FOLDERS = {
    'pytorch': 'transformer-block-book-pytorch-notebooks',
    'jax': 'transformer-block-book-jax-notebooks',
}


@pytest.fixture
def layout(tmp_path):
    """The two-section project (with the repository's requirements and pyproject)."""
    return Layout(root=make_project(tmp_path / 'book'))


def opened(path):
    return zipfile.ZipFile(io.BytesIO(path.read_bytes()))


def test_each_zip_holds_the_executed_notebooks_in_the_book_s_layout(layout):
    sections = list(SECTIONS)
    paths = bundle.write_bundles(layout, sections)
    for framework, folder in FOLDERS.items():
        assert paths[framework] == layout.book_downloads / f'{folder}.zip'
        archive = opened(paths[framework])
        assert sorted(archive.namelist()) == sorted(
            [f'{folder}/README.md', f'{folder}/requirements.txt']
            + [f'{folder}/{rel}.ipynb' for rel in sections]
        )
        for rel in sections:
            packed = archive.read(f'{folder}/{rel}.ipynb')
            assert packed == layout.executed(framework, rel).read_bytes(), rel
            notebook = nbformat.reads(packed.decode(), as_version=4)
            other = 'jax' if framework == 'pytorch' else 'pytorch'
            assert not any(other in c.metadata.get('tags', []) for c in notebook.cells)


def test_requirements_pin_what_the_notebooks_import(layout):
    pins = pinned_versions(layout)
    paths = bundle.write_bundles(layout, list(SECTIONS))
    wanted = {
        'pytorch': {'torch'},
        'jax': {'jax', 'jaxlib', 'flax', 'optax'},
    }
    for framework, folder in FOLDERS.items():
        lines = opened(paths[framework]).read(f'{folder}/requirements.txt').decode().splitlines()
        pinned = dict(line.split('==') for line in lines if '==' in line)
        other = set().union(*(names for fw, names in wanted.items() if fw != framework))
        assert wanted[framework] | {'numpy', 'matplotlib', 'tqdm', 'ipykernel'} <= set(pinned)
        assert not other & set(pinned), f'{framework} requires another framework: {pinned}'
        assert all(pins[name] == version for name, version in pinned.items())
        assert lines[-1] == 'd2l_mini @ git+https://github.com/d2l-mini/transformer-block-book'


def test_the_readme_names_the_notebooks_the_setup_and_the_recorded_versions(layout):
    paths = bundle.write_bundles(layout, list(SECTIONS))
    readme = opened(paths['jax']).read(f'{FOLDERS["jax"]}/README.md').decode()
    assert readme.startswith('# The Transformer Block, in PyTorch and JAX: the JAX notebooks')
    assert '- `demo/twins.ipynb`: Twin cells (ran in ' in readme
    assert 'pip install -r requirements.txt jupyterlab' in readme and 'jupyter lab' in readme
    assert 'saying what the book asserts and what your run gave' in readme
    torch_readme = opened(paths['pytorch']).read(f'{FOLDERS["pytorch"]}/README.md').decode()
    assert '--index-url https://download.pytorch.org/whl/cpu' in torch_readme
    # The records of tests/site/book_site.py: jax 9.9.9 on Python 3.11.7.
    assert '| jax | 9.9.9 |' in readme and '| Python | 3.11.7 |' in readme
    assert 'torch' not in readme.split('## The versions')[1]


def test_run_times_read_as_a_reader_plans_them():
    assert bundle.run_time(None) == ''
    assert bundle.run_time(12.5) == ' (ran in under a minute)'
    assert bundle.run_time(410) == ' (ran in 7 min)'


def test_the_same_notebooks_give_the_same_bytes_and_a_commit_pins_the_library(layout, tmp_path):
    first = bundle.write_bundles(layout, list(SECTIONS), folder=tmp_path / 'a')
    again = bundle.write_bundles(layout, list(SECTIONS), folder=tmp_path / 'b')
    assert first['jax'].read_bytes() == again['jax'].read_bytes()
    commit = 'ab' * 20
    pinned = bundle.write_bundles(
        layout, list(SECTIONS), folder=tmp_path / 'c', commit=commit, repository='/srv/book.git'
    )
    folder = FOLDERS['pytorch']
    archive = opened(pinned['pytorch'])
    requirements = archive.read(f'{folder}/requirements.txt').decode()
    assert requirements.endswith(f'd2l_mini @ git+/srv/book.git@{commit}\n')
    assert f'at commit {commit[:12]}' in archive.read(f'{folder}/README.md').decode()


def test_a_missing_notebook_is_named(layout):
    layout.executed('jax', 'demo/more').unlink()
    with pytest.raises(bundle.BundleError, match=r'jax/demo/more\.ipynb is missing'):
        bundle.write_bundles(layout, list(SECTIONS))


def test_an_import_that_requirements_txt_does_not_pin_is_named(layout):
    text = layout.requirements.read_text()
    layout.requirements.write_text(
        '\n'.join(line for line in text.splitlines() if not line.startswith('numpy=='))
    )
    with pytest.raises(bundle.BundleError, match=r'need numpy, which requirements\.txt'):
        bundle.write_bundles(layout, list(SECTIONS))


def test_imports_are_read_from_the_code_cells():
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell('%pip install nothing\nimport os.path, numpy as np'),
            nbformat.v4.new_code_cell('from jax import numpy as jnp\nfrom . import local'),
            nbformat.v4.new_markdown_cell('import torch'),
            nbformat.v4.new_code_cell('def broken(:'),
        ]
    )
    sources = bundle.code_sources(notebook)
    assert colab.imported_modules(sources) == {'os', 'numpy', 'jax'}


def test_the_zip_step_writes_both_zips_from_the_command_line(layout, capsys):
    assert main(['zip'], layout) == 0
    out = capsys.readouterr().out
    for folder in FOLDERS.values():
        assert (layout.book_downloads / f'{folder}.zip').is_file()
        assert f'{folder}.zip' in out
