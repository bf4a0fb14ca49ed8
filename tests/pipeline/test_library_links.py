"""Links from the library names in code cells (``d2l.<name>``) to their entries on the
d2l_mini reference page (tools/site/ext/library_links.py), as functions and in a small
Sphinx build."""

import json
import textwrap

import nbformat
import pygments
from bs4 import BeautifulSoup
from pygments.lexers import PythonLexer

from tools.site.ext.code_cells import CodeCellFormatter
from tools.site.ext.library_links import (
    LINKS_OPTION,
    entry_name,
    framework_modules,
    link_library_names,
    names_used,
)
from tools.site.twins import CHANGED, MARKS_OPTION, ROWS_OPTION, SAME

TRAIN_LM = {'pytorch': 'd2l-mini.html#d2l_mini.torch.train_lm'}


def highlighted(source, **options):
    return pygments.highlight(source, PythonLexer(), CodeCellFormatter(**options))


def test_a_library_name_links_to_its_entry_and_an_unknown_one_is_left_alone():
    html = highlighted('loss = d2l.train_lm(d2l.unknown, x.train_lm)  # d2l.train_lm\n')
    linked = link_library_names(html, {'train_lm': TRAIN_LM})
    [link] = BeautifulSoup(linked, 'html.parser').select('a')
    assert link['href'] == 'd2l-mini.html#d2l_mini.torch.train_lm'
    assert link.get_text() == 'd2l.train_lm' and 'd2l-ref' in link['class']
    # The rest is Pygments' HTML as it was: the unknown name, an attribute of another
    # object, and the name in a comment.
    assert (
        BeautifulSoup(linked, 'html.parser').get_text()
        == BeautifulSoup(html, 'html.parser').get_text()
    )
    assert linked.replace(str(link), '', 1).count('<a ') == 0
    assert link_library_names(html, {}) == html


def test_a_name_with_a_target_per_framework_carries_them_all():
    targets = {'pytorch': 'r.html#d2l_mini.torch.CharLM', 'jax': 'r.html#d2l_mini.jax.CharLM'}
    linked = link_library_names(highlighted('d2l.CharLM(vocab)\n'), {'CharLM': targets})
    [link] = BeautifulSoup(linked, 'html.parser').select('a')
    assert link['href'] == targets['pytorch'] and json.loads(link['data-fw-hrefs']) == targets
    shared = {'pytorch': 'r.html#d2l_mini.data.Vocab', 'jax': 'r.html#d2l_mini.data.Vocab'}
    linked = link_library_names(highlighted('d2l.Vocab(tokens)\n'), {'Vocab': shared})
    [link] = BeautifulSoup(linked, 'html.parser').select('a')
    assert not link.has_attr('data-fw-hrefs'), 'one target for both: nothing to choose'


def test_a_name_resolves_to_its_framework_module_then_to_a_shared_helper():
    documented = {'d2l_mini.torch.train_lm', 'd2l_mini.jax.train_lm', 'd2l_mini.data.Vocab'}
    modules = framework_modules()
    assert modules == {'pytorch': 'd2l_mini.torch', 'jax': 'd2l_mini.jax'}
    shared = ['d2l_mini.data', 'd2l_mini.plotting']
    assert entry_name('train_lm', 'd2l_mini.jax', documented, shared) == 'd2l_mini.jax.train_lm'
    assert entry_name('Vocab', 'd2l_mini.torch', documented, shared) == 'd2l_mini.data.Vocab'
    assert entry_name('unknown', 'd2l_mini.torch', documented, shared) is None


def test_the_names_a_cell_uses_are_read_as_python_reads_them():
    source = 'x = d2l.plot(d2l.Vocab)\nprint("d2l.glue")  # d2l.claims\nd2l2.check_args\n'
    assert list(names_used(source)) == ['plot', 'Vocab']


def test_links_nest_with_the_twin_rows_and_marks():
    source = 'model = d2l.CharLM(vocab, rngs=rngs)\n'
    options = {
        ROWS_OPTION: (CHANGED,),
        MARKS_OPTION: (((8, 18),),),  # 'd2l.CharLM' differs from its twin's line
        LINKS_OPTION: {'CharLM': {'jax': 'r.html#d2l_mini.jax.CharLM'}},
    }
    soup = BeautifulSoup(highlighted(source, **options), 'html.parser')
    [line] = soup.select('span.fw-line.fw-changed')
    [link] = line.select('a.d2l-ref')
    assert link['href'] == 'r.html#d2l_mini.jax.CharLM'
    assert ''.join(t.get_text() for t in link.select('.fw-token')) == 'd2l.CharLM'
    assert soup.select_one('pre').get_text() == source
    plain = highlighted('x = d2l.plot(y)\n', **{ROWS_OPTION: (SAME,)})
    assert '<a ' not in plain, 'no links without targets'


REFERENCE = """\
# Reference

```{py:function} d2l_mini.torch.train_lm()
```

```{py:function} d2l_mini.jax.train_lm()
```

```{py:class} d2l_mini.data.Vocab()
```
"""


def notebook_page(*cells):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata['kernelspec'] = {'name': 'python3', 'display_name': 'Python 3'}
    notebook.metadata['language_info'] = {'name': 'python', 'pygments_lexer': 'ipython3'}
    notebook.cells = [nbformat.v4.new_markdown_cell('# Section')]
    for source, tags in cells:
        cell = nbformat.v4.new_code_cell(source)
        if tags:
            cell.metadata['tags'] = list(tags)
        notebook.cells.append(cell)
    return nbformat.writes(notebook)


def sphinx_build(tmp_path, *cells):
    """A small book: the reference page and one notebook page of `cells`, built with the
    book's code-cell modules; returns (exit status, warnings, the page's HTML)."""
    from sphinx.cmd.build import build_main

    src = tmp_path / 'src'
    src.mkdir()
    (src / 'conf.py').write_text(
        textwrap.dedent(
            """\
            extensions = ['myst_nb', 'tools.site.ext.code_cells']
            nb_execution_mode = 'off'
            book_frameworks = [
                {'name': 'pytorch', 'label': 'PyTorch'}, {'name': 'jax', 'label': 'JAX'}
            ]
            """
        )
    )
    (src / 'index.md').write_text('# Book\n\n```{toctree}\nreference\nsection\n```\n')
    (src / 'reference.md').write_text(REFERENCE)
    (src / 'section.ipynb').write_text(notebook_page(*cells))
    out, warnings = tmp_path / 'html', tmp_path / 'warnings.txt'
    status = build_main(['-q', '-W', '-w', str(warnings), '-b', 'html', str(src), str(out)])
    page = out / 'section.html'
    html = page.read_text(encoding='utf-8') if page.is_file() else ''
    return status, warnings.read_text(), html


def test_in_a_build_each_cell_links_its_framework_s_entries(tmp_path):
    status, warnings, html = sphinx_build(
        tmp_path,
        ('losses = d2l.train_lm(d2l.Vocab)', ['pytorch']),
        ('losses = d2l.train_lm(d2l.Vocab)', ['jax']),
        ('d2l.train_lm', []),
    )
    assert status == 0, warnings
    cells = BeautifulSoup(html, 'html.parser').select('div.cell')
    hrefs = [[a['href'] for a in cell.select('a.d2l-ref')] for cell in cells]
    assert hrefs == [
        ['reference.html#d2l_mini.torch.train_lm', 'reference.html#d2l_mini.data.Vocab'],
        ['reference.html#d2l_mini.jax.train_lm', 'reference.html#d2l_mini.data.Vocab'],
        ['reference.html#d2l_mini.torch.train_lm'],
    ]
    [untagged] = cells[2].select('a.d2l-ref')
    assert json.loads(untagged['data-fw-hrefs'])['jax'] == 'reference.html#d2l_mini.jax.train_lm'


def test_in_a_build_a_name_without_an_entry_fails_it(tmp_path):
    status, warnings, _ = sphinx_build(tmp_path, ('d2l.Vocab(d2l.not_there)', ['jax']))
    assert status != 0
    assert 'd2l.not_there in a jax cell has no entry on the d2l_mini reference page' in warnings
