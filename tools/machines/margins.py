"""The table of the run that stands for other machines: every claim, tightest first.

For a comparison ``lo < x < hi`` a record's margin is the smallest slack between
neighbouring operands relative to the larger of the two (0.1: the value is 10% away
from its bound); for ``all(a < b for ...)`` the smallest over the rows. A claim's
spread is how far its values move between environments, relative to their size. A
window has room where each slack (of each comparison, row by row: ``b - a`` for
``a < b``, or ``log(b / a)`` where both are positive) is, in every environment, at least
twice as large as the distance it moves between environments: a rounding error far below
its bound has room even where it doubles, a timing ten times its rival's even where both
halve, a value near its bound only where it holds still. A claim that is exact (``==``,
``in``) or a plain truth has no margin and is listed only where it failed.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from pathlib import Path

from tools.machines.run import folder, load
from tools.paths import Layout, write_atomic

ORDERED = {'<', '<=', '>', '>='}


def _slack(op: str, a: float | None, b: float | None) -> float | None:
    if op not in ORDERED or a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return None
    scale = max(abs(a), abs(b)) or 1.0
    return ((b - a) if op in ('<', '<=') else (a - b)) / scale


def margin(record: dict) -> float | None:
    """The record's smallest relative slack, or None for an exact or plain claim."""
    if record.get('error'):
        return -math.inf
    ops = record.get('ops')
    if not ops:
        return None
    slacks = [
        _slack(op, row[i], row[i + 1])
        for row in record.get('rows', [])
        for i, op in enumerate(ops)
    ]
    slacks = [s for s in slacks if s is not None]
    return min(slacks) if slacks else None


def _compared(record: dict) -> list[tuple[str, float, float]]:
    """Each ordered comparison of the record, row by row: (operator, left, right)."""
    return [
        (op, a, b)
        for row in record.get('rows', [])
        for op, a, b in zip(record.get('ops') or [], row, row[1:], strict=False)
        if _slack(op, a, b) is not None
    ]


def _holds_still(slacks: list[float]) -> bool:
    return min(slacks) >= 2 * (max(slacks) - min(slacks))


def _has_room(pairs: tuple[tuple[str, float, float], ...]) -> bool:
    """Whether one comparison's slack, in every environment, is at least twice how far
    it moves: measured as ``b - a``, or as ``log(b / a)`` where every operand is
    positive (training and timing move results by factors, rounding by differences)."""
    sign = [1 if op in ('<', '<=') else -1 for op, _, _ in pairs]
    if _holds_still([s * (b - a) for s, (_, a, b) in zip(sign, pairs, strict=True)]):
        return True
    if not all(a > 0 and b > 0 for _, a, b in pairs):
        return False
    return _holds_still([s * math.log(b / a) for s, (_, a, b) in zip(sign, pairs, strict=True)])


def _values(record: dict) -> list[float]:
    """The record's results (not its bounds); for a row-wise claim, those of its tightest row."""
    rows = record.get('rows') or [[]]
    constant = record.get('constant') or []
    if len(rows) > 1 and record.get('ops'):
        rows = sorted(
            rows,
            key=lambda row: min(
                (
                    s
                    for i, op in enumerate(record['ops'])
                    if (s := _slack(op, row[i], row[i + 1])) is not None
                ),
                default=math.inf,
            ),
        )
    return [v for v, c in zip(rows[0], constant, strict=False) if not c and v is not None]


@dataclasses.dataclass
class Claim:
    framework: str
    section: str
    source: str
    key: tuple
    records: dict[str, dict]  # by environment

    @property
    def margin(self) -> float | None:
        found = [m for r in self.records.values() if (m := margin(r)) is not None]
        return min(found) if found else None

    @property
    def spread(self) -> float:
        """The largest relative difference between environments of any of its results."""
        columns = [_values(r) for r in self.records.values()]
        if len(columns) < 2:
            return 0.0
        spread = 0.0
        for values in zip(*columns, strict=False):
            scale = max(abs(v) for v in values) or 1.0
            spread = max(spread, (max(values) - min(values)) / scale)
        return spread

    @property
    def failed_in(self) -> list[str]:
        return [env for env, record in self.records.items() if not record.get('passed')]

    @property
    def has_room(self) -> bool:
        if self.failed_in:
            return False
        pairs_by_position = zip(*map(_compared, self.records.values()), strict=False)
        return all(_has_room(pairs) for pairs in pairs_by_position)


def claims(layout: Layout) -> tuple[list[Claim], list[str], list[dict]]:
    """Every claim seen in any environment, the environments, and the notebook statuses."""
    by_env, statuses = load(layout)
    found: dict[tuple, Claim] = {}
    for env, records in by_env.items():
        for record in records:
            key = (
                record['framework'],
                record['section'],
                record['cell'],
                record['line'],
                record['part'],
                record['occurrence'],
            )
            claim = found.setdefault(
                key, Claim(record['framework'], record['section'], record['source'], key, {})
            )
            claim.records[env] = record
    environments = sorted(by_env, key=lambda e: (e != 'build', e))
    return list(found.values()), environments, statuses


def _number(value: float) -> str:
    return f'{value:.4g}'


def _order(claim: Claim) -> tuple:
    m = claim.margin
    return (not claim.failed_in, math.inf if m is None else m - 2 * claim.spread)


def table(layout: Layout, limit: int | None = None) -> str:
    """The margins table as Markdown: failed claims first, then the least room."""
    found, environments, statuses = claims(layout)
    listed = [c for c in found if c.margin is not None or c.failed_in]
    listed.sort(key=_order)
    if limit is not None:
        listed = listed[:limit]
    head = ['page', 'claim', *environments, 'margin', 'spread', 'room']
    lines = ['| ' + ' | '.join(head) + ' |', '|' + ' --- |' * len(head)]
    for claim in listed:
        cells = [f'[{claim.framework}] {claim.section}', f'`{claim.source}`']
        for env in environments:
            record = claim.records.get(env)
            if record is None:
                cells.append('not run')
                continue
            shown = ', '.join(map(_number, _values(record))) or (
                'true' if record.get('passed') else 'false'
            )
            cells.append(shown + ('' if record.get('passed') else ' FAILS'))
        m = claim.margin
        cells += [
            'exact' if m is None else f'{m:.1%}',
            f'{claim.spread:.1%}',
            'yes' if claim.has_room else 'NO',
        ]
        lines.append('| ' + ' | '.join(c.replace('|', '\\|') for c in cells) + ' |')
    failed = [s for s in statuses if s.get('status') != 'passed']
    summary = [
        f'{len(found)} claims in {len(environments)} environment(s) '
        f'({", ".join(environments)}); {sum(not c.has_room for c in found)} without room, '
        f'{sum(bool(c.failed_in) for c in found)} failed somewhere; '
        f'{len(statuses)} notebook run(s), {len(failed)} failed outside their claims'
    ]
    summary += [f'- {s["environment"]} [{s["framework"]}] {s["section"]}: failed' for s in failed]
    return '\n'.join(summary + [''] + lines) + '\n'


def path(layout: Layout) -> Path:
    """Where the claims' margins are kept for the execution report."""
    return folder(layout) / 'margins.json'


def write(layout: Layout) -> Path:
    """Write the whole table to ``_build/machines/margins.md`` and the claims to
    ``margins.json``, for the execution report; the Markdown's path."""
    out = folder(layout) / 'margins.md'
    write_atomic(out, table(layout))
    found, environments, _ = claims(layout)
    data = [
        {
            'framework': c.framework,
            'section': c.section,
            'claim': c.source,
            'margin': c.margin,
            'spread': c.spread,
            'failed_in': c.failed_in,
            'values': {env: _values(r) for env, r in c.records.items()},
        }
        for c in sorted(found, key=_order)
    ]
    made = datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')
    summary = {'made_at': made, 'environments': environments, 'claims': data}
    write_atomic(path(layout), json.dumps(summary, indent=1) + '\n')
    return out
