"""The content hash: what re-executes a notebook and what does not."""

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from d2l_mini import settings
from tools.paths import Layout
from tools.run.cache import notebook_hash


def _notebook(code, prose='Some prose.'):
    return new_notebook(cells=[new_markdown_cell(prose), new_code_cell(code)])


def test_hash_follows_code_not_prose():
    layout = Layout()
    base = notebook_hash(_notebook('x = 1'), layout)
    assert notebook_hash(_notebook('x = 1', prose='Other prose.'), layout) == base
    assert notebook_hash(_notebook('x = 2'), layout) != base


def test_full_protocol_switch_changes_the_hash(monkeypatch):
    layout = Layout()
    reduced = notebook_hash(_notebook('x = 1'), layout)
    monkeypatch.setattr(settings, 'FULL_PROTOCOL', not settings.FULL_PROTOCOL)
    assert notebook_hash(_notebook('x = 1'), layout) != reduced


def test_the_install_cell_does_not_count():
    layout = Layout()
    with_install = _notebook('x = 1')
    install = new_code_cell('%pip install d2l_mini @ git+https://github.com/o/r')
    install.id = 'install'
    with_install.cells.insert(0, install)
    base = notebook_hash(with_install, layout)
    install.source = '%pip install d2l_mini @ git+https://github.com/o/r@0123abcd'
    assert notebook_hash(with_install, layout) == base
    other = new_code_cell(install.source)
    other.id = 'c000'
    with_install.cells.insert(1, other)
    assert notebook_hash(with_install, layout) != base
