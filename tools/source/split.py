"""Split one MyST-NB section into a PyTorch notebook and a JAX notebook.

``book/<rel>.md`` -> ``_build/notebooks/{pytorch,jax}/<rel>.ipynb``.  Markdown and
untagged code cells go to both notebooks, cells tagged ``pytorch`` or ``jax`` only
to theirs.  Every cell keeps the id of its position in the source (``c007``), the
same in both notebooks; the first cell installs what Colab or a fresh Jupyter lacks
(tools.source.colab).  The framework tags are dropped (merge reads them again from the
source), other tags are kept.
"""

from __future__ import annotations

import nbformat

from tools.frameworks import FRAMEWORKS
from tools.paths import Layout, write_atomic
from tools.source import colab
from tools.source.myst import Converter, References
from tools.source.sections import Section, read_section

KERNELSPEC = {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}


def build_notebook(
    section: Section, framework: str, layout: Layout, references: References | None = None
) -> nbformat.NotebookNode:
    """The notebook of one framework, as it opens in Jupyter or Colab."""
    cells = section.cells_for(framework)
    references = references or References.load(layout)
    folder = section.path.parent.relative_to(layout.book).as_posix()
    converter = Converter(
        references,
        section.path.parent,
        [c.source for c in cells if c.cell_type == 'markdown'],
        framework,
        '' if folder == '.' else folder,
    )
    sources = [cell.source for cell in cells if cell.cell_type == 'code']
    install = nbformat.v4.new_code_cell(colab.install_source(framework, layout, sources=sources))
    install.id = colab.CELL_ID
    install.metadata = {'tags': ['remove-cell'], **colab.FOLDED}
    notebook_cells = [install]
    for cell in cells:
        metadata = {k: v for k, v in cell.metadata.items() if k != 'tags'}
        tags = [tag for tag in cell.tags if tag not in FRAMEWORKS]
        if tags:
            metadata['tags'] = tags
        if cell.cell_type == 'markdown':
            text, attachments = converter.convert(cell.source)
            new = nbformat.v4.new_markdown_cell(text, metadata=metadata)
            if attachments:
                new.attachments = attachments
        elif cell.cell_type == 'code':
            new = nbformat.v4.new_code_cell(cell.source, metadata=metadata)
        else:
            new = nbformat.v4.new_raw_cell(cell.source, metadata=metadata)
        new.id = cell.id
        notebook_cells.append(new)
    kernelspec = section.metadata.get('kernelspec') or KERNELSPEC
    metadata = {'kernelspec': dict(kernelspec), 'language_info': {'name': 'python'}}
    notebook = nbformat.v4.new_notebook(cells=notebook_cells, metadata=metadata)
    nbformat.validate(notebook)
    return notebook


def split_section(rel: str, layout: Layout, references: References | None = None) -> dict:
    """Write both notebooks of a section; returns ``{framework: path}``."""
    section = read_section(layout, rel)
    references = references or References.load(layout)
    paths = {}
    for framework in FRAMEWORKS:
        notebook = build_notebook(section, framework, layout, references)
        paths[framework] = layout.notebook(framework, rel)
        write_atomic(paths[framework], nbformat.writes(notebook) + '\n')
    return paths


def split_all(names: list[str], layout: Layout) -> dict[str, dict]:
    references = References.load(layout)
    return {rel: split_section(rel, layout, references) for rel in names}
