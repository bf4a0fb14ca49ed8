"""What the printed book says about its own making: the title page's authors and date, and
the colophon's versions, commit and machine.

Read from ``_config.yml`` (title, author), the execution records that the build keeps in
``_build/exec/records.json`` (when and on what each notebook of a framework ran, with which
versions) and git (the commit the book was printed from).  tools/site/book_html.py sets
them on the title page and its back.
"""

from __future__ import annotations

import dataclasses
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from tools.frameworks import framework as framework_row
from tools.paths import Layout, read_config


@dataclasses.dataclass(frozen=True)
class Edition:
    title: str
    framework: str
    authors: str = ''
    date: str = ''  # '4 December 2026': the day the newest output was made
    site_url: str | None = None
    commit: str = ''  # 'a1b2c3d4e5f6', with ', with uncommitted changes' where there were
    executed: str = ''  # '2026-12-04 09:40 to 10:15 UTC'
    python: str = ''
    versions: tuple[tuple[str, str], ...] = ()  # (package, version), the framework's first
    hardware: tuple[str, ...] = ()
    notebooks: int = 0
    printer: str = ''  # the browser that printed the PDF

    @property
    def label(self) -> str:
        return framework_row(self.framework).label


def stamp(value: object) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return when.astimezone(UTC) if when.tzinfo is not None else when.replace(tzinfo=UTC)


def long_date(when: datetime) -> str:
    return f'{when.day} {when:%B %Y}'


def run_span(times: list[datetime]) -> str:
    """'2026-12-04 09:40 to 10:15 UTC' (the day named again when the runs span two)."""
    first, last = min(times), max(times)
    end = f'{last:%H:%M}' if first.date() == last.date() else f'{last:%Y-%m-%d %H:%M}'
    return f'{first:%Y-%m-%d %H:%M}' + (f' to {end}' if last != first else '') + ' UTC'


def commit(root: Path) -> str:
    """HEAD's commit, and whether the working tree differed from it ('' outside git)."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ['git', *args], cwd=root, capture_output=True, text=True, check=False, timeout=30
        )
        return done.stdout.strip() if done.returncode == 0 else ''

    try:
        head = git('rev-parse', '--short=12', 'HEAD')
        dirty = bool(head) and bool(git('status', '--porcelain', '--untracked-files=no'))
    except (OSError, subprocess.SubprocessError):
        return ''
    return head + (', with uncommitted changes' if dirty else '')


def records(layout: Layout, framework: str) -> list[dict]:
    from tools.run.records import read

    if not layout.records.is_file():
        return []
    try:
        found = read(layout.records)
    except ValueError:  # not a records file: the colophon says less
        return []
    return [record for record in found if record['framework'] == framework]


def edition(layout: Layout, framework: str, printer: str = '') -> Edition:
    """The facts of ``framework``'s printed book, as the build recorded them."""
    from tools import facts

    config = read_config(layout)
    try:
        site_url = facts.site_url(layout)
    except ValueError:
        site_url = None
    mine = records(layout, framework)
    times = [t for t in (stamp(r.get('executed_at')) for r in mine) if t is not None]
    versions: dict[str, list[str]] = {}
    for record in mine:
        for package, version in (record.get('versions') or {}).items():
            seen = versions.setdefault(str(package), [])
            if str(version) not in seen:
                seen.append(str(version))
    pythons = sorted({str(r['python']) for r in mine if r.get('python')})
    return Edition(
        title=str(config.get('title') or 'The book'),
        framework=framework,
        authors=str(config.get('author') or ''),
        date=long_date(max(times) if times else datetime.now(UTC)),
        site_url=site_url,
        commit=commit(layout.root),
        executed=run_span(times) if times else '',
        python=', '.join(pythons),
        versions=tuple((package, ', '.join(seen)) for package, seen in versions.items()),
        hardware=tuple(sorted({str(r['hardware']) for r in mine if r.get('hardware')})),
        notebooks=len({r['section'] for r in mine}),
        printer=printer,
    )
