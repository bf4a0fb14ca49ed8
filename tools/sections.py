"""The book's executable sections: finding them, reading their cells, ordering them.

A section is a ``book/**/*.md`` file whose front matter has a ``jupytext:`` and a
``kernelspec:`` block; other Markdown files are plain pages.  A section's name is
its path below ``book/`` without ``.md`` (``transformer-block/vit``).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import jupytext
import yaml

from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.problems import UsageError


@dataclasses.dataclass(frozen=True)
class SourceCell:
    """One cell of a section, as written in the Markdown source."""

    index: int
    cell_type: str
    source: str
    metadata: dict

    @property
    def id(self) -> str:
        return f"c{self.index:03d}"

    @property
    def tags(self) -> list[str]:
        return list(self.metadata.get("tags", []))

    @property
    def frameworks(self) -> tuple[str, ...]:
        """The frameworks this cell belongs to: one if tagged, both if untagged."""
        tagged = tuple(fw for fw in FRAMEWORKS if fw in self.tags)
        return tagged or FRAMEWORKS

    @property
    def is_twin(self) -> bool:
        return len(self.frameworks) == 1


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
    text = Path(path).read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---", 4)
    if end < 0:
        return {}
    data = yaml.safe_load(text[4:end])
    return data if isinstance(data, dict) else {}


def is_section(path: Path) -> bool:
    meta = front_matter(path)
    return "jupytext" in meta and "kernelspec" in meta


def book_pages(layout: Layout) -> dict[str, bool]:
    """``{name: is_section}`` of every Markdown page below the book folder, sorted by
    path (not in _static/, _templates/, img/ or hidden folders)."""
    pages = {}
    for path in sorted(layout.book.rglob("*.md")):
        rel = path.relative_to(layout.book)
        if any(part.startswith((".", "_")) for part in rel.parts) or rel.parts[0] == "img":
            continue
        pages[rel.with_suffix("").as_posix()] = is_section(path)
    return pages


def find_sections(layout: Layout) -> list[str]:
    """Names of all sections below the book folder, sorted by path."""
    return [name for name, section in book_pages(layout).items() if section]


def read_section(layout: Layout, rel: str) -> Section:
    path = layout.source(rel)
    if not path.is_file():
        raise ValueError(f"section {rel!r}: no such file {path}")
    notebook = jupytext.read(path, fmt="md:myst")
    cells = []
    for index, cell in enumerate(notebook.cells):
        metadata = dict(cell.metadata)
        tags = metadata.get("tags", [])
        if all(fw in tags for fw in FRAMEWORKS):
            raise ValueError(
                f"{path}: cell {index} is tagged both {FRAMEWORKS}; "
                "leave a cell untagged to run it in both frameworks"
            )
        cells.append(SourceCell(index, cell.cell_type, cell.source, metadata))
    return Section(rel, path, dict(notebook.metadata), tuple(cells))


def section_name(layout: Layout, arg: str) -> str:
    """Turn a command-line argument (``book/x/y.md`` or ``x/y``) into a section name."""
    candidate = Path(arg)
    if candidate.suffix != ".md":
        candidate = candidate.with_suffix(".md")
    for path in (candidate, layout.book / candidate, layout.root / candidate):
        path = path.resolve()
        if path.is_file() and path.is_relative_to(layout.book):
            if not is_section(path):
                raise UsageError(
                    f"section {arg!r} is a plain page: its front matter has no "
                    "'jupytext:' and 'kernelspec:' blocks"
                )
            return path.relative_to(layout.book).with_suffix("").as_posix()
    raise UsageError(f"section {arg!r}: expected a Markdown file below {layout.book}")


def read_toc(layout: Layout) -> dict:
    """The parsed ``_toc.yml`` ({} when there is none)."""
    if not layout.toc.is_file():
        return {}
    return yaml.safe_load(layout.toc.read_text(encoding="utf-8")) or {}


def toc_files(toc: dict) -> list[str]:
    """The ``root`` and ``file:`` entries of a parsed table of contents, in reading
    order, without extensions."""
    files: list[str] = []

    def visit(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    files.append(str(Path(node[key]).with_suffix("")))
            for value in node.values():
                if isinstance(value, (list, dict)):
                    visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(toc)
    return files


def in_toc_order(layout: Layout, names: list[str]) -> list[str]:
    """Sort section names as the table of contents lists them, the rest after."""
    order: dict[str, int] = {}
    book_prefix = layout.book.relative_to(layout.root).as_posix() + "/"
    for position, entry in enumerate(toc_files(read_toc(layout))):
        entry = entry.removeprefix("./")
        order.setdefault(entry.removeprefix(book_prefix), position)
    return sorted(names, key=lambda name: (order.get(name, len(order)), name))


def chosen_sections(layout: Layout, args: list[str]) -> list[str]:
    """The sections named on the command line, or all of them; UsageError for a bad name."""
    return [section_name(layout, arg) for arg in args] or find_sections(layout)
