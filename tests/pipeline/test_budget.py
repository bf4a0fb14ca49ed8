"""The main line of each section is written for a learner: within its word budget, with
at most three run values in a paragraph (tools/source/budget.py)."""

import pytest

from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.source import budget

VALUE = '<span data-book-value="gap:.2f">[gap]</span>'


def test_words_leave_out_markup_and_count_values_and_formulas_once():
    text = (
        '(sec-a)=\n```{container} fw-only-jax\nThe gap is ' + VALUE + ' nats, with $x^2 + y$\n'
        'and [a link](https://example.org/long/address).\n```\n\n$$\na = b + c\n$$\n'
    )
    # The gap is V nats, with F and [a link] F
    assert budget.word_count(text) == 11


def test_a_paragraph_with_four_values_is_crowded():
    three = ' '.join([VALUE] * 3)
    line = budget.measure(f'First {three}.\n\nSecond {three} and {VALUE}.')
    assert line.most_values == 4
    assert len(line.crowded) == 1
    assert line.crowded[0].startswith('Second ')


def test_the_main_line_ends_at_the_exercises_and_leaves_folded_asides_out():
    source = (
        'One two three.\n\n```{admonition} Kernels\n:class: dropdown\nFour five six seven.\n'
        '```\n\n```{admonition} Shown\nEight nine.\n```\n\n## Exercises\n\nTen.'
    )
    prose = budget.main_line_prose([_cell(source)])
    assert 'Ten' not in prose
    assert budget.aside_words(prose) == 4


def _cell(source):
    from nbformat.v4 import new_markdown_cell

    return new_markdown_cell(source)


@pytest.mark.parametrize('rel', sorted(budget.BUDGETS))
@pytest.mark.parametrize('framework', FRAMEWORKS)
def test_each_section_keeps_its_budget(rel, framework):
    line = budget.measure_section(rel, framework, Layout())
    assert line.words <= budget.BUDGETS[rel], f'{rel} [{framework}]: {line.words} words'
    assert line.aside_words <= budget.MAX_ASIDE_WORDS
    assert not line.crowded, f'more than {budget.MAX_VALUES} run values in: {line.crowded}'
