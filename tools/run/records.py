"""What each notebook run ran on, and ``_build/exec/records.json``.

The versions and hardware are asked of the kernel itself, by a probe cell that runs
after the notebook's own cells (and is removed again), so they describe the
framework that actually ran: a CUDA build on a GPU machine reports the GPU.

``python -m tools records FILE [FILE ...]`` merges records files (say, those of jobs
that each executed one framework) into ``_build/exec/records.json``; a later file wins
for the same notebook.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path

from tools.frameworks import FRAMEWORKS, framework
from tools.paths import Layout, write_atomic
from tools.steps import UsageError

PROBE_ID = 'execution-probe'
PROBE_MARK = 'BOOK-EXECUTION-PROBE '
STATUSES = ('executed', 'cached', 'failed')
FIELDS = (
    'section',
    'framework',
    'wall_s',
    'status',
    'executed_at',
    'python',
    'versions',
    'hardware',
)


# The probe runs this function's source in the kernel, where Callable is not imported:
# its annotation stays a string.
def environment(
    packages: tuple[str, ...],
    device: 'Callable[[], str | None] | None' = None,  # noqa: UP037
) -> dict:
    """Python, the versions of ``packages`` and the hardware, as this process sees them.

    The probe cell runs this function's own source in the kernel, with the framework's
    ``device`` function; the build runs it in its own process for a run that failed
    before the probe (the CPU, then).
    """
    import os
    import platform
    import sys
    from importlib import metadata

    versions = {}
    for name in packages:
        module = sys.modules.get(name)
        try:
            versions[name] = getattr(module, '__version__', None) or metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = 'not installed'
    hardware = device() if device is not None else None
    if hardware is None:
        model = platform.processor() or platform.machine()
        try:
            with open('/proc/cpuinfo') as f:
                model = next(
                    line.split(':', 1)[1].strip() for line in f if line.startswith('model name')
                )
        except (OSError, StopIteration):
            pass
        cores = (
            len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
        )
        hardware = f'CPU: {model}, {cores} cores'
    return {'python': platform.python_version(), 'versions': versions, 'hardware': hardware}


def probe_source(name: str) -> str:
    """The probe cell: prints the kernel's environment on one line after PROBE_MARK."""
    fw = framework(name)
    device = fw.device.__name__
    return '\n'.join(
        [
            inspect.getsource(fw.device),
            inspect.getsource(environment),
            f"print({PROBE_MARK!r} + __import__('json').dumps("
            f'environment({fw.recorded_packages!r}, {device})))',
            f'del environment, {device}',
        ]
    )


def read_probe(cell: dict) -> dict:
    for output in cell.get('outputs', []):
        for line in output.get('text', '').splitlines():
            if line.startswith(PROBE_MARK):
                return json.loads(line[len(PROBE_MARK) :])
    return {}


def local_environment(name: str) -> dict:
    """The probe's facts from this process, for runs that fail before the probe."""
    return environment(framework(name).recorded_packages)


def read(path: Path) -> list[dict]:
    """The records of a records file, checked; UsageError saying what is wrong with it."""
    try:
        found = json.loads(Path(path).read_text(encoding='utf-8'))
    except (OSError, json.JSONDecodeError) as error:
        raise UsageError(f'cannot read records from {path}: {error}') from None
    if not isinstance(found, list):
        raise UsageError(
            f'{path} is not a records file: records must be a JSON list, '
            f'got {type(found).__name__}'
        )
    for i, record in enumerate(found):
        if not isinstance(record, dict):
            raise UsageError(f'{path}: record {i} is not an object')
        missing = [field for field in FIELDS if field not in record]
        if missing:
            raise UsageError(
                f'{path}: record {i} lacks {", ".join(missing)}; each has {", ".join(FIELDS)}'
            )
        if record['framework'] not in FRAMEWORKS:
            raise UsageError(
                f'{path}: record {i}: framework must be one of {FRAMEWORKS}, '
                f'got {record["framework"]!r}'
            )
        if record['status'] not in STATUSES:
            raise UsageError(
                f'{path}: record {i}: status must be one of {STATUSES}, got {record["status"]!r}'
            )
    return found


def load(layout: Layout) -> list[dict]:
    """The layout's records; none when there is no readable records file."""
    try:
        return read(layout.records)
    except UsageError:
        return []


def save(layout: Layout, new: list[dict], sections: list[str]) -> None:
    """Write the records of ``new`` runs, keeping earlier ones of other current sections."""
    keep = {
        (r['section'], r['framework']): r for r in load(layout) if r.get('section') in sections
    }
    keep.update({(r['section'], r['framework']): r for r in new})
    order = {name: i for i, name in enumerate(sections)}
    ordered = sorted(
        keep.values(), key=lambda r: (order[r['section']], FRAMEWORKS.index(r['framework']))
    )
    write_atomic(layout.records, json.dumps(ordered, indent=1) + '\n')


def merge_files(layout: Layout, paths: list[Path]) -> list[dict]:
    """Add the records of ``paths`` to the layout's records (later files win)."""
    from tools.source.sections import find_sections

    new = {}
    for path in paths:
        new.update({(r['section'], r['framework']): r for r in read(path)})
    sections = find_sections(layout)
    save(layout, [r for r in new.values() if r['section'] in sections], sections)
    return load(layout)
