"""The numerics that stand for other machines, and the probe that checks each one took.

Each environment sets variables that the frameworks read when they start. A variable a
framework does not know, or one that a library ignores on this CPU, would leave the
numbers as they were and the run would prove nothing. So ``probe`` starts each
environment once, with the threads its kernels get, and fails, naming the variable,
where ATen reports another capability than the one asked for or XLA warns of an unknown
flag or instruction set; and it computes the bits of a matrix product and of a long sum
in each framework, which ``check_moves`` compares with the build's: an environment that
changes neither framework's bits stands for nothing on this CPU, and one environment at
least must change PyTorch's products (MKL ignores ``MKL_ENABLE_INSTRUCTIONS`` on AMD
CPUs; ``MKL_CBWR=COMPATIBLE``, MKL's conservative path, changes them on any CPU, as
another CPU's choice of MKL kernels would).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Mapping

from tools.frameworks import FRAMEWORKS
from tools.run.kernel import kernel_environment
from tools.steps import StepFailed, UsageError


@dataclasses.dataclass(frozen=True)
class Environment:
    name: str
    about: str
    threads: int | None  # compute threads per kernel; None: as many as the build gives one
    variables: Mapping[str, str]


def _isa(aten: str, mkl: str, onednn: str, xla: str) -> dict[str, str]:
    """Each library's kernels capped at an instruction set, MKL on its conservative path
    (``MKL_CBWR``: the caps alone leave its products as they were on AMD CPUs), and XLA
    with its own kernels in place of YNNPACK's (with YNNPACK it computes the same bits
    under any cap), as another CPU or another XLA version would."""
    return {
        'ATEN_CPU_CAPABILITY': aten,
        'MKL_ENABLE_INSTRUCTIONS': mkl,
        'MKL_CBWR': 'COMPATIBLE',
        'ONEDNN_MAX_CPU_ISA': onednn,
        'XLA_FLAGS': f'--xla_cpu_max_isa={xla} --xla_cpu_experimental_ynn_fusion_type=',
    }


ENVIRONMENTS = {
    env.name: env
    for env in (
        Environment(
            'build', "the build's own numerics: the column the others are read against", None, {}
        ),
        Environment(
            'avx2',
            'every CPU kernel capped at AVX2 (a CPU without AVX-512), other MKL and XLA '
            'kernels, threads as in the build',
            None,
            _isa('avx2', 'AVX2', 'AVX2', 'AVX2'),
        ),
        Environment(
            'one-thread',
            'one compute thread per kernel: other splits of every reduction',
            1,
            {},
        ),
        Environment(
            'no-fma',
            'kernels without fused multiply-add (AVX, ATen without vector kernels), one thread',
            1,
            _isa('default', 'AVX', 'AVX', 'AVX'),
        ),
    )
}

UNCHECKED = ('MKL_ENABLE_INSTRUCTIONS', 'MKL_CBWR', 'ONEDNN_MAX_CPU_ISA')

# The capability ATen took, and the bits of a 256x1024 by 1024x256 product and of a sum of
# a million numbers in each framework (float32, from one seed), as SHA-1 digests.
PROBE = """
import hashlib
import numpy as np
rng = np.random.default_rng(0)
A, B = (rng.standard_normal(shape, dtype=np.float32) for shape in ((256, 1024), (1024, 256)))
v = rng.standard_normal(1_000_000, dtype=np.float32)
bits = lambda x: hashlib.sha1(np.asarray(x).tobytes()).hexdigest()
import torch
print('aten', torch.backends.cpu.get_cpu_capability())
a, b, w = map(torch.from_numpy, (A, B, v))
print('pytorch', bits(a @ b), bits(w.sum()))
import jax.numpy as jnp
print('jax', bits(jnp.asarray(A) @ jnp.asarray(B)), bits(jnp.asarray(v).sum()))
"""


@dataclasses.dataclass(frozen=True)
class Probed:
    name: str
    report: str  # the line the run prints
    bits: dict[str, str]  # per framework, the digests of its product and its sum


def chosen(names: list[str] | None) -> list[Environment]:
    """The environments called ``names`` (default: all of them), in the order given."""
    if not names:
        return list(ENVIRONMENTS.values())
    unknown = [name for name in names if name not in ENVIRONMENTS]
    if unknown:
        raise UsageError(
            f'unknown environment(s) {", ".join(unknown)}: choose from {", ".join(ENVIRONMENTS)}'
        )
    return [ENVIRONMENTS[name] for name in names]


def merged_env(base: Mapping[str, str], variables: Mapping[str, str]) -> dict[str, str]:
    """``base`` with ``variables`` over it; XLA_FLAGS of both are kept, one after the other."""
    env = dict(base)
    for name, value in variables.items():
        if name == 'XLA_FLAGS' and env.get(name):
            value = f'{env[name]} {value}'
        env[name] = value
    return env


def probe(environment: Environment, threads: int, python: str = sys.executable) -> Probed:
    """Start ``environment`` once with ``threads`` compute threads; what it reported, or
    StepFailed naming what did not take."""
    env = merged_env(kernel_environment(threads, {}), environment.variables)
    done = subprocess.run(
        [python, '-c', PROBE], env=env, capture_output=True, text=True, timeout=300
    )
    where = f'environment {environment.name}'
    for line in done.stderr.splitlines():
        if 'Unknown flag' in line or 'Unknown CPU ISA' in line:
            raise StepFailed(
                f'{where}: XLA does not know a setting of XLA_FLAGS '
                f'({environment.variables.get("XLA_FLAGS")}): {line.strip()}'
            )
    if done.returncode != 0:
        raise StepFailed(f'{where}: the probe failed:\n{done.stderr.strip()}')
    facts = dict(line.split(' ', 1) for line in done.stdout.splitlines() if ' ' in line)
    asked = environment.variables.get('ATEN_CPU_CAPABILITY')
    if asked and facts.get('aten', '').lower() != asked.lower():
        raise StepFailed(
            f'{where}: ATEN_CPU_CAPABILITY={asked} did not take: PyTorch reports '
            f'{facts.get("aten")}'
        )
    unchecked = [name for name in UNCHECKED if name in environment.variables]
    note = f'; {", ".join(unchecked)} set, not checkable' if unchecked else ''
    return Probed(
        environment.name,
        f'{environment.name}: ATen {facts.get("aten")}, {threads} thread(s){note}',
        {framework: facts.get(framework, '') for framework in FRAMEWORKS},
    )


def check_moves(build: Probed, others: list[Probed]) -> list[str]:
    """Which frameworks' bits each environment changes against the build's, as lines;
    StepFailed where an environment changes none, or none changes PyTorch's."""
    lines, moved_pytorch = [], False
    for probed in others:
        moved = [fw for fw in FRAMEWORKS if probed.bits[fw] != build.bits[fw]]
        if not moved:
            raise StepFailed(
                f'environment {probed.name} computes the same bits as the build in every '
                'framework (a matrix product and a long sum): on this CPU it stands for '
                'no other machine; give it a setting that changes them'
            )
        moved_pytorch |= 'pytorch' in moved
        lines.append(f'{probed.name}: changes the bits of {", ".join(moved)}')
    if others and not moved_pytorch:
        raise StepFailed(
            "no environment changes PyTorch's bits on this CPU: the run would not show how "
            "PyTorch's results move on another machine"
        )
    return lines
