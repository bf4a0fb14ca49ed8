"""The PyTorch half of d2l_mini: ``from d2l_mini import torch as d2l``."""
import math
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from d2l_mini import data as _data
from d2l_mini.data import Vocab, preprocess, read_time_machine
from d2l_mini.plotting import (check_shape, plot, set_axes, set_figsize,
                               use_svg_display)

d2l = sys.modules[__name__]

__all__ = ['MultiHeadAttention', 'TimeMachine', 'Vocab', 'check_shape',
           'masked_softmax', 'plot', 'preprocess', 'read_time_machine',
           'set_axes', 'set_figsize', 'train_lm', 'try_gpu',
           'use_svg_display']


def try_gpu(i=0):
    """The ``i``-th CUDA device if there is one, else the CPU."""
    if torch.cuda.device_count() > i:
        return torch.device(f'cuda:{i}')
    return torch.device('cpu')


def _visible_keys(valid_lens, batch_size, num_queries, num_keys, device):
    """Boolean mask of shape (B, 1, Tq, Tk): True where a query may see a key.

    ``valid_lens`` holds one length per sequence, shape (B,), or one per query,
    shape (B, Tq); key positions at or beyond the length are hidden.
    """
    if not isinstance(valid_lens, torch.Tensor):
        valid_lens = torch.as_tensor(valid_lens)
    if valid_lens.dtype.is_floating_point or valid_lens.dtype.is_complex \
            or valid_lens.dtype == torch.bool:
        raise TypeError(f'valid_lens must hold integers, got dtype '
                        f'{valid_lens.dtype}')
    if tuple(valid_lens.shape) == (batch_size,):
        lens = valid_lens[:, None, None, None]
    elif tuple(valid_lens.shape) == (batch_size, num_queries):
        lens = valid_lens[:, None, :, None]
    else:
        raise ValueError(
            f'valid_lens must be None, of shape (batch_size,) = '
            f'({batch_size},) or of shape (batch_size, num_queries) = '
            f'({batch_size}, {num_queries}); got {tuple(valid_lens.shape)}')
    positions = torch.arange(num_keys, device=device)
    return positions < lens.to(device)


def masked_softmax(scores, mask=None):
    """Softmax over the last axis, restricted to the entries where ``mask``
    is True. Hidden scores take the dtype's most negative value; a row with
    no visible entry gets all-zero weights (not NaN, not uniform)."""
    if mask is None:
        return F.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return F.softmax(scores, dim=-1) * mask.any(-1, keepdim=True)


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention.

    Call with ``(queries, keys, values, valid_lens=None)``, inputs of shape
    (batch, length, num_hiddens). ``valid_lens`` is None, one length per
    sequence (B,), or one length per query (B, Tq); ``torch.arange(1, T + 1)``
    for every query makes the attention causal. Returns the output and keeps
    the weights, shape (B, num_heads, Tq, Tk), in ``self.attention_weights``.

    The forward pass is: project, ``transpose_qkv``, ``dot_product_attention``
    (a subclass may override it, e.g. to normalise queries and keys first),
    ``transpose_output``, ``W_o``.
    """

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__()
        _check_heads(num_hiddens, num_heads)
        _check_dropout(dropout)
        self.num_hiddens, self.num_heads = num_hiddens, num_heads
        self.bias = bias
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.attention_weights = None

    def extra_repr(self):
        return (f'num_hiddens={self.num_hiddens}, num_heads={self.num_heads}, '
                f'bias={self.bias}')

    def transpose_qkv(self, X):
        """(B, T, num_hiddens) -> (B, num_heads, T, num_hiddens / num_heads)."""
        B, T, _ = X.shape
        return X.reshape(B, T, self.num_heads, -1).transpose(1, 2)

    def transpose_output(self, X):
        """(B, num_heads, T, head_dim) -> (B, T, num_heads * head_dim)."""
        B, _, T, _ = X.shape
        return X.transpose(1, 2).reshape(B, T, -1)

    def dot_product_attention(self, Q, K, V, mask=None):
        """Scaled dot-product attention of per-head queries, keys and values,
        each (B, num_heads, T, head_dim); ``mask`` (B, 1, Tq, Tk) is True
        where a query may see a key. Returns (output, weights)."""
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        weights = masked_softmax(scores, mask)
        return self.dropout(weights) @ V, weights

    def forward(self, queries, keys, values, valid_lens=None):
        Q = self.transpose_qkv(self.W_q(queries))
        K = self.transpose_qkv(self.W_k(keys))
        V = self.transpose_qkv(self.W_v(values))
        mask = None
        if valid_lens is not None:
            mask = _visible_keys(valid_lens, Q.shape[0], Q.shape[2],
                                 K.shape[2], Q.device)
        output, self.attention_weights = self.dot_product_attention(
            Q, K, V, mask)
        return self.W_o(self.transpose_output(output))


def _check_heads(num_hiddens, num_heads):
    for name, value in (('num_hiddens', num_hiddens),
                        ('num_heads', num_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f'{name} must be a positive int, got {value!r}')
    if num_hiddens % num_heads:
        raise ValueError(f'num_hiddens ({num_hiddens}) must be divisible by '
                         f'num_heads ({num_heads})')


def _check_dropout(dropout):
    if not 0 <= dropout < 1:
        raise ValueError(f'dropout must be in [0, 1), got {dropout!r}')


class TimeMachine(_data.TimeMachine):
    """Character windows of The Time Machine as torch int64 tensors.

    ``TimeMachine(batch_size, num_steps, num_train=10000, num_val=5000,
    tokenization='char', seed=0)``; see ``d2l_mini.data.TimeMachine`` for the
    windows, the vocabulary (``self.vocab``) and the shuffling.
    """

    def _convert(self, array):
        return torch.from_numpy(np.ascontiguousarray(array))


def _check_num_steps(num_steps):
    if isinstance(num_steps, bool) or not isinstance(num_steps, int) \
            or num_steps < 1:
        raise ValueError(f'num_steps must be an int >= 1, got {num_steps!r}')


def train_lm(model, data, optimizer, num_steps):
    """Train a language model for ``num_steps`` optimizer steps on
    ``data.train_dataloader()`` (cycling through epochs) with next-token
    cross-entropy averaged over all positions. The model maps token ids (B, T)
    to logits (B, T, vocab). Model and batches go to ``try_gpu()``. Returns the
    per-step training losses as Python floats."""
    _check_num_steps(num_steps)
    device = try_gpu()
    model.to(device)
    model.train()
    losses = []
    while len(losses) < num_steps:
        for X, Y in data.train_dataloader():
            X, Y = X.to(device), Y.to(device)
            logits = model(X)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                   Y.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())  # no device sync per step
            if len(losses) == num_steps:
                break
    return torch.stack(losses).cpu().tolist()


# ---- Below: code saved from the book by `python -m tools.save`; do not edit by hand. ----
