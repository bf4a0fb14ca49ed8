"""Cleaning cell outputs, and comparing the outputs of the two frameworks.

Cleaning (applied to every executed notebook): no ANSI escapes, no progress-bar
carriage returns, kernel temp files shown as ``<cell>``, files of the project and of
installed packages by their paths inside the project or ``site-packages/``, so that no
output names the machine it ran on.  Comparing (merge): the cleaned outputs also
without memory addresses, execution counts and metadata.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tools.paths import ROOT

if TYPE_CHECKING:
    from nbformat import NotebookNode

ANSI = re.compile(r'\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]')
KERNEL_FILE = re.compile(r"[^\s'\"()]*/ipykernel_\d+/\d+\.py")
PROJECT_DIR = re.compile(re.escape(str(ROOT)) + r'/(?!\.venv/)')
SITE_PACKAGES = re.compile(r"[^\s'\"()]*/(?:site|dist)-packages/")
ADDRESS = re.compile(r'\b0x[0-9a-fA-F]{4,}\b')
TEXT_TYPES = ('text/plain', 'text/html', 'text/markdown', 'text/latex')


def clean_text(text: str) -> str:
    text = ANSI.sub('', text)
    text = KERNEL_FILE.sub('<cell>', text)
    text = SITE_PACKAGES.sub('site-packages/', text)
    text = PROJECT_DIR.sub('', text)
    text = re.sub(r'\r+\n', '\n', text)
    # What a terminal shows: of each line, the part after its last carriage return.
    return '\n'.join(line.rsplit('\r', 1)[-1] for line in text.split('\n'))


def clean_output(output: dict) -> dict:
    kind = output.get('output_type')
    if kind == 'stream':
        output['text'] = clean_text(output.get('text', ''))
    elif kind == 'error':
        output['evalue'] = clean_text(output.get('evalue', ''))
        output['traceback'] = [clean_text(line) for line in output.get('traceback', [])]
    elif kind in ('execute_result', 'display_data'):
        data = output.get('data', {})
        for mime in TEXT_TYPES:
            if isinstance(data.get(mime), str):
                data[mime] = clean_text(data[mime])
    return output


def clean_notebook(notebook: NotebookNode) -> None:
    for cell in notebook.cells:
        if cell.cell_type == 'code':
            cell.outputs = [
                clean_output(o)
                for o in cell.outputs
                if not (o.get('output_type') == 'stream' and not clean_text(o.get('text', '')))
            ]


def comparable(outputs: list) -> list:
    """A form of a cell's outputs in which equal results compare equal."""
    result = []
    for output in outputs:
        kind = output.get('output_type')
        if kind == 'stream':
            text = ADDRESS.sub('0x…', clean_text(output.get('text', '')))
            if result and result[-1][0] == kind and result[-1][1] == output.get('name'):
                result[-1] = (kind, output.get('name'), result[-1][2] + text)
            else:
                result.append((kind, output.get('name'), text))
        elif kind == 'error':
            result.append(
                (
                    kind,
                    output.get('ename'),
                    ADDRESS.sub('0x…', clean_text(output.get('evalue', ''))),
                )
            )
        else:
            data = {}
            for mime, value in output.get('data', {}).items():
                if isinstance(value, list):
                    value = ''.join(value)
                if mime in TEXT_TYPES and isinstance(value, str):
                    value = ADDRESS.sub('0x…', clean_text(value))
                data[mime] = value if isinstance(value, str) else repr(value)
            result.append((kind, tuple(sorted(data.items()))))
    return result
