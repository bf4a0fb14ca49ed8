"""The PyTorch half of d2l_mini: ``from d2l_mini import torch as d2l``.

Its twin, ``d2l_mini.jax``, has the same names in the same order and roles;
where the two differ, the package docstring says how and why.
"""
import math
import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from d2l_mini import data as _data
from d2l_mini.checks import check_args
from d2l_mini.claims import claims
from d2l_mini.data import Vocab, preprocess, read_time_machine
from d2l_mini.glue import glue
from d2l_mini.plotting import check_shape, plot, set_axes, set_figsize, use_svg_display
from d2l_mini.progress import progress

d2l = sys.modules[__name__]

__all__ = ['CharLM', 'FeedForward', 'MultiHeadAttention', 'TimeMachine',
           'TransformerBlock', 'Vocab', 'check_args', 'check_shape', 'claims',
           'generate', 'glue', 'lm_loss', 'masked_softmax', 'plot',
           'preprocess', 'progress', 'read_time_machine', 'set_axes',
           'set_figsize', 'token_spread', 'train_lm', 'try_gpu',
           'use_svg_display']


def try_gpu(i=0):
    """The ``i``-th GPU if there is one, else the CPU."""
    if torch.cuda.device_count() > i:
        return torch.device(f'cuda:{i}')
    return torch.device('cpu')


def _visible_keys(valid_lens, Q, K):
    """Boolean mask of shape (B, 1, Tq, Tk): True where a query may see a key.

    ``valid_lens`` holds one length per sequence, shape (B,), or one per query,
    shape (B, Tq); key positions at or beyond the length are hidden. ``Q`` and
    ``K`` are the per-head queries and keys, (B, num_heads, T, head_dim).
    """
    batch_size, num_queries, num_keys = Q.shape[0], Q.shape[2], K.shape[2]
    valid_lens = torch.as_tensor(valid_lens, device=Q.device)
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
    return torch.arange(num_keys, device=Q.device) < lens


def masked_softmax(scores, mask=None):
    """Softmax over the last axis, restricted to the entries where ``mask``
    is True. Hidden scores take the dtype's most negative value; a row with
    no visible entry gets all-zero weights (not NaN, not uniform)."""
    if mask is None:
        return F.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return F.softmax(scores, dim=-1) * mask.any(-1, keepdim=True)


def _fused_attention(Q, K, V, mask=None, dropout_p=0.0):
    """What ``dropout(masked_softmax(Q K^T / sqrt(d))) @ V`` computes, by PyTorch's
    fused ``F.scaled_dot_product_attention``, which never stores the weights.
    A query that sees no key gets a zero output, as with ``masked_softmax``: it
    is shown key 0, then zeroed, so that the result does not depend on how a
    PyTorch version treats a row without a visible entry."""
    if mask is None:
        return F.scaled_dot_product_attention(Q, K, V, dropout_p=dropout_p)
    sees_some = mask.any(-1, keepdim=True)
    mask = mask.clone()
    mask[..., :1] |= ~sees_some
    output = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask,
                                            dropout_p=dropout_p)
    return output * sees_some


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention.

    Call with ``(queries, keys, values, valid_lens=None, need_weights=True)``,
    inputs of shape (batch, length, num_hiddens). ``valid_lens`` is None, one
    length per sequence (B,), or one length per query (B, Tq);
    ``torch.arange(1, T + 1)`` for every query makes the attention causal.
    Returns ``(output, weights)`` with weights of shape (B, num_heads, Tq, Tk);
    a caller that drops the weights passes ``need_weights=False`` and gets the
    same output faster, with None for the weights (``dot_product_attention``).

    The forward pass is: project, ``transpose_qkv``, ``dot_product_attention``
    (a subclass may override it, e.g. to normalise queries and keys first, and
    pass ``need_weights`` on), ``transpose_output``, ``W_o``. Dropout acts on the
    attention weights in training mode; ``model.eval()`` turns it off.
    """

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__()
        check_args(num_hiddens=num_hiddens, num_heads=num_heads,
                   dropout=dropout, bias=bias)
        self.num_hiddens, self.num_heads = num_hiddens, num_heads
        self.bias = bias
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def transpose_qkv(self, X):
        """(B, T, num_hiddens) -> (B, num_heads, T, num_hiddens / num_heads)."""
        B, T, _ = X.shape
        return X.reshape(B, T, self.num_heads, -1).transpose(1, 2)

    def transpose_output(self, X):
        """(B, num_heads, T, head_dim) -> (B, T, num_heads * head_dim)."""
        B, _, T, _ = X.shape
        return X.transpose(1, 2).reshape(B, T, -1)

    def dot_product_attention(self, Q, K, V, mask=None, need_weights=True):
        """Scaled dot-product attention of per-head queries, keys and values,
        each (B, num_heads, T, head_dim); ``mask`` (B, 1, Tq, Tk) is True
        where a query may see a key. Returns (output, weights)."""
        if not need_weights:  # the same output by a kernel that stores no weights
            dropout_p = self.dropout.p if self.training else 0.0
            return _fused_attention(Q, K, V, mask, dropout_p), None
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        weights = masked_softmax(scores, mask)
        return self.dropout(weights) @ V, weights

    def forward(self, queries, keys, values, valid_lens=None,
                need_weights=True):
        Q = self.transpose_qkv(self.W_q(queries))
        K = self.transpose_qkv(self.W_k(keys))
        V = self.transpose_qkv(self.W_v(values))
        mask = None if valid_lens is None else _visible_keys(valid_lens, Q, K)
        output, weights = self.dot_product_attention(Q, K, V, mask,
                                                     need_weights)
        return self.W_o(self.transpose_output(output)), weights

    def extra_repr(self):
        return (f'num_hiddens={self.num_hiddens}, num_heads={self.num_heads}, '
                f'bias={self.bias}')


class TimeMachine(_data.TimeMachine):
    """Character windows of The Time Machine as torch int64 tensors.

    ``TimeMachine(batch_size, num_steps, num_train=10000, num_val=5000,
    tokenization='char', seed=0)``; see ``d2l_mini.data.TimeMachine`` for the
    windows, the vocabulary (``self.vocab``) and the shuffling.
    """

    def _convert(self, array):
        return torch.from_numpy(np.ascontiguousarray(array))


def lm_loss(model, X, Y):
    """Mean next-token cross-entropy of a model mapping ids to logits."""
    logits = model(X)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           Y.reshape(-1))


def _value_and_grad(model, X, Y, micro_batches):
    """Mean loss on (X, Y); its gradient is added to the parameters' ``.grad``.

    With ``micro_batches`` > 1 the batch is cut into that many equal slices,
    taken in turn, each adding its share of the gradient: the mean over the
    whole batch, up to rounding, while only one slice's activations exist at
    a time.
    """
    loss = 0
    for X_slice, Y_slice in zip(X.chunk(micro_batches),
                                Y.chunk(micro_batches), strict=True):
        slice_loss = lm_loss(model, X_slice, Y_slice) / micro_batches
        slice_loss.backward()
        loss = loss + slice_loss.detach()
    return loss


def _train_step(model, optimizer, X, Y, micro_batches=1):
    """One optimizer step on the batch (X, Y); returns its loss, on the
    device (reading it would wait for the step to finish)."""
    optimizer.zero_grad(set_to_none=True)
    loss = _value_and_grad(model, X, Y, micro_batches)
    optimizer.step()
    return loss


def train_lm(model, data, optimizer, num_updates, micro_batches=1):
    """Train a language model for ``num_updates`` optimizer steps on
    ``data.train_dataloader()`` (cycling through epochs) with next-token
    cross-entropy averaged over all positions. The model maps token ids (B, T)
    to logits (B, T, vocab); ``optimizer`` is a ``torch.optim`` optimizer of
    its parameters. ``micro_batches`` > 1 computes each step's gradient over
    that many equal slices of the batch in turn (gradient accumulation): the
    same step up to rounding, with a slice's activations in memory instead of
    the batch's. Model and batches go to ``try_gpu()``; losses stay on the
    device until the end. A progress bar (``d2l.progress``) counts the steps.
    Returns the per-step training losses as Python floats."""
    check_args(num_updates=num_updates, micro_batches=micro_batches)
    device = try_gpu()
    model.to(device)
    model.train()
    losses = []
    with progress(total=num_updates, desc='training', unit='step',
                  leave=False) as bar:
        for X, Y in _data.training_batches(data, num_updates):
            check_args(micro_batches=micro_batches, batch_size=X.shape[0])
            losses.append(_train_step(model, optimizer, X.to(device),
                                      Y.to(device), micro_batches))
            bar.update(1)
    return torch.stack(losses).cpu().tolist()


# ---- Below: code saved from the book by `python -m tools save`; do not edit by hand. ----


# Saved from book/transformer-block/transformer-block.md
def token_spread(H):
    """The token spread of each sequence of H (batch, T, d): the norm of the
    tokens minus their mean, over the norm of the tokens. Shape (batch,)."""
    centred = H - H.mean(dim=-2, keepdim=True)
    return centred.norm(dim=(-2, -1)) / H.norm(dim=(-2, -1))


# Saved from book/transformer-block/transformer-block.md
class FeedForward(nn.Module):
    """Position-wise feed-forward network: a GELU MLP of width 4d
    (act='gelu') or SwiGLU of width round(8d/3) (act='swiglu'), which have
    the same number of weights up to rounding."""
    def __init__(self, num_hiddens, act='swiglu', bias=False):
        super().__init__()
        d2l.check_args(num_hiddens=num_hiddens, act=act, bias=bias)
        self.act = act
        if act == 'gelu':
            self.ffn_hiddens = 4 * num_hiddens
        else:
            self.ffn_hiddens = round(8 * num_hiddens / 3)
            self.W_g = nn.Linear(num_hiddens, self.ffn_hiddens, bias=bias)
        self.W_1 = nn.Linear(num_hiddens, self.ffn_hiddens, bias=bias)
        self.W_2 = nn.Linear(self.ffn_hiddens, num_hiddens, bias=bias)

    def forward(self, X):
        if self.act == 'gelu':
            hidden = F.gelu(self.W_1(X), approximate='tanh')
        else:  # the SiLU gate scales the linear view X W_1 elementwise
            hidden = F.silu(self.W_g(X)) * self.W_1(X)
        return self.W_2(hidden)

    def extra_repr(self):
        return f'act={self.act!r}, ffn_hiddens={self.ffn_hiddens}'


# Saved from book/transformer-block/transformer-block.md
class TransformerBlock(nn.Module):
    """Attention and a position-wise FFN on a residual stream.

    norm: 'rms' (RMSNorm) or 'layer' (LayerNorm); act: 'swiglu' or 'gelu'
    (see FeedForward); pre_norm: normalise each branch input (True) or the
    stream after each addition (False); bias: biases in the linear layers.
    attn_factory() and ffn_factory(), when given, build replacement
    sublayers; the attention one is called like d2l.MultiHeadAttention, with
    need_weights=False, and returns (output, weights). Call with X of shape
    (batch, length, num_hiddens) and optional valid_lens, (batch,) or
    (batch, length)."""
    def __init__(self, num_hiddens, num_heads, dropout=0.0, norm='rms',
                 act='swiglu', pre_norm=True, bias=False, attn_factory=None,
                 ffn_factory=None):
        super().__init__()
        d2l.check_args(num_hiddens=num_hiddens, num_heads=num_heads,
                       dropout=dropout, norm=norm, act=act, pre_norm=pre_norm,
                       bias=bias)
        self.norm_kind, self.pre_norm = norm, pre_norm
        make_norm = ((lambda: nn.RMSNorm(num_hiddens, eps=1e-6))
                     if norm == 'rms'
                     else (lambda: nn.LayerNorm(num_hiddens, eps=1e-5)))
        self.norm1, self.norm2 = make_norm(), make_norm()
        self.attention = (attn_factory() if attn_factory is not None else
                          d2l.MultiHeadAttention(num_hiddens, num_heads,
                                                 dropout, bias=bias))
        self.ffn = (ffn_factory() if ffn_factory is not None else
                    FeedForward(num_hiddens, act, bias=bias))
        self.dropout = nn.Dropout(dropout)

    def attend(self, X, valid_lens):
        # the block drops the weights: asking for none takes a faster kernel
        output, _ = self.attention(X, X, X, valid_lens, need_weights=False)
        return self.dropout(output)

    def transform(self, X):
        return self.dropout(self.ffn(X))

    def forward(self, X, valid_lens=None):
        if self.pre_norm:
            X = X + self.attend(self.norm1(X), valid_lens)
            return X + self.transform(self.norm2(X))
        X = self.norm1(X + self.attend(X, valid_lens))
        return self.norm2(X + self.transform(X))

    def extra_repr(self):
        return f'norm={self.norm_kind!r}, pre_norm={self.pre_norm}'


# Saved from book/transformer-block/transformer-block.md
class CharLM(nn.Module):
    """A character-level Transformer language model: token and learned
    position embeddings, num_blks causal TransformerBlocks, a final
    RMSNorm and an output layer that shares the token embedding."""
    def __init__(self, vocab_size, num_hiddens=128, num_heads=4, num_blks=2,
                 act='swiglu', max_len=128):
        super().__init__()
        d2l.check_args(vocab_size=vocab_size, num_hiddens=num_hiddens,
                       num_heads=num_heads, num_blks=num_blks, act=act,
                       max_len=max_len)
        self.max_len = max_len
        self.token_emb = nn.Embedding(vocab_size, num_hiddens)
        self.pos_emb = nn.Embedding(max_len, num_hiddens)
        nn.init.normal_(self.token_emb.weight, std=0.02)
        nn.init.normal_(self.pos_emb.weight, std=0.02)
        self.blks = nn.ModuleList(
            TransformerBlock(num_hiddens, num_heads, act=act)
            for _ in range(num_blks))
        self.norm = nn.RMSNorm(num_hiddens, eps=1e-6)

    def forward(self, X):
        batch_size, num_steps = X.shape
        if num_steps > self.max_len:
            raise ValueError(f'sequence length {num_steps} exceeds '
                             f'max_len={self.max_len}')
        positions = torch.arange(num_steps, device=X.device)
        H = self.token_emb(X) + self.pos_emb(positions)
        # query t sees keys 0..t: a per-query valid length of t + 1
        causal_lens = (positions + 1).expand(batch_size, num_steps)
        for blk in self.blks:
            H = blk(H, causal_lens)
        return self.norm(H) @ self.token_emb.weight.T

    def extra_repr(self):
        return f'max_len={self.max_len}'


# Saved from book/transformer-block/transformer-block.md
def generate(model, vocab, prefix, num_chars, temperature=1.0, seed=0):
    """Extend the string `prefix` by `num_chars` characters, each drawn
    from the model's next-character distribution sharpened (temperature
    below 1) or flattened (above 1) by `temperature`."""
    d2l.check_args(prefix=prefix, num_chars=num_chars,
                   temperature=temperature, seed=seed)
    device = next(model.parameters()).device
    generator = torch.Generator(device=device).manual_seed(seed)
    tokens = vocab[list(prefix)]
    model.eval()
    with torch.no_grad():
        for _ in range(num_chars):
            context = torch.tensor([tokens[-model.max_len:]], device=device)
            logits = model(context)[0, -1]
            probs = F.softmax(logits / temperature, dim=-1)
            tokens.append(torch.multinomial(probs, 1,
                                            generator=generator).item())
    return ''.join(vocab.to_tokens(tokens))
