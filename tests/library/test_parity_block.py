"""The chapter's FeedForward, TransformerBlock and CharLM agree between PyTorch and
JAX: with the PyTorch weights copied into the Flax twin, both compute the same
outputs (float32, within 1e-5). Plus the behaviour both share: validated
constructor arguments, causal language modelling, reproducible sampling."""

import inspect
import re

import jax
import numpy as np
import pytest
import torch
from flax import nnx
from jax import numpy as jnp

from d2l_mini import jax as d2l_jax
from d2l_mini import torch as d2l_torch
from tests.library.twins import copy_block, copy_charlm, copy_ffn, jax_apply, numpy

TOL = 1e-5


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: extra threads only add noise
    yield
    torch.set_num_threads(threads)


def jitter(module, seed=0):
    """Perturb every parameter, so that unit gains and zero biases are not
    what the copy (or its absence) happens to leave behind."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=generator))
    return module


def assert_close(torch_out, jax_out):
    expected, got = numpy(torch_out), np.asarray(jax_out)
    assert expected.shape == got.shape
    np.testing.assert_allclose(got, expected, rtol=TOL, atol=TOL)


def random_input(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------ parity


@pytest.mark.parametrize('act', ['gelu', 'swiglu'])
@pytest.mark.parametrize('bias', [False, True])
def test_feedforward_parity(act, bias):
    torch.manual_seed(0)
    pt = jitter(d2l_torch.FeedForward(24, act, bias=bias))
    jx = d2l_jax.FeedForward(24, act, bias=bias, rngs=nnx.Rngs(0))
    copy_ffn(pt, jx)
    X = random_input((2, 5, 24))
    assert_close(pt(torch.from_numpy(X)), jax_apply(jx, jnp.asarray(X)))


def test_feedforward_widths_follow_the_weight_budget():
    """4d for the GELU MLP, round(8d/3) for SwiGLU, in both frameworks."""
    for act, width in (('gelu', 1024), ('swiglu', 683)):
        assert d2l_torch.FeedForward(256, act).W_1.weight.shape == (width, 256)
        assert d2l_jax.FeedForward(256, act, rngs=nnx.Rngs(0)).W_1.kernel.shape == (256, width)


CONFIGS = {
    'modern': dict(),
    '2017': dict(norm='layer', act='gelu', pre_norm=False, bias=True),
}


@pytest.mark.parametrize('config', list(CONFIGS))
@pytest.mark.parametrize('mask', ['none', 'causal', 'per-sequence'])
def test_transformer_block_parity(config, mask):
    B, T, d, h = 2, 7, 32, 4
    torch.manual_seed(0)
    pt = jitter(d2l_torch.TransformerBlock(d, h, **CONFIGS[config])).eval()
    jx = d2l_jax.TransformerBlock(d, h, **CONFIGS[config], rngs=nnx.Rngs(0))
    jx.eval()
    copy_block(pt, jx)
    X = random_input((B, T, d))
    lens = {
        'none': None,
        'causal': np.tile(np.arange(1, T + 1), (B, 1)),
        'per-sequence': np.array([3, T]),
    }[mask]
    pt_out = pt(torch.from_numpy(X), None if lens is None else torch.from_numpy(lens))
    jx_out = jax_apply(jx, jnp.asarray(X), None if lens is None else jnp.asarray(lens))
    assert_close(pt_out, jx_out)


@pytest.mark.parametrize('act', ['gelu', 'swiglu'])
def test_charlm_parity(act):
    vocab_size, B, T = 28, 2, 12
    torch.manual_seed(0)
    pt = jitter(
        d2l_torch.CharLM(vocab_size, num_hiddens=32, num_heads=4, num_blks=2, act=act, max_len=16)
    ).eval()
    jx = d2l_jax.CharLM(
        vocab_size, num_hiddens=32, num_heads=4, num_blks=2, act=act, max_len=16, rngs=nnx.Rngs(0)
    )
    jx.eval()
    copy_charlm(pt, jx)
    tokens = np.random.default_rng(1).integers(0, vocab_size, (B, T))
    assert_close(pt(torch.from_numpy(tokens)), jax_apply(jx, jnp.asarray(tokens)))


# ------------------------------------------------- behaviour in both frameworks


BAD_ARGUMENTS = [
    ('FeedForward', (16,), dict(act='relu'), ValueError, "act must be 'gelu' or 'swiglu'"),
    ('FeedForward', (0,), dict(), ValueError, 'num_hiddens'),
    ('TransformerBlock', (16, 2), dict(norm='batch'), ValueError, "norm must be 'rms' or 'layer'"),
    ('TransformerBlock', (16, 2), dict(act='GELU'), ValueError, "act must be 'gelu' or 'swiglu'"),
    ('FeedForward', (16.0,), dict(), TypeError, 'num_hiddens must be an int'),
    (
        'TransformerBlock',
        (16, 3),
        dict(),
        ValueError,
        'num_heads (3) must divide num_hiddens (16)',
    ),
    ('TransformerBlock', (16, 0), dict(), ValueError, 'num_heads must be an int >= 1, got 0'),
    ('TransformerBlock', (16, 2.0), dict(), TypeError, 'num_heads must be an int >= 1, got 2.0'),
    ('TransformerBlock', (16, True), dict(), TypeError, 'num_heads'),
    (
        'TransformerBlock',
        (16, 2),
        dict(dropout=1.0),
        ValueError,
        'dropout must be a number in [0, 1)',
    ),
    ('TransformerBlock', (16, 2), dict(pre_norm='post'), TypeError, 'pre_norm'),
    ('CharLM', (28,), dict(max_len=0), ValueError, 'max_len'),
    ('CharLM', (28,), dict(num_blks=2.0), TypeError, 'num_blks'),
    ('CharLM', (28,), dict(act='swish'), ValueError, 'act'),
    (
        'CharLM',
        (28,),
        dict(num_hiddens=-16),
        ValueError,
        'num_hiddens must be an int >= 1, got -16',
    ),
    (
        'CharLM',
        (28,),
        dict(num_hiddens=16.5),
        TypeError,
        'num_hiddens must be an int >= 1, got 16.5',
    ),
    ('CharLM', (28,), dict(num_heads=0), ValueError, 'num_heads must be an int >= 1, got 0'),
    (
        'CharLM',
        (28,),
        dict(num_heads=3),
        ValueError,
        'num_heads (3) must divide num_hiddens (128)',
    ),
    ('CharLM', (28,), dict(act=1), TypeError, "act must be 'gelu' or 'swiglu', got 1"),
    ('MultiHeadAttention', (16, 2), dict(bias='no'), TypeError, 'bias must be True or False'),
    ('FeedForward', (16,), dict(bias='no'), TypeError, "bias must be True or False, got 'no'"),
    ('TransformerBlock', (16, 2), dict(bias=1), TypeError, 'bias must be True or False, got 1'),
    ('TransformerBlock', (16, 2), dict(norm=None), TypeError, "norm must be 'rms' or 'layer'"),
]


@pytest.mark.parametrize('cls, args, kwargs, error, message', BAD_ARGUMENTS)
def test_constructors_reject_bad_arguments(fw, cls, args, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        fw.make(cls, *args, **kwargs)


@pytest.mark.parametrize(
    'cls, args',
    [
        ('MultiHeadAttention', (16, 2)),
        ('FeedForward', (16,)),
        ('TransformerBlock', (16, 2)),
        ('CharLM', (28,)),
    ],
)
def test_flax_modules_require_rngs(cls, args):
    """No hidden default seed: a Flax module built without ``rngs`` is an
    error, and modules built from different Rngs start from different weights,
    as their PyTorch twins built one after the other do."""
    with pytest.raises(TypeError, match='rngs'):
        getattr(d2l_jax, cls)(*args)
    with pytest.raises(TypeError, match=re.escape('rngs must be an nnx.Rngs, e.g. nnx.Rngs(0)')):
        getattr(d2l_jax, cls)(*args, rngs=None)
    first, second, again = (
        getattr(d2l_jax, cls)(*args, rngs=nnx.Rngs(seed)) for seed in (0, 1, 0)
    )
    weights = [jax.tree.leaves(nnx.state(m, nnx.Param)) for m in (first, second, again)]
    assert any(not np.allclose(a, b) for a, b in zip(weights[0], weights[1], strict=True))
    assert all(np.array_equal(a, b) for a, b in zip(weights[0], weights[2], strict=True))
    torch_first, torch_second = (getattr(d2l_torch, cls)(*args) for _ in range(2))
    assert any(
        not torch.equal(a, b)
        for a, b in zip(torch_first.parameters(), torch_second.parameters(), strict=True)
    )


def test_factories_replace_the_sublayers(fw):
    attn = fw.make('MultiHeadAttention', 16, 4)
    ffn = fw.make('FeedForward', 16, 'gelu')
    blk = fw.make(
        'TransformerBlock', 16, 2, attn_factory=fw.factory(attn), ffn_factory=fw.factory(ffn)
    )
    assert blk.attention is attn and blk.ffn is ffn
    Y = fw.apply(blk, np.ones((1, 3, 16), np.float32))
    assert Y.shape == (1, 3, 16)


def test_charlm_is_causal(fw):
    """Changing later tokens never changes the logits at earlier positions."""
    model = fw.make('CharLM', 28, num_hiddens=32, num_heads=4, max_len=16)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 28, (2, 10))
    changed = tokens.copy()
    changed[:, 6:] = rng.integers(0, 28, (2, 4))
    out, out_changed = fw.apply(model, tokens), fw.apply(model, changed)
    np.testing.assert_allclose(out[:, :6], out_changed[:, :6], atol=1e-6)
    assert np.abs(out[:, 6:] - out_changed[:, 6:]).max() > 1e-3


def test_charlm_rejects_sequences_longer_than_max_len(fw):
    model = fw.make('CharLM', 28, num_hiddens=16, num_heads=2, max_len=8)
    tokens = np.zeros((1, 9), dtype=np.int64)
    with pytest.raises(ValueError, match='max_len'):
        model(fw.tensor(tokens))


class Letters:
    """The part of d2l's Vocab that generate uses, for 'a' to 'z' and ' '."""

    idx_to_token = ['<unk>'] + list('abcdefghijklmnopqrstuvwxyz ')

    def __getitem__(self, tokens):
        return [self.idx_to_token.index(t) for t in tokens]

    def to_tokens(self, indices):
        return [self.idx_to_token[int(i)] for i in indices]


def test_generate_is_reproducible_and_extends_the_prefix(fw):
    d2l = fw.d2l
    model = fw.make('CharLM', 28, num_hiddens=16, num_heads=2, max_len=8)
    vocab = Letters()
    first = d2l.generate(model, vocab, 'the time', 12, temperature=1.0, seed=3)
    again = d2l.generate(model, vocab, 'the time', 12, temperature=1.0, seed=3)
    other = d2l.generate(model, vocab, 'the time', 12, temperature=1.0, seed=4)
    assert first == again and first.startswith('the time')
    assert first != other


@pytest.mark.parametrize(
    'bad, error, message',
    [
        (dict(temperature=0.0), ValueError, 'temperature must be a number > 0, got 0.0'),
        (dict(prefix=''), ValueError, "prefix must be a non-empty string, got ''"),
        (dict(prefix=5), TypeError, 'prefix must be a non-empty string, got 5'),
        (dict(num_chars=-1), ValueError, 'num_chars must be an int >= 0, got -1'),
        (dict(seed=1.5), TypeError, 'seed must be an int >= 0, got 1.5'),
        (dict(seed=-1), ValueError, 'seed must be an int >= 0, got -1'),
    ],
)
def test_generate_rejects_bad_arguments(fw, bad, error, message):
    model = fw.make('CharLM', 28, num_hiddens=16, num_heads=2, max_len=8)
    arguments = dict(prefix='ab', num_chars=3, temperature=1.0, seed=0) | bad
    with pytest.raises(error, match=re.escape(message)):
        fw.d2l.generate(model, Letters(), **arguments)


@pytest.mark.parametrize(
    'name', ['MultiHeadAttention', 'FeedForward', 'TransformerBlock', 'CharLM']
)
def test_twins_take_the_same_arguments_with_the_same_defaults(name):
    """Apart from Flax's required ``rngs``, the twins' constructors agree, down
    to the type of each default (``dropout=0.0`` in both, not 0 in one)."""

    def parameters(cls):
        return [
            (p.name, p.default, type(p.default))
            for p in inspect.signature(cls.__init__).parameters.values()
            if p.name not in ('self', 'rngs')
        ]

    assert parameters(getattr(d2l_torch, name)) == parameters(getattr(d2l_jax, name))


def test_the_block_and_its_attention_share_the_dropout_default(fw):
    def dropout_default(cls):
        return inspect.signature(cls.__init__).parameters['dropout'].default

    block, attention = (
        dropout_default(getattr(fw.d2l, name))
        for name in ('TransformerBlock', 'MultiHeadAttention')
    )
    assert (block, type(block)) == (attention, type(attention)) == (0.0, float)


def stream_gain(fw, pre_norm, norm, X, scale):
    """RMS of block(scale * X) over the RMS of scale * X, for a fresh block."""
    block = fw.make('TransformerBlock', 64, 4, norm=norm, pre_norm=pre_norm)
    Y = fw.apply(block, scale * X)
    return float(np.sqrt(np.mean(Y**2) / np.mean((scale * X) ** 2)))


@pytest.mark.parametrize('norm', ['rms', 'layer'])
def test_only_post_norm_puts_a_normalisation_on_the_stream(fw, norm):
    """For an input scaled by s = 1000, a pre-norm block only adds bounded
    branch outputs to the stream (gain about 1), while a post-norm block ends
    in a normalisation (output RMS about 1, gain about 1 / (s RMS(X)))."""
    X = np.random.default_rng(0).standard_normal((2, 32, 64)).astype(np.float32)
    scale = 1000.0
    pre = stream_gain(fw, True, norm, X, scale)
    post = stream_gain(fw, False, norm, X, scale)
    assert abs(pre - 1) < 0.05, f'pre-norm gain {pre:.3g}: a normalisation sits on the stream'
    expected_post = 1 / (scale * np.sqrt(np.mean(X**2)))
    assert abs(post / expected_post - 1) < 0.05, (post, expected_post)
