"""tools.build: the steps in order, a stale library stops it, nothing rebuilt twice."""

import json

import pytest

from tools.build import BuildFailed, build
from tools.cli import main
from tools.site.render import inputs_hash
from tools.source import save


def with_library(project):
    for name in ('torch.py', 'jax.py'):
        (project.layout.library / name).write_text(f'"""{name}"""\n\n{save.MARKER}\n')


def test_a_stale_library_stops_the_build_before_any_notebook_runs(project):
    with_library(project)
    project.section('ch/a', project.code('#@save\ndef helper():\n    return 1'))
    with pytest.raises(BuildFailed, match='make save'):
        build(project.layout, progress=lambda line: None, render_html=False)
    assert not project.layout.notebook('pytorch', 'ch/a').exists()


def test_a_library_without_its_marker_stops_the_build_as_a_usage_error(project, capsys):
    with_library(project)
    (project.layout.library / 'jax.py').write_text('"""jax.py"""\n')
    project.section('ch/a', project.code('x = 1'))
    assert main(['build', '--no-render'], project.layout) == 2
    err = capsys.readouterr().err
    assert 'jax.py has no marker line' in err
    assert not project.layout.notebook('pytorch', 'ch/a').exists()


def test_build_runs_every_step_and_drops_notebooks_of_removed_sections(project, fake_kernel):
    with_library(project)
    layout = project.layout
    project.section('ch/kept', project.code("print('kept')"))
    project.section('ch/gone', project.code("print('gone')"))
    lines = []
    build(layout, progress=lines.append, render_html=False)
    assert layout.merged('ch/kept').is_file() and layout.merged('ch/gone').is_file()
    layout.source('ch/gone').unlink()
    lines.clear()
    fake_kernel.runs.clear()
    build(layout, progress=lines.append, render_html=False)
    assert not fake_kernel.runs and not any('started' in line for line in lines)
    for path in (
        layout.merged('ch/gone'),
        layout.executed('jax', 'ch/gone'),
        layout.notebook('pytorch', 'ch/gone'),
    ):
        assert not path.exists()
    assert [r['section'] for r in json.loads(layout.records.read_text())] == ['ch/kept', 'ch/kept']


def test_the_html_is_rerendered_only_when_its_inputs_change(project):
    layout = project.layout
    project.section('ch/a', '# A\n')
    record = {'section': 'ch/a', 'framework': 'jax', 'wall_s': 1.0, 'status': 'executed'}
    layout.records.parent.mkdir(parents=True)
    layout.records.write_text(json.dumps([record]))
    first = inputs_hash(layout)
    layout.records.write_text(json.dumps([dict(record, status='cached')]))
    assert inputs_hash(layout) != first, 'the report says which notebooks ran again'
    layout.records.write_text(json.dumps([dict(record, wall_s=2.0)]))
    assert inputs_hash(layout) != first
    layout.records.write_text(json.dumps([record]))
    project.page('plain', '# A plain page\n')
    assert inputs_hash(layout) != first
