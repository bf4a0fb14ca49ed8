"""tools.site.render's site assembly and tools.site.report's page, without building HTML."""

import json

import pytest
import yaml

from tests.site import book_site
from tools.build import build
from tools.cli import main
from tools.frameworks import TABLE
from tools.paths import ROOT, Layout
from tools.run import records
from tools.site import render, report
from tools.site.ext import accessibility, framework_css
from tools.source import save
from tools.source.sections import MissingPage, toc_files, toc_pages


def record(section, framework, **changes):
    base = {
        'section': section,
        'framework': framework,
        'wall_s': 1.5,
        'status': 'executed',
        'executed_at': '2026-01-01T00:00:00+00:00',
        'python': '3.11.7',
        'versions': {'numpy': '2.4.6'},
        'hardware': 'CPU: 2 cores',
    }
    return {**base, **changes}


def test_a_page_the_toc_lists_but_the_book_lacks_stops_the_render(tmp_path, capsys):
    root = book_site.make_project(tmp_path / 'project')
    toc = root / '_toc.yml'
    toc.write_text(
        toc.read_text().replace(
            '- file: demo/more\n', '- file: demo/more\n          - file: demo/not-written-yet\n'
        )
    )
    layout = Layout(root=root)
    with pytest.raises(MissingPage) as missing:
        render.assemble(layout, progress=lambda n: None)
    assert str(missing.value) == (
        f"{toc} lists 'demo/not-written-yet', but {root}/book/demo/not-written-yet.md "
        'does not exist\nwrite the page, or take its entry out of the table of contents'
    )
    assert not layout.site.exists()
    assert main(['render', '--no-html'], layout) == 1
    assert "lists 'demo/not-written-yet'" in capsys.readouterr().err


def test_the_toc_may_list_the_pages_the_build_writes_and_needs_its_root(tmp_path):
    root = book_site.make_project(tmp_path / 'project')
    layout = Layout(root=root)
    assert toc_pages(layout, render.GENERATED_PAGES)[-1] == 'report'
    with pytest.raises(MissingPage, match="lists 'report'"):
        toc_pages(layout)
    (root / 'book/index.md').unlink()
    with pytest.raises(MissingPage, match="lists 'index'"):
        toc_pages(layout, render.GENERATED_PAGES)


def test_a_missing_page_stops_the_build_before_any_notebook_runs(project, fake_kernel):
    for name in ('torch.py', 'jax.py'):
        (project.layout.library / name).write_text(f'"""{name}"""\n\n{save.MARKER}\n')
    project.section('ch/a', project.code('x = 1'))
    project.layout.toc.write_text('format: jb-book\nroot: ch/a\nchapters:\n  - file: ch/b\n')
    with pytest.raises(MissingPage, match="lists 'ch/b'"):
        build(project.layout, progress=lambda line: None)
    assert not fake_kernel.runs and not project.layout.notebook('pytorch', 'ch/a').exists()


def test_repository_toc_lists_the_chapter_and_ends_with_the_report():
    files = toc_files(yaml.safe_load((ROOT / '_toc.yml').read_text()))
    assert files[:2] == ['index', 'how-to-use']
    assert files[-1] == 'report'
    assert {
        'transformer-block/index',
        'transformer-block/transformer-block',
        'transformer-block/vit',
        'transformer-block/block-by-hand',
        'transformer-block/casebook',
    } <= set(files)


def test_assemble_lays_out_the_site(tmp_path):
    root = book_site.make_project(tmp_path / 'project')
    layout = Layout(root=root)
    sections = render.assemble(layout, progress=lambda n: None)
    site = layout.site
    assert sections == ['demo/twins', 'demo/more']
    assert yaml.safe_load((site / '_toc.yml').read_text()) == yaml.safe_load(
        layout.toc.read_text()
    )
    # A section is its merged notebook only; a plain page is its Markdown only.
    assert (site / 'demo/twins.ipynb').is_file() and not (site / 'demo/twins.md').exists()
    assert (site / 'demo/index.md').is_file() and not (site / 'demo/index.ipynb').exists()
    for framework in ('pytorch', 'jax'):
        copied = site / '_extra/notebooks' / framework / 'demo/twins.ipynb'
        assert (
            copied.read_bytes()
            == (layout.build / 'notebooks' / framework / 'demo/twins.ipynb').read_bytes()
        )
    for name in (
        '_config.yml',
        'references.bib',
        '_static/frameworks.js',
        '_static/frameworks.css',
        'report.md',
    ):
        assert (site / name).is_file(), name
    assert not (site / '_ext').exists(), 'Sphinx imports the extension from tools/'


def test_the_render_step_assembles_the_site_from_the_command_line(tmp_path, capsys):
    layout = Layout(root=book_site.make_project(tmp_path / 'project'))
    assert main(['render', '--no-html'], layout) == 0
    assert (layout.site / 'demo/twins.ipynb').is_file()
    assert 'site assembled' in capsys.readouterr().out
    (layout.build / 'notebooks/jax/demo/more.ipynb').unlink()
    assert main(['render', '--no-html'], layout) == 1
    assert 'notebooks/jax/demo/more.ipynb' in capsys.readouterr().err


def test_assemble_refuses_a_section_without_notebooks(tmp_path):
    root = book_site.make_project(tmp_path / 'project')
    (root / '_build/notebooks/jax/demo/more.ipynb').unlink()
    with pytest.raises(render.RenderError, match=r'notebooks/jax/demo/more\.ipynb'):
        render.assemble(Layout(root=root), progress=lambda n: None)


def test_report_lists_the_book_s_notebooks_and_marks_missing_runs():
    records = [
        record('b', 'jax', wall_s=12.34, status='cached'),
        record('a', 'pytorch'),
        record(
            'a',
            'jax',
            versions={'jax': '0.10.2'},
            hardware='GPU: H100',
            executed_at='2026-03-04T05:06:07+02:00',
        ),
        record('not-in-the-book', 'jax'),
    ]
    text = report.report_markdown(records, sections=['b', 'a'], linked=['a'])
    rows = [line for line in text.splitlines() if line.startswith(('| {doc}', '| `'))]
    assert [row.split('|')[1:3] for row in rows] == [
        [' `b` ', ' PyTorch '],
        [' `b` ', ' JAX '],
        [' {doc}`a` ', ' PyTorch '],
        [' {doc}`a` ', ' JAX '],
    ]
    assert '| missing |' in rows[0] and '| 12.3 | cached |' in rows[1]
    assert '| GPU: H100 | 2026-03-04 03:06 UTC |' in rows[3], (
        'hardware differs: one column per row'
    )
    assert '| jax | 0.10.2 |' in text and 'not-in-the-book' not in text
    assert 'JAX 13.8 s' in text


def test_report_names_shared_hardware_once():
    records = [record('a', 'pytorch'), record('a', 'jax')]
    text = report.report_markdown(records)
    assert 'All of them ran on the same hardware: CPU: 2 cores.' in text
    assert '| Hardware |' not in text.split('## Software')[0]
    assert text.count('| {doc}') == 0 and text.count('| `a` |') == 2


@pytest.mark.parametrize(
    'change, message',
    [
        ({'framework': 'tensorflow'}, 'framework must be one of'),
        ({'status': 'skipped'}, 'status must be one of'),
    ],
)
def test_load_records_rejects_bad_values(tmp_path, change, message):
    path = tmp_path / 'records.json'
    path.write_text(json.dumps([{**record('a', 'pytorch'), **change}]))
    with pytest.raises(ValueError, match=message):
        records.read(path)


def test_load_records_names_a_missing_field(tmp_path):
    path = tmp_path / 'records.json'
    broken = record('a', 'jax')
    del broken['hardware']
    path.write_text(json.dumps([broken]))
    with pytest.raises(ValueError, match='lacks hardware'):
        records.read(path)


def test_inputs_hash_follows_every_input(tmp_path):
    root = book_site.make_project(tmp_path / 'project')
    layout = Layout(root=root)
    first = render.inputs_hash(layout)
    render.assemble(layout, progress=lambda n: None)
    layout.html.mkdir(parents=True)
    (layout.html / 'index.html').write_text('built output does not count')
    assert render.inputs_hash(layout) == first
    render.assemble(layout, progress=lambda n: None)
    assert (layout.html / 'index.html').is_file(), 'assembling keeps the last HTML'
    (root / 'book/demo/index.md').write_text('# The demo chapter\n\nEdited.\n')
    assert render.inputs_hash(layout) != first


def test_the_site_configuration_carries_the_framework_table_and_the_extension(tmp_path):
    layout = Layout(root=book_site.make_project(tmp_path / 'project'))
    render.assemble(layout, progress=lambda n: None)
    config = yaml.safe_load((layout.site / '_config.yml').read_text())
    assert config['sphinx']['config']['book_frameworks'] == [
        {'name': fw.name, 'label': fw.label} for fw in TABLE
    ]
    book = yaml.safe_load(layout.config.read_text())
    assert config['repository'] == book['repository']
    assert render.EXTENSION in config['sphinx']['config']['extensions']
    assert config['sphinx']['local_extensions'] == {render.EXTENSION: str(ROOT)}
    assert 'book_execute' in book and 'book_execute' not in config, 'the site executes nothing'


def test_the_framework_style_follows_the_table():
    css = framework_css.frameworks_css([('a', 'A'), ('b', 'B'), ('c', 'C')])
    hidden = css.split(' { display: none; }')
    screen = {rule.strip() for rule in hidden[0].split('*/\n', 2)[-1].split(',\n')}
    paper = {rule.strip() for rule in hidden[1].split('@media print {\n')[1].split(',\n')}
    # Shown alone, a framework hides the others' cells and prose, unless side by side.
    assert {
        'html.fw-a:not(.fw-side) div.cell.tag_b',
        'html.fw-a:not(.fw-side) .fw-only-c',
        'html.fw-c:not(.fw-side) div.cell.tag_a',
    } <= screen
    assert 'html.fw-a:not(.fw-side) div.cell.tag_a' not in screen and len(screen) == 12
    # On paper, one framework even side by side.
    assert {'html.fw-a div.cell.tag_b', 'html.fw-b .fw-only-a'} <= paper and len(paper) == 12
    assert (
        'html:not(.fw-js) div.cell.tag_c::before, '
        'html:not(.fw-js) div.fw-only-c::before { content: "C"; }' in css
    )
    assert 'html:not(.fw-js) .fw-value.fw-only-b::before { content: " / B: "; }' in css
    side = css.split('@media screen {\n')[1]
    assert 'html.fw-side .fw-group { grid-template-columns: repeat(3, minmax(0, 1fr)); }' in side
    assert (
        'html.fw-side .fw-group > div.cell.tag_c,\n'
        'html.fw-side .fw-same-code > div.cell.tag_c::before,\n'
        'html.fw-side .fw-same-code > div.cell.tag_c > div.cell_output { grid-column: 3; }'
    ) in side
    assert 'html.fw-side .fw-value.fw-only-c::before { content: " / C: "; }' in side
    assert 'html.fw-side div.cell.tag_a::before, html.fw-side div.fw-only-a::before' in side


# The extension's HTML for the theme's and docutils' markup, against the installed versions.


def test_sidebar_toggles_are_named_after_their_entries():
    from bs4 import BeautifulSoup
    from pydata_sphinx_theme.toctree import add_collapse_checkboxes

    soup = BeautifulSoup(
        '<ul><li class="toctree-l1"><a class="reference internal" href="ch.html">The chapter</a>'
        '<ul><li class="toctree-l2"><a class="reference internal" href="s.html">S</a></li></ul>'
        '</li><li class="toctree-l1"><a class="reference internal" href="x.html">X</a></li></ul>',
        'html.parser',
    )
    add_collapse_checkboxes(soup)  # what the theme does to its sidebar's toctree
    [summary] = soup.select('summary')
    assert not summary.get_text(strip=True), 'the theme names its toggle now: drop the wrapper'
    named = BeautifulSoup(accessibility.name_toc_toggles(str(soup)), 'html.parser')
    assert [s.get('aria-label') for s in named.select('summary')] == ['Sections of The chapter']


def test_citations_are_list_items_of_docutils_citation_list():
    from docutils.core import publish_parts
    from docutils.writers import html5_polyglot

    class Translator(html5_polyglot.HTMLTranslator):
        visit_citation = accessibility.visit_citation

    class Writer(html5_polyglot.Writer):
        def __init__(self):
            super().__init__()
            self.translator_class = Translator

    source = 'See [One]_ and [Two]_.\n\n.. [One] The first.\n.. [Two] The second.\n'
    plain = publish_parts(source, writer_name='html5')['body']
    ours = publish_parts(source, writer=Writer())['body']
    assert plain.count('role="doc-biblioentry"') == 2
    assert ours == plain.replace('role="doc-biblioentry"', 'role="listitem"')


def test_hidden_cell_toggles_are_myst_nb_s_without_the_label():
    from types import SimpleNamespace

    from myst_nb.sphinx_ import HideCodeCellNode, visit_HideCellInput

    node = HideCodeCellNode(
        prompt_show='Show code cell source', prompt_hide='Hide code cell <source>'
    )
    node['classes'] = ['above-input']
    theirs, ours = SimpleNamespace(body=[]), SimpleNamespace(body=[])
    visit_HideCellInput(theirs, node)
    accessibility.visit_hidden_cell(ours, node)
    label = ' aria-label="Toggle hidden content"'
    assert label in ''.join(theirs.body)
    assert ''.join(ours.body) == ''.join(theirs.body).replace(label, '')


def test_screenshot_names_the_choices_it_takes(tmp_path):
    from tools.site.screenshot import screenshot
    from tools.steps import UsageError

    (tmp_path / 'page.html').write_text('<html></html>')
    with pytest.raises(UsageError, match=r"one of \('pytorch', 'jax', 'both'\), got 'torch'"):
        screenshot(tmp_path, 'page', tmp_path / 'shot.png', framework='torch')
    assert main(['screenshot', '--framework', 'torch']) == 2
