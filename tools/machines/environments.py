"""The numerics that stand for other machines, and the probe that checks each one took.

Each environment sets variables that the frameworks read when they start. A variable a
framework does not know would leave the numbers as they were and the run would prove
nothing, so ``probe`` starts each environment once and fails, naming the variable,
where ATen reports another capability than the one asked for or XLA warns of an unknown
flag or instruction set. MKL and oneDNN report nothing to check: the probe says so.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Mapping

from tools.steps import StepFailed, UsageError


@dataclasses.dataclass(frozen=True)
class Environment:
    name: str
    about: str
    threads: int | None  # compute threads per kernel; None: as many as the build gives one
    variables: Mapping[str, str]


def _isa(aten: str, mkl: str, onednn: str, xla: str) -> dict[str, str]:
    return {
        'ATEN_CPU_CAPABILITY': aten,
        'MKL_ENABLE_INSTRUCTIONS': mkl,
        'ONEDNN_MAX_CPU_ISA': onednn,
        'XLA_FLAGS': f'--xla_cpu_max_isa={xla}',
    }


ENVIRONMENTS = {
    env.name: env
    for env in (
        Environment(
            'build', "the build's own numerics: the column the others are read against", None, {}
        ),
        Environment(
            'avx2',
            'every CPU kernel capped at AVX2 (a CPU without AVX-512), threads as in the build',
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

UNCHECKED = ('MKL_ENABLE_INSTRUCTIONS', 'ONEDNN_MAX_CPU_ISA')

PROBE = """
import torch
print('aten', torch.backends.cpu.get_cpu_capability())
import jax.numpy as jnp
print('xla', float(jnp.ones(3).sum()))
"""


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


def probe(environment: Environment, python: str = sys.executable) -> str:
    """Start ``environment`` once; its report line, or StepFailed naming what did not take."""
    env = merged_env(os.environ, environment.variables)
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
    return f'{environment.name}: ATen {facts.get("aten")}, XLA started{note}'
