"""tools.source.split: one MyST section -> a PyTorch notebook and a JAX notebook."""

import base64

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from tools.cli import main
from tools.paths import Layout
from tools.source import colab
from tools.source.myst import References
from tools.source.sections import (
    AuthoringError,
    find_sections,
    in_toc_order,
    read_section,
    section_name,
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


def run_install_cell(source, monkeypatch, installed=None, gpu=False):
    """Execute an install cell as IPython would; returns (the %pip lines it ran, what it printed).

    ``installed``: ``{package: version}`` of the machine (None: d2l_mini is importable).
    """
    import importlib.metadata
    import shutil
    import sys

    from IPython.utils.text import DollarFormatter

    calls, printed, namespace = [], [], {}

    class Shell:
        def run_line_magic(self, name, line):
            calls.append(f'%{name} {DollarFormatter().vformat(line, args=[], kwargs=namespace)}')

    def version(name):
        if name not in installed:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed[name]

    if installed is not None:
        monkeypatch.setitem(sys.modules, 'd2l_mini', None)
        monkeypatch.setattr(importlib.metadata, 'version', version)
        monkeypatch.setattr(
            shutil, 'which', lambda command: '/usr/bin/nvidia-smi' if gpu else None
        )
    namespace.update(
        get_ipython=lambda: Shell(), print=lambda *args: printed.append(' '.join(args))
    )
    exec(TransformerManager().transform_cell(source), namespace)
    return calls, printed


PINNED_JAX = {'jax': '0.10.2', 'jaxlib': '0.10.2', 'flax': '0.12.8', 'optax': '0.2.8'}
LIBRARY = '"d2l_mini @ git+https://example.org/owner/book"'


def install_cells(project):
    paths = routed(project)
    return {fw: read(path).cells[0] for fw, path in paths.items()}


def test_colab_cell_comes_first_and_does_nothing_where_d2l_mini_is_installed(project, monkeypatch):
    for install in install_cells(project).values():
        assert install.id == 'install' and install.cell_type == 'code'
        assert run_install_cell(install.source, monkeypatch) == ([], [])


def test_colab_cell_keeps_adequate_frameworks_and_installs_only_the_library(project, monkeypatch):
    cells = install_cells(project)
    calls, printed = run_install_cell(
        cells['pytorch'].source, monkeypatch, {'torch': '2.13.0+cu128'}, gpu=True
    )
    assert calls == [f'%pip install --quiet  {LIBRARY}'] and printed == []
    calls, printed = run_install_cell(cells['jax'].source, monkeypatch, PINNED_JAX, gpu=True)
    assert calls == [f'%pip install --quiet  {LIBRARY}'] and printed == []


def test_colab_cell_names_the_versions_that_made_the_outputs_when_others_are_installed(
    project, monkeypatch
):
    cells = install_cells(project)
    calls, printed = run_install_cell(
        cells['pytorch'].source, monkeypatch, {'torch': '2.5.1+cu121'}
    )
    assert calls == [f'%pip install --quiet  {LIBRARY}']
    assert printed == ['The outputs shown were made with torch 2.13.0 (here: 2.5.1+cu121)']
    colab_jax = dict(PINNED_JAX, jax='0.11.0', jaxlib='0.11.0')
    calls, printed = run_install_cell(cells['jax'].source, monkeypatch, colab_jax)
    assert calls == [f'%pip install --quiet  {LIBRARY}']
    assert printed == [
        'The outputs shown were made with jax 0.10.2 (here: 0.11.0), jaxlib 0.10.2 (here: 0.11.0)'
    ]


def test_colab_cell_installs_missing_or_too_old_frameworks_at_their_pinned_versions(
    project, monkeypatch
):
    cells = install_cells(project)
    calls, _ = run_install_cell(cells['pytorch'].source, monkeypatch, {})
    assert calls == [f'%pip install --quiet torch==2.13.0 {LIBRARY}']
    calls, _ = run_install_cell(cells['pytorch'].source, monkeypatch, {'torch': '1.13.1'})
    assert calls == [f'%pip install --quiet torch==2.13.0 {LIBRARY}']
    old_flax = dict(PINNED_JAX, flax='0.10.4')
    calls, _ = run_install_cell(cells['jax'].source, monkeypatch, old_flax, gpu=True)
    assert calls == [f'%pip install --quiet flax==0.12.8 {LIBRARY}']


def test_colab_cell_installs_the_cuda_build_of_jax_only_on_a_gpu_machine(project, monkeypatch):
    source = install_cells(project)['jax'].source
    everything = 'jax{}==0.10.2 jaxlib==0.10.2 flax==0.12.8 optax==0.2.8'
    calls, _ = run_install_cell(source, monkeypatch, {}, gpu=True)
    assert calls == [f'%pip install --quiet {everything.format("[cuda12]")} {LIBRARY}']
    calls, _ = run_install_cell(source, monkeypatch, {}, gpu=False)
    assert calls == [f'%pip install --quiet {everything.format("")} {LIBRARY}']


def test_colab_cell_reads_the_minimum_versions_from_pyproject(project, monkeypatch):
    pyproject = project.layout.pyproject
    pyproject.write_text(pyproject.read_text().replace('torch>=2.0', 'torch>=2.14'))
    calls, _ = run_install_cell(
        install_cells(project)['pytorch'].source, monkeypatch, {'torch': '2.13.0'}
    )
    assert calls == [f'%pip install --quiet torch==2.13.0 {LIBRARY}']
    pyproject.write_text(pyproject.read_text().replace('torch>=2.14', 'torch'))
    with pytest.raises(ValueError, match=r"pyproject.toml.*'torch' needs one lower bound"):
        colab.install_source('pytorch', project.layout)


def test_split_without_the_framework_extras_is_a_usage_error(project, capsys):
    project.section('ch/a', '# A\n')
    project.layout.pyproject.unlink()
    assert main(['split'], project.layout) == 2
    err = capsys.readouterr().err
    assert err.startswith('python -m tools split: error: ')
    assert 'pyproject.toml [project.optional-dependencies]' in err
    assert 'Traceback' not in err


def test_split_cell_names_no_commit_and_the_published_one_does(project, monkeypatch):
    assert '@' not in install_cells(project)['jax'].source.split('git+')[1]
    commit = '0123456789abcdef0123456789abcdef01234567'
    source = colab.install_source(
        'pytorch', project.layout, commit=commit, repository='file:///srv/book.git'
    )
    calls, _ = run_install_cell(source, monkeypatch, {'torch': '2.13.0'})
    assert calls == [f'%pip install --quiet  "d2l_mini @ git+file:///srv/book.git@{commit}"']
    with pytest.raises(ValueError, match='commit'):
        colab.install_source('pytorch', project.layout, commit='main')
    with pytest.raises(ValueError, match='repository'):
        colab.install_source('pytorch', project.layout, repository='x" && rm -rf ~ "')


def test_the_install_cell_needs_the_repository_of_the_config(project, capsys):
    project.layout.config.write_text('title: A book without a repository\n')
    with pytest.raises(ValueError, match=r'repository\.url is not set in .*_config\.yml'):
        colab.install_source('pytorch', project.layout)
    project.section('ch/a', project.code('x = 1'))
    assert main(['split', 'book/ch/a.md'], project.layout) == 2
    assert 'repository.url is not set' in capsys.readouterr().err
    assert not project.layout.notebook('pytorch', 'ch/a').exists()
    with pytest.raises(ValueError, match='framework'):
        colab.install_source('tensorflow', project.layout)


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
