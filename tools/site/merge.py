"""Merge the two executed notebooks of a section into the one page the book renders.

``_build/executed/{pytorch,jax}/<rel>.ipynb`` -> ``_build/merged/<rel>.ipynb``, in
source order: prose once, in its MyST form (the HTML build resolves its references);
framework-tagged cells with their outputs and tags; an untagged code cell once when
both frameworks printed the same, else twice, tagged ``pytorch`` then ``jax``.
The Colab install cell is left out.  Values that the prose quotes become one span per
framework, and the cells' records of them leave the outputs (tools/source/values.py).
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from tools.frameworks import FRAMEWORKS
from tools.paths import Layout, write_atomic
from tools.run.outputs import comparable
from tools.source.sections import Section, SourceCell, read_section
from tools.source.split import KERNELSPEC
from tools.source.values import framework_spans, recorded_values, without_records
from tools.steps import StepFailed


class NotExecuted(StepFailed):
    """An executed notebook is missing or older than its source."""


def _executed_cell(
    executed: dict[str, dict[str, nbformat.NotebookNode]],
    framework: str,
    cell: SourceCell,
    layout: Layout,
    rel: str,
) -> nbformat.NotebookNode:
    found = executed[framework].get(cell.id)
    if found is None or found.source != cell.source:
        raise NotExecuted(
            f'{layout.executed(framework, rel)} does not match {layout.source(rel)} '
            f'(cell {cell.index}, id {cell.id}): '
            f'run `python -m tools execute {layout.source(rel)}` first'
        )
    return found


def _code_cell(
    cell: SourceCell, run: nbformat.NotebookNode, outputs: list, tags: list[str], cell_id: str
) -> nbformat.NotebookNode:
    metadata = copy.deepcopy({k: v for k, v in cell.metadata.items() if k != 'tags'})
    if tags:
        metadata['tags'] = tags
    new = nbformat.v4.new_code_cell(
        cell.source,
        metadata=metadata,
        outputs=copy.deepcopy(outputs),
        execution_count=run.execution_count,
    )
    new.id = cell_id
    return new


def all_alike(outputs: list[list]) -> bool:
    return all(other == outputs[0] for other in outputs[1:])


def merge_cells(
    section: Section,
    executed: dict[str, dict[str, nbformat.NotebookNode]],
    layout: Layout,
    recorded: dict[str, dict] | None = None,
) -> list[nbformat.NotebookNode]:
    """The merged cells, from the section's source and ``{framework: {id: cell}}``.

    ``recorded`` holds each framework's ``d2l.glue`` values, which the prose quotes.
    """
    recorded = recorded or {fw: {} for fw in FRAMEWORKS}
    where = str(layout.source(section.rel).relative_to(layout.root))
    cells = []
    for cell in section.cells:
        if cell.cell_type != 'code':
            make = (
                nbformat.v4.new_markdown_cell
                if cell.cell_type == 'markdown'
                else nbformat.v4.new_raw_cell
            )
            source = (
                framework_spans(cell.source, recorded, where)
                if cell.cell_type == 'markdown'
                else cell.source
            )
            new = make(source, metadata=copy.deepcopy(cell.metadata))
            new.id = cell.id
            cells.append(new)
            continue
        runs = {
            fw: _executed_cell(executed, fw, cell, layout, section.rel) for fw in cell.frameworks
        }
        outputs = {fw: without_records(run.outputs) for fw, run in runs.items()}
        if cell.is_framework_cell:
            ((framework, run),) = runs.items()
            cells.append(_code_cell(cell, run, outputs[framework], cell.tags, cell.id))
        elif all_alike([comparable(shown) for shown in outputs.values()]):
            first = FRAMEWORKS[0]
            cells.append(_code_cell(cell, runs[first], outputs[first], cell.tags, cell.id))
        else:
            for framework in FRAMEWORKS:
                cells.append(
                    _code_cell(
                        cell,
                        runs[framework],
                        outputs[framework],
                        [framework] + cell.tags,
                        f'{cell.id}-{framework}',
                    )
                )
    return cells


def merge_section(rel: str, layout: Layout) -> nbformat.NotebookNode:
    section = read_section(layout, rel)
    notebooks = {}
    for framework in FRAMEWORKS:
        path = layout.executed(framework, rel)
        if not path.is_file():
            raise NotExecuted(
                f'{path} is missing: run `python -m tools execute {layout.source(rel)}` first'
            )
        notebooks[framework] = nbformat.read(path, as_version=4)
    executed = {fw: {cell.get('id'): cell for cell in nb.cells} for fw, nb in notebooks.items()}
    metadata = {
        'kernelspec': dict(KERNELSPEC),
        'language_info': notebooks[FRAMEWORKS[0]].metadata.get(
            'language_info', {'name': 'python'}
        ),
        'book': {'section': rel},
    }
    recorded = {fw: recorded_values(nb) for fw, nb in notebooks.items()}
    merged = nbformat.v4.new_notebook(
        cells=merge_cells(section, executed, layout, recorded), metadata=metadata
    )
    nbformat.validate(merged)
    return merged


def merge_all(names: list[str], layout: Layout) -> dict[str, Path]:
    paths = {}
    for rel in names:
        paths[rel] = layout.merged(rel)
        write_atomic(paths[rel], nbformat.writes(merge_section(rel, layout)) + '\n')
    return paths
