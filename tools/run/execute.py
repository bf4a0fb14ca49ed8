"""Execute the split notebooks, each in its own python3 kernel, several at once.

Splits the sections, then runs every notebook whose content hash (tools.run.cache)
changed (all of them, even after one failed), longest first, as the execution settings
of tools.run.settings say: so many at a time, each kernel with ``cores // jobs``
threads and the settings' kernel environment, each notebook within its timeout.  An
executed notebook is written to ``_build/executed/<framework>/<rel>.ipynb`` only when
every cell succeeded; a failure removes the old copy, names the framework, notebook,
cell and traceback, and exits non-zero.  ``_build/exec/records.json`` lists every
notebook's wall time, status, versions and hardware; a run of one framework keeps the
other's records.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import datetime
import time
from collections.abc import Iterable
from pathlib import Path

import nbformat

from tools.frameworks import FRAMEWORKS, check_frameworks
from tools.paths import Layout, write_atomic
from tools.run import records
from tools.run.cache import METADATA_KEY, hashed_code_cells, notebook_hash, recorded
from tools.run.kernel import NotebookFailed, kernel_environment, run_notebook
from tools.run.outputs import clean_notebook
from tools.run.settings import ExecuteSettings, cpu_cores, read_settings
from tools.source.sections import find_sections
from tools.source.split import split_all
from tools.source.values import fill_notebook
from tools.steps import Progress, StepFailed

PROGRESS_EVERY = 60.0  # seconds between "still running" lines


class ExecutionFailed(StepFailed):
    """One or more notebooks failed; the message says which, where and why."""


class NotUpToDate(StepFailed):
    """Executed notebooks are missing or older than their sources (use_executed)."""


@dataclasses.dataclass
class Job:
    rel: str
    framework: str
    notebook: nbformat.NotebookNode
    hash: str
    output: Path

    @property
    def label(self) -> str:
        return f'[{self.framework}] {self.rel}'


def reuse_outputs(job: Job, executed: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
    """The fresh split notebook with the outputs of an up-to-date executed copy.

    Prose, cell ids and the install cell come from the current source (a prose edit
    may have moved ids), outputs from the earlier run.  None if the code cells do not
    line up.
    """
    fresh = copy.deepcopy(job.notebook)
    old_code, new_code = hashed_code_cells(executed), hashed_code_cells(fresh)
    if len(old_code) != len(new_code) or any(
        o.source != n.source for o, n in zip(old_code, new_code, strict=True)
    ):
        return None
    for old, new in zip(old_code, new_code, strict=True):
        new.outputs, new.execution_count = old.outputs, old.execution_count
    fresh.metadata['language_info'] = executed.metadata.get(
        'language_info', fresh.metadata.get('language_info')
    )
    fresh.metadata[METADATA_KEY] = recorded(executed)
    fill_notebook(fresh)
    return fresh


def _record(job: Job, status: str, facts: dict) -> dict:
    return {
        'section': job.rel,
        'framework': job.framework,
        'wall_s': round(facts['wall_s'], 2),
        'status': status,
        'executed_at': facts['executed_at'],
        'python': facts['python'],
        'versions': facts['versions'],
        'hardware': facts['hardware'],
    }


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')


def _write(path: Path, notebook: nbformat.NotebookNode) -> None:
    write_atomic(path, nbformat.writes(notebook) + '\n')


def read_executed(path: Path) -> nbformat.NotebookNode | None:
    """An earlier executed notebook, or None if there is none or it is unreadable."""
    try:
        return nbformat.read(path, as_version=4)
    except (OSError, ValueError, nbformat.ValidationError):
        return None


@dataclasses.dataclass
class Plan:
    """Which split notebooks can keep their earlier run and which must run."""

    cached: list[tuple[Job, nbformat.NotebookNode]]  # with the earlier run's outputs
    to_run: list[Job]


def plan(
    names: list[str], layout: Layout, force: bool = False, frameworks: Iterable[str] = FRAMEWORKS
) -> Plan:
    """Sort the split notebooks of ``names`` into cached and to-run ones; writes nothing."""
    frameworks = check_frameworks(frameworks)
    planned = Plan([], [])
    for rel in names:
        for framework in frameworks:
            notebook = nbformat.read(layout.notebook(framework, rel), as_version=4)
            job = Job(
                rel,
                framework,
                notebook,
                notebook_hash(notebook, framework, layout),
                layout.executed(framework, rel),
            )
            executed = None if force else read_executed(job.output)
            up_to_date = executed is not None and recorded(executed).get('hash') == job.hash
            reused = reuse_outputs(job, executed) if up_to_date else None
            if reused is None:
                planned.to_run.append(job)
            else:
                planned.cached.append((job, reused))
    return planned


def keep_cached(cached: list[tuple[Job, nbformat.NotebookNode]], progress: Progress) -> list[dict]:
    """Write the cached notebooks (earlier outputs on the current prose); their records."""
    kept = []
    for job, notebook in cached:
        _write(job.output, notebook)
        facts = recorded(notebook)
        kept.append(_record(job, 'cached', facts))
        progress(f'{job.label}: cached (ran in {facts["wall_s"]:.1f} s)')
    return kept


def longest_first(jobs: list[Job], layout: Layout) -> list[Job]:
    """Order jobs by their last recorded wall time, longest first, so that the kernels
    finish together; jobs never recorded (a fresh clone) go first, largest notebook
    first, since a section's length is the best guess at its run time before it has run."""
    known = {(r['section'], r['framework']): r.get('wall_s', 0.0) for r in records.load(layout)}
    for job in jobs:
        if (job.rel, job.framework) not in known and (executed := read_executed(job.output)):
            wall = recorded(executed).get('wall_s')
            if wall is not None:
                known[(job.rel, job.framework)] = wall

    def expected(job: Job) -> tuple[bool, float]:
        wall = known.get((job.rel, job.framework))
        if wall is None:
            return (False, -sum(len(cell.source) for cell in job.notebook.cells))
        return (True, -wall)

    return sorted(jobs, key=expected)


@dataclasses.dataclass
class Running:
    """A notebook in a kernel: when it started, the cell it is at, how many it has."""

    started: float
    cells: int
    cell: int = 0

    def at_cell(self, index: int) -> None:
        self.cell = min(index, self.cells)


async def _run_all(
    jobs: list[Job],
    parallel: int,
    env: dict[str, str],
    timeout: float,
    progress: Progress,
) -> tuple[list[dict], list[NotebookFailed]]:
    semaphore = asyncio.Semaphore(parallel)
    running: dict[str, Running] = {}
    done: list[dict] = []
    failures: list[NotebookFailed] = []

    async def run(number: int, job: Job) -> None:
        async with semaphore:
            progress(f'[{number}/{len(jobs)}] {job.label}: started')
            notebook = copy.deepcopy(job.notebook)
            probe = nbformat.v4.new_code_cell(records.probe_source(job.framework))
            probe.id = records.PROBE_ID
            notebook.cells.append(probe)
            executed_at = _now()
            # Each kernel works in its own folder below _build, never in the sources.
            workdir = job.output.parent
            workdir.mkdir(parents=True, exist_ok=True)
            state = running[job.label] = Running(time.monotonic(), len(notebook.cells) - 1)
            try:
                await run_notebook(
                    notebook,
                    framework=job.framework,
                    name=job.rel,
                    cwd=workdir,
                    env=env,
                    timeout=timeout,
                    on_cell=state.at_cell,
                )
            except NotebookFailed as failure:
                job.output.unlink(missing_ok=True)
                wall = time.monotonic() - state.started
                facts = dict(
                    records.local_environment(job.framework), wall_s=wall, executed_at=executed_at
                )
                done.append(_record(job, 'failed', facts))
                failures.append(failure)
                progress(
                    f'[{number}/{len(jobs)}] {job.label}: FAILED after {wall:.1f} s\n'
                    + failure.message()
                )
                return
            wall = time.monotonic() - state.started
            facts = records.read_probe(notebook.cells.pop())
            facts = dict(records.local_environment(job.framework), **facts)
            facts.update(wall_s=round(wall, 2), executed_at=executed_at, hash=job.hash)
            clean_notebook(notebook)
            fill_notebook(notebook)
            notebook.metadata[METADATA_KEY] = facts
            _write(job.output, notebook)
            done.append(_record(job, 'executed', facts))
            progress(f'[{number}/{len(jobs)}] {job.label}: done in {wall:.1f} s')

    async def report_progress() -> None:
        while True:
            await asyncio.sleep(PROGRESS_EVERY)
            now = time.monotonic()
            for label, state in list(running.items()):
                progress(
                    f'  ... {label}: {now - state.started:.0f} s, '
                    f'at cell {state.cell} of {state.cells}'
                )

    async def run_tracked(number: int, job: Job) -> None:
        try:
            await run(number, job)
        finally:
            running.pop(job.label, None)

    reporter = asyncio.create_task(report_progress())
    try:
        await asyncio.gather(*(run_tracked(i, job) for i, job in enumerate(jobs, 1)))
    finally:
        reporter.cancel()
    return done, failures


def execute(
    names: list[str],
    layout: Layout,
    *,
    jobs: int | str | None = None,
    timeout: float | str | None = None,
    force: bool = False,
    split: bool = True,
    progress: Progress = print,
    frameworks: Iterable[str] = FRAMEWORKS,
) -> list[dict]:
    """Execute the notebooks of ``names`` in ``frameworks``; returns their records.

    ``jobs`` and ``timeout`` override the execution settings (tools.run.settings).
    Raises ExecutionFailed (after writing the records) if any notebook failed.
    """
    frameworks = check_frameworks(frameworks)
    settings = read_settings(layout, jobs, timeout)
    if split:
        split_all(names, layout)
    planned = plan(names, layout, force=force, frameworks=frameworks)
    cached = keep_cached(planned.cached, progress)
    to_run = longest_first(planned.to_run, layout)
    done, failures = [], []
    if to_run:
        done, failures = run_jobs(to_run, settings, progress)
    new = cached + done
    records.save(layout, new, find_sections(layout))
    if failures:
        raise ExecutionFailed('\n\n'.join(f.message() for f in failures))
    return new


def run_jobs(
    jobs: list[Job], settings: ExecuteSettings, progress: Progress
) -> tuple[list[dict], list[NotebookFailed]]:
    """Run ``jobs`` as the settings say; their records and their failures."""
    parallel = min(settings.jobs, len(jobs))
    threads = max(1, cpu_cores() // parallel)
    progress(
        f'executing {len(jobs)} notebook(s), {parallel} at a time, '
        f'{threads} thread(s) each, timeout {settings.timeout:g} s'
    )
    env = kernel_environment(threads, settings.kernel_env)
    return asyncio.run(_run_all(jobs, parallel, env, settings.timeout, progress))


def use_executed(names: list[str], layout: Layout, progress: Progress = print) -> list[dict]:
    """Take the executed notebooks of ``names`` as they are, running nothing.

    Each must exist and be up to date with its split notebook; their outputs move
    onto the current prose, as for a cached run.  Records already there (say,
    merged from the jobs that executed each framework) are kept; a notebook
    without one is recorded from its own metadata, as cached.  Raises NotUpToDate
    naming every missing or stale notebook.
    """
    planned = plan(names, layout)
    if planned.to_run:
        lines = [f'  {job.label}: {_missing_or_stale(job)}' for job in planned.to_run]
        raise NotUpToDate(
            f'{len(planned.to_run)} executed notebook(s) missing or out of date:\n'
            + '\n'.join(lines)
            + '\nexecute them first (python -m tools execute [--framework NAME]), '
            'or build without --no-execute'
        )
    cached = keep_cached(planned.cached, progress)
    earlier = {(r['section'], r['framework'], r.get('executed_at')) for r in records.load(layout)}
    fresh = [r for r in cached if (r['section'], r['framework'], r['executed_at']) not in earlier]
    records.save(layout, fresh, find_sections(layout))
    return cached


def _missing_or_stale(job: Job) -> str:
    if not job.output.is_file():
        return f'{job.output} is missing'
    return (
        f'{job.output} is stale (its code cells, d2l_mini, requirements.txt or the '
        'installed frameworks changed since it ran)'
    )
