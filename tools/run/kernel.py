"""Run one notebook in a fresh python3 kernel with nbclient.

nbclient executes the cells (``NotebookClient.async_execute``); its ``on_cell_start``
hook says which cell runs, for the progress lines and for naming the cell that failed.
A failing cell (one not tagged ``raises-exception``), a timeout or a dead kernel raises
:class:`NotebookFailed`, which names the cell and carries the traceback without ANSI
colour; so does a cell whose output holds a warning (a DeprecationWarning today is
an error in a later release, and readers would see it in the published notebook).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from tools.run.outputs import clean_text, warnings_in
from tools.run.settings import TIMEOUT_SETTING


class NotebookFailed(Exception):
    def __init__(
        self,
        framework: str,
        notebook: str,
        cell_index: int | None,
        cell_id: str | None,
        first_line: str,
        traceback: str,
    ) -> None:
        self.framework, self.notebook = framework, notebook
        self.cell_index, self.cell_id, self.first_line = cell_index, cell_id, first_line
        self.traceback = traceback
        super().__init__(self.message())

    def message(self) -> str:
        where = (
            f'notebook cell {self.cell_index} (id {self.cell_id}): {self.first_line}'
            if self.cell_index is not None
            else 'before its first cell'
        )
        body = '\n'.join('    ' + line for line in self.traceback.rstrip().split('\n'))
        return f'[{self.framework}] {self.notebook} failed in {where}\n{body}'


# The build's matplotlib settings, over matplotlib's defaults.
MATPLOTLIBRC = Path(__file__).with_name('matplotlibrc')
# Run in every kernel before its first cell, in a namespace of its own: the figure formats
# and alt text of the build.
STARTUP = Path(__file__).with_name('startup.py')
STARTUP_LINE = f"exec(open({str(STARTUP)!r}).read(), {{'__name__': '__main__'}})"


def kernel_environment(threads: int, settings_env: Mapping[str, str]) -> dict[str, str]:
    """The environment of one kernel: this process's, ``threads`` compute threads,
    matplotlib's settings for the build (``MATPLOTLIBRC``), and the kernel environment
    of the execution settings over all of them."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f'threads must be a positive integer, got {threads!r}')
    env = dict(os.environ)
    for name in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
        env[name] = str(threads)
    if threads == 1:
        # XLA's CPU backend accepts no thread count; this keeps its Eigen work on one
        # thread, the rest follows the cores the process may use.
        env['XLA_FLAGS'] = (
            env.get('XLA_FLAGS', '') + ' --xla_cpu_multi_thread_eigen=false'
        ).strip()
    env['MATPLOTLIBRC'] = str(MATPLOTLIBRC)
    env.update(settings_env)
    return env


def _interrupt() -> None:
    raise KeyboardInterrupt


def _quiet_dead_kernels(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    # nbclient ends a cancelled execution with "Kernel died", which asyncio would print
    # for every notebook that an interrupt stopped.
    if not isinstance(context.get('exception'), DeadKernelError):
        loop.default_exception_handler(context)


def stop_on_interrupt() -> None:
    """From here on, Ctrl-C (SIGINT) or SIGTERM stops the whole run with KeyboardInterrupt.

    nbclient's own handlers shut the kernel down and let the run go on with the next
    notebook, after a page of tracebacks. Called as each notebook starts (nbclient's
    ``on_notebook_start``, once the kernel is up), after nbclient has set them: the
    KeyboardInterrupt ends the event loop, whose remaining tasks are then cancelled, and
    nbclient shuts each kernel down on the way out. Only the main thread can handle
    signals; elsewhere this does nothing.
    """
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(RuntimeError, ValueError):
            loop.add_signal_handler(signum, _interrupt)
    loop.set_exception_handler(_quiet_dead_kernels)


def first_line(cell: nbformat.NotebookNode) -> str:
    return next((line for line in cell.source.split('\n') if line.strip()), '').strip()


async def run_notebook(
    notebook: nbformat.NotebookNode,
    *,
    framework: str,
    name: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    on_cell: Callable[[int], None] | None = None,
) -> nbformat.NotebookNode:
    """Execute ``notebook`` in place in a kernel with the environment ``env``, working in
    ``cwd``; raise NotebookFailed on an error, a dead kernel, or when its cells have run
    for ``timeout`` seconds (the kernel's start does not count: it takes longer on a
    loaded machine, and nbclient gives it ``startup_timeout`` of its own).

    ``on_cell(index)`` is called as each cell starts (for progress reports).
    """
    started = time.monotonic()  # set again once the kernel is up
    current: int | None = None

    def notebook_started(notebook: nbformat.NotebookNode) -> None:
        nonlocal started
        started = time.monotonic()
        stop_on_interrupt()

    def cell_started(cell: nbformat.NotebookNode, cell_index: int) -> None:
        nonlocal current
        current = cell_index
        if on_cell is not None:
            on_cell(cell_index)

    client = NotebookClient(
        notebook,
        kernel_name='python3',
        record_timing=False,
        allow_errors=False,
        # The cells share the notebook's time.
        timeout_func=lambda cell: max(1, int(started + timeout - time.monotonic())),
        extra_arguments=[
            '--IPKernelApp.log_level=ERROR',
            f'--IPKernelApp.exec_lines={STARTUP_LINE}',
        ],
        resources={'metadata': {'path': str(cwd)}},
        on_cell_start=cell_started,
        on_notebook_start=notebook_started,
    )

    def failed(traceback: str) -> NotebookFailed:
        cell = notebook.cells[current] if current is not None else None
        return NotebookFailed(
            framework,
            name,
            current,
            cell.get('id') if cell else None,
            first_line(cell) if cell else '',
            clean_text(traceback),
        )

    try:
        # The margin lets a cell's own timeout, which names the cell, come first.
        await asyncio.wait_for(
            client.async_execute(env=dict(env)), client.startup_timeout + timeout + 30
        )
    except CellExecutionError as error:
        raise failed(str(error)) from None
    except (TimeoutError, CellTimeoutError, DeadKernelError) as error:
        elapsed = time.monotonic() - started
        if elapsed < timeout and isinstance(error, DeadKernelError):
            raise failed(f'the kernel died: {error}') from None
        raise failed(
            f'timed out: the notebook ran past its limit of {timeout:g} s '
            f'(after {elapsed:.0f} s; {TIMEOUT_SETTING} sets the limit)'
        ) from None
    for index, cell in enumerate(notebook.cells):
        warned = warnings_in(cell) if cell.cell_type == 'code' else []
        if warned:
            current = index
            raise failed(
                'its output holds a warning:\n'
                + '\n'.join(warned)
                + '\nChange the code that causes it (a framework warning at import time that '
                'the book cannot avoid: allow it in tools/run/outputs.py, ALLOWED_WARNINGS, '
                'with the reason)'
            )
    return notebook
