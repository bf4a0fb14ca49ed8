"""How the execute step runs the notebooks: the ``book_execute`` block of ``_config.yml``.

    book_execute:
      jobs: auto       # kernels at once; auto: one per core
      timeout: 3600    # seconds each notebook may run
      kernel_env:      # set in every kernel, over the environment of the build
        TQDM_DISABLE: '1'

The environment variables ``BOOK_JOBS`` and ``BOOK_TIMEOUT`` override ``jobs`` and
``timeout`` for one run; they are read here and nowhere else.  The values are checked
when the execute step starts: a bad one is a UsageError that names it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from tools.paths import Layout, read_config
from tools.steps import UsageError

BLOCK = 'book_execute'
OVERRIDES = {'jobs': 'BOOK_JOBS', 'timeout': 'BOOK_TIMEOUT'}
# What the timeout error tells a reader to change.
TIMEOUT_SETTING = f'{BLOCK}.timeout in _config.yml, or BOOK_TIMEOUT,'


@dataclasses.dataclass(frozen=True)
class ExecuteSettings:
    jobs: int  # kernels at once
    timeout: float  # seconds each notebook may run
    kernel_env: dict[str, str]  # set in every kernel


def cpu_cores() -> int:
    if hasattr(os, 'sched_getaffinity'):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def auto_jobs() -> int:
    """One kernel per core, each on one thread. On two cores, two one-thread matrix
    products side by side did 1.25 to 1.35 times the work of one product on two
    threads (PyTorch, 1024 x 1024, float32, measured in turns), and a kernel's
    single-threaded stretches (compiling, plotting, loading data) leave the other
    core to the other kernel. The longest notebook takes longer; all of them together
    should take less."""
    return max(1, cpu_cores())


def _positive(name: str, value: object, kind: type, accepted: str) -> int | float:
    number = None
    if not isinstance(value, bool):
        try:
            number = kind(value)
        except (TypeError, ValueError):
            pass
    if number is None or number <= 0 or (kind is int and number != float(value)):
        raise UsageError(f'{name} must be {accepted}, got {value!r}')
    return number


def _kernel_env(block: Mapping, where: str) -> dict[str, str]:
    env = block.get('kernel_env') or {}
    if not isinstance(env, Mapping):
        raise UsageError(f'{where}.kernel_env must map variable names to values, got {env!r}')
    for name, value in env.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise UsageError(
                f'{where}.kernel_env.{name} must be a string or a number, got {value!r}'
            )
    return {str(name): str(value) for name, value in env.items()}


def kernel_env(layout: Layout) -> dict[str, str]:
    """The kernels' environment of the layout's _config.yml ({} where it sets none)."""
    block = read_config(layout).get(BLOCK)
    return _kernel_env(block, BLOCK) if isinstance(block, Mapping) else {}


def read_settings(
    layout: Layout, jobs: int | str | None = None, timeout: float | str | None = None
) -> ExecuteSettings:
    """The execution settings: the arguments, else BOOK_JOBS / BOOK_TIMEOUT, else the
    ``book_execute`` block of the layout's _config.yml."""
    block = read_config(layout).get(BLOCK)
    where = f'{BLOCK} in {layout.config}'
    if not isinstance(block, Mapping):
        raise UsageError(
            f'{where} is missing: it says how notebooks are executed '
            '(jobs, timeout, kernel_env); see the repository _config.yml'
        )
    chosen = {}
    for key, argument in (('jobs', jobs), ('timeout', timeout)):
        variable = OVERRIDES[key]
        if argument is not None:
            chosen[key] = (argument, key)
        elif os.environ.get(variable):
            chosen[key] = (os.environ[variable], variable)
        elif key in block:
            chosen[key] = (block[key], f'{BLOCK}.{key}')
        else:
            raise UsageError(f'{where} has no {key}')
    jobs_value, jobs_name = chosen['jobs']
    timeout_value, timeout_name = chosen['timeout']
    return ExecuteSettings(
        jobs=auto_jobs()
        if jobs_value == 'auto'
        else _positive(jobs_name, jobs_value, int, 'a positive whole number or auto'),
        timeout=_positive(timeout_name, timeout_value, float, 'a positive number of seconds'),
        kernel_env=_kernel_env(block, BLOCK),
    )
