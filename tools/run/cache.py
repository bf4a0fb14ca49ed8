"""The content hash that decides whether a notebook must run again (a tools.stamps
digest, kept in the executed notebook's metadata).

It covers what can change a notebook's outputs, and nothing else:

- the source of its code cells (and whether each may raise); prose is left out, so
  editing Markdown re-executes nothing; so is the install cell, which does nothing
  where the book is executed;
- the ``d2l_mini`` modules the notebook runs: its framework's module, every module the
  notebook's code names, and the library modules those import, followed through their
  imports; each as its code without docstrings and comments (``code_text``), so that
  a docstring fix re-executes nothing and an edit to ``torch.py`` re-executes the
  PyTorch notebooks only;
- the code that executes it (tools/run/kernel.py and what it imports, and the kernels'
  start-up, normalised the same way), the build's matplotlib settings, and the
  kernels' environment of ``_config.yml`` (``kernel_env``);
- ``requirements.txt``, the installed builds of the frameworks (a CUDA build of the same
  version counts as a change) and the full-protocol switch of ``d2l_mini.settings``.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import nbformat

from tools.frameworks import TABLE, framework
from tools.paths import Layout
from tools.run.kernel import MATPLOTLIBRC, STARTUP
from tools.run.settings import kernel_env
from tools.source.colab import CELL_ID as INSTALL_CELL_ID
from tools.stamps import Digest, module_files
from tools.steps import UsageError

METADATA_KEY = 'book_execution'
LIBRARY = 'd2l_mini'
# The module that runs a notebook in a kernel; its tools imports count too.
EXECUTING_CODE = 'tools.run.kernel'


@functools.cache
def installed_builds() -> str:
    """``name==version`` of each framework package installed here (``+cpu`` included)."""
    lines = []
    for name in (name for fw in TABLE for name in fw.cache_packages):
        try:
            lines.append(f'{name}=={metadata.version(name)}')
        except metadata.PackageNotFoundError:
            lines.append(f'{name} absent')
    return '\n'.join(lines)


def hashed_code_cells(notebook: nbformat.NotebookNode) -> list:
    """The code cells whose source the hash covers (all but the install cell)."""
    return [
        cell
        for cell in notebook.cells
        if cell.cell_type == 'code' and cell.get('id') != INSTALL_CELL_ID
    ]


def full_protocol() -> bool:
    """The full-protocol switch of d2l_mini.settings; a bad value stops only the steps
    that hash notebooks, with the setting's own message."""
    from d2l_mini import settings

    try:
        return settings.full_protocol()
    except ValueError as error:
        raise UsageError(str(error)) from None


def _without_docstring(body: list[ast.stmt]) -> None:
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        body[:] = body[1:] or [ast.Pass()]


def code_text(path: Path) -> str:
    """What a Python file computes: its syntax tree without docstrings, comments or
    line numbers (``ast.dump``). A file that does not parse counts as its text."""
    source = path.read_text(encoding='utf-8')
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            _without_docstring(node.body)
    return ast.dump(tree)


def _library_module(library: Path, name: str) -> Path | None:
    path = library / f'{name}.py'
    return path if path.is_file() else None


def _parsed(source: str) -> ast.Module | None:
    """A code cell or module as Python, without a cell's IPython lines (%pip, !ls)."""
    for text in (
        source,
        '\n'.join(
            line for line in source.splitlines() if not line.lstrip().startswith(('%', '!'))
        ),
    ):
        try:
            return ast.parse(text)
        except SyntaxError:
            continue
    return None


def _imported_names(source: str) -> set[str]:
    """The library's modules that ``source`` imports, as names (``torch``, ``settings``):
    ``import d2l_mini.x``, ``from d2l_mini.x import y``, ``from d2l_mini import x``."""
    tree = _parsed(source)
    names: set[str] = set()
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Import):
            modules = [alias.name.split('.') for alias in node.names]
            names.update(parts[1] for parts in modules if parts[0] == LIBRARY and len(parts) > 1)
        elif isinstance(node, ast.ImportFrom):
            parts = [LIBRARY] * node.level + (node.module or '').split('.')
            parts = [part for part in parts if part]
            if parts[0] != LIBRARY:
                continue
            names.update(parts[1:2] or [alias.name for alias in node.names])
    return names


def _named_modules(source: str, library: Path) -> set[Path]:
    """The files of the library's modules that ``source`` imports."""
    return {path for name in _imported_names(source) if (path := _library_module(library, name))}


def library_files(roots: Iterable[Path], library: Path) -> list[Path]:
    """``roots``, the package's ``__init__.py`` and every library module they import,
    directly or not (found by reading the sources; nothing is imported)."""
    todo = [*roots, library / '__init__.py']
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        todo.extend(_named_modules(path.read_text(encoding='utf-8'), library))
    return sorted(seen)


def notebook_library(
    notebook: nbformat.NotebookNode, framework_name: str, layout: Layout
) -> list[Path]:
    """The library files a notebook of ``framework_name`` runs."""
    library = layout.library
    roots = {library / framework(framework_name).module}
    for cell in hashed_code_cells(notebook):
        roots |= _named_modules(cell.source, library)
    return library_files(roots, library)


def _code(digest: Digest, paths: Iterable[Path]) -> None:
    for path in paths:
        digest.text(f'code {path.parent.name}/{path.name}', code_text(path))


def notebook_hash(notebook: nbformat.NotebookNode, framework_name: str, layout: Layout) -> str:
    """The digest (tools.stamps) of what an executed notebook of ``framework_name`` is
    made from."""
    digest = Digest(layout)
    for cell in hashed_code_cells(notebook):
        may_raise = 'raises-exception' in cell.metadata.get('tags', [])
        digest.text(f'code raises={may_raise}', cell.source)
    _code(digest, notebook_library(notebook, framework_name, layout))
    _code(digest, [*module_files([EXECUTING_CODE]), STARTUP])
    digest.file(MATPLOTLIBRC)
    env = kernel_env(layout)
    digest.text('kernel_env', '\n'.join(f'{name}={env[name]}' for name in sorted(env)))
    digest.file(layout.requirements)
    digest.text('installed', installed_builds())
    digest.text('full-protocol', str(full_protocol()))
    return digest.hexdigest()


def recorded(notebook: nbformat.NotebookNode) -> dict:
    """What the execute step stored in an executed notebook's metadata ({} if none)."""
    return dict(notebook.metadata.get(METADATA_KEY, {}))
