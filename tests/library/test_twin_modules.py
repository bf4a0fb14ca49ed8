"""The two modules are twins: the same public names, with the same arguments in the same
order (the JAX classes take ``rngs`` too)."""

import inspect

import pytest

from d2l_mini import jax as jax_d2l
from d2l_mini import torch as torch_d2l


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
def test_twins_take_the_same_arguments_apart_from_rngs(name):
    mine, theirs = arguments(getattr(torch_d2l, name)), arguments(getattr(jax_d2l, name))
    assert mine == theirs, f'{name}: PyTorch takes {mine}, JAX {theirs}'
