"""Fixtures of the pipeline's tests: the repository's book, executed; a stand-in kernel."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from tests.project import one_build_at_a_time
from tools.paths import Layout
from tools.run import execute
from tools.run.kernel import NotebookFailed, first_line


@pytest.fixture(scope='session')
def executed_book(corpus) -> Layout:
    """The repository's book, split, executed and merged once per session.

    Under ``make test`` the book was just built, so this only confirms that nothing
    changed (every notebook cached).  A failing notebook fails every test that uses
    the fixture, with the framework, notebook, cell and traceback.
    """
    from tools.build import build
    from tools.steps import StepFailed, UsageError

    layout = Layout()
    try:
        with one_build_at_a_time(layout):
            build(layout, progress=lambda line: None, render_html=False)
    except (StepFailed, UsageError) as error:
        pytest.fail(f'building the book failed:\n{error}', pytrace=False)
    return layout


@dataclasses.dataclass
class Run:
    """What the execute step asked of one kernel."""

    framework: str
    name: str
    cwd: Path
    env: dict[str, str]
    timeout: float


class FakeKernel:
    """Stands in for tools.run.kernel.run_notebook, starting no kernel: runs each code cell
    of a notebook with exec in this process (one namespace per notebook, IPython's syntax
    turned into Python first), its printed text as the cell's output. A cell that raises
    fails the notebook as a kernel's would, unless it is tagged raises-exception.
    """

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self.transform = TransformerManager().transform_cell
        self.cell_seconds = 0.0  # how long each cell takes

    async def run_notebook(
        self,
        notebook: nbformat.NotebookNode,
        *,
        framework: str,
        name: str,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_cell: Callable[[int], None] | None = None,
    ) -> nbformat.NotebookNode:
        self.runs.append(Run(framework, name, cwd, dict(env), timeout))
        namespace: dict = {}
        count = 0
        for index, cell in enumerate(notebook.cells):
            if on_cell is not None:
                on_cell(index)
            if cell.cell_type != 'code':
                continue
            await asyncio.sleep(self.cell_seconds)
            count += 1
            cell.execution_count, cell.outputs = count, []
            printed = io.StringIO()
            try:
                with contextlib.redirect_stdout(printed):
                    exec(self.transform(cell.source), namespace)
            except Exception as error:
                if 'raises-exception' not in cell.metadata.get('tags', []):
                    raise NotebookFailed(
                        framework,
                        name,
                        index,
                        cell.get('id'),
                        first_line(cell),
                        ''.join(traceback.format_exception(error)),
                    ) from None
                cell.outputs.append(
                    nbformat.v4.new_output(
                        'error', ename=type(error).__name__, evalue=str(error), traceback=[]
                    )
                )
            if printed.getvalue():
                cell.outputs.insert(
                    0, nbformat.v4.new_output('stream', name='stdout', text=printed.getvalue())
                )
        return notebook

    def started(self) -> list[tuple[str, str]]:
        """(section, framework) of every notebook run so far."""
        return [(run.name, run.framework) for run in self.runs]


@pytest.fixture
def fake_kernel(monkeypatch) -> FakeKernel:
    """The execute step with FakeKernel in place of a kernel."""
    fake = FakeKernel()
    monkeypatch.setattr(execute, 'run_notebook', fake.run_notebook)
    return fake
