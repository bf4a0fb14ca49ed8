"""Training speed of the chapter's CharLM through ``d2l.train_lm``.

``python -m benchmarks`` (``make bench``) prints, for each framework,
training tokens per second, the achieved FLOP rate as a fraction of the
matrix-multiply peak measured in the same run, ``train_lm`` against the
plainest training loop one would write by hand, and a step over eight
micro-batches (the book's JAX setting) against a step over the whole batch.
Timings on a shared machine are noisy (other processes share the cores); the
peak, ``train_lm``, the hand loop and the sliced steps are therefore measured
in turns, several rounds, and compared by their medians, so that all see the
same conditions.

FLOPs per step: 6 x parameters x tokens (forward and backward of every
weight) plus the attention products, 12 x layers x T x d per token (QK^T and
AV, forward and backward, over the full T x T score matrix).
"""

import argparse
import functools
import os
import statistics
import sys
import time

import numpy as np

from tools.frameworks import FRAMEWORKS, check_frameworks

CONFIG = dict(
    batch_size=64,
    num_steps=128,
    num_hiddens=128,
    num_heads=4,
    num_blks=2,
    lr=1e-3,
    num_train=100000,
    num_val=3000,
)
BOOK_STEPS = 600
SLICES = 8
# the micro-batches of the book's training cells: JAX slices, PyTorch does not
BOOK_MICRO_BATCHES = {'pytorch': 1, 'jax': SLICES}


def step_flops(num_params, cfg=CONFIG):
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


# ---------------------------------------------------------------- PyTorch


def torch_matmul(threads=None, n=1024):
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


def torch_loops():
    import torch
    from torch.nn import functional as F

    from d2l_mini import torch as d2l

    data = d2l.TimeMachine(
        CONFIG['batch_size'],
        CONFIG['num_steps'],
        num_train=CONFIG['num_train'],
        num_val=CONFIG['num_val'],
    )

    def fresh():
        torch.manual_seed(0)
        model = d2l.CharLM(
            len(data.vocab),
            CONFIG['num_hiddens'],
            CONFIG['num_heads'],
            CONFIG['num_blks'],
            max_len=CONFIG['num_steps'],
        )
        optimizer = torch.optim.AdamW(model.parameters(), lr=CONFIG['lr'], weight_decay=0.0)
        return model, optimizer

    lib_model, lib_opt = fresh()
    hand_model, hand_opt = fresh()

    def library(steps, micro_batches=1):
        return d2l.train_lm(lib_model, data, lib_opt, steps, micro_batches=micro_batches)

    def by_hand(steps):
        hand_model.train()
        losses = []
        while len(losses) < steps:
            for X, Y in data.train_dataloader():
                logits = hand_model(X)
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), Y.reshape(-1))
                hand_opt.zero_grad()
                loss.backward()
                hand_opt.step()
                losses.append(loss.item())
                if len(losses) == steps:
                    break
        return losses

    num_params = sum(p.numel() for p in lib_model.parameters())
    return num_params, library, by_hand


# ---------------------------------------------------------------- JAX


def jax_matmul(n=1024):
    """A probe of XLA's float32 matrix-multiply rate (FLOP/s)."""
    import jax
    from jax import numpy as jnp

    a = jax.random.normal(jax.random.key(0), (n, n))
    b = jax.random.normal(jax.random.key(1), (n, n))
    matmul = jax.jit(jnp.matmul)
    matmul(a, b).block_until_ready()
    return lambda: rate(lambda: matmul(a, b).block_until_ready(), 2 * n**3)


def jax_loops():
    import jax
    import optax
    from flax import nnx

    from d2l_mini import jax as d2l

    data = d2l.TimeMachine(
        CONFIG['batch_size'],
        CONFIG['num_steps'],
        num_train=CONFIG['num_train'],
        num_val=CONFIG['num_val'],
    )

    def fresh():
        model = d2l.CharLM(
            len(data.vocab),
            CONFIG['num_hiddens'],
            CONFIG['num_heads'],
            CONFIG['num_blks'],
            max_len=CONFIG['num_steps'],
            rngs=nnx.Rngs(0),
        )
        optimizer = nnx.Optimizer(
            model, optax.adamw(CONFIG['lr'], weight_decay=0.0), wrt=nnx.Param
        )
        return model, optimizer

    lib_model, lib_opt = fresh()
    hand_model, hand_opt = fresh()

    def library(steps, micro_batches=1):
        return d2l.train_lm(lib_model, data, lib_opt, steps, micro_batches=micro_batches)

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
        losses = []
        while len(losses) < steps:
            for X, Y in data.train_dataloader():
                losses.append(float(train_step(hand_model, hand_opt, X, Y)))
                if len(losses) == steps:
                    break
        return losses

    num_params = sum(p.size for p in jax.tree.leaves(nnx.state(lib_model, nnx.Param)))
    return num_params, library, by_hand


def dense_layouts(framework, rounds, calls=10):
    """Time of the weight gradient of one dense layer (d -> round(8d/3), the
    SwiGLU width) applied to a (B, T, d) array, over the time for the same
    numbers as a (B * T, d) matrix. In JAX the ratio is why the JAX
    ``train_lm`` has every dense layer multiply the positions as one matrix;
    PyTorch, whose ratio stays near 1, needs no such step."""
    B, T, d = CONFIG['batch_size'], CONFIG['num_steps'], CONFIG['num_hiddens']
    width = round(8 * d / 3)
    rng = np.random.default_rng(0)
    X, W, G = (
        rng.standard_normal(shape, dtype=np.float32)
        for shape in ((B, T, d), (d, width), (B, T, width))
    )
    weight_grad = torch_weight_grad if framework == 'pytorch' else jax_weight_grad

    def probe(X, G):
        run = weight_grad(X, W, G)
        run()

        def timed():
            start = time.perf_counter()
            for _ in range(calls):
                run()
            return time.perf_counter() - start

        return timed

    times = in_turns(
        {'3d': probe(X, G), '2d': probe(X.reshape(-1, d), G.reshape(-1, width))}, rounds
    )
    return times['3d'] / times['2d']


def torch_weight_grad(X, W, G):
    """A function that computes the gradient of <X @ W, G> for W."""
    import torch

    X, W, G = (torch.from_numpy(a) for a in (X, W, G))
    W.requires_grad_(True)

    def run():
        (grad,) = torch.autograd.grad(X @ W, W, G)
        return grad

    return run


def jax_weight_grad(X, W, G):
    """A function that computes the gradient of <X @ W, G> for W, compiled."""
    import jax

    X, W, G = (jax.numpy.asarray(a) for a in (X, W, G))
    grad = jax.jit(lambda X, W, G: jax.vjp(lambda W: X @ W, W)[1](G)[0])
    return lambda: grad(X, W, G).block_until_ready()


# ---------------------------------------------------------------- report


def measure(framework, steps, rounds):
    extra = {}
    if framework == 'pytorch':
        import torch

        matmul = torch_matmul()
        threads = torch.get_num_threads()
        peak_name = f'torch matmul, {threads} thread{"s" * (threads > 1)}'
        if threads > 1:
            extra['peak, 1 thread'] = torch_matmul(1)
        num_params, library, by_hand = torch_loops()
    else:
        matmul = jax_matmul()
        peak_name = 'XLA matmul'
        num_params, library, by_hand = jax_loops()
    sliced = functools.partial(library, micro_batches=SLICES)
    start = time.perf_counter()
    library(2)  # warm up (and compile, in JAX)
    by_hand(2)
    warmup = time.perf_counter() - start
    sliced(2)
    flops = step_flops(num_params)

    def timed(loop):
        def probe():
            start = time.perf_counter()
            loop(steps)
            return flops * steps / (time.perf_counter() - start)

        return probe

    rates = in_turns(
        {
            'peak': matmul,
            **extra,
            'train_lm': timed(library),
            'hand loop': timed(by_hand),
            'sliced': timed(sliced),
        },
        rounds,
    )
    tokens = CONFIG['batch_size'] * CONFIG['num_steps']
    return dict(
        framework=framework,
        params=num_params,
        flops=flops,
        warmup=warmup,
        peak_name=peak_name,
        peak=rates['peak'],
        peak_1=rates.get('peak, 1 thread'),
        train_lm=rates['train_lm'],
        hand=rates['hand loop'],
        sliced=rates['sliced'],
        tokens_per_s=tokens * rates['train_lm'] / flops,
        hand_tokens_per_s=tokens * rates['hand loop'] / flops,
        seconds_600=BOOK_STEPS
        * flops
        / rates['sliced' if BOOK_MICRO_BATCHES[framework] > 1 else 'train_lm'],
    )


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python -m benchmarks', description=__doc__.split('\n')[0]
    )
    parser.add_argument(
        '--steps', type=int, default=5, help='training steps per timed run (default 5)'
    )
    parser.add_argument(
        '--rounds',
        type=int,
        default=3,
        help='rounds of peak, train_lm and hand loop, taken in turns (default 3)',
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
    if 'pytorch' in frameworks:
        # as in the notebooks: d2l_mini.torch is imported before torch
        import d2l_mini.torch  # noqa: F401

    print(
        f'CharLM: width {CONFIG["num_hiddens"]}, {CONFIG["num_heads"]} '
        f'heads, {CONFIG["num_blks"]} blocks, batch '
        f'{CONFIG["batch_size"]} x {CONFIG["num_steps"]} characters, '
        f'AdamW {CONFIG["lr"]:g}; {os.cpu_count()} CPUs, load average '
        f'{os.getloadavg()[0]:.1f}; medians of {args.rounds} rounds of '
        f'{args.steps} steps'
    )
    rows = []
    for framework in frameworks:
        row = measure(framework, args.steps, args.rounds)
        rows.append(row)
        print(
            f'{framework}: {row["params"]} parameters, '
            f'{row["flops"] / 1e9:.1f} GFLOP per step, warm-up '
            f'{row["warmup"]:.0f} s; peak ({row["peak_name"]}, 1024^3) '
            f'{row["peak"] / 1e9:.1f} GFLOP/s'
            + (f' (1 thread: {row["peak_1"] / 1e9:.1f})' if row['peak_1'] else '')
        )
        for name, key, tokens in (
            ('train_lm', 'train_lm', 'tokens_per_s'),
            ('hand loop', 'hand', 'hand_tokens_per_s'),
        ):
            print(
                f'  {name:<9} {row[tokens]:7.0f} tokens/s '
                f'{row[key] / 1e9:6.1f} GFLOP/s '
                f'{100 * row[key] / row["peak"]:5.1f}% of peak'
            )
        print(f'  train_lm takes {row["hand"] / row["train_lm"]:.2f} x the time of the hand loop')
        print(
            f'  a step over {SLICES} micro-batches takes '
            f'{row["train_lm"] / row["sliced"]:.2f} x the time of a step '
            f'over the whole batch; {BOOK_STEPS} steps as in the book '
            f'(micro_batches={BOOK_MICRO_BATCHES[framework]}): '
            f'{row["seconds_600"]:.0f} s'
        )
        print(
            f"  a dense layer's weight gradient on (B, T, d) takes "
            f'{dense_layouts(framework, args.rounds):.2f} x the time on '
            f'(B * T, d)'
        )
        sys.stdout.flush()
    best = max(max(r['peak'], r['peak_1'] or 0) for r in rows)
    print(f'summary (fractions of the highest matmul rate seen, {best / 1e9:.1f} GFLOP/s):')
    for row in rows:
        print(
            f'  {row["framework"]:<7} train_lm {row["tokens_per_s"]:7.0f} '
            f'tokens/s, {100 * row["train_lm"] / best:5.1f}% of peak, '
            f"{row['hand'] / row['train_lm']:.2f} x the hand loop's time, "
            f'{row["seconds_600"]:.0f} s per {BOOK_STEPS} book steps'
        )
    return rows


if __name__ == '__main__':
    main()
