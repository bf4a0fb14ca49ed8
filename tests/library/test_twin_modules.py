"""The two modules are twins: the same public names, and for each, the same public
methods and properties with the same arguments, in the same order and with the same
defaults (the JAX classes take ``rngs`` too)."""

import inspect

import pytest

from d2l_mini import jax as jax_d2l
from d2l_mini import torch as torch_d2l

# Each framework's name for calling a module, compared with one another.
CALL = {'forward': 'call', '__call__': 'call'}
# Hooks that one framework's modules have and the other's do not: PyTorch's repr hook
# (NNX writes a module's repr from its attributes).
FRAMEWORK_HOOKS = {'extra_repr'}


def signature(function):
    """A function's arguments but ``self`` and ``rngs``, as written without annotations
    (``mask=None``, ``*args``)."""
    return [
        str(parameter.replace(annotation=inspect.Parameter.empty))
        for name, parameter in inspect.signature(function).parameters.items()
        if name not in ('self', 'rngs')
    ]


def own_members(cls):
    """The public methods and properties a d2l_mini class defines or inherits from
    d2l_mini (not from nn.Module or nnx.Module), its constructor and its call, each
    as {name: signature, or 'property'}."""
    members = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith('d2l_mini'):
            continue
        for name, value in vars(klass).items():
            public = not name.startswith('_') or name in ('__init__', '__call__')
            if not public or name in FRAMEWORK_HOOKS:
                continue
            name = CALL.get(name, name)
            if isinstance(value, property):
                members[name] = 'property'
            elif isinstance(value, (staticmethod, classmethod)):
                members[name] = signature(value.__func__)
            elif callable(value):
                members[name] = signature(value)
    return members


def interface(obj):
    """What a caller of a public name relies on: a class's members, a function's
    signature, or a constant's type."""
    if inspect.isclass(obj):
        return own_members(obj)
    if callable(obj):
        return signature(obj)
    return type(obj).__name__


def test_the_twins_have_the_same_public_names_in_the_same_order():
    assert torch_d2l.__all__ == jax_d2l.__all__


@pytest.mark.parametrize('name', torch_d2l.__all__)
def test_twins_have_the_same_interface_apart_from_rngs(name):
    mine, theirs = interface(getattr(torch_d2l, name)), interface(getattr(jax_d2l, name))
    assert mine == theirs, f'{name}: PyTorch has {mine}, JAX {theirs}'


def test_the_comparison_sees_a_method_that_one_twin_lacks():
    class Torch(torch_d2l.MultiHeadAttention):
        def scores(self, Q, K):
            return Q @ K

    Torch.__module__ = 'd2l_mini.torch'
    assert 'scores' in own_members(Torch)
    assert own_members(Torch) != own_members(jax_d2l.MultiHeadAttention)
