"""tools.site.merge: two executed notebooks -> one page, in source order."""

import nbformat
import pytest
from nbformat import v4

from tools.site.merge import NotExecuted, merge_all, merge_section
from tools.source.split import split_section

PNG_A = (
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5E'
    'rkJggg=='
)
PNG_B = (
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E'
    'rkJggg=='
)


def stdout(text):
    return v4.new_output('stream', name='stdout', text=text)


def image(data):
    return v4.new_output(
        'display_data', data={'image/png': data, 'text/plain': '<Figure size 350x250>'}
    )


def result(text, count):
    return v4.new_output('execute_result', data={'text/plain': text}, execution_count=count)


def execute_by_hand(project, rel, outputs):
    """Write executed notebooks whose cells carry ``outputs[framework][source]``."""
    for framework, path in split_section(rel, project.layout).items():
        notebook = nbformat.read(path, as_version=4)
        for count, cell in enumerate(c for c in notebook.cells if c.cell_type == 'code'):
            cell.execution_count = count + 1
            cell.outputs = outputs[framework].get(cell.source, [])
        target = project.layout.executed(framework, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)


@pytest.fixture
def merged(project):
    code = project.code
    project.section(
        'ch/merge',
        '(sec-merge)=\n# Merge\n\nSee {ref}`sec-merge`.\n',
        code('import torch', 'pytorch'),
        code('import jax', 'jax'),
        code("print('same')"),
        code('object()'),
        code('print(x.shape)', 'remove-input'),
        code('plot()'),
        code('plot2()'),
        code('assert ok', 'pytorch', 'claim', 'remove-cell'),
        code('assert ok', 'jax', 'claim', 'remove-cell'),
        'The end.\n',
    )
    outputs = {
        'pytorch': {
            'import torch': [stdout('torch loaded\n')],
            "print('same')": [stdout('same\n')],
            'object()': [result('<object object at 0x7f3a2c1b0e40>', 4)],
            'print(x.shape)': [stdout('torch.Size([2, 3])\n')],
            'plot()': [image(PNG_A)],
            'plot2()': [image(PNG_A)],
        },
        'jax': {
            'import jax': [stdout('jax loaded\n')],
            "print('same')": [stdout('same\n')],
            'object()': [result('<object object at 0x7fe2d0c4a1b0>', 4)],
            'print(x.shape)': [stdout('(2, 3)\n')],
            'plot()': [image(PNG_A)],
            'plot2()': [image(PNG_B)],
        },
    }
    execute_by_hand(project, 'ch/merge', outputs)
    return merge_section('ch/merge', project.layout)


def summary(notebook):
    return [(c.cell_type, c.source, c.metadata.get('tags', [])) for c in notebook.cells]


def test_cells_in_source_order_with_differing_outputs_as_framework_twins(merged):
    assert summary(merged) == [
        ('markdown', '(sec-merge)=\n# Merge\n\nSee {ref}`sec-merge`.', []),
        ('code', 'import torch', ['pytorch']),
        ('code', 'import jax', ['jax']),
        ('code', "print('same')", []),
        ('code', 'object()', []),
        ('code', 'print(x.shape)', ['pytorch', 'remove-input']),
        ('code', 'print(x.shape)', ['jax', 'remove-input']),
        ('code', 'plot()', []),
        ('code', 'plot2()', ['pytorch']),
        ('code', 'plot2()', ['jax']),
        ('code', 'assert ok', ['pytorch', 'claim', 'remove-cell']),
        ('code', 'assert ok', ['jax', 'claim', 'remove-cell']),
        ('markdown', 'The end.', []),
    ]


def test_each_copy_keeps_its_own_framework_outputs(merged):
    by_id = {c.id: c for c in merged.cells}
    assert by_id['c001'].outputs[0]['text'] == 'torch loaded\n'
    assert by_id['c002'].outputs[0]['text'] == 'jax loaded\n'
    assert by_id['c005-pytorch'].outputs[0]['text'] == 'torch.Size([2, 3])\n'
    assert by_id['c005-jax'].outputs[0]['text'] == '(2, 3)\n'
    assert by_id['c007-pytorch'].outputs[0]['data']['image/png'] == PNG_A
    assert by_id['c007-jax'].outputs[0]['data']['image/png'] == PNG_B
    assert by_id['c003'].outputs[0]['text'] == 'same\n'


def test_prose_stays_myst_and_the_install_cell_stays_out(merged):
    assert merged.cells[0].source.startswith('(sec-merge)=')
    assert all('d2l_mini @ git+' not in c.source for c in merged.cells)
    assert merged.metadata.book == {'section': 'ch/merge'}
    assert merged.metadata.kernelspec.name == 'python3'
    nbformat.validate(merged)
    assert len({c.id for c in merged.cells}) == len(merged.cells)


def test_merge_refuses_executed_notebooks_older_than_the_source(project, merged):
    path = project.layout.source('ch/merge')
    path.write_text(path.read_text().replace("print('same')", "print('changed')"))
    with pytest.raises(NotExecuted, match='tools execute'):
        merge_section('ch/merge', project.layout)
    project.layout.executed('jax', 'ch/merge').unlink()
    with pytest.raises(NotExecuted, match='missing'):
        merge_all(['ch/merge'], project.layout)
