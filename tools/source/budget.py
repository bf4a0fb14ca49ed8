"""The length of a section's main line, as a learner of one framework reads it.

    python -m tools.source.budget

The main line is the prose of a section's notebook for one framework (its per-framework
prose included, the other's left out), from the top to the heading "Exercises"; code and
outputs do not count, nor do folded asides (an admonition of class ``dropdown``), which
are counted apart and may hold at most ``MAX_ASIDE_WORDS``: they are for what a learner
of the block may skip, not a place to move the main line to. Words are the tokens of
that prose once its markup is gone: a quoted run value, an inline or display formula
each count as one word. ``BUDGETS`` holds the most words each section's main line may
have, in either framework, and ``MAX_VALUES`` the most run values one paragraph may
quote: a result is said once, as its direction and rough size, and the output above it
shows the digits.
tests/pipeline/test_budget.py holds the book to both.
"""

from __future__ import annotations

import dataclasses
import re

from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.source.myst import References
from tools.source.sections import read_section
from tools.source.split import build_notebook

BUDGETS = {
    'transformer-block/transformer-block': 4500,
    'transformer-block/casebook': 4800,
    'transformer-block/block-by-hand': 5300,
    'transformer-block/vit': 3300,
}
MAX_VALUES = 3
MAX_ASIDE_WORDS = 800

EXERCISES = re.compile(r'^#+\s+Exercises\s*$', re.MULTILINE)
VALUE = re.compile(r'<span data-book-value="[^"]*">[^<]*</span>')
MARKUP = [
    (re.compile(r'\$\$.*?\$\$', re.DOTALL), ' F '),  # display maths: one word
    (re.compile(r'(?<!\\)\$[^$\n]+\$'), ' F '),  # inline maths
    (VALUE, ' V '),
    (re.compile(r'<[^>]+>'), ' '),  # other HTML tags
    (re.compile(r'^\s*(```|:::).*$', re.MULTILINE), ' '),  # directive fences and options
    (re.compile(r'^\s*:\w[\w-]*:.*$', re.MULTILINE), ' '),
    (re.compile(r'^\(.*\)=\s*$', re.MULTILINE), ' '),  # labels
    (re.compile(r'\]\([^)]*\)'), '] '),  # link targets
]
WORD = re.compile(r'\S*[A-Za-z0-9]\S*')
# A folded aside: ```{admonition} Title / :class: dropdown / ... / ``` (any fence length).
ASIDE = re.compile(
    r'^(?P<fence>`{3,})\{admonition\}[^\n]*\n(?P<options>(?::[^\n]*\n)*)(?P<body>.*?)^(?P=fence)\s*$',
    re.MULTILINE | re.DOTALL,
)


@dataclasses.dataclass(frozen=True)
class MainLine:
    words: int
    most_values: int  # in one paragraph
    crowded: list[str]  # the start of each paragraph with more than MAX_VALUES
    aside_words: int = 0


def main_line_prose(cells) -> str:
    """The Markdown of notebook cells (or a section's) from the top to the Exercises
    heading."""
    parts = []
    for cell in cells:
        if cell.cell_type != 'markdown':
            continue
        end = EXERCISES.search(cell.source)
        parts.append(cell.source[: end.start()] if end else cell.source)
        if end:
            break
    return '\n\n'.join(parts)


def word_count(markdown: str) -> int:
    for pattern, replacement in MARKUP:
        markdown = pattern.sub(replacement, markdown)
    return len(WORD.findall(markdown))


def measure(markdown: str) -> MainLine:
    paragraphs = [p for p in re.split(r'\n\s*\n', markdown) if p.strip()]
    counts = [len(VALUE.findall(p)) for p in paragraphs]
    crowded = [
        ' '.join(p.split()[:8]) for p, n in zip(paragraphs, counts, strict=True) if n > MAX_VALUES
    ]
    return MainLine(word_count(markdown), max(counts, default=0), crowded)


def aside_words(markdown: str) -> int:
    """The words of the folded asides in MyST ``markdown``."""
    return sum(
        word_count(match['body'])
        for match in ASIDE.finditer(markdown)
        if re.search(r'^:class:.*\bdropdown\b', match['options'], re.MULTILINE)
    )


def measure_section(rel: str, framework: str, layout: Layout, references=None) -> MainLine:
    section = read_section(layout, rel)
    folded = aside_words(main_line_prose(section.cells_for(framework)))
    notebook = build_notebook(section, framework, layout, references)
    line = measure(main_line_prose(notebook.cells))
    return dataclasses.replace(line, words=line.words - folded, aside_words=folded)


def main() -> None:
    layout = Layout()
    references = References.load(layout)
    print(f'{"section":40} {"framework":9} {"words":>6} {"budget":>6} {"asides":>6} {"values":>6}')
    for rel, budget in BUDGETS.items():
        for framework in FRAMEWORKS:
            line = measure_section(rel, framework, layout, references)
            print(
                f'{rel:40} {framework:9} {line.words:6} {budget:6} '
                f'{line.aside_words:6} {line.most_values:6}'
            )


if __name__ == '__main__':
    main()
