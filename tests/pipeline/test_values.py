"""Numbers in the prose taken from the run: d2l.glue, split, execute, merge."""

import nbformat
import numpy as np
import pytest
from nbformat import v4

from d2l_mini.glue import MIME_TYPE, glue
from tools.site.merge import merge_section
from tools.source.split import split_section
from tools.source.values import MissingValue, fill_notebook, recorded_values

PROSE = (
    'SwiGLU ends {value}`gap:.2f` nats ahead after {value}`steps` steps.\n\n'
    "```{container} fw-only-pytorch\nPyTorch's kernel is slower here.\n```\n\n"
    '```{container} fw-only-jax\nXLA fuses both normalisers.\n```\n'
)


def record(name, value):
    return v4.new_output('display_data', data={MIME_TYPE: {'name': name, 'value': value}})


@pytest.fixture
def shown(monkeypatch):
    """What d2l.glue hands to IPython's display."""
    calls = []
    monkeypatch.setattr('IPython.display.display', lambda bundle, raw: calls.append((bundle, raw)))
    return calls


def scalars():
    import jax.numpy as jnp
    import torch

    return [
        ('float', 0.125, 0.125),
        ('numpy', np.float32(0.5), 0.5),
        ('torch', torch.tensor(0.25), 0.25),
        ('jax', jnp.asarray(0.75), 0.75),
        ('int', np.int64(600), 600),
    ]


@pytest.mark.parametrize('kind, value, plain', scalars(), ids=[s[0] for s in scalars()])
def test_glue_records_plain_values_of_both_frameworks(shown, kind, value, plain):
    glue('gap', value)
    ((bundle, raw),) = shown
    assert raw is True
    assert bundle == {MIME_TYPE: {'name': 'gap', 'value': plain}}
    assert type(bundle[MIME_TYPE]['value']) is type(plain)


def test_glue_rejects_bad_arguments(shown):
    import torch

    with pytest.raises(TypeError, match='name must be a str'):
        glue(3, 1.0)
    with pytest.raises(ValueError, match='name must be a Python identifier'):
        glue('two words', 1.0)
    for value in (np.zeros(3), torch.zeros(2), [1.0], None):
        with pytest.raises(TypeError, match='value must be a number, a string or a scalar array'):
            glue('gap', value)
    assert shown == []


def test_split_keeps_each_frameworks_prose_and_marks_the_values(project):
    project.section('ch/values', PROSE, project.code('x = 1'))
    notebooks = {
        fw: nbformat.read(path, as_version=4)
        for fw, path in split_section('ch/values', project.layout).items()
    }
    texts = {
        fw: '\n'.join(c.source for c in nb.cells if c.cell_type == 'markdown')
        for fw, nb in notebooks.items()
    }
    for fw in ('pytorch', 'jax'):
        assert '<span data-book-value="gap:.2f">[gap]</span>' in texts[fw]
        assert '<span data-book-value="steps">[steps]</span>' in texts[fw]
        assert '{value}' not in texts[fw] and 'container' not in texts[fw]
    assert "PyTorch's kernel" in texts['pytorch'] and 'XLA fuses' not in texts['pytorch']
    assert 'XLA fuses' in texts['jax'] and "PyTorch's kernel" not in texts['jax']


def test_execution_fills_the_placeholders_with_the_notebooks_own_values():
    notebook = v4.new_notebook(
        cells=[
            v4.new_code_cell(
                'd2l.glue(...)', outputs=[record('gap', 0.1234), record('steps', 600)]
            ),
            v4.new_markdown_cell(
                'ahead by <span data-book-value="gap:.2f">[gap]</span> after '
                '<span data-book-value="steps">[steps]</span> steps, '
                '<span data-book-value="unknown">[unknown]</span>'
            ),
        ]
    )
    assert recorded_values(notebook) == {'gap': 0.1234, 'steps': 600}
    fill_notebook(notebook)
    assert notebook.cells[1].source == (
        'ahead by 0.12 after 600 steps, <span data-book-value="unknown">[unknown]</span>'
    )


def execute_with_values(project, rel, values):
    """Executed notebooks whose first code cell recorded ``values[framework]``."""
    for fw, path in split_section(rel, project.layout).items():
        notebook = nbformat.read(path, as_version=4)
        code = [c for c in notebook.cells if c.cell_type == 'code' and c.id != 'install']
        code[0].outputs = [v4.new_output('stream', name='stdout', text='trained\n')]
        code[0].outputs += [record(name, value) for name, value in values[fw].items()]
        target = project.layout.executed(fw, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)


def test_merge_shows_each_frameworks_value_behind_its_tab(project):
    project.section('ch/values', project.code('train()'), PROSE)
    execute_with_values(
        project,
        'ch/values',
        {'pytorch': {'gap': 0.131, 'steps': 600}, 'jax': {'gap': 0.092, 'steps': 600}},
    )
    merged = merge_section('ch/values', project.layout)
    code = [c for c in merged.cells if c.cell_type == 'code']
    assert len(code) == 1, 'outputs that differ only in their records are the same output'
    assert [o.output_type for o in code[0].outputs] == ['stream'], 'records leave the page'
    prose = next(c.source for c in merged.cells if 'SwiGLU' in c.source)
    assert prose.startswith(
        'SwiGLU ends [0.13]{.fw-value .fw-only-pytorch}[0.09]{.fw-value .fw-only-jax}'
        ' nats ahead after [600]{.fw-value .fw-same} steps.'
    )
    assert '```{container} fw-only-jax' in prose


def test_merge_shows_one_value_where_the_frameworks_print_the_same(project):
    """Values that differ beyond the printed digits read the same: one span, which every
    view shows unlabelled; one digit apart, the pair again."""
    project.section('ch/values', project.code('train()'), PROSE)
    execute_with_values(
        project,
        'ch/values',
        {'pytorch': {'gap': 0.1312, 'steps': 600}, 'jax': {'gap': 0.1296, 'steps': 601}},
    )
    prose = next(
        c.source for c in merge_section('ch/values', project.layout).cells if 'SwiGLU' in c.source
    )
    assert prose.startswith(
        'SwiGLU ends [0.13]{.fw-value .fw-same} nats ahead after '
        '[600]{.fw-value .fw-only-pytorch}[601]{.fw-value .fw-only-jax} steps.'
    )


def test_merge_names_a_value_that_no_cell_recorded(project):
    project.section('ch/values', project.code('train()'), PROSE)
    execute_with_values(
        project, 'ch/values', {'pytorch': {'gap': 0.131, 'steps': 600}, 'jax': {'steps': 600}}
    )
    with pytest.raises(
        MissingValue, match=r"book/ch/values.md \[jax\] quotes \{value\}`gap`.*d2l.glue\('gap'"
    ):
        merge_section('ch/values', project.layout)


def test_merge_names_a_format_that_does_not_fit(project):
    project.section('ch/values', project.code('train()'), 'Ahead by {value}`gap:.2f`.\n')
    execute_with_values(project, 'ch/values', {'pytorch': {'gap': 'a lot'}, 'jax': {'gap': 0.1}})
    with pytest.raises(
        MissingValue, match=r"\[pytorch\]: format spec '.2f' does not fit gap = 'a lot'"
    ):
        merge_section('ch/values', project.layout)
