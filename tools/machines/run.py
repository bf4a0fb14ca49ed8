"""Execute the notebooks in each environment, recording every claim (``machines``).

Every (environment, framework, section) is one kernel; kernels run side by side as long
as their compute threads fit the machine's cores, the longest notebooks first. A
notebook that fails outside its claims is reported and the run goes on: what it
recorded before it failed is kept. Each run writes
``_build/machines/<environment>/<framework>/<section>.jsonl`` (one claim a line) and
``....status.json`` (passed or failed, why, and its time).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from pathlib import Path

import nbformat

from tools.frameworks import FRAMEWORKS, check_frameworks
from tools.machines.environments import ENVIRONMENTS, Environment, check_moves, merged_env, probe
from tools.machines.instrument import RECORD_VARIABLE, instrument
from tools.paths import Layout, write_atomic
from tools.run import records
from tools.run.kernel import NotebookFailed, kernel_environment, run_notebook
from tools.run.settings import cpu_cores, read_settings
from tools.source.split import split_all
from tools.steps import Progress


def folder(layout: Layout) -> Path:
    return layout.build / 'machines'


def record_path(layout: Layout, environment: str, framework: str, rel: str) -> Path:
    return folder(layout) / environment / framework / f'{rel}.jsonl'


def status_path(layout: Layout, environment: str, framework: str, rel: str) -> Path:
    return folder(layout) / environment / framework / f'{rel}.status.json'


def _threads(environment: Environment, cores: int) -> int:
    # None: what the build gives a kernel when it runs one kernel per two cores.
    return environment.threads or max(1, min(2, cores))


class _Cores:
    """A semaphore counted in threads: a kernel waits until its threads are free."""

    def __init__(self, total: int) -> None:
        self.free, self.condition = total, asyncio.Condition()

    async def take(self, threads: int) -> None:
        async with self.condition:
            await self.condition.wait_for(lambda: self.free >= threads)
            self.free -= threads

    async def give(self, threads: int) -> None:
        async with self.condition:
            self.free += threads
            self.condition.notify_all()


def _wall_times(layout: Layout) -> dict[tuple[str, str], float]:
    return {(r['section'], r['framework']): r.get('wall_s', 0.0) for r in records.load(layout)}


def machines(
    layout: Layout,
    names: list[str],
    environments: list[Environment],
    *,
    frameworks: Iterable[str] = FRAMEWORKS,
    progress: Progress = print,
) -> list[dict]:
    """Run ``names`` in ``frameworks`` under each of ``environments``; their statuses."""
    frameworks = check_frameworks(frameworks)
    cores = cpu_cores()
    probed = {env.name: probe(env, _threads(env, cores)) for env in environments}
    for found in probed.values():
        progress(found.report)
    build = probed.get('build') or probe(
        ENVIRONMENTS['build'], _threads(ENVIRONMENTS['build'], cores)
    )
    for line in check_moves(build, [p for name, p in probed.items() if name != 'build']):
        progress(line)
    split_all(names, layout)
    settings = read_settings(layout)
    known = _wall_times(layout)
    jobs = sorted(
        ((env, fw, rel) for env in environments for fw in frameworks for rel in names),
        key=lambda job: -known.get((job[2], job[1]), float('inf')),
    )
    progress(f'{len(jobs)} notebook run(s) in {len(environments)} environment(s), {cores} cores')

    async def run_all() -> list[dict]:
        free = _Cores(cores)

        async def run(number: int, job: tuple[Environment, str, str]) -> dict:
            environment, framework, rel = job
            threads = min(_threads(environment, cores), cores)
            await free.take(threads)
            try:
                return await _run_one(
                    layout,
                    environment,
                    framework,
                    rel,
                    threads,
                    settings,
                    f'[{number}/{len(jobs)}]',
                    progress,
                )
            finally:
                await free.give(threads)

        return list(await asyncio.gather(*(run(i, job) for i, job in enumerate(jobs, 1))))

    return asyncio.run(run_all())


async def _run_one(
    layout: Layout,
    environment: Environment,
    framework: str,
    rel: str,
    threads: int,
    settings,
    number: str,
    progress: Progress,
) -> dict:
    label = f'{number} {environment.name} [{framework}] {rel}'
    recorded = record_path(layout, environment.name, framework, rel)
    recorded.parent.mkdir(parents=True, exist_ok=True)
    recorded.unlink(missing_ok=True)
    env = merged_env(kernel_environment(threads, settings.kernel_env), environment.variables)
    env[RECORD_VARIABLE] = str(recorded)
    notebook = instrument(nbformat.read(layout.notebook(framework, rel), as_version=4))
    progress(f'{label}: started ({threads} thread(s))')
    started = time.monotonic()
    status = {'environment': environment.name, 'framework': framework, 'section': rel}
    try:
        await run_notebook(
            notebook,
            framework=framework,
            name=rel,
            cwd=recorded.parent,
            env=env,
            timeout=settings.timeout,
        )
        status['status'] = 'passed'
    except NotebookFailed as failure:
        status.update(status='failed', why=failure.message())
    status['wall_s'] = round(time.monotonic() - started, 1)
    recorded.touch()
    write_atomic(
        status_path(layout, environment.name, framework, rel), json.dumps(status, indent=1) + '\n'
    )
    progress(
        f'{label}: {status["status"]} in {status["wall_s"]:.0f} s'
        + (f'\n{status["why"]}' if status['status'] == 'failed' else '')
    )
    return status


def load(layout: Layout) -> tuple[dict[str, list[dict]], list[dict]]:
    """Every environment's claim records, keyed by environment, and every status."""
    claims: dict[str, list[dict]] = {}
    statuses = []
    base = folder(layout)
    if not base.is_dir():
        return claims, statuses
    for path in sorted(base.rglob('*.status.json')):
        status = json.loads(path.read_text())
        statuses.append(status)
        jsonl = path.with_name(path.name.replace('.status.json', '.jsonl'))
        lines = jsonl.read_text().splitlines() if jsonl.is_file() else []
        for line in lines:
            claim = json.loads(line)
            claim.update(framework=status['framework'], section=status['section'])
            claims.setdefault(status['environment'], []).append(claim)
    return claims, statuses
