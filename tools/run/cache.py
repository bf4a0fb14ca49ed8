"""The content hash that decides whether a notebook must run again (a tools.stamps
digest, kept in the executed notebook's metadata).

It covers what can change a notebook's outputs: the source of its code cells (and
whether each may raise), every ``d2l_mini/*.py`` file, ``requirements.txt`` and the
installed builds of the frameworks (a CUDA build of the same version counts as a
change) and the full-protocol switch of ``d2l_mini.settings``.  Prose is left out, so
editing Markdown re-executes nothing; so is the install cell, which does nothing where
the book is executed.
"""

from __future__ import annotations

import functools
from importlib import metadata

import nbformat

from tools.frameworks import TABLE
from tools.paths import Layout
from tools.source.colab import CELL_ID as INSTALL_CELL_ID
from tools.stamps import Digest
from tools.steps import UsageError

# Bump when execution or output cleaning changes in a way that alters outputs.
CACHE_VERSION = '1'
METADATA_KEY = 'book_execution'


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
    """The full-protocol switch of d2l_mini.settings, which reads it from the environment
    when first imported (here, and not with this module, so that a bad value stops only
    the steps that hash notebooks)."""
    try:
        from d2l_mini import settings
    except ValueError as error:
        raise UsageError(str(error)) from None
    return settings.FULL_PROTOCOL


def notebook_hash(notebook: nbformat.NotebookNode, layout: Layout) -> str:
    """The digest (tools.stamps) of what an executed notebook is made from."""
    digest = Digest(layout).text('cache-version', CACHE_VERSION)
    for cell in hashed_code_cells(notebook):
        may_raise = 'raises-exception' in cell.metadata.get('tags', [])
        digest.text(f'code raises={may_raise}', cell.source)
    digest.files(sorted(layout.library.rglob('*.py')))
    digest.file(layout.requirements)
    digest.text('installed', installed_builds())
    digest.text('full-protocol', str(full_protocol()))
    return digest.hexdigest()


def recorded(notebook: nbformat.NotebookNode) -> dict:
    """What the execute step stored in an executed notebook's metadata ({} if none)."""
    return dict(notebook.metadata.get(METADATA_KEY, {}))
