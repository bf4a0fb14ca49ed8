"""Numbers in the prose taken from the run, per framework.

A section's Markdown quotes a value that a code cell recorded with
``d2l.glue(name, value)`` as ``{value}`name` `` or ``{value}`name:spec` `` (``spec``
a Python format spec such as ``.2f``).  Prose that holds for one framework only
sits in a ``{container} fw-only-pytorch`` (or ``fw-only-jax``) block.

- split: each framework's notebook keeps only its own ``fw-only`` blocks, and a
  value reference becomes a placeholder that names the value;
- execute: the executed notebook's placeholders become the values it recorded, so
  a reader's notebook shows its own run's numbers as text;
- merge: the page's prose shows both frameworks' values, each in a span that the
  framework tabs show or hide, or one span where the two read the same as printed;
  the records themselves leave the outputs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from d2l_mini.glue import MIME_TYPE
from tools.steps import StepFailed

if TYPE_CHECKING:
    from nbformat import NotebookNode

ROLE = re.compile(r'\{value\}`(?P<name>[A-Za-z_]\w*)(?::(?P<spec>[^`]*))?`')
PLACEHOLDER = re.compile(
    r'<span data-book-value="(?P<name>[A-Za-z_]\w*)(?::(?P<spec>[^"]*))?">[^<]*</span>'
)


class MissingValue(StepFailed):
    """The prose quotes a value that no cell recorded, or cannot format it."""


def is_record(output: dict) -> bool:
    return output.get('output_type') == 'display_data' and MIME_TYPE in output.get('data', {})


def without_records(outputs: list) -> list:
    return [output for output in outputs if not is_record(output)]


def recorded_values(notebook: NotebookNode) -> dict:
    """``{name: value}`` of every ``d2l.glue`` call in an executed notebook."""
    values = {}
    for cell in notebook.cells:
        for output in cell.get('outputs', []) if cell.cell_type == 'code' else []:
            if is_record(output):
                record = output['data'][MIME_TYPE]
                values[record['name']] = record['value']
    return values


def formatted(values: dict, name: str, spec: str | None, where: str) -> str:
    if name not in values:
        raise MissingValue(
            f'{where} quotes {{value}}`{name}`, but no cell recorded it: '
            f'call d2l.glue({name!r}, ...) in a code cell before the prose runs'
        )
    try:
        return format(values[name], spec or '')
    except (TypeError, ValueError) as error:
        raise MissingValue(
            f'{where}: format spec {spec!r} does not fit {name} = {values[name]!r} ({error})'
        ) from None


def placeholder(name: str, spec: str | None) -> str:
    """What a value reference becomes in a notebook before it has run."""
    key = f'{name}:{spec}' if spec else name
    return f'<span data-book-value="{key}">[{name}]</span>'


def fill_notebook(notebook: NotebookNode) -> None:
    """Replace the placeholders of an executed notebook's prose by the values it
    recorded.  A placeholder that cannot be filled stays: merging reports why."""
    recorded = recorded_values(notebook)

    def fill(match: re.Match) -> str:
        try:
            return formatted(recorded, match['name'], match['spec'], 'an executed notebook')
        except MissingValue:
            return match[0]

    for cell in notebook.cells:
        if cell.cell_type == 'markdown' and 'data-book-value' in cell.source:
            cell.source = PLACEHOLDER.sub(fill, cell.source)


def framework_spans(text: str, values: dict[str, dict], where: str) -> str:
    """MyST prose with each value reference as one span per framework, or one span
    for all of them where their values read the same as printed.

    ``values`` maps each framework to its recorded values; frameworks.css shows the
    span of the selected framework (and, without JavaScript or side by side, all of
    them, labelled); a ``fw-same`` span shows in every view, unlabelled.
    """

    def spans(match: re.Match) -> str:
        texts = {
            fw: formatted(recorded, match['name'], match['spec'], f'{where} [{fw}]')
            for fw, recorded in values.items()
        }
        if len(set(texts.values())) == 1:
            return f'[{next(iter(texts.values()))}]{{.fw-value .fw-same}}'
        return ''.join(f'[{text}]{{.fw-value .fw-only-{fw}}}' for fw, text in texts.items())

    return ROLE.sub(spans, text)
