"""Executing one framework at a time, merging the records, rendering without executing.

These are the pieces of the CI fan-out (.github/workflows/book.yml): one job per
framework runs ``python -m tools execute --framework NAME``, a last job gathers the
executed notebooks and records and runs ``python -m tools build --no-execute``.
They run on the stand-in kernel of conftest.py (fake_kernel).
"""

import json

import pytest

from tools.build import build
from tools.cli import main
from tools.frameworks import FRAMEWORKS
from tools.run import execute as execute_module
from tools.run import records
from tools.run.execute import NotUpToDate, execute, use_executed
from tools.source import save


def quiet(line):
    pass


@pytest.fixture
def one_section(project):
    for name in ('torch.py', 'jax.py'):  # an up-to-date library, for build()
        (project.layout.library / name).write_text(f'"""{name}"""\n\n{save.MARKER}\n')
    project.section(
        'ch/a',
        '# A\n',
        project.code("a = 'torch'", 'pytorch'),
        project.code("a = 'jax'", 'jax'),
        project.code('print(a)'),
    )
    return project


def statuses(layout):
    return {(r['section'], r['framework']): r['status'] for r in records.load(layout)}


def no_kernels(monkeypatch):
    """Make starting a kernel fail the test."""

    async def refuse(*args, **kwargs):
        raise AssertionError('a kernel was started')

    monkeypatch.setattr(execute_module, 'run_notebook', refuse)


def test_one_framework_runs_alone_and_keeps_the_others_records(one_section, fake_kernel):
    layout = one_section.layout
    execute(['ch/a'], layout, jobs=1, progress=quiet, frameworks=('jax',))
    assert statuses(layout) == {('ch/a', 'jax'): 'executed'}
    assert not layout.executed('pytorch', 'ch/a').exists()
    execute(['ch/a'], layout, jobs=1, progress=quiet, frameworks=['pytorch'])
    assert statuses(layout) == {('ch/a', fw): 'executed' for fw in FRAMEWORKS}
    execute(['ch/a'], layout, jobs=1, progress=quiet, frameworks=('jax',))
    assert statuses(layout) == {('ch/a', 'pytorch'): 'executed', ('ch/a', 'jax'): 'cached'}
    assert fake_kernel.started() == [('ch/a', 'jax'), ('ch/a', 'pytorch')]


def test_the_frameworks_argument_is_checked(one_section):
    layout = one_section.layout
    with pytest.raises(TypeError, match='frameworks must be a list or tuple'):
        execute(['ch/a'], layout, progress=quiet, frameworks='jax')
    with pytest.raises(ValueError, match='framework must be one of'):
        execute(['ch/a'], layout, progress=quiet, frameworks=('tensorflow',))
    with pytest.raises(ValueError, match='at least one'):
        execute(['ch/a'], layout, progress=quiet, frameworks=())


def test_the_command_line_takes_one_framework(one_section, fake_kernel, capsys):
    layout = one_section.layout
    assert main(['execute', '--framework', 'pytorch', 'book/ch/a.md'], layout) == 0
    assert layout.executed('pytorch', 'ch/a').is_file()
    assert not layout.executed('jax', 'ch/a').exists()
    assert main(['execute', '--framework', 'tensorflow'], layout) == 2
    assert "invalid choice: 'tensorflow'" in capsys.readouterr().err


def test_without_executing_missing_notebooks_fail_the_build_by_name(
    one_section, fake_kernel, monkeypatch
):
    layout = one_section.layout
    execute(['ch/a'], layout, jobs=1, progress=quiet, frameworks=('pytorch',))
    no_kernels(monkeypatch)
    with pytest.raises(NotUpToDate) as failure:
        build(layout, progress=quiet, render_html=False, run_kernels=False)
    message = str(failure.value)
    assert '[jax] ch/a' in message and 'missing' in message and '[pytorch]' not in message
    assert 'python -m tools execute' in message
    assert not layout.merged('ch/a').exists()


def test_without_executing_stale_notebooks_fail_the_build_by_name(
    one_section, fake_kernel, monkeypatch
):
    layout = one_section.layout
    execute(['ch/a'], layout, jobs=1, progress=quiet)
    one_section.section(
        'ch/a',
        '# A\n',
        one_section.code("a = 'torch, changed'", 'pytorch'),
        one_section.code("a = 'jax'", 'jax'),
        one_section.code('print(a)'),
    )
    no_kernels(monkeypatch)
    with pytest.raises(NotUpToDate, match=r'\[pytorch\] ch/a: .* is stale'):
        build(layout, progress=quiet, render_html=False, run_kernels=False)


def test_without_executing_the_build_merges_what_was_executed(
    one_section, fake_kernel, monkeypatch
):
    layout = one_section.layout
    one_section.section(
        'ch/a',
        '# A, with more words\n',
        one_section.code("a = 'torch'", 'pytorch'),
        one_section.code("a = 'jax'", 'jax'),
        one_section.code('print(a)'),
    )
    execute(['ch/a'], layout, jobs=1, progress=quiet)
    no_kernels(monkeypatch)
    build(layout, progress=quiet, render_html=False, run_kernels=False)
    merged = json.loads(layout.merged('ch/a').read_text())
    texts = [''.join(o.get('text', '')) for c in merged['cells'] for o in c.get('outputs', [])]
    assert sorted(texts) == ['jax\n', 'torch\n']
    assert statuses(layout) == {('ch/a', fw): 'executed' for fw in FRAMEWORKS}


def test_records_of_separate_runs_are_merged(one_section, fake_kernel, tmp_path, capsys):
    layout = one_section.layout
    runs = {}
    for framework in FRAMEWORKS:
        execute(['ch/a'], layout, jobs=1, progress=quiet, frameworks=(framework,))
        runs[framework] = tmp_path / f'records-{framework}.json'
        runs[framework].write_text(layout.records.read_text())
        layout.records.unlink()
    assert main(['records', str(runs['pytorch']), str(runs['jax'])], layout) == 0
    assert statuses(layout) == {('ch/a', fw): 'executed' for fw in FRAMEWORKS}
    assert [r['framework'] for r in records.load(layout)] == list(FRAMEWORKS)
    use_executed(['ch/a'], layout, progress=quiet)  # keeps them as they are
    assert statuses(layout) == {('ch/a', fw): 'executed' for fw in FRAMEWORKS}
    broken = tmp_path / 'broken.json'
    broken.write_text('{"section": "ch/a"}')
    assert main(['records', str(broken)], layout) == 2
    assert 'is not a records file' in capsys.readouterr().err


# ------------------------------------------------------------------ the fan-out, end to end

SECTION = 'fan/out'


def copy_of_the_project(root):
    """A small project like the repository: its configuration, one section with twin
    cells."""
    import shutil

    from tests.project import Project
    from tools.paths import ROOT

    project = Project(root)
    shutil.copy2(ROOT / '_config.yml', root / '_config.yml')
    # The repository's pins: the notebooks' zip names the kernel package from them.
    shutil.copy2(ROOT / 'requirements.txt', root / 'requirements.txt')
    shutil.copytree(ROOT / 'book' / '_static', root / 'book' / '_static')
    shutil.copytree(ROOT / 'book' / '_templates', root / 'book' / '_templates')
    shutil.copy2(ROOT / 'book' / 'references.bib', root / 'book' / 'references.bib')
    for name in ('torch.py', 'jax.py'):
        (project.layout.library / name).write_text(f'"""{name}"""\n\n{save.MARKER}\n')
    (root / 'book' / 'index.md').write_text('# A small book\n\n```{tableofcontents}\n```\n')
    (root / '_toc.yml').write_text(
        'format: jb-book\nroot: index\nchapters:\n  - file: fan/out\n  - file: report\n'
    )
    code = project.code
    project.section(
        SECTION,
        '# Fanned out\n\nOne section, executed in two places.\n',
        code("a = 'ran in the pytorch kernel'", 'pytorch'),
        code("a = 'ran in the jax kernel'", 'jax'),
        code('print(a)'),
    )
    return project


@pytest.mark.slow
def test_each_framework_executed_apart_then_rendered_without_executing(
    tmp_path, monkeypatch, fake_kernel
):
    """What the workflow does on main: two jobs execute one framework each, a third
    gathers their executed notebooks and records and renders, starting no kernel."""
    import shutil

    executed_apart = {}
    for framework in FRAMEWORKS:
        project = copy_of_the_project(tmp_path / framework)
        assert main(['execute', '--framework', framework], project.layout) == 0
        executed_apart[framework] = project.layout

    renderer = copy_of_the_project(tmp_path / 'render')
    layout = renderer.layout
    gathered = []
    for framework, source in executed_apart.items():
        assert not source.executed(FRAMEWORKS[FRAMEWORKS.index(framework) - 1], SECTION).exists()
        shutil.copytree(
            source.build / 'executed' / framework, layout.build / 'executed' / framework
        )
        gathered.append(tmp_path / f'records-{framework}.json')
        shutil.copy2(source.records, gathered[-1])
    assert main(['records', *(str(path) for path in gathered)], layout) == 0

    no_kernels(monkeypatch)
    assert main(['build', '--no-execute'], layout) == 0

    assert statuses(layout) == {(SECTION, fw): 'executed' for fw in FRAMEWORKS}
    page = (layout.build / 'site' / '_build' / 'html' / 'fan' / 'out.html').read_text()
    for framework in FRAMEWORKS:
        assert f'ran in the {framework} kernel' in page
