"""Whether a product is up to date: one digest of the inputs it is made from.

Each step that makes a product names that product's inputs where it makes it, by feeding
a ``Digest``, and stores the digest with the product: an executed notebook in its
metadata (tools/run/cache.py), the HTML in ``render-stamp.json`` (tools/site/render.py),
the PDFs in ``pdf-stamp.json`` (tools/site/pdf.py). A product is current when the digest
it stores equals the digest of its inputs now; ``write_stamp`` and ``read_stamp`` keep a
stamp file. Files enter a digest under their path relative to the project, so that a
clone in another folder agrees; code enters as the modules a step runs (``code``: a
module and every module of tools/ it imports), so that editing one step does not make
another's products stale.

Two checks look like staleness and are not: ``python -m tools save`` compares d2l_mini with
the book's ``#@save`` cells (committed code against its source, not a build product), and
the zips are made again on every build and written only when their bytes change
(``paths.write_atomic``), which is cheaper than deciding whether they would.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from tools.paths import ROOT, Layout, write_atomic

PACKAGE = 'tools'  # the modules `code` follows: the build's own


class Digest:
    """A SHA-256 of labelled texts, files and code, in the order they are added."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._sha = hashlib.sha256()

    def text(self, label: str, value: str) -> Digest:
        data = value.encode()
        self._sha.update(f'{label} {len(data)}\n'.encode() + data + b'\n')
        return self

    def file(self, path: Path) -> Digest:
        """A file's bytes under its name relative to the project ("missing" if absent)."""
        path = Path(path)
        try:
            name = path.resolve().relative_to(self.layout.root).as_posix()
        except ValueError:
            name = path.as_posix()
        if not path.is_file():
            return self.text(f'file {name}', 'missing')
        data = path.read_bytes()
        self._sha.update(f'file {name} {len(data)}\n'.encode() + data + b'\n')
        return self

    def files(self, paths: Iterable[Path]) -> Digest:
        for path in paths:
            if '__pycache__' not in Path(path).parts:
                self.file(path)
        return self

    def packages(self, names: Iterable[str]) -> Digest:
        """The installed version of each distribution ("missing" if not installed)."""
        for name in names:
            try:
                self.text(f'package {name}', metadata.version(name))
            except metadata.PackageNotFoundError:
                self.text(f'package {name}', 'missing')
        return self

    def code(self, *modules: str) -> Digest:
        """The source of ``modules`` and of every module of tools/ they import."""
        return self.files(module_files(modules))

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


def module_file(name: str) -> Path | None:
    """The file of module ``tools.a.b``: tools/a/b.py or tools/a/b/__init__.py."""
    base = ROOT.joinpath(*name.split('.'))
    for path in (base.with_suffix('.py'), base / '__init__.py'):
        if path.is_file():
            return path
    return None


def imported(path: Path) -> set[str]:
    """The tools modules (and packages) a module's source imports, anywhere in it."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            found = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found = [node.module] + [f'{node.module}.{alias.name}' for alias in node.names]
        else:
            continue
        names.update(name for name in found if name.split('.')[0] == PACKAGE)
    return names


def module_files(roots: Iterable[str]) -> list[Path]:
    """The files of the modules ``roots``, of their packages and of every tools module they
    import, directly or not, found by reading their sources (nothing is imported)."""
    seen: set[Path] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        parts = name.split('.')
        packages = ['.'.join(parts[:i]) for i in range(1, len(parts))]
        for module in (*packages, name):
            path = module_file(module)
            if path is not None and path not in seen:
                seen.add(path)
                todo.extend(imported(path))
    return sorted(seen)


def read_stamp(path: Path) -> dict[str, str]:
    """A stamp file's fields ({} when there is none)."""
    path = Path(path)
    return json.loads(path.read_text(encoding='utf-8')) if path.is_file() else {}


def write_stamp(path: Path, **fields: str) -> None:
    write_atomic(Path(path), json.dumps(fields, indent=1) + '\n')
