"""The JAX/Flax NNX half of d2l_mini: ``from d2l_mini import jax as d2l``.

Its twin, ``d2l_mini.torch``, has the same names in the same order and roles;
where the two differ, the package docstring says how and why.
"""
import math
import sys

import jax
import numpy as np
import optax
from flax import nnx
from jax import numpy as jnp

from d2l_mini import checks
from d2l_mini import data as _data
from d2l_mini.claims import claims
from d2l_mini.data import Vocab, preprocess, read_time_machine
from d2l_mini.glue import glue
from d2l_mini.plotting import check_shape, plot, set_axes, set_figsize, use_svg_display
from d2l_mini.progress import progress

d2l = sys.modules[__name__]

# Flax modules draw their initial weights from a required ``rngs``: check it too.
check_args = checks.checker(
    rngs=checks.instance_of(nnx.Rngs, 'an nnx.Rngs, e.g. nnx.Rngs(0)'))

__all__ = ['CharLM', 'FeedForward', 'MultiHeadAttention', 'TimeMachine',
           'TransformerBlock', 'Vocab', 'check_args', 'check_shape', 'claims',
           'generate', 'glue', 'lm_loss', 'masked_softmax', 'plot',
           'preprocess', 'progress', 'read_time_machine', 'set_axes',
           'set_figsize', 'token_spread', 'train_lm', 'try_gpu',
           'use_svg_display']


def try_gpu(i=0):
    """The ``i``-th GPU if there is one, else the CPU."""
    try:
        gpus = jax.devices('gpu')
    except RuntimeError:  # no GPU backend at all
        gpus = []
    if len(gpus) > i:
        return gpus[i]
    return jax.devices('cpu')[0]


def _visible_keys(valid_lens, Q, K):
    """Boolean mask of shape (B, 1, Tq, Tk): True where a query may see a key.

    ``valid_lens`` holds one length per sequence, shape (B,), or one per query,
    shape (B, Tq); key positions at or beyond the length are hidden. ``Q`` and
    ``K`` are the per-head queries and keys, (B, num_heads, T, head_dim).
    """
    batch_size, num_queries, num_keys = Q.shape[0], Q.shape[2], K.shape[2]
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


class MultiHeadAttention(nnx.Module):
    """Multi-head scaled dot-product attention.

    Call with ``(queries, keys, values, valid_lens=None, need_weights=True)``,
    inputs of shape (batch, length, num_hiddens). ``valid_lens`` is None, one
    length per sequence (B,), or one length per query (B, Tq);
    ``jnp.arange(1, T + 1)`` for every query makes the attention causal.
    Returns ``(output, weights)`` with weights of shape (B, num_heads, Tq, Tk);
    a caller that drops the weights passes ``need_weights=False`` and gets None
    in their place. The output is computed by the same steps either way (the
    weights are one of them); ``jax.nn.dot_product_attention``, JAX's
    counterpart of PyTorch's ``F.scaled_dot_product_attention``, is what a
    model would call to let a GPU run a kernel that never stores the weights.

    The forward pass is: project, ``transpose_qkv``, ``dot_product_attention``
    (a subclass may override it, e.g. to normalise queries and keys first, and
    pass ``need_weights`` on), ``transpose_output``, ``W_o``. Dropout acts on
    the attention weights in training mode, drawing from ``rngs``;
    ``model.eval()`` turns it off.
    """

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False, *,
                 rngs: nnx.Rngs):
        check_args(num_hiddens=num_hiddens, num_heads=num_heads,
                   dropout=dropout, bias=bias, rngs=rngs)
        self.num_hiddens, self.num_heads = num_hiddens, num_heads
        self.bias = bias
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

    def dot_product_attention(self, Q, K, V, mask=None, need_weights=True):
        """Scaled dot-product attention of per-head queries, keys and values,
        each (B, num_heads, T, head_dim); ``mask`` (B, 1, Tq, Tk) is True
        where a query may see a key. Returns (output, weights), with None for
        the weights when ``need_weights`` is False."""
        scores = Q @ K.swapaxes(-2, -1) / math.sqrt(Q.shape[-1])
        weights = masked_softmax(scores, mask)
        return self.dropout(weights) @ V, (weights if need_weights else None)

    def __call__(self, queries, keys, values, valid_lens=None,
                 need_weights=True):
        Q = self.transpose_qkv(self.W_q(queries))
        K = self.transpose_qkv(self.W_k(keys))
        V = self.transpose_qkv(self.W_v(values))
        mask = None if valid_lens is None else _visible_keys(valid_lens, Q, K)
        output, weights = self.dot_product_attention(Q, K, V, mask,
                                                     need_weights)
        return self.W_o(self.transpose_output(output)), weights


class TimeMachine(_data.TimeMachine):
    """Character windows of The Time Machine as jnp int32 arrays.

    ``TimeMachine(batch_size, num_steps, num_train=10000, num_val=5000,
    tokenization='char', seed=0)``; see ``d2l_mini.data.TimeMachine`` for the
    windows, the vocabulary (``self.vocab``) and the shuffling.
    """

    def _convert(self, array):
        return jnp.asarray(array.astype(np.int32))


def lm_loss(model, X, Y):
    """Mean next-token cross-entropy of a model mapping ids to logits."""
    logits = model(X)
    return optax.softmax_cross_entropy_with_integer_labels(logits, Y).mean()


def _value_and_grad(model, wrt, X, Y, micro_batches):
    """Mean loss on (X, Y) and its gradient for the variables ``wrt`` selects.

    With ``micro_batches`` > 1 the batch is cut into that many equal slices,
    taken in turn by a ``lax.scan`` that adds up their losses and gradients:
    the mean over the whole batch, up to rounding, while only one slice's
    activations exist at a time. On a CPU that pays: a slice's attention
    weights fit in the cache, where the whole batch's do not (``make bench``:
    the book's CharLM in slices of 8 windows took 232 ms a step against 307
    for whole batches; the same slices in an unrolled Python loop inside the
    compiled step, 297-327 ms).
    """
    grad_fn = nnx.value_and_grad(lm_loss, argnums=nnx.DiffState(0, wrt))
    if micro_batches == 1:
        return grad_fn(model, X, Y)
    graphdef, params, others = nnx.split(model, wrt, ...)

    def add_slice(totals, XY):
        # The parameters ride along unchanged (NNX wants the model built
        # inside the scan); the other variables (say, dropout's RNG count)
        # move on from slice to slice.
        params, others, loss_sum, grad_sum = totals
        model = nnx.merge(graphdef, params, others)
        loss, grads = grad_fn(model, *XY)
        return (params, nnx.split(model, wrt, ...)[2], loss_sum + loss,
                jax.tree.map(jnp.add, grad_sum, grads)), None

    slices = [A.reshape(micro_batches, -1, *A.shape[1:]) for A in (X, Y)]
    start = (params, others, jnp.zeros(()),
             jax.tree.map(jnp.zeros_like, params))
    (_, others, loss_sum, grad_sum), _ = jax.lax.scan(add_slice, start,
                                                      slices)
    nnx.update(model, others)
    return (loss_sum / micro_batches,
            jax.tree.map(lambda g: g / micro_batches, grad_sum))


# Not donated: a reader may still hold arrays of the model (say, the weights
# before training), which donation would invalidate.
@nnx.jit(static_argnums=4)
def _train_step(model, optimizer, X, Y, micro_batches=1):
    """One optimizer step, compiled once per model structure and number of
    slices; ``nnx.jit`` writes the new weights back into ``model``."""
    loss, grads = _value_and_grad(model, optimizer.wrt, X, Y, micro_batches)
    optimizer.update(model, grads)
    return loss


def train_lm(model, data, optimizer, num_updates, micro_batches=1):
    """Train a language model for ``num_updates`` optimizer steps on
    ``data.train_dataloader()`` (cycling through epochs) with next-token
    cross-entropy averaged over all positions. The model maps token ids (B, T)
    to logits (B, T, vocab); ``optimizer`` is an ``nnx.Optimizer`` of it.
    ``micro_batches`` > 1 computes each step's gradient over that many equal
    slices of the batch in turn (gradient accumulation): the same step up to
    rounding, with a slice's activations in memory instead of the batch's.
    The step is compiled once per model structure and reused by later calls;
    losses stay on the device until the end. A progress bar
    (``d2l.progress``) counts the steps that the device has finished.
    Returns the per-step training losses as Python floats."""
    check_args(num_updates=num_updates, micro_batches=micro_batches)
    model.train()
    losses = []
    finished = 0  # steps known to be done on the device (they end in order)
    with progress(total=num_updates, desc='training', unit='step',
                  leave=False) as bar:
        for X, Y in _data.training_batches(data, num_updates):
            check_args(micro_batches=micro_batches, batch_size=X.shape[0])
            losses.append(_train_step(model, optimizer, X, Y, micro_batches))
            finished = _count_finished(losses, finished, bar)
        for loss in losses[finished:]:  # all dispatched: no time lost
            loss.block_until_ready()
            bar.update(1)
    return [float(loss) for loss in jax.device_get(losses)]


def _count_finished(losses, finished, bar):
    """How many of the dispatched steps have finished, counting on from
    ``finished`` (steps end in order) and moving ``bar`` on by as many.
    ``is_ready()`` asks without waiting: the loop never syncs with the device."""
    done = finished
    while done < len(losses) and losses[done].is_ready():
        done += 1
    bar.update(done - finished)
    return done


# ---- Below: code saved from the book by `python -m tools save`; do not edit by hand. ----


# Saved from book/transformer-block/transformer-block.md
def token_spread(H):
    """The token spread of each sequence of H (batch, T, d): the norm of the
    tokens minus their mean, over the norm of the tokens. Shape (batch,)."""
    centred = H - H.mean(axis=-2, keepdims=True)
    return (jnp.linalg.norm(centred, axis=(-2, -1))
            / jnp.linalg.norm(H, axis=(-2, -1)))


# Saved from book/transformer-block/transformer-block.md
class FeedForward(nnx.Module):
    """Position-wise feed-forward network: a GELU MLP of width 4d
    (act='gelu') or SwiGLU of width round(8d/3) (act='swiglu'), which have
    the same number of weights up to rounding."""
    def __init__(self, num_hiddens, act='swiglu', bias=False, *,
                 rngs: nnx.Rngs):
        d2l.check_args(num_hiddens=num_hiddens, act=act, bias=bias, rngs=rngs)
        self.act = act
        if act == 'gelu':
            self.ffn_hiddens = 4 * num_hiddens
        else:
            self.ffn_hiddens = round(8 * num_hiddens / 3)
            self.W_g = nnx.Linear(num_hiddens, self.ffn_hiddens,
                                  use_bias=bias, rngs=rngs)
        self.W_1 = nnx.Linear(num_hiddens, self.ffn_hiddens, use_bias=bias,
                              rngs=rngs)
        self.W_2 = nnx.Linear(self.ffn_hiddens, num_hiddens, use_bias=bias,
                              rngs=rngs)

    def __call__(self, X):
        if self.act == 'gelu':
            hidden = nnx.gelu(self.W_1(X))  # the tanh approximation
        else:  # the SiLU gate scales the linear view X W_1 elementwise
            hidden = nnx.silu(self.W_g(X)) * self.W_1(X)
        return self.W_2(hidden)


# Saved from book/transformer-block/transformer-block.md
class TransformerBlock(nnx.Module):
    """Attention and a position-wise FFN on a residual stream.

    norm: 'rms' (RMSNorm) or 'layer' (LayerNorm); act: 'swiglu' or 'gelu'
    (see FeedForward); pre_norm: normalise each branch input (True) or the
    stream after each addition (False); bias: biases in the linear layers.
    attn_factory(rngs) and ffn_factory(rngs), when given, build replacement
    sublayers; the attention one is called like d2l.MultiHeadAttention and
    returns (output, weights). Call with X of shape (batch, length,
    num_hiddens) and optional valid_lens, (batch,) or (batch, length)."""
    def __init__(self, num_hiddens, num_heads, dropout=0.0, norm='rms',
                 act='swiglu', pre_norm=True, bias=False, attn_factory=None,
                 ffn_factory=None, *, rngs: nnx.Rngs):
        d2l.check_args(num_hiddens=num_hiddens, num_heads=num_heads,
                       dropout=dropout, norm=norm, act=act, pre_norm=pre_norm,
                       bias=bias, rngs=rngs)
        self.norm_kind, self.pre_norm = norm, pre_norm
        make_norm = ((lambda: nnx.RMSNorm(num_hiddens, epsilon=1e-6,
                                          rngs=rngs)) if norm == 'rms'
                     else (lambda: nnx.LayerNorm(num_hiddens, epsilon=1e-5,
                                                 rngs=rngs)))
        self.norm1, self.norm2 = make_norm(), make_norm()
        self.attention = (attn_factory(rngs) if attn_factory is not None else
                          d2l.MultiHeadAttention(num_hiddens, num_heads,
                                                 dropout, bias=bias,
                                                 rngs=rngs))
        self.ffn = (ffn_factory(rngs) if ffn_factory is not None else
                    FeedForward(num_hiddens, act, bias=bias, rngs=rngs))
        self.dropout = nnx.Dropout(dropout, rngs=rngs)

    def attend(self, X, valid_lens):
        output, _ = self.attention(X, X, X, valid_lens, need_weights=False)
        return self.dropout(output)

    def transform(self, X):
        return self.dropout(self.ffn(X))

    def __call__(self, X, valid_lens=None):
        if self.pre_norm:
            X = X + self.attend(self.norm1(X), valid_lens)
            return X + self.transform(self.norm2(X))
        X = self.norm1(X + self.attend(X, valid_lens))
        return self.norm2(X + self.transform(X))


# Saved from book/transformer-block/transformer-block.md
class CharLM(nnx.Module):
    """A character-level Transformer language model: token and learned
    position embeddings, num_blks causal TransformerBlocks, a final
    RMSNorm and an output layer that shares the token embedding."""
    def __init__(self, vocab_size, num_hiddens=128, num_heads=4, num_blks=2,
                 act='swiglu', max_len=128, *, rngs: nnx.Rngs):
        d2l.check_args(vocab_size=vocab_size, num_hiddens=num_hiddens,
                       num_heads=num_heads, num_blks=num_blks, act=act,
                       max_len=max_len, rngs=rngs)
        self.max_len = max_len
        small = nnx.initializers.normal(stddev=0.02)
        self.token_emb = nnx.Embed(vocab_size, num_hiddens,
                                   embedding_init=small, rngs=rngs)
        self.pos_emb = nnx.Embed(max_len, num_hiddens, embedding_init=small,
                                 rngs=rngs)
        self.blks = nnx.List([
            TransformerBlock(num_hiddens, num_heads, act=act, rngs=rngs)
            for _ in range(num_blks)])
        self.norm = nnx.RMSNorm(num_hiddens, epsilon=1e-6, rngs=rngs)

    def __call__(self, X):
        batch_size, num_steps = X.shape
        if num_steps > self.max_len:
            raise ValueError(f'sequence length {num_steps} exceeds '
                             f'max_len={self.max_len}')
        positions = jnp.arange(num_steps)
        H = self.token_emb(X) + self.pos_emb(positions)
        # query t sees keys 0..t: a per-query valid length of t + 1
        causal_lens = jnp.broadcast_to(positions + 1, (batch_size, num_steps))
        for blk in self.blks:
            H = blk(H, causal_lens)
        return self.token_emb.attend(self.norm(H))


# Saved from book/transformer-block/transformer-block.md
@nnx.jit
def _sample_next(model, context, position, key, temperature):
    """Draw the token that follows `position` in the (1, max_len) `context`."""
    logits = model(context)[0, position]
    return jax.random.categorical(key, logits / temperature)

def generate(model, vocab, prefix, num_chars, temperature=1.0, seed=0):
    """Extend the string `prefix` by `num_chars` characters, each drawn
    from the model's next-character distribution sharpened (temperature
    below 1) or flattened (above 1) by `temperature`."""
    d2l.check_args(prefix=prefix, num_chars=num_chars,
                   temperature=temperature, seed=seed)
    key = jax.random.key(seed)
    tokens = vocab[list(prefix)]
    model.eval()
    for _ in range(num_chars):
        # Pad the context on the right to max_len, so that one compiled
        # function serves every length: causal attention keeps the padding
        # invisible to the position whose successor we draw.
        context = tokens[-model.max_len:]
        padded = jnp.array([context + [0] * (model.max_len - len(context))])
        key, subkey = jax.random.split(key)
        tokens.append(int(_sample_next(model, padded, len(context) - 1,
                                       subkey, temperature)))
    return ''.join(vocab.to_tokens(tokens))
