"""Training speed of the chapter's CharLM through ``d2l.train_lm``.

``python -m benchmarks`` (``make bench``) prints, for each framework,
training tokens per second, the achieved FLOP rate as a fraction of the
matrix-multiply peak measured in the same run, and ``train_lm`` against the
plainest training loop one would write by hand. Timings on a shared machine
are noisy; the two loops are therefore measured alternately, several times,
and compared by their medians.

FLOPs per step: 6 x parameters x tokens (forward and backward of every
weight) plus the attention products, 12 x layers x T x d per token (QK^T and
AV, forward and backward, over the full T x T score matrix).
"""
import argparse
import os
import statistics
import sys
import time

CONFIG = dict(batch_size=64, num_steps=128, num_hiddens=128, num_heads=4,
              num_blks=2, lr=1e-3, num_train=100000, num_val=3000)
BOOK_STEPS = 600


def step_flops(num_params, cfg=CONFIG):
    tokens = cfg['batch_size'] * cfg['num_steps']
    attention = 12 * cfg['num_blks'] * cfg['num_steps'] * cfg['num_hiddens']
    return tokens * (6 * num_params + attention)


def best_rate(run, flops, repeats):
    """Highest FLOP rate of ``run`` over ``repeats`` timed calls."""
    best = float('inf')
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return flops / best


def alternate(loops, steps, repeats):
    """Median seconds per step of each loop, measured in turns."""
    times = {name: [] for name in loops}
    for _ in range(repeats):
        for name, loop in loops.items():
            start = time.perf_counter()
            loop(steps)
            times[name].append((time.perf_counter() - start) / steps)
    return {name: statistics.median(t) for name, t in times.items()}


# ---------------------------------------------------------------- PyTorch

def torch_peak(threads, n=1024, repeats=5):
    import torch
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    rate = best_rate(lambda: a @ b, 2 * n ** 3, repeats)
    torch.set_num_threads(previous)
    return rate


def torch_loops():
    import torch
    from torch.nn import functional as F
    from d2l_mini import torch as d2l
    from benchmarks.charlm import torch_charlm

    data = d2l.TimeMachine(CONFIG['batch_size'], CONFIG['num_steps'],
                           num_train=CONFIG['num_train'],
                           num_val=CONFIG['num_val'])

    def fresh():
        torch.manual_seed(0)
        model = torch_charlm(d2l, len(data.vocab), CONFIG['num_hiddens'],
                             CONFIG['num_heads'], CONFIG['num_blks'],
                             CONFIG['num_steps'])
        optimizer = torch.optim.AdamW(model.parameters(), lr=CONFIG['lr'],
                                      weight_decay=0.0)
        return model, optimizer

    lib_model, lib_opt = fresh()
    hand_model, hand_opt = fresh()

    def library(steps):
        return d2l.train_lm(lib_model, data, lib_opt, steps)

    def by_hand(steps):
        hand_model.train()
        losses = []
        while len(losses) < steps:
            for X, Y in data.train_dataloader():
                logits = hand_model(X)
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                       Y.reshape(-1))
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

def jax_peak(n=1024, repeats=5):
    import jax
    from jax import numpy as jnp
    a = jax.random.normal(jax.random.key(0), (n, n))
    b = jax.random.normal(jax.random.key(1), (n, n))
    matmul = jax.jit(jnp.matmul)
    matmul(a, b).block_until_ready()
    return best_rate(lambda: matmul(a, b).block_until_ready(), 2 * n ** 3,
                     repeats)


def jax_loops():
    import jax
    import optax
    from flax import nnx
    from d2l_mini import jax as d2l
    from benchmarks.charlm import jax_charlm

    data = d2l.TimeMachine(CONFIG['batch_size'], CONFIG['num_steps'],
                           num_train=CONFIG['num_train'],
                           num_val=CONFIG['num_val'])

    def fresh():
        model = jax_charlm(d2l, len(data.vocab), CONFIG['num_hiddens'],
                           CONFIG['num_heads'], CONFIG['num_blks'],
                           CONFIG['num_steps'])
        optimizer = nnx.Optimizer(
            model, optax.adamw(CONFIG['lr'], weight_decay=0.0),
            wrt=nnx.Param)
        return model, optimizer

    lib_model, lib_opt = fresh()
    hand_model, hand_opt = fresh()

    def library(steps):
        return d2l.train_lm(lib_model, data, lib_opt, steps)

    @nnx.jit
    def train_step(model, optimizer, X, Y):
        def loss_fn(model):
            logits = model(X)
            return optax.softmax_cross_entropy_with_integer_labels(
                logits, Y).mean()
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

    num_params = sum(p.size for p in jax.tree.leaves(
        nnx.state(lib_model, nnx.Param)))
    return num_params, library, by_hand


# ---------------------------------------------------------------- report

def measure(framework, peak, steps, repeats):
    make = torch_loops if framework == 'torch' else jax_loops
    num_params, library, by_hand = make()
    start = time.perf_counter()
    library(2)          # warm up (and compile, in JAX)
    by_hand(2)
    warmup = time.perf_counter() - start
    seconds = alternate({'train_lm': library, 'hand loop': by_hand}, steps,
                        repeats)
    flops = step_flops(num_params)
    tokens = CONFIG['batch_size'] * CONFIG['num_steps']
    step = seconds['train_lm']
    return dict(framework=framework, params=num_params,
                tokens_per_s=tokens / step, gflops=flops / step / 1e9,
                peak=peak, fraction=flops / step / peak,
                ratio=step / seconds['hand loop'],
                hand_tokens_per_s=tokens / seconds['hand loop'],
                seconds_600=BOOK_STEPS * step, warmup=warmup)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks',
                                     description=__doc__.split('\n')[0])
    parser.add_argument('--steps', type=int, default=10,
                        help='timed steps per measurement (default 10)')
    parser.add_argument('--repeats', type=int, default=3,
                        help='alternating measurements per loop (default 3)')
    parser.add_argument('--frameworks', default='torch,jax',
                        help='comma-separated subset of torch,jax')
    args = parser.parse_args(argv)
    frameworks = [f for f in args.frameworks.split(',') if f]
    unknown = set(frameworks) - {'torch', 'jax'}
    if unknown:
        parser.error(f'--frameworks accepts torch and jax, got {unknown}')
    os.environ.setdefault('D2L_MINI_DATA', os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'data'))

    print(f'CharLM: width {CONFIG["num_hiddens"]}, {CONFIG["num_heads"]} '
          f'heads, {CONFIG["num_blks"]} blocks, batch '
          f'{CONFIG["batch_size"]} x {CONFIG["num_steps"]} characters, '
          f'AdamW {CONFIG["lr"]:g}; {os.cpu_count()} CPUs; load average '
          f'{os.getloadavg()[0]:.1f}')
    peaks = {}
    if 'torch' in frameworks:
        import torch
        threads = torch.get_num_threads()
        for n in sorted({1, threads}):
            peaks[f'torch, {n} thread{"s" if n > 1 else ""}'] = \
                torch_peak(n)
    if 'jax' in frameworks:
        peaks['jax (XLA, all threads)'] = jax_peak()
    print('matrix-multiply peak (1024 x 1024 float32, best of 5):')
    for name, rate in peaks.items():
        print(f'  {name:<24} {rate / 1e9:7.1f} GFLOP/s')
    peak = max(peaks.values())
    print(f'  the fractions below use the highest: {peak / 1e9:.1f} GFLOP/s')

    rows = []
    for framework in frameworks:
        row = measure(framework, peak, args.steps, args.repeats)
        rows.append(row)
        print(f'{framework}: {row["params"]} parameters, '
              f'{step_flops(row["params"]) / 1e9:.1f} GFLOP per step, '
              f'warm-up {row["warmup"]:.1f} s')
        print(f'  train_lm   {row["tokens_per_s"]:9.0f} tokens/s  '
              f'{row["gflops"]:6.1f} GFLOP/s  {100 * row["fraction"]:5.1f}% '
              f'of peak  {row["seconds_600"]:6.0f} s per {BOOK_STEPS} steps')
        print(f'  hand loop  {row["hand_tokens_per_s"]:9.0f} tokens/s  '
              f'train_lm / hand loop time ratio {row["ratio"]:.2f}')
        sys.stdout.flush()
    return rows


if __name__ == '__main__':
    main()
