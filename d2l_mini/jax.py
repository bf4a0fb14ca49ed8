"""The JAX/Flax NNX half of d2l_mini: ``from d2l_mini import jax as d2l``."""
import functools
import math
import sys
import time

import numpy as np
import jax
from jax import numpy as jnp
from flax import nnx
import optax

from d2l_mini import data as _data
from d2l_mini.data import Vocab, preprocess, read_time_machine
from d2l_mini.plotting import (check_shape, plot, set_axes, set_figsize,
                               use_svg_display)

d2l = sys.modules[__name__]

__all__ = ['MultiHeadAttention', 'TimeMachine', 'Vocab', 'check_shape',
           'get_key', 'masked_softmax', 'plot', 'preprocess',
           'read_time_machine', 'set_axes', 'set_figsize', 'set_seed',
           'train_lm', 'try_gpu', 'use_svg_display']


def try_gpu(i=0):
    """The ``i``-th GPU if there is one, else the first CPU device."""
    try:
        gpus = jax.devices('gpu')
    except RuntimeError:  # no GPU backend at all
        gpus = []
    if len(gpus) > i:
        return gpus[i]
    return jax.devices('cpu')[0]


_key_state = {'seed': 0, 'key': None}


def set_seed(seed):
    """Restart the key sequence of :func:`get_key` from ``seed``."""
    _key_state['seed'], _key_state['key'] = seed, None


def get_key():
    """A fresh PRNG key: each call splits the module's key (seeded by
    :func:`set_seed`, 0 by default), so successive calls never repeat."""
    if _key_state['key'] is None:
        _key_state['key'] = jax.random.key(_key_state['seed'])
    _key_state['key'], key = jax.random.split(_key_state['key'])
    return key


def _visible_keys(valid_lens, batch_size, num_queries, num_keys):
    """Boolean mask of shape (B, 1, Tq, Tk): True where a query may see a key.

    ``valid_lens`` holds one length per sequence, shape (B,), or one per query,
    shape (B, Tq); key positions at or beyond the length are hidden.
    """
    valid_lens = jnp.asarray(valid_lens)
    if not jnp.issubdtype(valid_lens.dtype, jnp.integer):
        raise TypeError(f'valid_lens must hold integers, got dtype '
                        f'{valid_lens.dtype}')
    if valid_lens.shape == (batch_size,):
        lens = valid_lens[:, None, None, None]
    elif valid_lens.shape == (batch_size, num_queries):
        lens = valid_lens[:, None, :, None]
    else:
        raise ValueError(
            f'valid_lens must be None, of shape (batch_size,) = '
            f'({batch_size},) or of shape (batch_size, num_queries) = '
            f'({batch_size}, {num_queries}); got {valid_lens.shape}')
    return jnp.arange(num_keys) < lens


def masked_softmax(scores, mask=None):
    """Softmax over the last axis, restricted to the entries where ``mask``
    is True. Hidden scores take the dtype's most negative value; a row with
    no visible entry gets all-zero weights (not NaN, not uniform)."""
    if mask is None:
        return jax.nn.softmax(scores, axis=-1)
    scores = jnp.where(mask, scores, jnp.finfo(scores.dtype).min)
    return jax.nn.softmax(scores, axis=-1) * mask.any(-1, keepdims=True)


def _check_heads(num_hiddens, num_heads):
    for name, value in (('num_hiddens', num_hiddens),
                        ('num_heads', num_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f'{name} must be a positive int, got {value!r}')
    if num_hiddens % num_heads:
        raise ValueError(f'num_hiddens ({num_hiddens}) must be divisible by '
                         f'num_heads ({num_heads})')


def _check_dropout(dropout):
    if isinstance(dropout, (bool, str)) or not np.isscalar(dropout):
        raise TypeError(f'dropout must be a number in [0, 1), got {dropout!r}')
    if not 0 <= dropout < 1:
        raise ValueError(f'dropout must be in [0, 1), got {dropout!r}')


class MultiHeadAttention(nnx.Module):
    """Multi-head scaled dot-product attention.

    Call with ``(queries, keys, values, valid_lens=None)``, inputs of shape
    (batch, length, num_hiddens). ``valid_lens`` is None, one length per
    sequence (B,), or one length per query (B, Tq); ``jnp.arange(1, T + 1)``
    for every query makes the attention causal. Returns ``(output, weights)``
    with weights of shape (B, num_heads, Tq, Tk).

    The forward pass is: project, ``transpose_qkv``, ``dot_product_attention``
    (a subclass may override it, e.g. to normalise queries and keys first),
    ``transpose_output``, ``W_o``. Dropout on the weights draws from the
    ``dropout`` stream of ``rngs`` (or its default stream); ``model.eval()``
    turns it off.
    """

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False, *,
                 rngs=None):
        _check_heads(num_hiddens, num_heads)
        _check_dropout(dropout)
        rngs = nnx.Rngs(0) if rngs is None else rngs
        self.num_hiddens, self.num_heads = num_hiddens, num_heads
        self.W_q = nnx.Linear(num_hiddens, num_hiddens, use_bias=bias, rngs=rngs)
        self.W_k = nnx.Linear(num_hiddens, num_hiddens, use_bias=bias, rngs=rngs)
        self.W_v = nnx.Linear(num_hiddens, num_hiddens, use_bias=bias, rngs=rngs)
        self.W_o = nnx.Linear(num_hiddens, num_hiddens, use_bias=bias, rngs=rngs)
        self.dropout = nnx.Dropout(dropout, rngs=rngs)

    def transpose_qkv(self, X):
        """(B, T, num_hiddens) -> (B, num_heads, T, num_hiddens / num_heads)."""
        B, T, _ = X.shape
        return X.reshape(B, T, self.num_heads, -1).transpose(0, 2, 1, 3)

    def transpose_output(self, X):
        """(B, num_heads, T, head_dim) -> (B, T, num_heads * head_dim)."""
        B, _, T, _ = X.shape
        return X.transpose(0, 2, 1, 3).reshape(B, T, -1)

    def dot_product_attention(self, Q, K, V, mask=None):
        """Scaled dot-product attention of per-head queries, keys and values,
        each (B, num_heads, T, head_dim); ``mask`` (B, 1, Tq, Tk) is True
        where a query may see a key. Returns (output, weights)."""
        scores = Q @ K.swapaxes(-2, -1) / math.sqrt(Q.shape[-1])
        weights = masked_softmax(scores, mask)
        return self.dropout(weights) @ V, weights

    def __call__(self, queries, keys, values, valid_lens=None):
        Q = self.transpose_qkv(self.W_q(queries))
        K = self.transpose_qkv(self.W_k(keys))
        V = self.transpose_qkv(self.W_v(values))
        mask = None
        if valid_lens is not None:
            mask = _visible_keys(valid_lens, Q.shape[0], Q.shape[2],
                                 K.shape[2])
        output, weights = self.dot_product_attention(Q, K, V, mask)
        return self.W_o(self.transpose_output(output)), weights


class TimeMachine(_data.TimeMachine):
    """Character windows of The Time Machine as jnp int32 arrays.

    ``TimeMachine(batch_size, num_steps, num_train=10000, num_val=5000,
    tokenization='char', seed=0)``; see ``d2l_mini.data.TimeMachine`` for the
    windows, the vocabulary (``self.vocab``) and the shuffling.
    """

    def _convert(self, array):
        return jnp.asarray(array.astype(np.int32))


def _check_num_steps(num_steps):
    if isinstance(num_steps, bool) or not isinstance(num_steps, int) \
            or num_steps < 1:
        raise ValueError(f'num_steps must be an int >= 1, got {num_steps!r}')


def lm_loss(model, X, Y):
    """Mean next-token cross-entropy of a model mapping ids to logits."""
    logits = model(X)
    return optax.softmax_cross_entropy_with_integer_labels(logits, Y).mean()


# The state is not donated: a reader may still hold arrays of the model (say,
# the weights before training), which donation would invalidate.
@functools.partial(jax.jit, static_argnums=0)
def _train_step(graphdef, state, X, Y):
    """One optimizer step on the split (model, optimizer) pair, compiled once
    per graph structure (the static ``graphdef``)."""
    model, optimizer = nnx.merge(graphdef, state)
    grad_fn = nnx.value_and_grad(lm_loss, argnums=nnx.DiffState(
        0, optimizer.wrt))
    loss, grads = grad_fn(model, X, Y)
    optimizer.update(model, grads)
    return loss, nnx.split((model, optimizer))[1]


def train_lm(model, data, optimizer, num_steps):
    """Train a language model for ``num_steps`` optimizer steps on
    ``data.train_dataloader()`` (cycling through epochs) with next-token
    cross-entropy averaged over all positions. The model maps token ids (B, T)
    to logits (B, T, vocab); ``optimizer`` is an ``nnx.Optimizer`` of it. The
    step (loss, gradients, update) is compiled once per model structure and
    reused by later calls; losses stay on the device until the end. Returns
    the per-step training losses as Python floats."""
    _check_num_steps(num_steps)
    model.train()
    graphdef, state = nnx.split((model, optimizer))
    losses = []
    try:
        while len(losses) < num_steps:
            for X, Y in data.train_dataloader():
                loss, state = _train_step(graphdef, state, X, Y)
                losses.append(loss)
                if len(losses) == num_steps:
                    break
    finally:
        nnx.update((model, optimizer), state)
    return [float(loss) for loss in jax.device_get(losses)]


# ---- Below: code saved from the book by `python -m tools.save`; do not edit by hand. ----
