"""PyTorch and JAX MultiHeadAttention agree once they share weights."""

import jax.numpy as jnp
import numpy as np
import pytest
import torch
from flax import nnx

from d2l_mini import jax as d2l_jax
from d2l_mini import torch as d2l_torch
from tests.library.twins import copy_attention

B, TQ, TK, D, HEADS = 3, 5, 6, 16, 4


def twins(bias, seed=0):
    torch.manual_seed(seed)
    pt = d2l_torch.MultiHeadAttention(D, HEADS, dropout=0.0, bias=bias).eval()
    jx = d2l_jax.MultiHeadAttention(D, HEADS, dropout=0.0, bias=bias, rngs=nnx.Rngs(seed))
    copy_attention(pt, jx)
    return pt, jx


def run_both(pt, jx, q, k, v, valid_lens):
    with torch.no_grad():
        out_pt, w_pt = pt(
            torch.from_numpy(q),
            torch.from_numpy(k),
            torch.from_numpy(v),
            None if valid_lens is None else torch.from_numpy(valid_lens),
        )
    out_jx, w_jx = jx(
        jnp.asarray(q),
        jnp.asarray(k),
        jnp.asarray(v),
        None if valid_lens is None else jnp.asarray(valid_lens),
    )
    return ((out_pt.numpy(), w_pt.numpy()), (np.asarray(out_jx), np.asarray(w_jx)))


def causal(T):
    return np.tile(np.arange(1, T + 1, dtype=np.int32), (B, 1))


CASES = {
    'no mask': (TQ, TK, None),
    'per-sequence lengths': (TQ, TK, np.array([1, 4, 6], np.int32)),
    'per-query causal lengths': (TK, TK, causal(TK)),
    'fully masked query': (
        TQ,
        TK,
        np.array([[0, 1, 2, 3, 4], [6, 0, 6, 0, 6], [2, 2, 2, 2, 0]], np.int32),
    ),
    'fully masked sequence': (TQ, TK, np.array([3, 0, 6], np.int32)),
}


@pytest.mark.parametrize('bias', [False, True])
@pytest.mark.parametrize('case', list(CASES))
def test_outputs_and_weights_match(case, bias):
    Tq, Tk, valid_lens = CASES[case]
    rng = np.random.default_rng(1)
    q = rng.standard_normal((B, Tq, D), dtype=np.float32)
    k = rng.standard_normal((B, Tk, D), dtype=np.float32)
    v = rng.standard_normal((B, Tk, D), dtype=np.float32)
    pt, jx = twins(bias)
    (out_pt, w_pt), (out_jx, w_jx) = run_both(pt, jx, q, k, v, valid_lens)
    assert out_pt.dtype == out_jx.dtype == np.float32
    assert w_pt.shape == w_jx.shape == (B, HEADS, Tq, Tk)
    np.testing.assert_allclose(w_jx, w_pt, rtol=0, atol=1e-5)
    np.testing.assert_allclose(out_jx, out_pt, rtol=0, atol=1e-5)
    if valid_lens is not None:
        # the masks really hid something, identically in both frameworks
        assert (w_pt == 0).any() and ((w_pt == 0) == (w_jx == 0)).all()


def test_parity_is_not_vacuous():
    """Different weights give different outputs: the copy above matters."""
    rng = np.random.default_rng(2)
    q = rng.standard_normal((B, TQ, D), dtype=np.float32)
    pt, _ = twins(False, seed=0)
    _, jx = twins(False, seed=1)
    (out_pt, _), (out_jx, _) = run_both(pt, jx, q, q, q, None)
    assert np.abs(out_pt - out_jx).max() > 1e-3
