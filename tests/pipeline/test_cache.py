"""The content hash: what re-executes a notebook and what does not."""

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.run import cache
from tools.run.cache import code_text, notebook_hash

LIBRARY_TORCH = '''"""The PyTorch twin."""
from d2l_mini import shared


def double(x):
    """Twice x."""
    return 2 * x  # by multiplication
'''
LIBRARY_JAX = '''"""The JAX twin."""
from d2l_mini.shared import helper


def double(x):
    return x + x
'''
SHARED = """def helper():
    return 1
"""


def _notebook(code, prose='Some prose.'):
    return new_notebook(cells=[new_markdown_cell(prose), new_code_cell(code)])


@pytest.fixture
def library(project):
    """A stand-in d2l_mini: two framework modules that import one shared module, and a
    module that neither imports."""
    folder = project.layout.library
    (folder / 'torch.py').write_text(LIBRARY_TORCH)
    (folder / 'jax.py').write_text(LIBRARY_JAX)
    (folder / 'shared.py').write_text(SHARED)
    (folder / 'unused.py').write_text('VALUE = 1\n')
    return folder


def _hashes(layout, notebooks=None):
    notebooks = notebooks or {fw: _notebook('from d2l_mini import x') for fw in FRAMEWORKS}
    return {fw: notebook_hash(notebooks[fw], fw, layout) for fw in FRAMEWORKS}


def _changed(before, after):
    return {fw for fw in FRAMEWORKS if before[fw] != after[fw]}


def test_hash_follows_code_not_prose():
    layout = Layout()
    base = notebook_hash(_notebook('x = 1'), 'pytorch', layout)
    assert notebook_hash(_notebook('x = 1', prose='Other prose.'), 'pytorch', layout) == base
    assert notebook_hash(_notebook('x = 2'), 'pytorch', layout) != base


def test_a_docstring_or_comment_edit_in_the_library_re_executes_no_notebook(project, library):
    before = _hashes(project.layout)
    edited = LIBRARY_TORCH.replace('"""Twice x."""', '"""Two times x, as a float if x is."""')
    edited = edited.replace('# by multiplication', '# the product')
    (library / 'torch.py').write_text(edited.replace('"""The PyTorch twin."""', '"""Twin."""'))
    assert _changed(before, _hashes(project.layout)) == set()


def test_a_code_edit_in_a_framework_module_re_executes_that_framework_only(project, library):
    before = _hashes(project.layout)
    (library / 'torch.py').write_text(LIBRARY_TORCH.replace('2 * x', 'x * 2'))
    assert _changed(before, _hashes(project.layout)) == {'pytorch'}
    middle = _hashes(project.layout)
    (library / 'jax.py').write_text(LIBRARY_JAX.replace('x + x', '2 * x'))
    assert _changed(middle, _hashes(project.layout)) == {'jax'}


def test_a_shared_module_counts_for_both_and_an_unused_one_for_none(project, library):
    before = _hashes(project.layout)
    (library / 'unused.py').write_text('VALUE = 2\n')
    assert _changed(before, _hashes(project.layout)) == set()
    (library / 'shared.py').write_text(SHARED.replace('1', '2'))
    assert _changed(before, _hashes(project.layout)) == set(FRAMEWORKS)


def test_a_module_the_notebook_imports_itself_counts(project, library):
    notebooks = {fw: _notebook('from d2l_mini.unused import VALUE') for fw in FRAMEWORKS}
    before = _hashes(project.layout, notebooks)
    (library / 'unused.py').write_text('VALUE = 2\n')
    assert _changed(before, _hashes(project.layout, notebooks)) == set(FRAMEWORKS)


def test_a_change_to_the_kernel_environment_re_executes_every_notebook(project, library):
    before = _hashes(project.layout)
    project.configure(
        repository={'url': 'https://example.org/owner/book'},
        book_execute={'jobs': 2, 'timeout': 60, 'kernel_env': {'TQDM_DISABLE': '0'}},
    )
    assert _changed(before, _hashes(project.layout)) == set(FRAMEWORKS)


def test_the_executing_code_counts_by_what_it_computes(project, library, monkeypatch, tmp_path):
    before = _hashes(project.layout)
    startup = tmp_path / 'startup.py'
    startup.write_text(cache.STARTUP.read_text().replace("'retina'", "'png'"))
    monkeypatch.setattr(cache, 'STARTUP', startup)
    assert _changed(before, _hashes(project.layout)) == set(FRAMEWORKS)


def test_code_text_ignores_docstrings_comments_and_layout(tmp_path):
    one, two = tmp_path / 'one.py', tmp_path / 'two.py'
    one.write_text('"""Module."""\ndef f(x):\n    """Doc."""\n    return x  # same\n')
    two.write_text('\n\ndef f(x):\n    return (\n        x\n    )\n')
    assert code_text(one) == code_text(two)
    two.write_text('def f(x):\n    return -x\n')
    assert code_text(one) != code_text(two)


def test_full_protocol_switch_changes_the_hash(monkeypatch):
    layout = Layout()
    monkeypatch.setenv('D2L_MINI_FULL_PROTOCOL', '0')
    reduced = notebook_hash(_notebook('x = 1'), 'jax', layout)
    monkeypatch.setenv('D2L_MINI_FULL_PROTOCOL', '1')
    assert notebook_hash(_notebook('x = 1'), 'jax', layout) != reduced


def test_the_install_cell_does_not_count():
    layout = Layout()
    with_install = _notebook('x = 1')
    install = new_code_cell('%pip install d2l_mini @ git+https://github.com/o/r')
    install.id = 'install'
    with_install.cells.insert(0, install)
    base = notebook_hash(with_install, 'pytorch', layout)
    install.source = '%pip install d2l_mini @ git+https://github.com/o/r@0123abcd'
    assert notebook_hash(with_install, 'pytorch', layout) == base
    other = new_code_cell(install.source)
    other.id = 'c000'
    with_install.cells.insert(1, other)
    assert notebook_hash(with_install, 'pytorch', layout) != base
