"""The side-by-side view's build-time half: the code of each pair of twin cells (a
PyTorch cell and the JAX cell right after it) laid out for the tab script's "Both" view.

difflib pairs the lines that correspond (equal lines first; between them the pairing
whose pairs are most alike), and Pygments' HTML (the TwinRowsFormatter) wraps each line
in ``<span class="fw-line">`` (``fw-changed`` where the twin's line differs; where the
two lines largely agree, with the tokens that differ from the paired line's in
``<span class="fw-token">``; lines that differ throughout are the change as a whole, their
tokens unmarked) and adds a
``<span class="fw-filler">`` line where the twin has a line this cell lacks. The style
shows fillers and marks only while both columns show. tools/site/ext/code_cells.py
registers the post-transform and uses the formatter for every code cell.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Iterator, Sequence

from docutils import nodes
from pygments.formatters import HtmlFormatter
from sphinx.transforms.post_transforms import SphinxPostTransform

SAME, CHANGED, FILLER = 'same', 'changed', 'filler'
ROWS_OPTION = 'fw_rows'  # the formatter option (highlight_args) that carries a cell's rows
MARKS_OPTION = 'fw_marks'  # and the one that carries, per row, the spans of tokens that differ
TOKEN = re.compile(r'\w+|\S')
# Two paired lines whose tokens agree at least this much (similarity) get their differing
# tokens marked; below it the lines differ as wholes ('X = torch.randn(2, 3)' against
# 'X = jax.random.normal(key, (2, 3))'), and marking most of their tokens would make a
# wall of marks: the line's tint and bar say it.
MARK_MIN = 0.6


def similarity(a: str, b: str) -> float:
    """How alike two lines of code are, from 0 to 1: difflib's ratio of their tokens
    (names, numbers and single symbols), so that shared names count, not shared letters."""
    return difflib.SequenceMatcher(None, TOKEN.findall(a), TOKEN.findall(b)).ratio()


def pair_changed(left: Sequence[str], right: Sequence[str]) -> list[tuple[int | None, int | None]]:
    """Rows for two runs of lines that differ: of the pairings that keep both orders, the
    one whose pairs are the most similar in all (a small dynamic programme), the earliest
    pairs among equals; a line left unpaired faces a filler."""
    # A pair scores a little more than its similarity, so that lines which resemble
    # nothing still pair up in order rather than each facing a filler.
    score = [[similarity(a, b) + 1e-3 for b in right] for a in left]
    n, m = len(left), len(right)
    best = [[0.0] * (m + 1) for _ in range(n + 1)]  # best[i][j]: for left[i:], right[j:]
    for i, j in itertools.product(reversed(range(n)), reversed(range(m))):
        best[i][j] = max(score[i][j] + best[i + 1][j + 1], best[i + 1][j], best[i][j + 1])
    rows: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < n and j < m:
        if best[i][j] == score[i][j] + best[i + 1][j + 1]:
            rows.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            rows.append((i, None))
            i += 1
        else:
            rows.append((None, j))
            j += 1
    return rows + [(k, None) for k in range(i, n)] + [(None, k) for k in range(j, m)]


def align_lines(left: Sequence[str], right: Sequence[str]) -> list[tuple[int | None, int | None]]:
    """The rows of two columns of code: ``(i, j)`` puts line i of `left` beside line j of
    `right`; None is a filler, where the other column has a line that this one lacks.
    Equal lines are matched by difflib; between them, pair_changed pairs the rest."""
    rows = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == 'equal':
            rows += zip(range(i1, i2), range(j1, j2), strict=True)
        else:
            rows += [
                (None if i is None else i1 + i, None if j is None else j1 + j)
                for i, j in pair_changed(left[i1:i2], right[j1:j2])
            ]
    return rows


def token_spans(line: str, other: str) -> tuple[tuple[int, int], ...]:
    """The character ranges of ``line`` whose tokens (names, numbers, single symbols) have
    no counterpart in ``other``, the line it faces: a run of such tokens is one range.
    None where the two lines are less alike than MARK_MIN: they differ as wholes."""
    if similarity(line, other) < MARK_MIN:
        return ()
    mine = list(TOKEN.finditer(line))
    matcher = difflib.SequenceMatcher(
        None, [m[0] for m in mine], TOKEN.findall(other), autojunk=False
    )
    return tuple(
        (mine[i1].start(), mine[i2 - 1].end())
        for tag, i1, i2, _, _ in matcher.get_opcodes()
        if tag in ('replace', 'delete')
    )


def code_lines(source: str) -> list[str]:
    """The lines of a cell's source as Pygments highlights them (it strips leading and
    trailing newlines)."""
    return source.strip('\n').split('\n')


def twin_rows(left: str, right: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """For the sources of two twin cells, each one's rows: SAME, CHANGED or FILLER."""
    a, b = code_lines(left), code_lines(right)
    marks: tuple[list[str], list[str]] = ([], [])
    for i, j in align_lines(a, b):
        same = i is not None and j is not None and a[i] == b[j]
        for side, k in zip(marks, (i, j), strict=True):
            side.append(FILLER if k is None else SAME if same else CHANGED)
    return tuple(marks[0]), tuple(marks[1])


Spans = tuple[tuple[int, int], ...]


def twin_marks(left: str, right: str) -> tuple[tuple[Spans, ...], tuple[Spans, ...]]:
    """For the sources of two twin cells, row by row (as twin_rows), the spans of each
    one's tokens that differ from the line it faces; none for a filler, a line that faces
    a filler or one that differs from its counterpart throughout (the whole line is the
    change: token_spans)."""
    a, b = code_lines(left), code_lines(right)
    marks: tuple[list[Spans], list[Spans]] = ([], [])
    for i, j in align_lines(a, b):
        paired = i is not None and j is not None
        marks[0].append(token_spans(a[i], b[j]) if paired else ())
        marks[1].append(token_spans(b[j], a[i]) if paired else ())
    return tuple(marks[0]), tuple(marks[1])


# A line of Pygments' HTML, piece by piece: a tag, or one character of the text (an
# entity such as &lt; is one character).
HTML_PIECE = re.compile(r'(<[^>]*>)|(&[^;]+;|[^<&])', re.DOTALL)
TOKEN_OPEN, TOKEN_CLOSE = '<span class="fw-token">', '</span>'


def mark_tokens(line_html: str, spans: Spans) -> str:
    """Pygments' HTML of one line with the characters of ``spans`` (ranges of the line's
    text) in ``<span class="fw-token">``, closed before each tag of the line and opened
    again after it, so that the spans nest with Pygments' own."""
    out, offset, marking = [], 0, False
    for tag, char in HTML_PIECE.findall(line_html):
        if tag:
            if marking:
                out.append(TOKEN_CLOSE)
                marking = False
            out.append(tag)
            continue
        inside = any(start <= offset < end for start, end in spans)
        if inside != marking:
            out.append(TOKEN_OPEN if inside else TOKEN_CLOSE)
            marking = inside
        out.append(char)
        offset += 1
    if marking:
        out.append(TOKEN_CLOSE)
    return ''.join(out)


FILLER_HTML = '<span class="fw-filler" aria-hidden="true">\n</span>'


def lines_by_rows(
    lines: list[tuple[int, str]], rows: Sequence[str], marks: Sequence[Spans] = ()
) -> list[tuple[int, str]]:
    """Pygments' highlighted lines (``(1, html)``, each a whole line with its newline) laid
    out by `rows`: each line in a span of class fw-line (and fw-changed, with the tokens
    of its row's `marks` marked), a filler line for each FILLER. Unchanged when the rows
    do not fit the lines."""
    code = [html_line for kind, html_line in lines if kind == 1]
    if len(code) != len(lines) or len(code) != sum(row != FILLER for row in rows):
        return lines
    marks = marks if len(marks) == len(rows) else [()] * len(rows)
    shown, laid_out = iter(code), []
    for row, spans in zip(rows, marks, strict=True):
        if row == FILLER:
            laid_out.append((1, FILLER_HTML))
        elif row == CHANGED:
            line = mark_tokens(next(shown), spans)
            laid_out.append((1, f'<span class="fw-line fw-changed">{line}</span>'))
        else:
            laid_out.append((1, f'<span class="fw-line">{next(shown)}</span>'))
    return laid_out


class TwinRowsFormatter(HtmlFormatter):
    """Pygments' HTML formatter, laying out a twin cell's lines by its ``fw_rows`` option."""

    def wrap(self, source: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        rows = self.options.get(ROWS_OPTION)
        if rows:
            source = iter(lines_by_rows(list(source), rows, self.options.get(MARKS_OPTION, ())))
        return super().wrap(source)


def cell_framework(node: nodes.Node, names: Sequence[str]) -> str | None:
    """The framework a myst-nb code cell is tagged with, if exactly one."""
    if not isinstance(node, nodes.container) or node.get('nb_element') != 'cell_code':
        return None
    tagged = [name for name in names if f'tag_{name}' in node['classes']]
    return tagged[0] if len(tagged) == 1 else None


def cell_source(cell: nodes.container) -> nodes.literal_block | None:
    for block in cell.findall(nodes.literal_block):
        if block.parent.get('nb_element') == 'cell_code_source':
            return block
    return None


def align_twin_cells(document: nodes.Node, names: Sequence[str]) -> int:
    """Give the sources of each pair of twin cells (a cell of the first framework and the
    cell of the second right after it) their rows in the side-by-side view; returns the
    number of pairs. Nothing to align unless there are two frameworks."""
    if len(names) != 2:
        return 0
    pairs = 0
    for cell in list(document.findall(nodes.container)):
        twin = cell.next_node(descend=False, siblings=True)
        if cell_framework(cell, names) != names[0] or cell_framework(twin, names) != names[1]:
            continue
        blocks = cell_source(cell), cell_source(twin)
        if None in blocks:
            continue
        sources = blocks[0].rawsource, blocks[1].rawsource
        for block, rows, marks in zip(
            blocks, twin_rows(*sources), twin_marks(*sources), strict=True
        ):
            options = {ROWS_OPTION: rows, MARKS_OPTION: marks}
            block['highlight_args'] = {**block.get('highlight_args', {}), **options}
        pairs += 1
    return pairs


class AlignTwinCells(SphinxPostTransform):
    """The rows of the twin cells' code in the side-by-side view (align_twin_cells), for
    the frameworks of the ``book_frameworks`` setting."""

    default_priority = 400

    def run(self, **kwargs: object) -> None:
        table = getattr(self.config, 'book_frameworks', None) or []
        align_twin_cells(self.document, [row['name'] for row in table])
