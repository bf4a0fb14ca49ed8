"""train_lm in both frameworks: it learns, it computes the loss it claims to,
it cycles epochs, and the JAX step is compiled once per model."""

import contextlib
import itertools

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures('corpus')  # every test trains on it

BATCH, STEPS = 16, 24
LOOP_STEPS = 6


def assert_same_steps(runs):
    """Two runs (losses, final weights) that should take the same steps (one
    batch and its slices; train_lm and the lesson's loop): the same up to
    rounding, and the steps did something."""
    (one, weight_one), (sliced, weight_sliced) = runs
    np.testing.assert_allclose(sliced, one, rtol=1e-5)
    np.testing.assert_allclose(weight_sliced, weight_one, rtol=1e-4, atol=1e-6)
    assert one[-1] < one[0]


def assert_micro_batches_validated(d2l, model, tm, optimizer):
    """train_lm rejects micro_batches that are not ints (TypeError), ints
    below 1 and those that do not divide the batch size (ValueError; ``tm``
    has batches of 4)."""
    for bad, error in ((0, ValueError), (-2, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match='micro_batches must be an int >= 1'):
            d2l.train_lm(model, tm, optimizer, 1, micro_batches=bad)
    with pytest.raises(
        ValueError,
        match=r'micro_batches \(3\) must divide '
        r'batch_size \(4\)',
    ):
        d2l.train_lm(model, tm, optimizer, 1, micro_batches=3)


class BarRecorder:
    """Stands in for tqdm's bar in ``d2l_mini.progress``: keeps every bar made, each
    writing to its own StringIO, shown from the start (no delay) and redrawn at every
    update (tqdm's dynamic ``miniters`` would skip the last one in a fast loop)."""

    def __init__(self, monkeypatch):
        import io

        from tqdm import std

        from d2l_mini import progress as progress_module

        self.bars = []
        recorder = self

        class RecordedBar(std.tqdm):
            def __init__(self, *args, **kwargs):
                kwargs.update(file=io.StringIO(), delay=0, mininterval=0, miniters=1)
                super().__init__(*args, **kwargs)
                self.enabled = not self.disable  # close() disables a bar
                recorder.bars.append(self)

        monkeypatch.setattr(progress_module, 'bar_class', lambda: RecordedBar)


def assert_one_bar_counted(recorder, num_updates):
    """train_lm made one enabled bar of ``num_updates`` steps that reached the
    end, printed its counts and is closed."""
    [bar] = recorder.bars
    assert bar.enabled and bar.total == num_updates
    assert bar.n == num_updates and bar.disable  # counted to the end, closed
    shown = bar.fp.getvalue()
    assert 'training' in shown and f'{num_updates}/{num_updates}' in shown


# ------------------------------------------------------------------ PyTorch


@pytest.fixture(scope='module')
def pt():
    import torch
    from torch import nn

    from d2l_mini import torch as d2l

    class TinyLM(nn.Module):
        def __init__(self, vocab_size, num_hiddens=32):
            super().__init__()
            self.emb = nn.Embedding(vocab_size, num_hiddens)
            self.attention = d2l.MultiHeadAttention(num_hiddens, 2)
            self.out = nn.Linear(num_hiddens, vocab_size)

        def forward(self, X):
            B, T = X.shape
            H = self.emb(X)
            causal = torch.arange(1, T + 1).repeat(B, 1)
            return self.out(H + self.attention(H, H, H, causal)[0])

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: threads only add contention
    yield torch, d2l, TinyLM
    torch.set_num_threads(threads)


def test_torch_train_lm_lowers_the_loss(pt):
    torch, d2l, TinyLM = pt
    tm = d2l.TimeMachine(BATCH, STEPS, num_train=2000, num_val=10)
    torch.manual_seed(0)
    model = TinyLM(len(tm.vocab))
    model.eval()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = d2l.train_lm(model, tm, optimizer, 40)
    assert len(losses) == 40 and all(type(x) is float for x in losses)
    assert model.training  # train_lm switches to training mode
    assert losses[0] > 3.0  # about log 28 at the start
    assert np.mean(losses[-5:]) < losses[0] - 0.8


def test_torch_first_loss_is_next_token_cross_entropy(pt):
    torch, d2l, TinyLM = pt
    tm = d2l.TimeMachine(BATCH, STEPS, num_train=200, num_val=10, seed=3)
    X, Y = next(
        iter(d2l.TimeMachine(BATCH, STEPS, num_train=200, num_val=10, seed=3).train_dataloader())
    )
    torch.manual_seed(0)
    model = TinyLM(len(tm.vocab))
    with torch.no_grad():
        logits = model(X)
        expected = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), Y.reshape(-1)
        ).item()
        # the same logits scored against the inputs instead: not the same
        wrong = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), X.reshape(-1)
        ).item()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = d2l.train_lm(model, tm, optimizer, 1)
    assert losses[0] == pytest.approx(expected, rel=1e-5)
    assert abs(losses[0] - wrong) > 1e-3


def test_torch_train_lm_cycles_epochs_and_validates(pt):
    torch, d2l, TinyLM = pt
    tm = d2l.TimeMachine(4, 5, num_train=9, num_val=1)  # 2 batches per epoch
    model = TinyLM(len(tm.vocab))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    assert len(d2l.train_lm(model, tm, optimizer, 7)) == 7
    for bad, error in ((0, ValueError), (-1, ValueError), (2.5, TypeError)):
        with pytest.raises(error, match='num_updates'):
            d2l.train_lm(model, tm, optimizer, bad)


def test_torch_micro_batches_take_the_same_steps(pt):
    """Gradient accumulation over 4 slices: the same losses and weights as
    one batch, up to rounding; a wrong scaling (say, summing the slices'
    mean losses) would move the weights differently."""
    torch, d2l, TinyLM = pt
    runs = []
    for micro_batches in (1, 4):
        tm = d2l.TimeMachine(BATCH, STEPS, num_train=2000, num_val=10, seed=5)
        torch.manual_seed(0)
        model = TinyLM(len(tm.vocab))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        losses = d2l.train_lm(model, tm, optimizer, 5, micro_batches=micro_batches)
        runs.append((losses, model.out.weight.detach().numpy().copy()))
    assert_same_steps(runs)


def test_torch_micro_batches_run_one_forward_pass_per_slice(pt):
    """The twin of the JAX test below: a model that counts its forward
    passes in a buffer sees one per slice."""
    torch, d2l, TinyLM = pt

    class CountingLM(TinyLM):
        def __init__(self, vocab_size):
            super().__init__(vocab_size)
            self.register_buffer('calls', torch.zeros((), dtype=torch.long))

        def forward(self, X):
            self.calls += 1
            return super().forward(X)

    counts = []
    for micro_batches in (1, 4):
        tm = d2l.TimeMachine(BATCH, STEPS, num_train=2000, num_val=10, seed=5)
        model = CountingLM(len(tm.vocab))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        d2l.train_lm(model, tm, optimizer, 2, micro_batches=micro_batches)
        counts.append(int(model.calls))
    assert counts == [2, 8]


def test_torch_micro_batches_are_validated(pt):
    torch, d2l, TinyLM = pt
    tm = d2l.TimeMachine(4, 5, num_train=9, num_val=1)
    model = TinyLM(len(tm.vocab))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    assert_micro_batches_validated(d2l, model, tm, optimizer)


def test_torch_train_lm_shows_progress(pt, monkeypatch):
    torch, d2l, TinyLM = pt
    recorder = BarRecorder(monkeypatch)
    tm = d2l.TimeMachine(4, 5, num_train=9, num_val=1)
    model = TinyLM(len(tm.vocab))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    d2l.train_lm(model, tm, optimizer, 5)
    assert_one_bar_counted(recorder, 5)


# ------------------------------------------------------------------ JAX


@pytest.fixture(scope='module')
def jx():
    import jax.numpy as jnp
    import optax
    from flax import nnx

    from d2l_mini import jax as d2l

    class TinyLM(nnx.Module):
        def __init__(self, vocab_size, num_hiddens=32, rngs=None):
            self.emb = nnx.Embed(vocab_size, num_hiddens, rngs=rngs)
            self.attention = d2l.MultiHeadAttention(num_hiddens, 2, rngs=rngs)
            self.out = nnx.Linear(num_hiddens, vocab_size, rngs=rngs)

        def __call__(self, X):
            B, T = X.shape
            H = self.emb(X)
            causal = jnp.tile(jnp.arange(1, T + 1), (B, 1))
            return self.out(H + self.attention(H, H, H, causal)[0])

    return jnp, optax, nnx, d2l, TinyLM


@contextlib.contextmanager
def traces_of(fun_name):
    """The list of the times JAX traces the function ``fun_name`` (to compile
    it) inside the block."""
    import jax

    traces = []

    def listen(event, duration, **kwargs):
        if (
            event == '/jax/core/compile/jaxpr_trace_duration'
            and kwargs.get('fun_name') == fun_name
        ):
            traces.append(duration)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield traces
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)


@pytest.fixture(scope='module')
def jax_run(jx):
    """One model trained for 30 + 10 steps; the step is compiled once for the
    whole module (same model, optimizer and batch shape)."""
    _, optax, nnx, d2l, TinyLM = jx
    tm = d2l.TimeMachine(BATCH, STEPS, num_train=2000, num_val=10, seed=3)
    X, Y = next(
        iter(d2l.TimeMachine(BATCH, STEPS, num_train=2000, num_val=10, seed=3).train_dataloader())
    )
    model = TinyLM(len(tm.vocab), rngs=nnx.Rngs(0))
    logits = model(X)
    expected = float(optax.softmax_cross_entropy_with_integer_labels(logits, Y).mean())
    wrong = float(optax.softmax_cross_entropy_with_integer_labels(logits, X).mean())
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    held = model.out.kernel[...]  # an array of the model a reader may keep
    before = np.asarray(held).copy()
    with traces_of('_train_step') as first:
        losses = d2l.train_lm(model, tm, optimizer, 30)
    with traces_of('_train_step') as second:
        losses += d2l.train_lm(model, tm, optimizer, 10)
    return dict(
        model=model,
        optimizer=optimizer,
        losses=losses,
        expected=expected,
        wrong=wrong,
        before=before,
        held=held,
        compiled=len(first),
        recompiled=len(second),
    )


def test_jax_train_lm_lowers_the_loss_and_compiles_once(jax_run):
    losses = jax_run['losses']
    assert (jax_run['compiled'], jax_run['recompiled']) == (1, 0)
    assert len(losses) == 40 and all(type(x) is float for x in losses)
    assert losses[0] > 3.0
    assert np.mean(losses[-5:]) < losses[0] - 0.8
    # the trained parameters and the optimizer state are back on the objects
    model, optimizer = jax_run['model'], jax_run['optimizer']
    assert not np.allclose(np.asarray(model.out.kernel[...]), jax_run['before'])
    assert int(optimizer.step[...]) == 40
    # arrays taken from the model before training stay valid (not donated)
    np.testing.assert_array_equal(np.asarray(jax_run['held']), jax_run['before'])


def test_jax_first_loss_is_next_token_cross_entropy(jax_run):
    first = jax_run['losses'][0]
    assert first == pytest.approx(jax_run['expected'], rel=1e-5)
    assert abs(first - jax_run['wrong']) > 1e-3


def test_jax_train_lm_cycles_epochs_and_validates(jx, jax_run):
    *_, d2l, _ = jx
    # 2 batches per epoch, same batch shape: the compiled step is reused
    tm = d2l.TimeMachine(BATCH, STEPS, num_train=2 * BATCH + 1, num_val=1)
    model, optimizer = jax_run['model'], jax_run['optimizer']
    step = int(optimizer.step[...])
    assert len(d2l.train_lm(model, tm, optimizer, 7)) == 7
    assert int(optimizer.step[...]) == step + 7
    for bad, error in ((0, ValueError), (-1, ValueError), (2.5, TypeError)):
        with pytest.raises(error, match='num_updates'):
            d2l.train_lm(model, tm, optimizer, bad)
    # the model is usable after training (its arrays were not left donated)
    X, _ = next(iter(tm.val_dataloader()))
    assert np.isfinite(np.asarray(model(X))).all()


def jax_tiny_run(jx, **options):
    """(losses, output weights) of the tiny model trained 5 SGD steps by train_lm with
    ``options``, from the same weights on the same batches as every other such run."""
    _, optax, nnx, d2l, TinyLM = jx
    tm = d2l.TimeMachine(BATCH, STEPS, num_train=2000, num_val=10, seed=5)
    model = TinyLM(len(tm.vocab), rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.sgd(0.5), wrt=nnx.Param)
    losses = d2l.train_lm(model, tm, optimizer, 5, **options)
    return losses, np.asarray(model.out.kernel[...])


def test_jax_micro_batches_take_the_same_steps(jx):
    """Gradient accumulation over 4 slices in a lax.scan: the same losses
    and weights as one batch, up to rounding."""
    assert_same_steps([jax_tiny_run(jx, micro_batches=1), jax_tiny_run(jx, micro_batches=4)])


def test_jax_micro_batches_carry_the_other_variables(jx):
    """Variables that are not trained (here dropout's RNG count) move on
    from slice to slice and reach the model after the step."""
    _, optax, nnx, d2l, TinyLM = jx

    class DroppyLM(TinyLM):
        def __init__(self, vocab_size, rngs):
            super().__init__(vocab_size, rngs=rngs)
            self.drop = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, X):
            return self.drop(super().__call__(X))

    counts = []
    for micro_batches in (1, 4):
        tm = d2l.TimeMachine(BATCH, STEPS, num_train=2000, num_val=10, seed=5)
        model = DroppyLM(len(tm.vocab), rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
        d2l.train_lm(model, tm, optimizer, 2, micro_batches=micro_batches)
        counts.append(int(model.drop.rngs.count[...]))
    assert counts == [2, 8]  # one draw per forward pass


def test_jax_micro_batches_are_validated(jx):
    _, optax, nnx, d2l, TinyLM = jx
    tm = d2l.TimeMachine(4, 5, num_train=9, num_val=1)
    model = TinyLM(len(tm.vocab), rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
    assert_micro_batches_validated(d2l, model, tm, optimizer)


def test_jax_train_lm_shows_progress(jx, monkeypatch):
    _, optax, nnx, d2l, TinyLM = jx
    recorder = BarRecorder(monkeypatch)
    tm = d2l.TimeMachine(4, 5, num_train=9, num_val=1)
    model = TinyLM(len(tm.vocab), rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
    d2l.train_lm(model, tm, optimizer, 5)
    assert_one_bar_counted(recorder, 5)


def test_torch_train_lm_takes_the_steps_of_the_lessons_loop(pt):
    """The losses and weights of the plainest loop one would write: forward,
    cross-entropy, zero_grad, backward, step; a train_lm that skipped
    zero_grad or scored the wrong targets would drift from it."""
    torch, d2l, _ = pt
    from torch.nn import functional as F

    runs = []
    for by_hand in (False, True):
        tm = d2l.TimeMachine(BATCH, STEPS, num_train=2000, num_val=10, seed=5)
        torch.manual_seed(0)
        model = d2l.CharLM(len(tm.vocab), 32, 2, num_blks=2, max_len=STEPS)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
        if by_hand:
            model.train()
            losses = []
            for X, Y in itertools.islice(tm.train_dataloader(), LOOP_STEPS):
                logits = model(X)
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), Y.reshape(-1))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        else:
            losses = d2l.train_lm(model, tm, optimizer, LOOP_STEPS)
        runs.append((losses, model.token_emb.weight.detach().numpy().copy()))
    assert_same_steps(runs)


def test_jax_train_lm_takes_the_steps_of_the_lessons_loop(jx):
    """The losses and weights of the step the lesson writes: nnx.jit over
    model and optimizer, nnx.value_and_grad, optimizer.update."""
    _, optax, nnx, d2l, _ = jx

    @nnx.jit
    def train_step(model, optimizer, X, Y):
        def loss_fn(model):
            logits = model(X)
            return optax.softmax_cross_entropy_with_integer_labels(logits, Y).mean()

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    runs = []
    for by_hand in (False, True):
        tm = d2l.TimeMachine(BATCH, STEPS, num_train=2000, num_val=10, seed=5)
        model = d2l.CharLM(len(tm.vocab), 32, 2, num_blks=2, max_len=STEPS, rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.adamw(1e-2), wrt=nnx.Param)
        if by_hand:
            model.train()
            batches = itertools.islice(tm.train_dataloader(), LOOP_STEPS)
            losses = [float(train_step(model, optimizer, X, Y)) for X, Y in batches]
        else:
            losses = d2l.train_lm(model, tm, optimizer, LOOP_STEPS)
        runs.append((losses, np.asarray(model.token_emb.embedding[...])))
    assert_same_steps(runs)
