"""The PyTorch and Flax twins of d2l_mini side by side: one side per framework, for the
tests that make the same assertions in both (the fixture ``fw`` of conftest.py), and a
PyTorch model's weights copied into its Flax twin, for the parity tests."""

import numpy as np
import torch
from flax import nnx
from jax import numpy as jnp

from d2l_mini import jax as d2l_jax
from d2l_mini import torch as d2l_torch


def numpy(tensor):
    return tensor.detach().cpu().numpy()


@nnx.jit
def jax_apply(model, *args):
    """Call a Flax model compiled: one compilation per test instead of one
    per operation and shape in eager mode."""
    return model(*args)


class TorchSide:
    """How the tests build, call and read a PyTorch model."""

    d2l = d2l_torch

    def make(self, cls, *args, seed=0, **kwargs):
        """d2l_mini's class ``cls`` (or a subclass of it), built with PyTorch seeded."""
        torch.manual_seed(seed)
        return (getattr(d2l_torch, cls) if isinstance(cls, str) else cls)(*args, **kwargs)

    def tensor(self, array):
        return torch.from_numpy(array)

    def to_numpy(self, X):
        return numpy(X)

    def apply(self, model, *arrays):
        """model(*arrays) as a NumPy array."""
        with torch.no_grad():
            return numpy(model(*map(self.tensor, arrays)))

    def call(self, mha, q, k, v, valid_lens=None, **options):
        """An attention's (outputs, weights) as NumPy arrays (weights None if it gave none)."""
        if valid_lens is not None:
            valid_lens = self.tensor(valid_lens)
        with torch.no_grad():
            out, weights = mha(
                self.tensor(q), self.tensor(k), self.tensor(v), valid_lens, **options
            )
        return numpy(out), None if weights is None else numpy(weights)

    def softmax(self, scores, mask):
        return numpy(d2l_torch.masked_softmax(self.tensor(scores), self.tensor(mask)))

    def unit_rows(self, X):
        """X scaled to unit length along its last axis."""
        return X / X.norm(dim=-1, keepdim=True)

    def copy_weights(self, src, dst):
        dst.load_state_dict(src.state_dict())

    def weight_shape(self, linear):
        """(in, out) of a linear layer (PyTorch keeps its weight as (out, in))."""
        return tuple(linear.weight.T.shape)

    def bias(self, linear):
        return numpy(linear.bias)

    def factory(self, module):
        """A sublayer factory of TransformerBlock that hands over ``module``."""
        return lambda: module


class JaxSide:
    """How the tests build, call and read a Flax model."""

    d2l = d2l_jax

    def make(self, cls, *args, seed=0, **kwargs):
        """d2l_mini's class ``cls`` (or a subclass of it), built from ``nnx.Rngs(seed)``."""
        cls = getattr(d2l_jax, cls) if isinstance(cls, str) else cls
        return cls(*args, **kwargs, rngs=nnx.Rngs(seed))

    def tensor(self, array):
        return jnp.asarray(array)

    def to_numpy(self, X):
        return np.asarray(X)

    def apply(self, model, *arrays):
        """model(*arrays) as a NumPy array."""
        return np.asarray(jax_apply(model, *map(self.tensor, arrays)))

    def call(self, mha, q, k, v, valid_lens=None, **options):
        """An attention's (outputs, weights) as NumPy arrays (weights None if it gave none)."""
        out, weights = mha(q, k, v, valid_lens, **options)
        return np.asarray(out), None if weights is None else np.asarray(weights)

    def softmax(self, scores, mask):
        return np.asarray(d2l_jax.masked_softmax(scores, mask))

    def unit_rows(self, X):
        """X scaled to unit length along its last axis."""
        return X / jnp.linalg.norm(X, axis=-1, keepdims=True)

    def copy_weights(self, src, dst):
        nnx.update(dst, nnx.state(src, nnx.Param))

    def weight_shape(self, linear):
        """(in, out) of a linear layer."""
        return tuple(linear.kernel.shape)

    def bias(self, linear):
        return np.asarray(linear.bias[...])

    def factory(self, module):
        """A sublayer factory of TransformerBlock that hands over ``module``."""
        return lambda rngs: module


SIDES = {'pytorch': TorchSide(), 'jax': JaxSide()}

# ------------------------------------------- PyTorch's weights into the Flax twin


def copy_linear(src, dst):
    assert (src.bias is None) == (dst.bias is None), 'bias mismatch'
    dst.kernel[...] = jnp.asarray(numpy(src.weight).T)
    if src.bias is not None:
        dst.bias[...] = jnp.asarray(numpy(src.bias))


def copy_norm(src, dst):
    assert type(src).__name__ == type(dst).__name__, (src, dst)
    dst.scale[...] = jnp.asarray(numpy(src.weight))
    if isinstance(src, torch.nn.LayerNorm):
        dst.bias[...] = jnp.asarray(numpy(src.bias))


def copy_attention(src, dst):
    for name in ('W_q', 'W_k', 'W_v', 'W_o'):
        copy_linear(getattr(src, name), getattr(dst, name))


def copy_ffn(src, dst):
    assert src.act == dst.act
    names = ('W_1', 'W_2') + (('W_g',) if src.act == 'swiglu' else ())
    for name in names:
        copy_linear(getattr(src, name), getattr(dst, name))


def copy_block(src, dst):
    copy_norm(src.norm1, dst.norm1)
    copy_norm(src.norm2, dst.norm2)
    copy_attention(src.attention, dst.attention)
    copy_ffn(src.ffn, dst.ffn)


def copy_charlm(src, dst):
    dst.token_emb.embedding[...] = jnp.asarray(numpy(src.token_emb.weight))
    dst.pos_emb.embedding[...] = jnp.asarray(numpy(src.pos_emb.weight))
    assert len(src.blks) == len(dst.blks)
    for src_blk, dst_blk in zip(src.blks, dst.blks, strict=True):
        copy_block(src_blk, dst_blk)
    copy_norm(src.norm, dst.norm)
