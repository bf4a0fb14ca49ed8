"""The book's executable sections: finding them, reading their cells, ordering them.

A section is a ``book/**/*.md`` file whose front matter has a ``jupytext:`` and a
``kernelspec:`` block; other Markdown files are plain pages.  A section's name is
its path below ``book/`` without ``.md`` (``transformer-block/vit``).

Reading a section checks the authoring rules (check_rules): framework twins stand next
to each other in the table's order (PyTorch first) with nothing between them, the
twins of a ``claim`` cell are claims too, and no cell is tagged with two frameworks.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from pathlib import Path

import jupytext
import nbformat
import yaml
from jupytext.myst import myst_to_notebook

from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.steps import StepFailed, UsageError


@dataclasses.dataclass(frozen=True)
class SourceCell:
    """One cell of a section, as written in the Markdown source."""

    index: int
    cell_type: str
    source: str
    metadata: dict
    line: int = 0  # of the cell's first line in the Markdown source, from 1

    @property
    def id(self) -> str:
        return f'c{self.index:03d}'

    @property
    def tags(self) -> list[str]:
        return list(self.metadata.get('tags', []))

    @property
    def tagged_frameworks(self) -> tuple[str, ...]:
        return tuple(fw for fw in FRAMEWORKS if fw in self.tags)

    @property
    def frameworks(self) -> tuple[str, ...]:
        """The frameworks this cell belongs to: its own if tagged, all if untagged."""
        return self.tagged_frameworks or FRAMEWORKS

    @property
    def is_framework_cell(self) -> bool:
        """Whether the cell belongs to one framework (it has twins in the others)."""
        return len(self.tagged_frameworks) == 1


class AuthoringError(StepFailed, ValueError):
    """A section breaks an authoring rule; the message names the file, line and cell."""


class MissingPage(StepFailed):
    """The table of contents lists a page that does not exist."""


@dataclasses.dataclass(frozen=True)
class Section:
    rel: str
    path: Path
    metadata: dict
    cells: tuple[SourceCell, ...]

    def cells_for(self, framework: str) -> list[SourceCell]:
        return [cell for cell in self.cells if framework in cell.frameworks]


def front_matter(path: Path) -> dict:
    """The YAML front matter of a Markdown file ({} when it has none)."""
    text = Path(path).read_text(encoding='utf-8')
    if not text.startswith('---\n'):
        return {}
    end = text.find('\n---', 4)
    if end < 0:
        return {}
    data = yaml.safe_load(text[4:end])
    return data if isinstance(data, dict) else {}


def is_section(path: Path) -> bool:
    meta = front_matter(path)
    return 'jupytext' in meta and 'kernelspec' in meta


def book_pages(layout: Layout) -> dict[str, bool]:
    """``{name: is_section}`` of every Markdown page below the book folder, sorted by
    path (not in _static/, _templates/, img/ or hidden folders)."""
    pages = {}
    for path in sorted(layout.book.rglob('*.md')):
        rel = path.relative_to(layout.book)
        if any(part.startswith(('.', '_')) for part in rel.parts) or rel.parts[0] == 'img':
            continue
        pages[rel.with_suffix('').as_posix()] = is_section(path)
    return pages


def find_sections(layout: Layout) -> list[str]:
    """Names of all sections below the book folder, sorted by path."""
    return [name for name, section in book_pages(layout).items() if section]


def read_section(layout: Layout, rel: str) -> Section:
    path = layout.source(rel)
    if not path.is_file():
        raise UsageError(f'section {rel!r}: no such file {path}')
    notebook, lines = parse_myst(path.read_text(encoding='utf-8'))
    cells = tuple(
        SourceCell(
            index, cell.cell_type, cell.source, copy.deepcopy(dict(cell.metadata)), lines[index]
        )
        for index, cell in enumerate(notebook.cells)
    )
    check_rules(path, cells)
    return Section(rel, path, copy.deepcopy(dict(notebook.metadata)), cells)


@functools.lru_cache(maxsize=64)
def parse_myst(text: str) -> tuple[nbformat.NotebookNode, tuple[int, ...]]:
    """The notebook of a MyST text and the line where each of its cells starts, parsed
    once per process for each text: the build and the tests read every section many
    times. (Callers copy what they keep: the notebook is shared.)"""
    return jupytext.reads(text, fmt='md:myst'), tuple(source_lines(text))


def source_lines(text: str) -> list[int]:
    """The line (from 1) where each cell of a MyST notebook starts: its code-cell fence,
    or the first line of its prose."""
    cells = myst_to_notebook(text, add_source_map=True)
    lines = text.split('\n')
    found = []
    for cell, start in zip(cells.cells, cells.metadata['source_map'], strict=True):
        if cell.cell_type == 'code':
            found.append(start)  # jupytext gives the fence's line, counted from 1
        else:  # the 0-based start of the prose, blank lines included
            while start < len(lines) - 1 and not lines[start].strip():
                start += 1
            found.append(start + 1)
    return found


def check_rules(path: Path, cells: tuple[SourceCell, ...]) -> None:
    """AuthoringError at the first cell that breaks an authoring rule."""

    def broken(cell: SourceCell, rule: str) -> AuthoringError:
        return AuthoringError(f'{path}:{cell.line}: cell {cell.index}: {rule}')

    for cell in cells:
        if len(cell.tagged_frameworks) > 1:
            raise broken(
                cell,
                f'tagged {" and ".join(cell.tagged_frameworks)}; leave a cell '
                'untagged to run it in every framework',
            )
    for group in twin_groups(cells):
        for position, cell in enumerate(group):
            wanted = FRAMEWORKS[position]
            if cell is None or cell.tagged_frameworks != (wanted,):
                after = group[position - 1] if position else None
                where = (
                    f'right after the {after.tagged_frameworks[0]} cell at line {after.line}'
                    if after
                    else f'before the {cell.tagged_frameworks[0]} cell'
                )
                shown = next(c for c in group if c is not None)
                raise broken(
                    shown,
                    f'needs its {wanted} twin {where}: twins stand next to each '
                    f'other, in the order {", ".join(FRAMEWORKS)}, with no prose between',
                )
        claims = ['claim' in cell.tags for cell in group]
        if any(claims) and not all(claims):
            raise broken(
                group[0],
                'a claim and its twins must all be tagged claim: every claim is '
                'checked in every framework',
            )


def twin_groups(cells: tuple[SourceCell, ...]) -> list[list[SourceCell | None]]:
    """The framework cells in groups of one per framework, as they stand; a group that a
    different cell (or the end) cuts short is padded with None."""
    groups: list[list[SourceCell | None]] = []
    current: list[SourceCell | None] = []
    for cell in cells:
        tagged = cell.cell_type == 'code' and cell.is_framework_cell
        starts_over = tagged and cell.tagged_frameworks[0] == FRAMEWORKS[0]
        if current and (not tagged or starts_over or len(current) == len(FRAMEWORKS)):
            groups.append(current + [None] * (len(FRAMEWORKS) - len(current)))
            current = []
        if tagged:
            current.append(cell)
    if current:
        groups.append(current + [None] * (len(FRAMEWORKS) - len(current)))
    return groups


def section_name(layout: Layout, arg: str) -> str:
    """Turn a command-line argument (``book/x/y.md`` or ``x/y``) into a section name."""
    candidate = Path(arg)
    if candidate.suffix != '.md':
        candidate = candidate.with_suffix('.md')
    for path in (candidate, layout.book / candidate, layout.root / candidate):
        path = path.resolve()
        if path.is_file() and path.is_relative_to(layout.book):
            if not is_section(path):
                raise UsageError(
                    f'section {arg!r} is a plain page: its front matter has no '
                    "'jupytext:' and 'kernelspec:' blocks"
                )
            return path.relative_to(layout.book).with_suffix('').as_posix()
    raise UsageError(f'section {arg!r}: expected a Markdown file below {layout.book}')


def read_toc(layout: Layout) -> dict:
    """The parsed ``_toc.yml`` ({} when there is none)."""
    if not layout.toc.is_file():
        return {}
    return yaml.safe_load(layout.toc.read_text(encoding='utf-8')) or {}


def toc_files(toc: dict) -> list[str]:
    """The ``root`` and ``file:`` entries of a parsed table of contents, in reading
    order, without extensions."""
    files: list[str] = []

    def visit(node: object) -> None:
        if isinstance(node, dict):
            for key in ('root', 'file'):
                if isinstance(node.get(key), str):
                    files.append(str(Path(node[key]).with_suffix('')))
            for value in node.values():
                if isinstance(value, (list, dict)):
                    visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(toc)
    return files


def toc_pages(layout: Layout, generated: tuple[str, ...] = ()) -> list[str]:
    """The pages that ``_toc.yml`` lists, in reading order.

    MissingPage names every entry whose source (``book/<entry>.md``) does not exist,
    except the pages the build writes itself (``generated``).
    """
    listed = toc_files(read_toc(layout))
    pages = book_pages(layout)
    missing = [rel for rel in listed if rel not in pages and rel not in generated]
    if missing:
        raise MissingPage(
            ''.join(
                f'{layout.toc} lists {rel!r}, but {layout.source(rel)} does not exist\n'
                for rel in missing
            )
            + 'write the page, or take its entry out of the table of contents'
        )
    return listed


def in_toc_order(layout: Layout, names: list[str]) -> list[str]:
    """Sort section names as the table of contents lists them, the rest after."""
    order: dict[str, int] = {}
    # The toc may name pages from the root (book/ch/a) when the book is inside it.
    book_prefix = ''
    if layout.book.is_relative_to(layout.root):
        book_prefix = layout.book.relative_to(layout.root).as_posix() + '/'
    for position, entry in enumerate(toc_files(read_toc(layout))):
        entry = entry.removeprefix('./')
        order.setdefault(entry.removeprefix(book_prefix), position)
    return sorted(names, key=lambda name: (order.get(name, len(order)), name))


def chosen_sections(layout: Layout, args: list[str]) -> list[str]:
    """The sections named on the command line, or all of them; UsageError for a bad name."""
    return [section_name(layout, arg) for arg in args] or find_sections(layout)
