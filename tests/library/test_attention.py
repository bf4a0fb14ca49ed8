"""MultiHeadAttention and masked_softmax of d2l_mini, in both frameworks.

A test that takes ``fw`` (tests/library/conftest.py) runs once per framework, so
that the same assertions hold for ``d2l_mini.torch`` and ``d2l_mini.jax``.
"""

import numpy as np
import pytest

MHA = 'MultiHeadAttention'


def inputs(B=2, Tq=5, Tk=7, d=8, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, Tq, d), dtype=np.float32)
    k = rng.standard_normal((B, Tk, d), dtype=np.float32)
    v = rng.standard_normal((B, Tk, d), dtype=np.float32)
    return q, k, v


def test_shapes_and_rows_sum_to_one(fw):
    mha = fw.make(MHA, 8, 2)
    q, k, v = inputs(B=3, Tq=5, Tk=7)
    out, weights = fw.call(mha, q, k, v)
    assert out.shape == (3, 5, 8)
    assert weights.shape == (3, 2, 5, 7)
    np.testing.assert_allclose(weights.sum(-1), 1, atol=1e-6)
    assert (weights > 0).all()


def test_transpose_qkv_and_output_are_inverse(fw):
    mha = fw.make(MHA, 12, 3)
    x = np.arange(2 * 4 * 12, dtype=np.float32).reshape(2, 4, 12)
    heads = mha.transpose_qkv(fw.tensor(x))
    assert tuple(heads.shape) == (2, 3, 4, 4)
    # head h of position t holds features h*4 .. h*4+3 of that position
    np.testing.assert_array_equal(fw.to_numpy(heads)[1, 2, 3], x[1, 3, 8:12])
    np.testing.assert_array_equal(fw.to_numpy(mha.transpose_output(heads)), x)


def test_per_sequence_lengths_hide_exactly_the_keys_past_the_length(fw):
    mha = fw.make(MHA, 8, 2)
    q, k, v = inputs(B=2, Tq=4, Tk=6)
    lens = np.array([2, 5])
    out, weights = fw.call(mha, q, k, v, lens)
    for b, n in enumerate(lens):
        assert (weights[b, :, :, n:] == 0).all()
        assert (weights[b, :, :, :n] > 0).all()
    np.testing.assert_allclose(weights.sum(-1), 1, atol=1e-6)
    # what lies behind the length cannot influence the output
    k2, v2 = k.copy(), v.copy()
    k2[0, 2:] += 100.0
    v2[0, 2:] -= 50.0
    out2, _ = fw.call(mha, q, k2, v2, lens)
    np.testing.assert_allclose(out2[0], out[0], atol=1e-5)
    assert not np.allclose(fw.call(mha, q, k2, v2, None)[0][0], out[0], atol=1e-3)


def test_per_query_causal_lengths(fw):
    mha = fw.make(MHA, 8, 4)
    T = 6
    q, k, v = inputs(B=2, Tq=T, Tk=T)
    causal = np.tile(np.arange(1, T + 1), (2, 1))
    out, weights = fw.call(mha, q, k, v, causal)
    upper = np.triu(np.ones((T, T), dtype=bool), k=1)
    assert (weights[:, :, upper] == 0).all()
    assert (weights[:, :, ~upper] > 0).all()
    np.testing.assert_allclose(weights[:, :, 0, 0], 1, atol=1e-6)
    # changing the last token changes only the last query's output
    k2, v2 = k.copy(), v.copy()
    k2[:, -1] += 3.0
    v2[:, -1] += 3.0
    out2, _ = fw.call(mha, q, k2, v2, causal)
    np.testing.assert_allclose(out2[:, :-1], out[:, :-1], atol=1e-5)
    assert not np.allclose(out2[:, -1], out[:, -1], atol=1e-3)


@pytest.mark.parametrize('bias', [False, True])
def test_fully_masked_query_gives_zero_weights_and_zero_attention(fw, bias):
    mha = fw.make(MHA, 8, 2, bias=bias)
    q, k, v = inputs(B=2, Tq=3, Tk=4)
    lens = np.array([[0, 2, 4], [1, 0, 3]])
    out, weights = fw.call(mha, q, k, v, lens)
    assert np.isfinite(out).all() and np.isfinite(weights).all()
    assert (weights[0, :, 0] == 0).all() and (weights[1, :, 1] == 0).all()
    np.testing.assert_allclose(weights[0, :, 1].sum(-1), 1, atol=1e-6)
    # the attention output of a blind query is zero, so W_o adds only its bias
    expected = fw.bias(mha.W_o) if bias else np.zeros(8, np.float32)
    np.testing.assert_allclose(out[0, 0], expected, atol=1e-7)
    np.testing.assert_allclose(out[1, 1], expected, atol=1e-7)
    # a sequence with length 0 everywhere: all zeros, not uniform, not NaN
    out, weights = fw.call(mha, q, k, v, np.array([0, 4]))
    assert (weights[0] == 0).all()
    np.testing.assert_allclose(out[0], np.broadcast_to(expected, (3, 8)), atol=1e-7)


def test_masked_scores_use_the_most_negative_value(fw):
    # visible scores far below -1e9 must still win over hidden ones: a mask
    # value like -1e6 would hand all the weight to the hidden entries
    scores = np.array([[[[-1e30, -2e30, 5.0, 7.0]]]], dtype=np.float32)
    mask = np.array([[[[True, True, False, False]]]])
    weights = fw.softmax(scores, mask)
    np.testing.assert_allclose(weights[..., 2:], 0)
    np.testing.assert_allclose(weights[..., 0], 1, atol=1e-6)
    blind = fw.softmax(scores, np.zeros_like(mask))
    assert (blind == 0).all()


def test_dropout_on_weights_only_in_training(fw):
    mha = fw.make(MHA, 16, 4, dropout=0.5)
    q, k, v = inputs(B=2, Tq=5, Tk=5, d=16)
    first, w1 = fw.call(mha, q, k, v)
    second, _ = fw.call(mha, q, k, v)
    assert not np.allclose(first, second)  # fresh masks each call
    mha.eval()
    a, wa = fw.call(mha, q, k, v)
    b, _ = fw.call(mha, q, k, v)
    np.testing.assert_array_equal(a, b)
    reference = fw.make(MHA, 16, 4, dropout=0.0)
    fw.copy_weights(mha, reference)
    expected, we = fw.call(reference, q, k, v)
    np.testing.assert_allclose(a, expected, atol=1e-6)
    # the reported weights are the softmax, before dropout
    np.testing.assert_allclose(w1, we, atol=1e-6)
    np.testing.assert_allclose(wa, we, atol=1e-6)


@pytest.mark.parametrize('num_hiddens,num_heads', [(10, 3), (8, 0), (0, 2)])
def test_heads_must_divide_hiddens(fw, num_hiddens, num_heads):
    with pytest.raises(ValueError, match='num_h'):
        fw.make(MHA, num_hiddens, num_heads)
    with pytest.raises(ValueError, match='num_hiddens') as info:
        fw.make(MHA, 10, 3)
    assert 'num_hiddens' in str(info.value) and 'num_heads' in str(info.value)


@pytest.mark.parametrize('num_hiddens,num_heads', [(8, 2.0), (8.0, 2), (8, True), (8, '2')])
def test_heads_must_be_ints(fw, num_hiddens, num_heads):
    with pytest.raises(TypeError, match=r'num_h\w+ must be an int >= 1'):
        fw.make(MHA, num_hiddens, num_heads)


@pytest.mark.parametrize('dropout', [-0.1, 1.0, 1.5])
def test_dropout_out_of_range(fw, dropout):
    with pytest.raises(ValueError, match=r'dropout.*\[0, 1\)'):
        fw.make(MHA, 8, 2, dropout=dropout)


def test_dropout_must_be_a_number(fw):
    with pytest.raises(TypeError, match='dropout'):
        fw.make(MHA, 8, 2, dropout=None)


@pytest.mark.parametrize(
    'lens', [np.array([1, 2, 3]), np.ones((2, 4), int), np.ones((2, 3, 1), int), np.array(3)]
)
def test_valid_lens_with_a_wrong_shape(fw, lens):
    mha = fw.make(MHA, 8, 2)
    q, k, v = inputs(B=2, Tq=3, Tk=4)
    with pytest.raises(ValueError, match=r'valid_lens.*\(batch_size,\)'):
        fw.call(mha, q, k, v, lens)


def test_valid_lens_must_be_integers(fw):
    mha = fw.make(MHA, 8, 2)
    q, k, v = inputs(B=2, Tq=3, Tk=4)
    with pytest.raises(TypeError, match='valid_lens'):
        fw.call(mha, q, k, v, np.array([1.0, 2.0], np.float32))


def test_projections_are_eager_square_layers(fw):
    mha = fw.make(MHA, 12, 3, bias=True)
    for name in ('W_q', 'W_k', 'W_v', 'W_o'):
        layer = getattr(mha, name)
        assert fw.weight_shape(layer) == (12, 12)
        assert layer.bias is not None
    without = fw.make(MHA, 12, 3, bias=False)
    assert without.W_q.bias is None
    assert 'num_heads=3' in repr(without)


def test_subclass_can_normalise_queries_and_keys(fw):
    """The exercise's QK-norm hook: override dot_product_attention only."""

    class UnitQK(fw.d2l.MultiHeadAttention):
        def dot_product_attention(self, Q, K, V, *options):  # mask (and need_weights)
            return super().dot_product_attention(fw.unit_rows(Q), fw.unit_rows(K), V, *options)

    mha = fw.make(UnitQK, 8, 2)
    q, k, v = inputs(B=1, Tq=4, Tk=4)
    _, weights = fw.call(mha, 100 * q, 100 * k, v)
    # unit queries and keys bound every logit by sqrt(head_dim) = 2, so no
    # weight can exceed e^4 / (e^4 + 3 e^-4) even for inputs scaled by 100
    bound = np.exp(4) / (np.exp(4) + 3 * np.exp(-4))
    assert weights.max() <= bound + 1e-6
    _, plain = fw.call(fw.make(MHA, 8, 2), 100 * q, 100 * k, v)
    assert plain.max() > bound


def test_jax_attention_compiles_with_masks():
    import jax.numpy as jnp
    from flax import nnx

    from d2l_mini import jax as d2l

    mha = d2l.MultiHeadAttention(8, 2, rngs=nnx.Rngs(0))
    X = jnp.ones((2, 5, 8))
    causal = jnp.tile(jnp.arange(1, 6), (2, 1))
    eager = mha(X, X, X, causal)
    compiled = nnx.jit(lambda m, x, lens: m(x, x, x, lens))(mha, X, causal)
    np.testing.assert_allclose(compiled[0], eager[0], atol=1e-6)
    np.testing.assert_allclose(compiled[1], eager[1], atol=1e-6)


def test_torch_gradients_stay_finite_through_a_blind_query():
    import torch

    from d2l_mini import torch as d2l

    torch.manual_seed(0)
    mha = d2l.MultiHeadAttention(8, 2)
    X = torch.randn(2, 3, 8, requires_grad=True)
    out, _ = mha(X, X, X, torch.tensor([[0, 1, 2], [1, 2, 3]]))
    out.sum().backward()
    assert torch.isfinite(X.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in mha.parameters())


def test_torch_bfloat16_masking_uses_its_own_finfo():
    import torch

    from d2l_mini import torch as d2l

    scores = torch.tensor([[1.0, 2.0, -3e38]], dtype=torch.bfloat16)
    mask = torch.tensor([[False, True, True]])
    weights = d2l.masked_softmax(scores, mask)
    assert weights.dtype == torch.bfloat16
    assert weights[0, 0] == 0 and torch.isfinite(weights).all()


LENGTHS = {
    'none': None,
    'per-sequence': np.array([2, 6, 4]),
    'causal': np.tile(np.arange(1, 7), (3, 1)),
    'blind': np.array([[0, 1, 2, 3, 0, 6]] * 3),
}


@pytest.mark.parametrize('case', list(LENGTHS))
def test_need_weights_false_gives_the_same_output_and_no_weights(fw, case):
    """Both twins take need_weights: False returns None for the weights and the
    output the weights give (PyTorch's by its fused kernel, JAX's as before)."""
    mha = fw.make(MHA, 8, 2, bias=True)
    q, k, v = inputs(B=3, Tq=6, Tk=6)
    out, weights = fw.call(mha, q, k, v, LENGTHS[case])
    alone, none = fw.call(mha, q, k, v, LENGTHS[case], need_weights=False)
    assert weights.shape == (3, 2, 6, 6) and none is None
    np.testing.assert_allclose(alone, out, atol=1e-5, rtol=0)


def torch_outputs_and_grads(mha, lens, **call_options):
    """Output of ``mha`` (width 8) on a (3, 6, 8) input, the weights it
    returned, and the gradients of a weighted sum of the output with respect
    to the input and to W_q."""
    import torch

    mha.zero_grad()
    X = torch.randn(3, 6, 8, generator=torch.Generator().manual_seed(1), requires_grad=True)
    out, weights = mha(X, X, X, None if lens is None else torch.from_numpy(lens), **call_options)
    (out * torch.linspace(-1, 1, 8)).sum().backward()
    return out.detach(), weights, X.grad, mha.W_q.weight.grad.clone()


@pytest.mark.parametrize('case', list(LENGTHS))
def test_torch_need_weights_false_computes_the_same_without_weights(case):
    """need_weights=False (PyTorch's fused kernel) gives the same outputs and
    gradients as the explicit computation, and None for the weights."""
    import torch

    from d2l_mini import torch as d2l

    torch.manual_seed(0)
    mha = d2l.MultiHeadAttention(8, 2, bias=True)
    out, weights, gx, gq = torch_outputs_and_grads(mha, LENGTHS[case])
    fused, no_weights, fgx, fgq = torch_outputs_and_grads(mha, LENGTHS[case], need_weights=False)
    assert weights.shape == (3, 2, 6, 6) and no_weights is None
    torch.testing.assert_close(fused, out, atol=1e-5, rtol=0)
    torch.testing.assert_close(fgx, gx, atol=1e-5, rtol=0)
    torch.testing.assert_close(fgq, gq, atol=1e-5, rtol=0)
    assert torch.isfinite(fgx).all()
    # the default still returns the weights
    assert torch_outputs_and_grads(mha, LENGTHS[case])[1].shape == (3, 2, 6, 6)


def test_torch_need_weights_false_drops_out_only_in_training():
    import torch

    from d2l_mini import torch as d2l

    torch.manual_seed(0)
    mha = d2l.MultiHeadAttention(16, 4, dropout=0.5)
    X = torch.randn(2, 5, 16)
    with torch.no_grad():
        first, _ = mha(X, X, X, need_weights=False)
        second, _ = mha(X, X, X, need_weights=False)
        assert not torch.allclose(first, second)
        mha.eval()
        fused, _ = mha(X, X, X, need_weights=False)
        explicit, _ = mha(X, X, X)
    torch.testing.assert_close(fused, explicit, atol=1e-6, rtol=0)


def test_torch_a_subclass_override_takes_effect_without_weights():
    """A subclass that changes Q and K and passes need_weights on keeps its
    change on the fast path."""
    import torch

    from d2l_mini import torch as d2l

    class Doubled(d2l.MultiHeadAttention):
        def dot_product_attention(self, Q, K, V, mask=None, need_weights=True):
            return super().dot_product_attention(2 * Q, K, V, mask, need_weights)

    torch.manual_seed(0)
    mha = Doubled(8, 2)
    torch.manual_seed(0)
    same_weights = d2l.MultiHeadAttention(8, 2)
    X = torch.randn(2, 5, 8)
    with torch.no_grad():
        explicit, _ = mha(X, X, X)
        fused, _ = mha(X, X, X, need_weights=False)
        undoubled, _ = same_weights(X, X, X, need_weights=False)
    torch.testing.assert_close(fused, explicit, atol=1e-5, rtol=0)
    assert (fused - undoubled).abs().max() > 1e-3


@pytest.mark.usefixtures('corpus')
def test_torch_the_block_asks_for_no_weights_and_training_changes_nothing():
    """TransformerBlock calls its attention with need_weights=False, through
    the attention's own dot_product_attention; after train_lm the attention
    returns its weights as before."""
    import torch

    from d2l_mini import torch as d2l

    asked = []

    class Recording(d2l.MultiHeadAttention):
        def dot_product_attention(self, Q, K, V, mask=None, need_weights=True):
            asked.append(need_weights)
            return super().dot_product_attention(Q, K, V, mask, need_weights)

    tm = d2l.TimeMachine(4, 5, num_train=20, num_val=1)
    model = d2l.CharLM(len(tm.vocab), 8, 2, num_blks=1, max_len=5)
    model.blks[0].attention = Recording(8, 2)
    d2l.train_lm(model, tm, torch.optim.SGD(model.parameters(), lr=0.1), 3)
    assert asked == [False] * 3
    X = torch.randn(1, 5, 8)
    _, weights = model.blks[0].attention(X, X, X)
    assert asked[-1] is True and weights.shape == (1, 2, 5, 5)


@pytest.mark.usefixtures('corpus')
def test_jax_training_leaves_the_model_as_it_was():
    """train_lm changes the model's parameters and nothing else about it:
    its structure and static attributes (every layer's functions) stay."""
    import optax
    from flax import nnx

    from d2l_mini import jax as d2l

    tm = d2l.TimeMachine(4, 5, num_train=20, num_val=1)
    model = d2l.CharLM(len(tm.vocab), 8, 2, num_blks=1, max_len=5, rngs=nnx.Rngs(0))
    before = nnx.graphdef(model)
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
    d2l.train_lm(model, tm, optimizer, 2)
    assert nnx.graphdef(model) == before
