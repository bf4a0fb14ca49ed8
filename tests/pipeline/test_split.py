"""tools.source.split: one MyST section -> a PyTorch notebook and a JAX notebook."""

import base64

import nbformat
import pytest

from tools.cli import main
from tools.paths import Layout
from tools.source.myst import Converter, References
from tools.source.sections import (
    AuthoringError,
    Section,
    find_sections,
    in_toc_order,
    read_section,
    section_name,
    twin_groups,
)
from tools.source.split import split_section

BIB = """@article{vaswani2017attention,
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki},
  title = {Attention is all you need}, year = {2017}}
@article{ba2016layer,
  author = {Ba, Jimmy Lei and Kiros, Jamie Ryan}, title = {Layer normalization}, year = {2016}}
"""


def routed(project):
    code = project.code
    project.section(
        'ch/routes',
        '# Routes\n\nIntro prose.\n',
        code('import math', 'pytorch'),
        code('import cmath', 'jax'),
        'Between the twins and the shared cell.\n',
        code('shared = 1 + 1'),
        code('assert shared == 2', 'pytorch', 'claim', 'remove-cell'),
        code('assert shared == 2', 'jax', 'claim', 'remove-cell'),
        code('1 / 0', 'raises-exception'),
    )
    return split_section('ch/routes', project.layout)


def read(path):
    return nbformat.read(path, as_version=4)


def test_tags_route_cells_and_untagged_cells_go_to_both(project):
    paths = routed(project)
    sources = {
        fw: [c.source for c in read(p).cells[1:] if c.cell_type == 'code']
        for fw, p in paths.items()
    }
    assert sources['pytorch'] == ['import math', 'shared = 1 + 1', 'assert shared == 2', '1 / 0']
    assert sources['jax'] == ['import cmath', 'shared = 1 + 1', 'assert shared == 2', '1 / 0']
    for path in paths.values():
        prose = [c.source for c in read(path).cells if c.cell_type == 'markdown']
        assert prose == ['# Routes\n\nIntro prose.', 'Between the twins and the shared cell.']


def test_paths_mirror_the_source_tree(project):
    paths = routed(project)
    build = project.layout.build
    assert paths == {
        'pytorch': build / 'notebooks/pytorch/ch/routes.ipynb',
        'jax': build / 'notebooks/jax/ch/routes.ipynb',
    }


def test_ids_come_from_source_positions_and_are_stable(project):
    paths = routed(project)
    ids = {fw: [c.id for c in read(p).cells] for fw, p in paths.items()}
    assert ids['pytorch'] == ['install', 'c000', 'c001', 'c003', 'c004', 'c005', 'c007']
    assert ids['jax'] == ['install', 'c000', 'c002', 'c003', 'c004', 'c006', 'c007']
    first = {fw: p.read_bytes() for fw, p in paths.items()}
    assert {
        fw: p.read_bytes() for fw, p in split_section('ch/routes', project.layout).items()
    } == first


def test_framework_tags_go_other_tags_stay(project):
    paths = routed(project)
    for path in paths.values():
        tags = {c.source: c.metadata.get('tags') for c in read(path).cells[1:]}
        assert tags['assert shared == 2'] == ['claim', 'remove-cell']
        assert tags['1 / 0'] == ['raises-exception']
        assert all(fw not in (t or []) for t in tags.values() for fw in ('pytorch', 'jax'))


def test_notebooks_are_plain_jupyter_notebooks(project):
    for path in routed(project).values():
        notebook = read(path)
        nbformat.validate(notebook)
        assert notebook.metadata.kernelspec.name == 'python3'
        assert 'jupytext' not in notebook.metadata


def test_split_without_the_framework_extras_is_a_usage_error(project, capsys):
    project.section('ch/a', '# A\n')
    project.layout.pyproject.unlink()
    assert main(['split'], project.layout) == 2
    err = capsys.readouterr().err
    assert err.startswith('python -m tools split: error: ')
    assert 'pyproject.toml [project.optional-dependencies]' in err
    assert 'Traceback' not in err


def test_myst_syntax_becomes_plain_markdown(project):
    (project.layout.book / 'references.bib').write_text(BIB)
    (project.layout.book / 'img').mkdir()
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>\n'
    (project.layout.book / 'img' / 'wiring.svg').write_bytes(svg)
    project.page('other', '(sec-other)=\n# The other page\n')
    project.section(
        'ch/myst',
        '(sec-here)=\n# Here\n',
        'As {cite:t}`ba2016layer` show, and as {cite:p}`vaswani2017attention,ba2016layer` '
        'say; {cite}`missing2020`. See {ref}`sec-other`, {ref}`that page <sec-other>`, '
        '{numref}`fig-wiring` and {eq}`eq-sum`. Code: `{ref}` stays.\n',
        '$$\ny = a + b\n$$ (eq-sum)\n',
        ':::{figure} ../img/wiring.svg\n:name: fig-wiring\n:width: 50%\n\nThe wiring.\n:::\n',
        '```{note}\nA note with {ref}`sec-here`.\n```\n',
        "```python\nprint('{ref}`kept`')\n```\n",
        project.code('x = 1'),
    )
    path = split_section('ch/myst', project.layout)['pytorch']
    cells = [c for c in read(path).cells if c.cell_type == 'markdown']
    text = '\n\n'.join(c.source for c in cells)
    assert '(sec-here)=' not in text and text.startswith('# Here')
    assert 'Ba and Kiros (2016) show' in text
    assert '(Vaswani et al., 2017; Ba and Kiros, 2016) say' in text
    assert '[missing2020]' in text
    assert 'See The other page, that page, Figure 1 and (1).' in text
    assert '`{ref}` stays' in text
    assert '$$\ny = a + b\n\\tag{1}\n$$' in text and '(eq-sum)' not in text
    assert '![The wiring.](attachment:wiring.svg)' in text and '*Figure 1: The wiring.*' in text
    assert '> **Note**\n>\n> A note with Here.' in text
    assert "print('{ref}`kept`')" in text
    assert ':::' not in text and '```{' not in text
    figure_cell = next(c for c in cells if 'attachment:' in c.source)
    assert base64.b64decode(figure_cell.attachments['wiring.svg']['image/svg+xml']) == svg


def test_sections_are_pages_with_notebook_front_matter(project):
    project.section('ch/a', '# A\n')
    project.page('ch/index', '---\ntitle: Chapter\n---\n# Chapter\n')
    assert find_sections(project.layout) == ['ch/a']
    assert section_name(project.layout, str(project.layout.book / 'ch/a.md')) == 'ch/a'
    with pytest.raises(ValueError, match='plain page'):
        section_name(project.layout, str(project.layout.book / 'ch/index.md'))
    with pytest.raises(ValueError, match='no-such'):
        section_name(project.layout, 'book/no-such.md')
    assert main(['split'], project.layout) == 0
    assert project.layout.notebook('jax', 'ch/a').is_file()
    assert not project.layout.notebook('jax', 'ch/index').exists()


def test_a_book_outside_the_project_is_ordered_by_the_toc(project, tmp_path):
    project.layout = Layout(project.root, book=tmp_path / 'elsewhere')
    for rel in ('ch/a', 'ch/b'):
        project.section(rel, f'# {rel}\n')
    project.layout.toc.write_text('root: index\nchapters:\n- file: ch/b\n- file: ch/a\n')
    assert in_toc_order(project.layout, ['ch/a', 'ch/b']) == ['ch/b', 'ch/a']


def test_references_come_from_the_book_s_pages_only(project):
    project.page('ch/index', '(ch-label)=\n# The chapter\n')
    project.page('_templates/note', '(template-label)=\n# A template\n')
    project.page('.drafts/old', '(draft-label)=\n# A draft\n')
    assert References.load(project.layout).titles == {'ch-label': 'The chapter'}


def test_a_cell_tagged_with_both_frameworks_is_rejected(project):
    project.section('ch/both', project.code('x = 1', 'pytorch', 'jax'))
    with pytest.raises(AuthoringError, match=r'ch/both.md:\d+: cell 0: tagged pytorch and jax'):
        read_section(project.layout, 'ch/both')


@pytest.mark.parametrize(
    'blocks, broken, rule',
    [
        # the JAX twin first
        (
            [
                '```{code-cell} ipython3\n:tags: [jax]\nx = 1\n```\n',
                '```{code-cell} ipython3\n:tags: [pytorch]\nx = 1\n```\n',
            ],
            0,
            'needs its pytorch twin before',
        ),
        # prose between the twins
        (
            [
                '```{code-cell} ipython3\n:tags: [pytorch]\nx = 1\n```\n',
                'Some prose.\n',
                '```{code-cell} ipython3\n:tags: [jax]\nx = 1\n```\n',
            ],
            0,
            'needs its jax twin right after',
        ),
        # a framework cell without its twin
        (
            [
                '```{code-cell} ipython3\n:tags: [pytorch]\nx = 1\n```\n',
                '```{code-cell} ipython3\nprint(x)\n```\n',
            ],
            0,
            'needs its jax twin right after',
        ),
        # a claim whose twin is no claim
        (
            [
                '```{code-cell} ipython3\n:tags: [pytorch, claim]\nassert True\n```\n',
                '```{code-cell} ipython3\n:tags: [jax]\nassert True\n```\n',
            ],
            0,
            'a claim and its twins must all be tagged claim',
        ),
    ],
)
def test_a_section_that_breaks_an_authoring_rule_is_rejected_at_its_cell(
    project, blocks, broken, rule
):
    path = project.section('ch/bad', *blocks)
    line = path.read_text().split('\n').index('```{code-cell} ipython3', 0) + 1
    with pytest.raises(AuthoringError, match=rf'ch/bad.md:{line}: cell {broken}: {rule}'):
        read_section(project.layout, 'ch/bad')
    assert main(['split', 'book/ch/bad.md'], project.layout) == 1


def test_the_books_sections_follow_the_authoring_rules():
    layout = Layout()
    for rel in find_sections(layout):
        read_section(layout, rel)


def identical_twins(section: Section) -> list[str]:
    """Where twin cells that readers see hold the same code: such a pair is one untagged
    cell, shown once (claims are exempt: every framework checks its own)."""
    found = []
    for group in twin_groups(section.cells):
        shown = [cell for cell in group if cell is not None and 'remove-cell' not in cell.tags]
        if len(shown) == len(group) and len({cell.source.strip() for cell in shown}) == 1:
            found.append(f'{section.path.name}:{shown[0].line}')
    return found


def test_an_identical_pair_of_twins_is_found(project):
    def twins(source, *tags):
        return [project.code(source, framework, *tags) for framework in ('pytorch', 'jax')]

    project.section('ch/same', *twins('a = 1'), *twins('b = a', 'claim', 'remove-cell'))
    project.section('ch/differ', *twins('a = 1')[:1], project.code('a = 2', 'jax'))
    assert [
        where.split(':')[0] for where in identical_twins(read_section(project.layout, 'ch/same'))
    ] == ['same.md']
    assert identical_twins(read_section(project.layout, 'ch/differ')) == []


def test_twins_that_readers_see_differ():
    layout = Layout()
    found = [
        where
        for rel in find_sections(layout)
        for where in identical_twins(read_section(layout, rel))
    ]
    assert found == [], f'identical twin cells (write them once, untagged): {found}'


# Prose for each medium, as spans and containers, alone and for two media at once.
MEDIA_PROSE = (
    'Start. [Pick a *tab*.]{.web-only}[This notebook holds one.]{.notebook-only}'
    '[This edition prints one.]{.print-only} Then [both pages]{.web-only .print-only}'
    '[both [files](https://example.org)]{.notebook-only .print-only} end.\n\n'
    '```{container} web-only\nOn the page.\n```\n\n'
    '```{container} notebook-only\nIn the notebook, $x$.\n```\n\n'
    '```{container} print-only\nOn paper.\n```\n\n'
    '```{container} web-only print-only\nIn the book.\n```\n'
)


def test_a_notebook_keeps_notebook_only_prose_and_leaves_the_page_s_and_paper_s_out(
    tmp_path,
):

    converted, _ = Converter(References(), tmp_path, [MEDIA_PROSE], 'pytorch').convert(MEDIA_PROSE)
    assert 'Start. This notebook holds one. Then both [files](https://example.org) end.' in (
        converted
    )
    assert 'In the notebook, $x$.' in converted
    for elsewhere in ('tab', 'prints one', 'pages', 'On the page', 'On paper', 'In the book'):
        assert elsewhere not in converted
    assert 'only' not in converted and '{.' not in converted and '{container}' not in converted


def test_both_notebooks_hold_the_notebook_only_prose(project):
    project.section('ch/media', '# Media\n\n' + MEDIA_PROSE, project.code('x = 1'))
    for path in split_section('ch/media', project.layout).values():
        prose = '\n'.join(c.source for c in read(path).cells if c.cell_type == 'markdown')
        assert 'This notebook holds one.' in prose and 'In the notebook, $x$.' in prose
        assert 'tab' not in prose and 'On the page' not in prose and 'paper' not in prose


def test_a_span_or_container_of_other_classes_is_no_medium_s(tmp_path):
    from tools.source.myst import in_notebooks

    assert in_notebooks('web-only print-only') is False
    assert in_notebooks('.notebook-only .print-only') is True
    assert in_notebooks('fw-only-jax') is None and in_notebooks('web-only dropdown') is None
    text = '[Kept]{.other} and [kept too]{.web-only .other}.'
    converted, _ = Converter(References(), tmp_path, [text], 'jax').convert(text)
    assert converted == text


def test_a_doc_role_becomes_the_title_of_its_page(tmp_path):
    references = References(page_titles={'how-to-use': 'How to use this book', 'ch/a': 'A'})
    text = (
        'See {doc}`/how-to-use`, {doc}`a`, {doc}`../how-to-use`, {doc}`/report` and '
        '{doc}`the tour </how-to-use>`.'
    )
    converted, _ = Converter(references, tmp_path, [text], 'jax', 'ch').convert(text)
    assert converted == (
        'See How to use this book, A, How to use this book, Execution report and the tour.'
    )


def test_an_equation_of_another_page_is_named_by_its_page(tmp_path):
    references = References(
        page_titles={'ch/a': 'Designing the Block'}, equation_pages={'eq-spread': 'ch/a'}
    )
    text = 'The spread {eq}`eq-spread`, or {eq}`eq-here`, or {eq}`eq-nowhere`.\n\n' + (
        '$$\nx = 1\n$$ (eq-here)'
    )
    converted, _ = Converter(references, tmp_path, [text], 'jax').convert(text)
    assert converted.startswith('The spread (see "Designing the Block"), or (1), or (eq-nowhere).')
