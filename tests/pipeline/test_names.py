"""One meaning per name in the book's code: ``num_steps`` is T, the number of tokens in
a sequence (the notation table's row), and the length of a training run is
``num_updates``, in both frameworks and every cell."""

import ast

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from tools.paths import Layout
from tools.source.sections import find_sections, read_section

# Functions of the book and of d2l_mini whose subject is a training run.
TRAINING = ('train', 'batch_schedule', 'learning_rates')


def training_length_as_num_steps(source: str) -> list[str]:
    """Where ``source`` names a training run's length ``num_steps``: a parameter of a
    training function, or an argument or keyword of a call to one."""
    found = []
    python = TransformerManager().transform_cell(source)  # IPython's % and ! lines
    for node in ast.walk(ast.parse(python)):
        if isinstance(node, ast.FunctionDef) and node.name.startswith(TRAINING):
            names = [arg.arg for arg in node.args.args + node.args.kwonlyargs]
            if 'num_steps' in names:
                found.append(f'line {node.lineno}: def {node.name}(..., num_steps, ...)')
        if isinstance(node, ast.Call):
            func = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, 'id', '')
            )
            args = [a.id for a in node.args if isinstance(a, ast.Name)]
            args += [k.arg for k in node.keywords]
            if func.startswith(TRAINING) and 'num_steps' in args:
                found.append(f'line {node.lineno}: {func}(..., num_steps, ...)')
    return found


@pytest.mark.parametrize(
    'source',
    [
        'losses = d2l.train_lm(model, data, optimizer, num_steps=600)',
        'def train(model, seed, lr=3e-3, num_steps=200):\n    pass',
        'losses = train_classifier(vit, num_steps)',
        'def batch_schedule(num_steps, batch_size):\n    pass',
    ],
)
def test_a_training_length_named_num_steps_is_found(source):
    assert training_length_as_num_steps(source)


def test_num_steps_as_the_sequence_length_is_not():
    source = (
        'data = d2l.TimeMachine(batch_size=16, num_steps=32)\n'
        'batch_size, num_steps = X.shape\n'
        'losses = d2l.train_lm(model, data, optimizer, num_updates=600)\n'
    )
    assert training_length_as_num_steps(source) == []


def test_the_books_training_runs_count_num_updates():
    layout = Layout()
    found = []
    for rel in find_sections(layout):
        for cell in read_section(layout, rel).cells:
            if cell.cell_type == 'code':
                found += [
                    f'{rel}.md:{cell.line}: {where}'
                    for where in training_length_as_num_steps(cell.source)
                ]
    assert not found, (
        "num_steps is the sequence length T; call a run's length num_updates:\n" + '\n'.join(found)
    )
