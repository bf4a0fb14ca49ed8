"""Run one notebook in a fresh python3 kernel (nbclient), cell by cell.

A failing cell (one not tagged ``raises-exception``) raises :class:`NotebookFailed`,
which names the cell and carries its traceback without ANSI colour; so does a cell whose
output holds a warning (a DeprecationWarning today is an error in a later release, and
readers would see it in the published notebook).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import nbformat
from jupyter_core.utils import ensure_async
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from tools.run.outputs import clean_text, warnings_in


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


def kernel_environment(threads: int) -> dict[str, str]:
    """The environment of one kernel: ``threads`` compute threads, quiet, plain output."""
    if threads < 1:
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
    env.update(
        {
            # Idle OpenMP threads sleep instead of spinning, so kernels side by side do
            # not steal each other's cores.
            'OMP_WAIT_POLICY': 'PASSIVE',
            'NO_COLOR': '1',
            'TQDM_DISABLE': '1',
            'MPLBACKEND': 'module://matplotlib_inline.backend_inline',
            'PYTHONHASHSEED': '0',
            'PYDEVD_DISABLE_FILE_VALIDATION': '1',
        }
    )
    return env


def _first_line(cell: nbformat.NotebookNode) -> str:
    return next((line for line in cell.source.split('\n') if line.strip()), '').strip()


async def run_notebook(
    notebook: nbformat.NotebookNode,
    *,
    framework: str,
    name: str,
    cwd: Path,
    threads: int,
    timeout: float,
    current: list | None = None,
) -> nbformat.NotebookNode:
    """Execute ``notebook`` in place; raise NotebookFailed on an error or a timeout.

    ``current[0]`` follows the index of the cell being executed (for progress reports).
    """
    started = time.monotonic()
    deadline = started + timeout
    client = NotebookClient(
        notebook,
        kernel_name='python3',
        record_timing=False,
        allow_errors=False,
        timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
        extra_arguments=['--IPKernelApp.log_level=ERROR'],
        resources={'metadata': {'path': str(cwd)}},
    )
    current = current if current is not None else [None]

    async def cells() -> None:
        client.reset_execution_trackers()
        async with client.async_setup_kernel(env=kernel_environment(threads)):
            reply = await client.async_wait_for_reply(await ensure_async(client.kc.kernel_info()))
            if reply is not None and 'language_info' in reply['content']:
                notebook.metadata['language_info'] = reply['content']['language_info']
            for index, cell in enumerate(notebook.cells):
                current[0] = index
                await client.async_execute_cell(
                    cell, index, execution_count=client.code_cells_executed + 1
                )

    def failed(traceback: str) -> NotebookFailed:
        index = current[0]
        cell = notebook.cells[index] if index is not None else None
        return NotebookFailed(
            framework,
            name,
            index,
            cell.get('id') if cell else None,
            _first_line(cell) if cell else '',
            clean_text(traceback),
        )

    try:
        # The cells share the notebook's time; the margin lets a cell's own timeout,
        # which names the cell, come first.
        await asyncio.wait_for(cells(), timeout + 30)
    except CellExecutionError as error:
        raise failed(str(error)) from None
    except (asyncio.TimeoutError, CellTimeoutError, DeadKernelError) as error:
        elapsed = time.monotonic() - started
        if elapsed < timeout and isinstance(error, DeadKernelError):
            raise failed(f'the kernel died: {error}') from None
        raise failed(
            f'timed out: the notebook ran past its limit of {timeout:g} s '
            f'(after {elapsed:.0f} s; BOOK_TIMEOUT sets the limit)'
        ) from None
    for index, cell in enumerate(notebook.cells):
        warned = warnings_in(cell) if cell.cell_type == 'code' else []
        if warned:
            current[0] = index
            raise failed(
                'its output holds a warning:\n'
                + '\n'.join(warned)
                + '\nChange the code that causes it (a framework warning at import time that '
                'the book cannot avoid: allow it in tools/run/outputs.py, ALLOWED_WARNINGS, '
                'with the reason)'
            )
    return notebook
