"""The two modules are twins: the same public names, with the same arguments (the JAX
classes take ``rngs`` too), apart from the speed switches that the package docstring,
the reference page's "How the twins differ", names and explains."""

import inspect

import pytest

import d2l_mini
from d2l_mini import jax as jax_d2l
from d2l_mini import torch as torch_d2l

# (name, argument): an argument of one twin only, each one explained in d2l_mini's docstring.
SPEED_SWITCHES = {('MultiHeadAttention', 'need_weights')}


def arguments(obj):
    """The arguments of a function, or of a class's constructor and of its call (PyTorch's
    ``forward``, NNX's ``__call__``), but ``self`` and ``rngs``, as (where, name)."""
    if not callable(obj):
        return []
    if inspect.isclass(obj):
        calls = {'init': obj.__init__, 'call': getattr(obj, 'forward', None) or obj.__call__}
    else:
        calls = {'call': obj}
    return [
        (where, name)
        for where, call in calls.items()
        for name in inspect.signature(call).parameters
        if name not in ('self', 'rngs', 'args', 'kwargs')
    ]


def test_the_twins_have_the_same_public_names_in_the_same_order():
    assert torch_d2l.__all__ == jax_d2l.__all__


@pytest.mark.parametrize('name', torch_d2l.__all__)
def test_twins_take_the_same_arguments_apart_from_the_explained_switches(name):
    mine, theirs = arguments(getattr(torch_d2l, name)), arguments(getattr(jax_d2l, name))
    only = {(name, argument) for _, argument in set(mine) ^ set(theirs)}
    assert only <= SPEED_SWITCHES, f'{name}: arguments of one twin only: {sorted(only)}'
    shared = [argument for argument in mine if argument in theirs]
    assert shared == [argument for argument in theirs if argument in mine], (mine, theirs)


@pytest.mark.parametrize('name, argument', sorted(SPEED_SWITCHES))
def test_each_switch_of_one_twin_is_explained_on_the_reference_page(name, argument):
    assert f'``{argument}``' in d2l_mini.__doc__ and f'``{name}``' in d2l_mini.__doc__
