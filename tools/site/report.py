"""The "Execution report" page: every notebook, how long it ran and on what.

tools/site/render.py writes the page when it assembles the site, from the records that
tools/run/execute.py keeps in _build/exec/records.json.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from tools.frameworks import TABLE
from tools.run.records import read as read_records


def cell(value: object) -> str:
    return str(value).replace('|', '\\|').replace('\n', ' ')


def section_ref(section: str, linked: set[str]) -> str:
    return f'{{doc}}`{section}`' if section in linked else f'`{section}`'


def environment_rows(records: list[dict]) -> list[tuple[str, dict[str, list[str]]]]:
    """One row per framework: Python, package versions and hardware, all values seen."""
    rows = []
    for fw in TABLE:
        mine = [r for r in records if r['framework'] == fw.name]
        if not mine:
            continue
        seen = {'Python': sorted({str(r['python']) for r in mine})}
        for record in mine:
            for package, version in record['versions'].items():
                seen.setdefault(package, [])
                if str(version) not in seen[package]:
                    seen[package].append(str(version))
        seen['Hardware'] = sorted({str(r['hardware']) for r in mine})
        rows.append((fw.label, seen))
    return rows


def run_time(stamp: object) -> str:
    """'2026-11-29 12:42 UTC' from an ISO timestamp (left as it is if it is not one)."""
    try:
        when = datetime.fromisoformat(str(stamp))
    except ValueError:
        return str(stamp)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime('%Y-%m-%d %H:%M') + (' UTC' if when.tzinfo is not None else '')


def report_markdown(
    records: list[dict], sections: list[str] | None = None, linked: Iterable[str] = ()
) -> str:
    """The page as MyST Markdown.

    records: as tools.run.records.read returns them. sections: the section paths the book builds,
    in reading order; only their notebooks are listed, and a framework without a record
    for one of them is listed as "missing" (None: every record, in path order). linked:
    the section paths that are pages of this build, shown as links.
    """
    linked = set(linked)
    if sections is not None:
        records = [r for r in records if r['section'] in set(sections)]
    sections = list(sections) if sections is not None else sorted({r['section'] for r in records})
    by_key = {(r['section'], r['framework']): r for r in records}
    keys = [(section, fw) for section in sections for fw in TABLE]
    hardware = sorted({str(r['hardware']) for r in records})
    per_row_hardware = len(hardware) > 1
    header = ['Section', 'Framework', 'Wall time (s)', 'Status', 'Ran at']
    align = ['---', '---', '---:', '---', '---']
    if per_row_hardware:
        header.insert(4, 'Hardware')
        align.insert(4, '---')
    lines = [
        '# Execution report',
        '',
        'Every page of this book was built from notebooks that were run before the HTML was '
        'rendered, one kernel per framework. This table lists each of them: how long it ran '
        'and whether this build ran it again (*executed*) or reused an unchanged earlier run '
        '(*cached*).',
        '',
    ]
    if hardware and not per_row_hardware:
        lines += [f'All of them ran on the same hardware: {cell(hardware[0])}.', '']
    lines += ['| ' + ' | '.join(header) + ' |', '| ' + ' | '.join(align) + ' |']
    for section, fw in keys:
        record = by_key.get((section, fw.name))
        row = [section_ref(section, linked), fw.label]
        if record is None:
            row += ['', 'missing', ''] + ([''] if per_row_hardware else [])
        else:
            row += [
                f'{float(record["wall_s"]):.1f}',
                record['status'],
                run_time(record['executed_at']),
            ]
            if per_row_hardware:
                row.insert(4, cell(record['hardware']))
        lines.append('| ' + ' | '.join(row) + ' |')
    totals = {
        fw.label: sum(float(r['wall_s']) for r in records if r['framework'] == fw.name)
        for fw in TABLE
    }
    lines += [
        '',
        'Total wall time: '
        + ', '.join(f'{label} {total:.1f} s' for label, total in totals.items())
        + '.',
        '',
    ]
    env = environment_rows(records)
    if env:
        lines += ['## Software and hardware', '']
        for label, seen in env:
            lines += [
                f'{label} notebooks ran with:',
                '',
                '| Component | Version |',
                '| --- | --- |',
            ]
            lines += [
                f'| {cell(name)} | {cell(", ".join(values))} |' for name, values in seen.items()
            ]
            lines.append('')
    return '\n'.join(lines)


MARGIN_ROWS = 20


def margins_markdown(summary: dict, rows: int = MARGIN_ROWS) -> str:
    """The section on the run that stands for other machines, from its margins.json."""
    claims = summary.get('claims', [])
    environments = summary.get('environments', [])
    failed = [c for c in claims if c['failed_in']]
    lines = [
        '## Claims on other machines',
        '',
        f'A run that stands for other machines ({run_time(summary.get("made_at", ""))}) '
        f'executed the notebooks again in {len(environments)} environments that change the '
        f'numerics ({", ".join(environments)}) and recorded every '
        f'claim: {len(claims)} in all, {len(failed)} of them missed somewhere. A margin is the '
        'distance of the value from its nearest bound, relative to the larger; the spread, '
        'how far the value moved between environments. The '
        f'{min(rows, len(claims))} claims with the least room:',
        '',
        '| Page | Framework | Claim | Margin | Spread | Missed in |',
        '| --- | --- | --- | ---: | ---: | --- |',
    ]
    for claim in claims[:rows]:
        margin = '' if claim['margin'] is None else f'{claim["margin"]:.1%}'
        lines.append(
            f'| `{cell(claim["section"])}` | {cell(claim["framework"])} | '
            f'`{cell(claim["claim"])}` | {margin} | {claim["spread"]:.1%} | '
            f'{cell(", ".join(claim["failed_in"]))} |'
        )
    return '\n'.join(lines) + '\n'


def write_report(
    records_path: Path,
    out_path: Path,
    sections: list[str] | None = None,
    linked: Iterable[str] = (),
    margins_path: Path | None = None,
) -> list[dict]:
    """Write the page; with the margins of the run that stands for other machines where
    ``margins_path`` exists."""
    records = read_records(records_path) if Path(records_path).is_file() else []
    text = report_markdown(records, sections, linked)
    if margins_path is not None and Path(margins_path).is_file():
        text += '\n' + margins_markdown(json.loads(Path(margins_path).read_text()))
    Path(out_path).write_text(text)
    return records
