"""Training speed of the chapter's CharLM, as a share of the machine's matmul peak.

``python -m benchmarks`` (``make bench``) measures, in one run:

* the float32 matrix-multiply rate of each framework (1024 x 1024 matrices);
  the highest is the machine's peak, and every training figure is a share of it;
* per framework, the lesson's training step written by hand (the plainest loop:
  forward, loss, gradients, update) and ``d2l.train_lm``, on the book's CharLM
  (its GELU/SwiGLU run: 600 steps of 64 x 128 characters); each figure is also
  given against the figure above it, so that a slower library shows as a ratio
  below 1;
* PyTorch's speed switch against its absence: ``need_weights=False`` (the
  block's attention by the fused kernel) against blocks that ask for the
  weights; and in JAX, what the lesson's dense layers cost against the same
  layers with 2-D products (``dot_general`` that flattens a (B, T, d) input
  into (B * T, d) rows), a speed-up the library does not take so that every
  layer trains as the lesson writes it;
* the same loops on the small CharLM of the casebook (width 64, 16 x 32
  characters), where a step is short and fixed costs per step show.

Timings on a shared machine are noisy, so the probes are taken in turns,
several rounds, and compared by their medians: all see the same conditions.

FLOPs per step: 6 x parameters x tokens (forward and backward of every weight)
plus the attention products, 12 x layers x T x d per token (QK^T and AV,
forward and backward, over the full T x T score matrix).

What the measurements showed on the book's two-core machine (a KVM guest of a
Xeon with AVX-512), and why the library is as it is:

* The matmul rates move by a factor of two from run to run as the load on
  the host changes (torch 85-258 GFLOP/s, XLA 93-349 at 1024^3 on one day),
  which is why every figure is a share of the same run's peak.
* torch on one thread often matches its two-thread rate here (the two vCPUs
  share a core's execution units); OMP_WAIT_POLICY (PASSIVE, ACTIVE) moved
  the rate by less than the noise, and the build's kernels keep PASSIVE so that
  idle threads do not spin against the other kernel.
* XLA flags (xnnpack, oneDNN, fast math, the thunk runtime, the
  concurrency-optimised scheduler, Eigen on one thread) left the book's
  step within the noise of the default.
* JAX: a dense layer's weight gradient over a 3-D input (B, T, d) is about
  twice as slow as over the same rows as one 2-D matrix (book CharLM: 425 ->
  322 ms per step with every ``nnx.Linear`` given a flattening
  ``dot_general``); the library trains the layers as the lesson writes them
  and pays that ('2-D products' below). Micro-batches in a
  ``lax.scan`` keep a slice's attention arrays in the cache (307 -> 232 ms
  with slices of 8 windows); the same slices unrolled in one jitted step
  reached only 297-327 ms, and the plain ``nnx.jit`` step of the lesson
  425 ms, which is why train_lm keeps both. Compiling the step with
  ``nnx.jit`` rather than ``jax.jit`` over the split model cost nothing
  measurable (375 and 376 ms per step, taken in turns on a loaded machine)
  and gives the same losses to the last bit.
* PyTorch: asking the attention for no weights (the fused kernel) makes
  train_lm 1.19 times as fast as blocks that keep the weights ('weights
  kept' measured 0.84 x on a quiet machine).
* On a quiet machine (load 0.6) the peak was torch's two-thread matmul,
  216 GFLOP/s; train_lm reached 58.6% of it in PyTorch and, in slices of 8
  windows as the book runs it, 51.7% in JAX (35.5% without slices).
"""

import argparse
import itertools
import os
import statistics
import sys
import time

from tools.frameworks import FRAMEWORKS, check_frameworks

BOOK = dict(batch_size=64, num_steps=128, num_hiddens=128, num_heads=4, num_blks=2)
SMALL = dict(batch_size=16, num_steps=32, num_hiddens=64, num_heads=4, num_blks=2)
SIZES = {'book': BOOK, 'small': SMALL}
LR = 1e-3
BOOK_STEPS = 600
MATMUL_SIZE = 1024
WINDOWS_PER_SLICE = 8  # JAX's micro-batches, as the book's GELU/SwiGLU run takes them


def step_flops(num_params, cfg):
    tokens = cfg['batch_size'] * cfg['num_steps']
    attention = 12 * cfg['num_blks'] * cfg['num_steps'] * cfg['num_hiddens']
    return tokens * (6 * num_params + attention)


def rate(run, flops, calls=3):
    """FLOP rate of ``run`` over ``calls`` consecutive calls."""
    start = time.perf_counter()
    for _ in range(calls):
        run()
    return calls * flops / (time.perf_counter() - start)


def in_turns(probes, rounds):
    """Median of each probe's value over ``rounds`` rounds taken in turns."""
    samples = {name: [] for name in probes}
    for _ in range(rounds):
        for name, probe in probes.items():
            samples[name].append(probe())
    return {name: statistics.median(v) for name, v in samples.items()}


def loop_rate(loop, flops, steps):
    """A probe of the FLOP rate of ``loop(steps)``, warmed up (compiled) first."""
    loop(2)

    def probe():
        start = time.perf_counter()
        loop(steps)
        return flops * steps / (time.perf_counter() - start)

    return probe


def batches(data, steps):
    """The first ``steps`` training batches of ``data`` (one epoch is enough)."""
    return itertools.islice(data.train_dataloader(), steps)


# ---------------------------------------------------------------- PyTorch


def torch_matmul(threads=None, n=MATMUL_SIZE):
    """A probe of PyTorch's float32 matrix-multiply rate (FLOP/s), with
    ``threads`` threads (default: as configured)."""
    import torch

    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b

    def probe():
        configured = torch.get_num_threads()
        torch.set_num_threads(threads or configured)
        try:
            return rate(lambda: a @ b, 2 * n**3)
        finally:
            torch.set_num_threads(configured)

    return probe


def torch_loops(cfg):
    """Parameters of the CharLM of ``cfg`` and its training loops by name:
    the hand-written step, ``train_lm``, and ``train_lm`` with blocks that
    ask their attention for the weights."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    from d2l_mini import torch as d2l

    class WeightsBlock(d2l.TransformerBlock):
        """The block as it reads without the switch: the attention weights
        are computed, then dropped."""

        def attend(self, X, valid_lens):
            return self.dropout(self.attention(X, X, X, valid_lens)[0])

    data = d2l.TimeMachine(cfg['batch_size'], cfg['num_steps'], num_train=100000, num_val=10)

    def fresh(block=None):
        torch.manual_seed(0)
        model = d2l.CharLM(
            len(data.vocab),
            cfg['num_hiddens'],
            cfg['num_heads'],
            cfg['num_blks'],
            max_len=cfg['num_steps'],
        )
        if block is not None:
            model.blks = nn.ModuleList(
                block(cfg['num_hiddens'], cfg['num_heads']) for _ in range(cfg['num_blks'])
            )
        optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
        return model, optimizer

    hand_model, hand_opt = fresh()

    def by_hand(steps):
        hand_model.train()
        for X, Y in batches(data, steps):
            logits = hand_model(X)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), Y.reshape(-1))
            hand_opt.zero_grad()
            loss.backward()
            hand_opt.step()
            loss.item()

    def library(block=None):
        model, optimizer = fresh(block)
        return lambda steps: d2l.train_lm(model, data, optimizer, steps)

    num_params = sum(p.numel() for p in hand_model.parameters())
    loops = {
        'lesson step': by_hand,
        'train_lm': library(),
        'weights kept': library(WeightsBlock),
    }
    return num_params, loops


# ---------------------------------------------------------------- JAX


def jax_matmul(n=MATMUL_SIZE):
    """A probe of XLA's float32 matrix-multiply rate (FLOP/s)."""
    import jax
    from jax import numpy as jnp

    a = jax.random.normal(jax.random.key(0), (n, n))
    b = jax.random.normal(jax.random.key(1), (n, n))
    matmul = jax.jit(jnp.matmul)
    matmul(a, b).block_until_ready()
    return lambda: rate(lambda: matmul(a, b).block_until_ready(), 2 * n**3)


def two_d_products(inputs, kernel, dimension_numbers, **options):
    """``lax.dot_general`` of a dense layer (``inputs``' last axis against
    ``kernel``'s first), with all leading axes of ``inputs`` flattened: the same
    numbers, but XLA on a CPU differentiates the 2-D product faster."""
    import jax

    rows = inputs.reshape(-1, inputs.shape[-1])
    product = jax.lax.dot_general(rows, kernel, (((1,), (0,)), ((), ())), **options)
    return product.reshape(*inputs.shape[:-1], kernel.shape[-1])


def jax_loops(cfg):
    """Parameters of the CharLM of ``cfg`` and its training loops by name:
    the step as the ViT section writes it, and ``train_lm`` (whole batches,
    slices, and slices with every dense layer's products made 2-D)."""
    import jax
    import optax
    from flax import nnx

    from d2l_mini import jax as d2l

    data = d2l.TimeMachine(cfg['batch_size'], cfg['num_steps'], num_train=100000, num_val=10)

    def fresh():
        model = d2l.CharLM(
            len(data.vocab),
            cfg['num_hiddens'],
            cfg['num_heads'],
            cfg['num_blks'],
            max_len=cfg['num_steps'],
            rngs=nnx.Rngs(0),
        )
        optimizer = nnx.Optimizer(model, optax.adamw(LR, weight_decay=0.0), wrt=nnx.Param)
        return model, optimizer

    hand_model, hand_opt = fresh()

    @nnx.jit
    def train_step(model, optimizer, X, Y):
        def loss_fn(model):
            logits = model(X)
            return optax.softmax_cross_entropy_with_integer_labels(logits, Y).mean()

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    def by_hand(steps):
        hand_model.train()
        losses = [train_step(hand_model, hand_opt, X, Y) for X, Y in batches(data, steps)]
        jax.block_until_ready(losses)

    def library(two_d=False, **options):
        model, optimizer = fresh()
        if two_d:
            for _, layer in nnx.iter_graph(model):
                if isinstance(layer, nnx.Linear):
                    layer.dot_general = two_d_products
        return lambda steps: d2l.train_lm(model, data, optimizer, steps, **options)

    num_params = sum(p.size for p in jax.tree.leaves(nnx.state(hand_model, nnx.Param)))
    sliced = dict(micro_batches=cfg['batch_size'] // WINDOWS_PER_SLICE)
    loops = {
        'lesson step': by_hand,
        'train_lm': library(),
        'micro-batched': library(**sliced),
        '2-D products': library(two_d=True, **sliced),
    }
    return num_params, loops


# ---------------------------------------------------------------- report

PEAKS = {
    'pytorch': lambda: {
        f'torch matmul, {threads()} threads': torch_matmul(),
        'torch matmul, 1 thread': torch_matmul(1),
    },
    'jax': lambda: {'XLA matmul': jax_matmul()},
}
LOOPS = {'pytorch': torch_loops, 'jax': jax_loops}
LABELS = {
    'lesson step': "the lesson's step, by hand",
    'train_lm': 'd2l.train_lm',
    'weights kept': 'train_lm, weights kept',
    'micro-batched': 'train_lm, slices of 8 windows',
    '2-D products': '... with 2-D products',
}


def threads():
    import torch

    return torch.get_num_threads()


def measure(frameworks, steps, rounds):
    """Every probe of every framework, taken in turns: the matmul peaks, then
    each framework's loops at both sizes."""
    probes, flops = {}, {}
    for framework in frameworks:
        probes.update(PEAKS[framework]())
    for framework in frameworks:
        for size, cfg in SIZES.items():
            num_params, loops = LOOPS[framework](cfg)
            flops[framework, size] = num_params, step_flops(num_params, cfg)
            size_steps = steps if size == 'book' else 10 * steps
            for name, loop in loops.items():
                probe = loop_rate(loop, flops[framework, size][1], size_steps)
                probes[framework, size, name] = probe
    return in_turns(probes, rounds), flops


def report(frameworks, rates, flops):
    peaks = {name: r for name, r in rates.items() if isinstance(name, str)}
    best_name = max(peaks, key=peaks.get)
    best = peaks[best_name]
    print(f'matmul peak ({MATMUL_SIZE}^3 float32):')
    for name, r in peaks.items():
        print(f'  {name:<24} {r / 1e9:6.1f} GFLOP/s {100 * r / best:5.1f}% of peak')
    summary = {}  # framework -> its train_lm row, as the book calls it
    for framework in frameworks:
        for size, cfg in SIZES.items():
            num_params, step = flops[framework, size]
            tokens = cfg['batch_size'] * cfg['num_steps']
            print(
                f'{framework}, {size} CharLM (width {cfg["num_hiddens"]}, batch '
                f'{cfg["batch_size"]} x {cfg["num_steps"]}): {num_params} parameters, '
                f'{step / 1e9:.2f} GFLOP per step'
            )
            previous = None
            for key, r in rates.items():
                if not (isinstance(key, tuple) and key[:2] == (framework, size)):
                    continue
                name = key[2]
                against = '' if previous is None else f'  {r / previous:5.2f} x the line above'
                print(
                    f'  {LABELS[name]:<28} {tokens * r / step:8.0f} tokens/s '
                    f'{step / r * 1e3:7.1f} ms/step {r / 1e9:6.1f} GFLOP/s '
                    f'{100 * r / best:5.1f}% of peak{against}'
                )
                previous = r
                # The later line wins: JAX's book run takes its batches in slices.
                if size == 'book' and name in ('train_lm', 'micro-batched'):
                    summary[framework] = (framework, r, tokens * r / step, BOOK_STEPS * step / r)
    print(f'summary (shares of the highest matmul rate, {best_name}, {best / 1e9:.1f} GFLOP/s):')
    rows = list(summary.values())
    for framework, r, tokens_per_s, book_seconds in rows:
        print(
            f'  {framework:<7} train_lm {tokens_per_s:7.0f} tokens/s, '
            f'{100 * r / best:5.1f}% of peak, {book_seconds:.0f} s per {BOOK_STEPS} book steps'
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python -m benchmarks', description=__doc__.split('\n')[0]
    )
    parser.add_argument(
        '--steps',
        type=int,
        default=5,
        help='training steps per timed run of the book CharLM, ten times as many '
        'of the small one (default 5)',
    )
    parser.add_argument(
        '--rounds', type=int, default=3, help='rounds of the probes, taken in turns (default 3)'
    )
    parser.add_argument(
        '--frameworks',
        default=','.join(FRAMEWORKS),
        help=f'comma-separated subset of {",".join(FRAMEWORKS)}',
    )
    args = parser.parse_args(argv)
    try:
        frameworks = check_frameworks([f for f in args.frameworks.split(',') if f])
    except ValueError as error:
        parser.error(f'--frameworks: {error}')
    if args.steps < 1 or args.rounds < 1:
        parser.error('--steps and --rounds must be at least 1')
    os.environ.setdefault('TQDM_DISABLE', '1')  # no progress bars between the lines
    print(
        f'AdamW {LR:g}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; '
        f'medians of {args.rounds} rounds taken in turns'
    )
    rates, flops = measure(frameworks, args.steps, args.rounds)
    rows = report(frameworks, rates, flops)
    sys.stdout.flush()
    return rows


if __name__ == '__main__':
    main()
