"""Code lines fit a column: every line of a code cell that readers see (in the HTML or
in a downloaded notebook) is at most 79 characters long (PEP 8), so that a code box
shows a whole line in one framework's column of the side-by-side view and in Jupyter.

Every code cell of a section goes into its framework's notebook, claim cells included
(the HTML hides them, the notebooks do not), so every code cell is checked.  Read from
the Markdown sources: no build, no kernel.
"""

from __future__ import annotations

from pathlib import Path

from tests.project import FRONT_MATTER
from tools.paths import Layout
from tools.source.sections import SourceCell, find_sections, read_section

LIMIT = 79


def cell_body_start(lines: list[str], cell: SourceCell) -> int:
    """The 0-based index in ``lines`` of the cell's first source line: after its fence
    and its options (``:tags: ...`` lines, or a ``---`` block)."""
    i = cell.line  # the line after the fence (cell.line counts from 1)
    if i < len(lines) and lines[i].strip() == '---':
        i += 1
        while i < len(lines) and lines[i].strip() != '---':
            i += 1
        return i + 1
    while i < len(lines) and lines[i].startswith(':'):
        i += 1
    return i


def long_code_lines(path: Path, cells, page: str, limit: int = LIMIT) -> list[str]:
    """``page:line: N characters: <line>`` for every code line longer than limit."""
    lines = path.read_text(encoding='utf-8').split('\n')
    found = []
    for cell in cells:
        if cell.cell_type != 'code':
            continue
        start = cell_body_start(lines, cell)
        for offset, line in enumerate(cell.source.split('\n')):
            if len(line) > limit:
                where = f'{page}:{start + offset + 1}'
                found.append(f'{where}: {len(line)} characters: {line.strip()}')
    return found


def book_long_lines(layout: Layout, limit: int = LIMIT) -> list[str]:
    found = []
    for name in find_sections(layout):
        section = read_section(layout, name)
        page = section.path.relative_to(layout.root).as_posix()
        found += long_code_lines(section.path, section.cells, page, limit)
    return found


def test_every_code_line_fits_79_characters():
    found = book_long_lines(Layout())
    assert not found, (
        f'{len(found)} code lines longer than {LIMIT} characters (break them inside '
        'brackets, before an operator, or between the parts of a string):\n' + '\n'.join(found)
    )


SECTION = (
    FRONT_MATTER
    + """
# A page

Some prose, longer than seventy-nine characters, which is not code and is not checked.

```{{code-cell}} ipython3
:tags: [pytorch]
x = 1
{long}
```

```{{code-cell}} ipython3
:tags: [jax]
x = 1
y = 2
```
"""
)


def test_a_long_line_is_named_with_its_page_and_line(tmp_path):
    long = 'y = ' + ' + '.join(['1'] * 30)  # 90 characters
    book = tmp_path / 'book'
    book.mkdir()
    (book / 'page.md').write_text(SECTION.format(long=long), encoding='utf-8')
    layout = Layout(root=tmp_path)
    found = book_long_lines(layout)
    assert found == [f'book/page.md:20: {len(long)} characters: {long}']
    lines = (book / 'page.md').read_text(encoding='utf-8').split('\n')
    assert lines[19] == long


def test_a_line_of_79_characters_passes(tmp_path):
    book = tmp_path / 'book'
    book.mkdir()
    fits = 'y = ' + 'z' * 75
    assert len(fits) == LIMIT
    (book / 'page.md').write_text(SECTION.format(long=fits), encoding='utf-8')
    assert book_long_lines(Layout(root=tmp_path)) == []
