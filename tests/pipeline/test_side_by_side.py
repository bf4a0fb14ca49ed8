"""The side-by-side view's build-time half (tools/site/twins.py): the twin cells' lines
aligned by difflib, the tokens that differ marked, laid out by the Pygments formatter,
found in the doctree."""

import html
import re

import pygments
import pytest
from docutils import nodes
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from tools.site.twins import (
    CHANGED,
    FILLER,
    MARK_MIN,
    MARKS_OPTION,
    ROWS_OPTION,
    SAME,
    TwinRowsFormatter,
    align_lines,
    align_twin_cells,
    code_lines,
    mark_tokens,
    similarity,
    token_spans,
    twin_marks,
    twin_rows,
)

TORCH_FFN = """\
class FeedForward(nn.Module):
    def __init__(self, num_hiddens, ffn_hiddens):
        super().__init__()
        self.dense1 = nn.Linear(num_hiddens, ffn_hiddens)
        self.dense2 = nn.Linear(ffn_hiddens, num_hiddens)

    def forward(self, x):
        return self.dense2(torch.relu(self.dense1(x)))
"""
JAX_FFN = """\
class FeedForward(nnx.Module):
    def __init__(self, num_hiddens, ffn_hiddens, *, rngs):
        self.dense1 = nnx.Linear(num_hiddens, ffn_hiddens, rngs=rngs)
        self.dense2 = nnx.Linear(ffn_hiddens, num_hiddens, rngs=rngs)

    def __call__(self, x):
        return self.dense2(jax.nn.relu(self.dense1(x)))
"""


def shown(rows, left, right):
    """The two columns as text, '' for a filler."""
    return [(left[i] if i is not None else '', right[j] if j is not None else '') for i, j in rows]


def test_equal_code_aligns_line_by_line():
    lines = ['a = 1', '', 'print(a)']
    assert align_lines(lines, lines) == [(0, 0), (1, 1), (2, 2)]
    assert twin_rows('a = 1\nprint(a)\n', 'a = 1\nprint(a)\n') == ((SAME, SAME), (SAME, SAME))


def test_a_line_without_a_counterpart_faces_a_filler_where_it_stands():
    left, right = code_lines(TORCH_FFN), code_lines(JAX_FFN)
    rows = align_lines(left, right)
    assert shown(rows, left, right)[2] == ('        super().__init__()', '')
    # Every line once, in order, on its own side.
    assert [i for i, _ in rows if i is not None] == list(range(len(left)))
    assert [j for _, j in rows if j is not None] == list(range(len(right)))
    # The rest pair with their counterparts, the blank line with the blank line.
    for a, b in shown(rows, left, right):
        if a and b:
            assert a.split()[0] == b.split()[0], (a, b)
    assert ('', '') in shown(rows, left, right)


def test_rows_mark_the_lines_that_differ_and_the_fillers():
    torch_rows, jax_rows = twin_rows(TORCH_FFN, JAX_FFN)
    assert len(torch_rows) == len(jax_rows) == 8
    assert torch_rows[2] == CHANGED and jax_rows[2] == FILLER
    assert torch_rows[5] == jax_rows[5] == SAME  # the blank line
    assert sum(row != FILLER for row in torch_rows) == len(code_lines(TORCH_FFN))
    assert sum(row != FILLER for row in jax_rows) == len(code_lines(JAX_FFN))
    assert FILLER not in torch_rows
    assert all(row == CHANGED for k, row in enumerate(jax_rows) if k not in (2, 5))


def test_lines_that_resemble_nothing_still_pair_in_order():
    left = ['from d2l_mini import torch as d2l', 'import torch']
    right = [
        'from d2l_mini import jax as d2l',
        'import jax',
        'from jax import numpy as jnp',
        'from flax import nnx',
    ]
    assert align_lines(left, right) == [(0, 0), (1, 1), (None, 2), (None, 3)]
    assert align_lines(['x = 1'], ['qqq']) == [(0, 0)]


def test_the_most_similar_lines_pair_up_across_a_changed_stretch():
    left = ['model = Net()', 'model.train()', 'loss = step(model, batch)']
    right = ['model = Net(rngs=rngs)', 'loss = step(model, optimizer, batch)']
    assert shown(align_lines(left, right), left, right) == [
        ('model = Net()', 'model = Net(rngs=rngs)'),
        ('model.train()', ''),
        ('loss = step(model, batch)', 'loss = step(model, optimizer, batch)'),
    ]


def test_equal_lines_anchor_the_alignment():
    left = ['a = 1', 'b = torch.ones(2)', 'print(a)']
    right = ['a = 1', 'key = jax.random.key(0)', 'b = jnp.ones(2)', 'c = b + 1', 'print(a)']
    rows = align_lines(left, right)
    assert (0, 0) in rows and (2, 4) in rows
    assert shown(rows, left, right)[2] == ('b = torch.ones(2)', 'b = jnp.ones(2)')


@pytest.mark.parametrize(
    'source', ['x = 1\ny = 2\n', '\n\nx = 1\n\ny = 2\n\n\n', 's = """one\ntwo\n"""\nprint(s)']
)
def test_code_lines_are_the_lines_pygments_highlights(source):
    highlighted = pygments.highlight(source, PythonLexer(), HtmlFormatter())
    pre = re.search(r'<pre><span></span>(.*)</pre>', highlighted, re.DOTALL)[1]
    assert len(code_lines(source)) == pre.count('\n')


def highlight(source, rows):
    return pygments.highlight(source, PythonLexer(), TwinRowsFormatter(**{ROWS_OPTION: rows}))


def text_of(fragment):
    return html.unescape(re.sub(r'<[^>]+>', '', fragment))


def test_the_formatter_lays_out_lines_and_fillers_by_the_rows():
    source = 's = """a\nb"""\nprint(s < 1)\n'
    out = highlight(source, (SAME, CHANGED, FILLER, CHANGED))
    pre = re.search(r'<pre><span></span>(.*)</pre>', out, re.DOTALL)[1]
    rows = re.findall(r'<span class="(fw-line(?: fw-changed)?|fw-filler)"', pre)
    assert rows == ['fw-line', 'fw-line fw-changed', 'fw-filler', 'fw-line fw-changed']
    # A token over two lines (the string) is closed and reopened at the line's end.
    first = re.search(r'<span class="fw-line">(.*?\n)</span>', pre, re.DOTALL)[1]
    assert text_of(first) == 's = """a\n' and first.count('<span') == first.count('</span>')
    # The code, less its fillers, is the source: what the copy button copies.
    without_fillers = re.sub(r'<span class="fw-filler"[^>]*>\n</span>', '', pre)
    assert text_of(without_fillers) == source
    assert '<span class="fw-filler" aria-hidden="true">\n</span>' in pre


def test_the_formatter_leaves_code_as_it_was_without_rows_or_when_they_do_not_fit():
    source = 'x = 1\ny = 2\n'
    plain = pygments.highlight(source, PythonLexer(), HtmlFormatter())
    assert pygments.highlight(source, PythonLexer(), TwinRowsFormatter()) == plain
    assert highlight(source, (SAME, SAME, SAME)) == plain  # three rows, two lines
    assert highlight(source, (SAME, FILLER)) == plain


def cell(tags, source=None):
    """A code cell as myst-nb puts it into the doctree."""
    container = nodes.container(
        nb_element='cell_code', classes=['cell'] + [f'tag_{tag}' for tag in tags]
    )
    if source is not None:
        code = nodes.container(nb_element='cell_code_source', classes=['cell_input'])
        code += nodes.literal_block(source, source, language='ipython3')
        container += code
    return container


def rows_of(container):
    block = next(container.findall(nodes.literal_block), None)
    return block.get('highlight_args', {}).get(ROWS_OPTION) if block else None


def test_twin_cells_in_the_doctree_get_their_rows():
    section = nodes.section()
    cells = [
        cell(['pytorch'], 'from d2l_mini import torch as d2l\n'),  # twins
        cell(['jax'], 'from d2l_mini import jax as d2l\nfrom flax import nnx\n'),
        cell([], 'x = 1\n'),  # untagged: no twin
        cell(['jax'], 'y = 1\n'),  # out of order
        cell(['pytorch'], 'y = 2\n'),
        cell(['pytorch'], 'z = 1\n'),  # a twin without source
        cell(['jax']),
    ]
    section += nodes.paragraph(text='Prose.')
    section.extend(cells)
    assert align_twin_cells(section, ['pytorch', 'jax']) == 1
    assert rows_of(cells[0]) == (CHANGED, FILLER)
    assert rows_of(cells[1]) == (CHANGED, CHANGED)
    assert [rows_of(c) for c in cells[2:6]] == [None] * 4
    assert cells[0].next_node(nodes.literal_block)['highlight_args'] == {
        ROWS_OPTION: (CHANGED, FILLER),
        MARKS_OPTION: (((21, 26),), ()),  # 'torch' against 'jax'; the filler's line: none
    }


def test_twin_cells_are_not_aligned_unless_there_are_two_frameworks():
    section = nodes.section()
    section.extend([cell(['a'], 'x\n'), cell(['b'], 'y\n')])
    assert align_twin_cells(section, ['a', 'b', 'c']) == 0
    assert align_twin_cells(section, ['a', 'b']) == 1


def marked(line, other):
    return [line[start:end] for start, end in token_spans(line, other)]


def test_the_tokens_that_differ_are_marked_not_the_whole_line():
    torch_line = '    return scores.softmax(dim=-1).sum(-1, keepdim=True)'
    jax_line = '    return jax.nn.softmax(scores, axis=-1).sum(-1, keepdims=True)'
    assert 'keepdim' in marked(torch_line, jax_line)
    assert 'keepdims' in marked(jax_line, torch_line)
    assert not any('return' in text or 'True' in text for text in marked(torch_line, jax_line))
    assert marked('x = torch.ones(2)', 'x = jnp.ones(2)') == ['torch']
    assert marked('a = 1', 'a = 1') == []


def test_a_name_with_underscores_is_one_token():
    assert marked('y = use_fused_kernels(x)', 'y = use_fused(x)') == ['use_fused_kernels']
    assert marked('    def __init__(self, d):', '    def __call__(self, d):') == ['__init__']


def test_only_lines_that_largely_agree_get_their_tokens_marked():
    # Alike but for a name or an argument: the tokens that differ are marked.
    alike = ('    bias=bias)', '    bias=bias, rngs=rngs)')
    assert similarity(*alike) >= MARK_MIN
    assert marked(*alike) == [] and marked(*reversed(alike)) == [', rngs=rngs']
    assert marked('x = torch.ones(2)', 'x = jnp.ones(2)') == ['torch']
    # Lines that differ throughout: the line's tint says it; no token is marked.
    apart = [
        ('X = torch.randn(2, 32, 64)', 'X = jax.random.normal(jax.random.key(0), (2, 32, 64))'),
        ('import torch', 'import jax'),
        ('mine.load_state_dict(theirs.state_dict())', 'nnx.update(mine, nnx.state(theirs))'),
    ]
    for torch_line, jax_line in apart:
        assert similarity(torch_line, jax_line) < MARK_MIN, (torch_line, jax_line)
        assert marked(torch_line, jax_line) == marked(jax_line, torch_line) == []
    torch_source = 'import torch\nx = torch.ones(2)\n'
    jax_source = 'import jax\nx = jnp.ones(2)\n'
    assert twin_rows(torch_source, jax_source) == ((CHANGED, CHANGED), (CHANGED, CHANGED))
    torch_marks, jax_marks = twin_marks(torch_source, jax_source)
    assert torch_marks == ((), ((4, 9),)) and jax_marks == ((), ((4, 7),))


def test_twin_marks_follow_the_rows():
    torch_marks, jax_marks = twin_marks(TORCH_FFN, JAX_FFN)
    torch_rows, jax_rows = twin_rows(TORCH_FFN, JAX_FFN)
    assert len(torch_marks) == len(torch_rows) and len(jax_marks) == len(jax_rows)
    for rows, marks in ((torch_rows, torch_marks), (jax_rows, jax_marks)):
        for row, spans in zip(rows, marks, strict=True):
            assert row == CHANGED or spans == (), (row, spans)
    assert torch_marks[2] == ()  # super().__init__() faces a filler: the line is the change
    line = code_lines(JAX_FFN)[0]
    assert [line[a:b] for a, b in jax_marks[0]] == ['nnx']


def test_marks_nest_with_pygments_spans_and_keep_the_text():
    source = 'y = x.sum(-1, keepdim=True) < 2\n'
    line_html = highlight(source, (CHANGED,))
    pre = re.search(r'<pre><span></span>(.*)</pre>', line_html, re.DOTALL)[1]
    inner = re.search(r'<span class="fw-line fw-changed">(.*)</span>', pre, re.DOTALL)[1]
    out = mark_tokens(inner, token_spans(source.rstrip(), 'y = x.sum(-1, keepdims=True) < 2'))
    assert text_of(out) == text_of(inner) == source
    assert re.findall(r'<span class="fw-token">([^<]*)</span>', out) == ['keepdim']
    assert out.count('<span') == out.count('</span>')
    formatted = pygments.highlight(
        source,
        PythonLexer(),
        TwinRowsFormatter(**{ROWS_OPTION: (CHANGED,), MARKS_OPTION: (((14, 21),),)}),
    )
    assert '<span class="fw-token">keepdim</span>' in formatted
    assert '&lt;' in formatted  # the entity stays one character, unsplit
