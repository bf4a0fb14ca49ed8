"""The quick render of tools/site/render.py (the authoring loop, make html): which files
it reads again, when it renders in full instead, and what its HTML counts for.

Most tests need no HTML: they assemble the hand-made project of tests/site/book_site.py
and stand jupyter-book in with `fake_jupyter_book`. Two, marked slow, run Sphinx.
"""

import json
import os
import shutil
import time
import types

import nbformat
import pytest

from tests.site import book_site
from tools import stamps
from tools.paths import ROOT, Layout
from tools.site import render, render_ext
from tools.site.ext import write_all


def quiet(message):
    pass


@pytest.fixture
def layout(tmp_path):
    return Layout(root=book_site.make_project(tmp_path / 'project'))


def record_of(layout):
    """The site_record of the layout's site, assembled anew."""
    render.assemble(layout, progress=quiet)
    return render.site_record(layout)


def edit_prose(layout, rel='demo/more', text='A sentence the author added.'):
    """A prose edit of a section, as it reaches the merged notebook."""
    path = layout.merged(rel)
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_markdown_cell(text))
    nbformat.write(notebook, path)


def test_a_prose_edit_reads_again_only_its_page(layout):
    last = record_of(layout)
    edit_prose(layout)
    plan = render.plan_render(last, record_of(layout), environment=True)
    assert not plan.full
    assert plan.changed == ('demo/more.ipynb',)


def test_a_plain_page_or_figure_edit_reads_again_only_that_file(layout):
    (layout.book / 'img').mkdir()
    (layout.book / 'img' / 'figure.svg').write_text('<svg/>')
    last = record_of(layout)
    (layout.book / 'demo' / 'index.md').write_text('# The demo chapter\n\nEdited.\n')
    (layout.book / 'img' / 'figure.svg').write_text('<svg></svg>')
    plan = render.plan_render(last, record_of(layout), environment=True)
    assert not plan.full
    assert set(plan.changed) == {'demo/index.md', 'img/figure.svg'}


def test_nothing_changed_reads_nothing_again(layout):
    plan = render.plan_render(record_of(layout), record_of(layout), environment=True)
    assert plan == render.Plan(False, plan.why, ())


def append(path, text):
    path.write_text(path.read_text() + text)


FRAME_EDITS = {
    'configuration': lambda root: append(root / '_config.yml', '\nexclude_patterns: [x]\n'),
    'toc': lambda root: append(root / '_toc.yml', '      - file: demo/index\n'),
    'bibliography': lambda root: append(root / 'book/references.bib', '\n@misc{x, title={X}}\n'),
    'static file': lambda root: append(root / 'book/_static/frameworks.css', '\n/* x */\n'),
    'template': lambda root: append(root / 'book/_templates/sidebar-brand.html', '\n'),
    'a new page': lambda root: (root / 'book/demo/new.md').write_text('# New\n'),
    'a new image': lambda root: (
        (root / 'book/img').mkdir() or (root / 'book/img/a.svg').write_text('<svg/>')
    ),
}


@pytest.mark.parametrize('edit', FRAME_EDITS.values(), ids=FRAME_EDITS.keys())
def test_a_change_that_sphinx_may_not_follow_renders_in_full(layout, edit):
    last = record_of(layout)
    edit(layout.root)
    edit_prose(layout)  # a change of a page too: it does not make a quick render right
    assert render.plan_render(last, record_of(layout), environment=True).full


def test_the_render_code_and_the_library_are_what_a_quick_render_does_not_follow(layout):
    files = set(render.frame_files(layout))
    extension = {ROOT / 'tools/site/render_ext.py', ROOT / 'tools/site/render.py'}
    extension |= set((ROOT / 'tools/site/ext').glob('*.py'))
    assert extension <= files
    assert set(layout.library.rglob('*.py')) <= files and layout.requirements in files


def test_an_edit_of_the_extension_renders_in_full(layout, tmp_path, monkeypatch):
    module = tmp_path / 'code_cells.py'
    shutil.copy2(ROOT / 'tools/site/ext/code_cells.py', module)
    monkeypatch.setattr(render, 'frame_files', lambda layout: [module])
    last = record_of(layout)
    append(module, '\n# edited\n')
    assert render.plan_render(last, record_of(layout), environment=True).full


def test_another_version_of_a_site_package_renders_in_full(layout, monkeypatch):
    last = record_of(layout)
    monkeypatch.setattr(stamps.metadata, 'version', lambda name: '0.0.1')
    assert render.plan_render(last, record_of(layout), environment=True).full


def test_without_an_environment_or_its_record_it_renders_in_full(layout):
    now = record_of(layout)
    assert render.plan_render(now, now, environment=False).full
    assert render.plan_render({}, now, environment=True).full


class FakeJupyterBook:
    """Stands in for render.build_html: writes what jupyter-book writes that the render
    step looks at (the HTML's index and Sphinx's environment), or fails."""

    def __init__(self, layout):
        self.layout = layout
        self.fresh = []  # the `fresh` of each call
        self.fails = False

    def __call__(self, site, *, fresh, quiet):
        self.fresh.append(fresh)
        if self.fails:
            raise render.RenderError('a warning')
        for path in (self.layout.html / 'index.html', self.layout.sphinx_environment):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text('built')


@pytest.fixture
def fake_jupyter_book(layout, monkeypatch):
    fake = FakeJupyterBook(layout)
    monkeypatch.setattr(render, 'build_html', fake)
    return fake


def stamped(layout):
    return json.loads(layout.render_stamp.read_text())['render']


def test_a_quick_render_reuses_the_environment_and_marks_the_changed_page(
    layout, fake_jupyter_book
):
    render.render(layout, quick=True, progress=quiet)
    assert fake_jupyter_book.fresh == [True], 'nothing to reuse yet'
    assert stamped(layout) == render.FULL
    edit_prose(layout)
    # Times that say nothing of the change (a copy that kept an older file's times).
    an_hour_ago = time.time() - 3600
    for rel in book_site.SECTIONS:
        os.utime(layout.merged(rel), (an_hour_ago, an_hour_ago))
    before = time.time()
    render.render(layout, quick=True, progress=quiet)
    assert fake_jupyter_book.fresh == [True, False]
    assert stamped(layout) == render.QUICK
    # Sphinx reads again the files modified since its last reading: the changed page is.
    assert os.path.getmtime(layout.site / 'demo/more.ipynb') >= before
    assert os.path.getmtime(layout.site / 'demo/twins.ipynb') == pytest.approx(an_hour_ago)
    assert json.loads(layout.render_record.read_text()) == render.site_record(layout)


def test_a_quick_render_s_html_is_current_only_for_the_quick_loop(layout, fake_jupyter_book):
    render.render(layout, quick=True, progress=quiet)
    edit_prose(layout)
    render.render(layout, quick=True, progress=quiet)
    assert render.html_is_current(layout, quick=True)
    assert not render.html_is_current(layout), 'the PDFs and publishing need a full render'
    render.render(layout, quick=True, progress=quiet)
    assert fake_jupyter_book.fresh == [True, False], 'current: kept'
    render.render(layout, progress=quiet)
    assert fake_jupyter_book.fresh == [True, False, True]
    assert render.html_is_current(layout) and stamped(layout) == render.FULL


def test_a_stamp_that_names_no_render_is_a_full_render_s(layout, fake_jupyter_book):
    render.render(layout, progress=quiet)
    stamp = json.loads(layout.render_stamp.read_text())
    del stamp['render']
    layout.render_stamp.write_text(json.dumps(stamp))
    assert render.html_is_current(layout)


def test_after_a_failed_quick_render_its_pages_are_read_again(layout, fake_jupyter_book):
    render.render(layout, quick=True, progress=quiet)
    path = layout.merged('demo/more')
    original = path.read_bytes()
    edit_prose(layout, text='A reference that does not resolve.')
    fake_jupyter_book.fails = True
    with pytest.raises(render.RenderError):
        render.render(layout, quick=True, progress=quiet)
    # Sphinx's environment now holds that reading: the record does not vouch for it.
    assert 'demo/more.ipynb' not in json.loads(layout.render_record.read_text())['files']
    path.write_bytes(original)  # the author takes the edit back
    fake_jupyter_book.fails = False
    plan = render.plan_render(
        json.loads(layout.render_record.read_text()), record_of(layout), environment=True
    )
    assert plan.changed == ('demo/more.ipynb',)
    render.render(layout, quick=True, progress=quiet)
    assert fake_jupyter_book.fresh == [True, False, False]


def test_after_a_failed_full_render_the_next_is_full_too(layout, fake_jupyter_book):
    fake_jupyter_book.fails = True
    with pytest.raises(render.RenderError):
        render.render(layout, quick=True, progress=quiet)
    fake_jupyter_book.fails = False
    render.render(layout, quick=True, progress=quiet)
    assert fake_jupyter_book.fresh == [True, True]


def test_a_configuration_change_makes_a_quick_render_full(layout, fake_jupyter_book):
    render.render(layout, quick=True, progress=quiet)
    FRAME_EDITS['configuration'](layout.root)
    render.render(layout, quick=True, progress=quiet)
    assert fake_jupyter_book.fresh == [True, True]
    assert stamped(layout) == render.FULL


def test_write_all_asks_for_every_page():
    env = types.SimpleNamespace(found_docs={'b', 'a', 'c/d'})
    assert write_all.every_page(None, env) == ['a', 'b', 'c/d']
    assert 'write_all' in render_ext.MODULES


# With Sphinx itself.


def sphinx_build(source, extensions):
    from sphinx.application import Sphinx

    (source / 'conf.py').write_text(f'extensions = {extensions!r}\n')
    app = Sphinx(
        str(source),
        str(source),
        str(source / '_build/html'),
        str(source / '_build/doctrees'),
        'html',
        status=None,
        warning=None,
        freshenv=False,
    )
    app.build()
    return (source / '_build/html/a.html').read_text()


@pytest.mark.slow
@pytest.mark.parametrize('extensions', [['tools.site.ext.write_all'], []], ids=['with', 'without'])
def test_sphinx_writes_an_unchanged_page_again_with_the_title_it_links_to(tmp_path, extensions):
    source = tmp_path / 'source'
    source.mkdir()
    (source / 'index.rst').write_text('Index\n=====\n\n.. toctree::\n\n   a\n   b\n')
    (source / 'a.rst').write_text('A\n=\n\nSee :ref:`the-b`.\n')
    (source / 'b.rst').write_text('.. _the-b:\n\nOld title\n=========\n')
    assert 'Old title' in sphinx_build(source, extensions)
    (source / 'b.rst').write_text('.. _the-b:\n\nNew title\n=========\n')
    page = sphinx_build(source, extensions)
    if extensions:
        assert 'New title' in page and 'Old title' not in page
    else:  # why the extension is there: Sphinx keeps the unchanged page's HTML
        assert 'Old title' in page


@pytest.mark.slow
def test_a_quick_render_of_the_demo_book_reads_only_the_edited_page(layout):
    render.render(layout, quiet=True, progress=quiet)
    doctrees = layout.sphinx_environment.parent
    read = {rel: (doctrees / f'{rel}.doctree').stat().st_mtime_ns for rel in book_site.SECTIONS}
    path = layout.merged('demo/twins')
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[0].source = notebook.cells[0].source.replace(
        '# Twin cells', '# Twin cells, renamed'
    )
    nbformat.write(notebook, path)
    render.render(layout, quick=True, quiet=True, progress=quiet)
    assert json.loads(layout.render_stamp.read_text())['render'] == render.QUICK
    again = {rel: (doctrees / f'{rel}.doctree').stat().st_mtime_ns for rel in book_site.SECTIONS}
    assert again['demo/twins'] > read['demo/twins'] and again['demo/more'] == read['demo/more']
    # The landing page, unchanged, links the section under its new title.
    assert 'Twin cells, renamed' in (layout.html / 'index.html').read_text()


def test_the_render_step_renders_quickly_from_the_command_line(layout, fake_jupyter_book):
    from tools.cli import main

    assert main(['render', '--quick'], layout) == 0
    edit_prose(layout)
    assert main(['render', '--quick'], layout) == 0
    assert fake_jupyter_book.fresh == [True, False]


@pytest.mark.parametrize('quick', [True, False])
def test_the_quick_build_renders_quickly_and_prints_no_pdf(layout, monkeypatch, quick):
    from tools import build

    done = []
    monkeypatch.setattr(build.save, 'stale_modules', lambda layout: {})
    monkeypatch.setattr(build, 'execute', lambda *args, **kwargs: None)

    def render_html(layout, quick, progress):
        done.append(quick)
        return layout.html

    monkeypatch.setattr(build, 'render', render_html)
    monkeypatch.setattr(build.downloads, 'write_zips', lambda layout, progress: None)
    monkeypatch.setattr(build.downloads, 'write_pdfs', lambda layout, progress: done.append('pdf'))
    build.build(layout, progress=quiet, quick=quick)
    assert done == ([True] if quick else [False, 'pdf'])
