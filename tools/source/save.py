"""Copy the book's ``#@save`` cells into d2l_mini.

    python -m tools save            rewrite d2l_mini/torch.py and d2l_mini/jax.py
    python -m tools save --check    exit 1, naming the modules that are out of date

Code cells whose first line is ``#@save`` are collected from every section in
table-of-contents order: ``pytorch``-tagged ones go to d2l_mini/torch.py,
``jax``-tagged ones to d2l_mini/jax.py, untagged ones to both.  Each module is
hand-written down to its marker line; everything below that line is replaced by
those cells.
"""

from __future__ import annotations

from pathlib import Path

from tools.frameworks import TABLE
from tools.paths import Layout
from tools.source.sections import find_sections, in_toc_order, read_section
from tools.steps import UsageError

MARKER = (
    '# ---- Below: code saved from the book by `python -m tools save`; do not edit by hand. ----'
)
SAVE = '#@save'


class MissingMarker(UsageError):
    pass


def saved_cells(layout: Layout, framework: str) -> list[tuple[str, str]]:
    """``(section, code)`` of every #@save cell for ``framework``, in book order."""
    found = []
    for rel in in_toc_order(layout, find_sections(layout)):
        for cell in read_section(layout, rel).cells_for(framework):
            lines = cell.source.split('\n')
            if cell.cell_type == 'code' and lines[0].strip() == SAVE:
                found.append((rel, '\n'.join(lines[1:]).strip('\n')))
    return found


def module_text(current: str, path: Path, cells: list[tuple[str, str]]) -> str:
    """``current`` with everything after the marker line replaced by ``cells``."""
    head, found, _ = current.partition(MARKER)
    if not found:
        raise MissingMarker(
            f'{path} has no marker line: put this line after its hand-written code '
            f'(the saved cells go below it):\n{MARKER}'
        )
    blocks = [f'\n\n# Saved from book/{rel}.md\n{code}\n' for rel, code in cells]
    return head + MARKER + '\n' + ''.join(blocks)


def stale_modules(layout: Layout) -> dict[Path, str]:
    """``{module: the text it should have}`` for every module that is out of date."""
    stale = {}
    for fw in TABLE:
        path = layout.library / fw.module
        current = path.read_text(encoding='utf-8') if path.is_file() else ''
        wanted = module_text(current, path, saved_cells(layout, fw.name))
        if wanted != current:
            stale[path] = wanted
    return stale
