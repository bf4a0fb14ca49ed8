"""Cleaning cell outputs, and comparing the outputs of the two frameworks.

Cleaning (applied to every executed notebook): no ANSI escapes, no progress-bar
carriage returns, kernel temp files shown as ``<cell>``, files of the project and of
installed packages by their paths inside the project or ``site-packages/``, so that no
output names the machine it ran on.  Comparing (merge): the cleaned outputs also
without memory addresses, execution counts and metadata.  Warnings (``warnings_in``):
the lines of a cell's output that Python's warnings module or a logger printed as a
warning, which no output of the book may hold.
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
# "<file>:<line>: <Category>: <message>" (the warnings module) or "WARNING:<logger>:<message>"
# (logging's default format, as absl and JAX log).
WARNING_LINE = re.compile(r'^(?:\S.*?:\d+: \w*Warning: |WARNING:[\w.]+:).*$', re.MULTILINE)
# The warnings an output may hold, each with the reason: none. A framework's warning at
# import time that the book cannot avoid would go here, matched by a regular expression.
ALLOWED_WARNINGS: dict[str, str] = {}


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


def warnings_in(cell: NotebookNode) -> list[str]:
    """The warning lines of a code cell's stream outputs that ALLOWED_WARNINGS lets through
    none of."""
    found = []
    for output in cell.get('outputs', []):
        if output.get('output_type') == 'stream':
            for match in WARNING_LINE.finditer(clean_text(output.get('text', ''))):
                line = match.group(0)
                if not any(re.search(allowed, line) for allowed in ALLOWED_WARNINGS):
                    found.append(line)
    return found
