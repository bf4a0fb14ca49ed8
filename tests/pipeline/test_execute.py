"""tools.run.execute: parallel kernels, the content-hash cache, clean outputs, failures.

The toy sections use no framework, so their cells run in both kernels without
importing torch or jax.
"""

import json
import os
import subprocess
import sys

import nbformat
import pytest

import d2l_mini
from tools.cli import main
from tools.frameworks import FRAMEWORKS
from tools.run import execute as execute_module
from tools.run import outputs
from tools.run.cache import METADATA_KEY, notebook_hash
from tools.run.execute import ExecutionFailed, execute, plan, settings
from tools.run.kernel import kernel_environment
from tools.run.outputs import clean_text, warnings_in
from tools.site.merge import merge_section
from tools.source.sections import find_sections
from tools.source.split import split_section

NOISY = r"""import os, sys
print("\x1b[31mred\x1b[0m")
for step in range(3):
    print(f"\r{step}/3", end="")
print("\rdone")
print(os.environ["OMP_NUM_THREADS"], os.environ["NO_COLOR"], os.environ["TQDM_DISABLE"],
      os.environ["PYTHONHASHSEED"], os.environ["MPLBACKEND"])"""


def quiet(line):
    pass


def run(project, names=None, **kwargs):
    log = []
    kwargs.setdefault('jobs', 2)
    names = names or find_sections(project.layout)
    try:
        return execute(names, project.layout, progress=log.append, **kwargs), log
    finally:
        print('\n'.join(log))


def statuses(records):
    return {(r['section'], r['framework']): r['status'] for r in records}


@pytest.fixture
def two_sections(project):
    code = project.code
    project.section(
        'ch/a',
        '# A\n\nFirst words.\n',
        code('a = 1', 'pytorch'),
        code('a = 2', 'jax'),
        code('print(a * 10)'),
        code(NOISY),
    )
    project.section('ch/b', '# B\n', code("print('b')"), code('import os\nprint(os.getcwd())'))
    return project


@pytest.mark.slow
def test_both_frameworks_run_and_are_recorded(two_sections):
    layout = two_sections.layout
    records, _ = run(two_sections)
    assert statuses(records) == {
        (s, fw): 'executed' for s in ('ch/a', 'ch/b') for fw in FRAMEWORKS
    }
    printed = {}
    for framework in FRAMEWORKS:
        notebook = nbformat.read(layout.executed(framework, 'ch/a'), as_version=4)
        cells = {c.source: c for c in notebook.cells}
        printed[framework] = cells['print(a * 10)'].outputs[0]['text']
        facts = notebook.metadata[METADATA_KEY]
        assert facts['hash'] == notebook_hash(
            nbformat.read(layout.notebook(framework, 'ch/a'), as_version=4), layout
        )
        assert facts['wall_s'] > 0
        assert all(c.id != 'execution-probe' for c in notebook.cells)
    assert printed == {'pytorch': '10\n', 'jax': '20\n'}
    for framework in FRAMEWORKS:  # kernels work below _build, not in the sources
        notebook = nbformat.read(layout.executed(framework, 'ch/b'), as_version=4)
        assert (
            notebook.cells[-1].outputs[0]['text']
            == f'{layout.executed(framework, "ch/b").parent}\n'
        )
    saved = json.loads(layout.records.read_text())
    assert [(r['section'], r['framework']) for r in saved] == [
        ('ch/a', 'pytorch'),
        ('ch/a', 'jax'),
        ('ch/b', 'pytorch'),
        ('ch/b', 'jax'),
    ]
    pytorch, jax = saved[0], saved[1]
    assert set(pytorch['versions']) == {'torch'}
    assert set(jax['versions']) == {'jax', 'jaxlib', 'flax', 'optax'}
    assert pytorch['hardware'].startswith(('CPU: ', 'GPU: '))
    assert pytorch['python'].count('.') == 2 and 'T' in pytorch['executed_at']


@pytest.mark.slow
def test_outputs_are_clean_and_kernels_get_their_environment(two_sections):
    run(two_sections)
    notebook = nbformat.read(two_sections.layout.executed('jax', 'ch/a'), as_version=4)
    text = next(c for c in notebook.cells if c.source == NOISY).outputs[0]['text']
    threads = str(max(1, execute_module.cpu_cores() // 2))
    assert text == f'red\ndone\n{threads} 1 1 0 module://matplotlib_inline.backend_inline\n'


@pytest.mark.slow
def test_a_prose_edit_reexecutes_nothing(two_sections):
    layout = two_sections.layout
    run(two_sections)
    path = layout.source('ch/a')
    # A new paragraph cell before the code moves every code cell's id.
    path.write_text(
        path.read_text().replace('First words.\n', 'First words.\n\n+++\n\nNew words.\n')
    )
    records, log = run(two_sections)
    assert set(statuses(records).values()) == {'cached'}
    assert not any('started' in line for line in log)
    notebook = nbformat.read(layout.executed('pytorch', 'ch/a'), as_version=4)
    assert any(c.source == 'New words.' for c in notebook.cells)
    merged = merge_section('ch/a', layout)
    assert [c.outputs[0]['text'] for c in merged.cells if c.source == 'print(a * 10)'] == [
        '10\n',
        '20\n',
    ]


@pytest.mark.slow
def test_planning_writes_nothing(two_sections):
    layout = two_sections.layout
    run(two_sections)
    path = layout.source('ch/a')
    path.write_text(
        path.read_text().replace('First words.\n', 'First words.\n\n+++\n\nNew words.\n')
    )
    split_section('ch/a', layout)
    executed = {fw: layout.executed(fw, 'ch/a').read_text() for fw in FRAMEWORKS}
    planned = plan(['ch/a'], layout, frameworks=['jax'])
    assert [(job.rel, job.framework) for job, _ in planned.cached] == [
        ('ch/a', 'jax')
    ] and not planned.to_run
    assert any(c.source == 'New words.' for c in planned.cached[0][1].cells)
    assert {fw: layout.executed(fw, 'ch/a').read_text() for fw in FRAMEWORKS} == executed


@pytest.mark.slow
def test_a_new_install_cell_reexecutes_nothing(two_sections):
    layout = two_sections.layout
    run(two_sections)
    layout.config.write_text('repository:\n  url: https://github.com/other/book\n')
    records, _ = run(two_sections)
    assert set(statuses(records).values()) == {'cached'}
    notebook = nbformat.read(layout.executed('jax', 'ch/a'), as_version=4)
    assert (
        notebook.cells[0].id == 'install'
        and 'git+https://github.com/other/book' in notebook.cells[0].source
    )
    assert (
        next(c for c in notebook.cells if c.source == 'print(a * 10)').outputs[0]['text'] == '20\n'
    )


@pytest.mark.slow
def test_a_code_edit_reexecutes_only_that_notebook(two_sections):
    layout = two_sections.layout
    run(two_sections)
    path = layout.source('ch/a')
    path.write_text(path.read_text().replace('a = 2', 'a = 3'))
    records, _ = run(two_sections)
    assert statuses(records) == {
        ('ch/a', 'pytorch'): 'cached',
        ('ch/a', 'jax'): 'executed',
        ('ch/b', 'pytorch'): 'cached',
        ('ch/b', 'jax'): 'cached',
    }
    notebook = nbformat.read(layout.executed('jax', 'ch/a'), as_version=4)
    assert (
        next(c for c in notebook.cells if c.source == 'print(a * 10)').outputs[0]['text'] == '30\n'
    )


def test_a_bad_full_protocol_value_stops_only_the_steps_that_hash(project, monkeypatch, capsys):
    bad = {'D2L_MINI_FULL_PROTOCOL': 'maybe'}
    helped = subprocess.run(
        [sys.executable, '-m', 'tools', '--help'],
        env={**os.environ, **bad},
        capture_output=True,
        text=True,
    )
    assert helped.returncode == 0, helped.stderr
    assert 'split' in helped.stdout
    # Import d2l_mini.settings afresh, as a new process would, with the bad value.
    monkeypatch.setenv('D2L_MINI_FULL_PROTOCOL', 'maybe')
    monkeypatch.delitem(sys.modules, 'd2l_mini.settings', raising=False)
    monkeypatch.delattr(d2l_mini, 'settings', raising=False)
    project.section('ch/a', '# A\n', project.code('x = 1'))
    assert main(['execute', 'book/ch/a.md'], project.layout) == 2
    err = capsys.readouterr().err
    assert err.startswith('python -m tools execute: error: D2L_MINI_FULL_PROTOCOL=')
    assert 'Traceback' not in err


def test_the_hash_covers_code_library_and_pins_but_not_prose(project, monkeypatch):
    project.section('ch/h', '# H\n', project.code('x = 1'))
    layout = project.layout
    notebook = nbformat.read(split_section('ch/h', layout)['jax'], as_version=4)
    first = notebook_hash(notebook, layout)
    notebook.cells[1].source = '# Other words'
    assert notebook_hash(notebook, layout) == first
    (layout.library / 'helpers.py').write_text('VALUE = 1\n')
    second = notebook_hash(notebook, layout)
    assert second != first
    layout.requirements.write_text(layout.requirements.read_text() + 'numpy==2.4.6\n')
    third = notebook_hash(notebook, layout)
    assert third != second
    notebook.cells[2].metadata['tags'] = ['raises-exception']
    fourth = notebook_hash(notebook, layout)
    assert fourth != third
    monkeypatch.setattr('tools.run.cache.installed_builds', lambda: 'torch==2.13.0+cu128')
    assert notebook_hash(notebook, layout) != fourth


@pytest.mark.slow
def test_a_failing_cell_stops_with_framework_notebook_cell_and_traceback(project, capsys):
    code = project.code
    project.section(
        'ch/fails',
        '# Fails\n',
        code('value = 1'),
        code('def broken():\n    pass', 'pytorch'),
        code("def broken():\n    raise ValueError('boom at ' + str(value))", 'jax'),
        code('broken()', 'pytorch'),
        code('broken()', 'jax'),
        code("print('after')"),
    )
    project.section('ch/fine', code('1 / 0', 'raises-exception'), code("print('fine')"))
    layout = project.layout
    stale = layout.executed('jax', 'ch/fails')
    stale.parent.mkdir(parents=True)
    stale.write_text('{}')  # an executed copy from an earlier run
    with pytest.raises(ExecutionFailed) as failure:
        run(project)
    message = str(failure.value)
    assert '[jax] ch/fails failed in notebook cell 4 (id c005): broken()' in message
    assert 'ValueError: boom at 1' in message and 'raise ValueError' in message
    assert '\x1b[' not in message and 'ipykernel_' not in message
    assert not stale.exists()
    assert layout.executed('pytorch', 'ch/fails').is_file()
    assert layout.executed('jax', 'ch/fine').is_file()
    saved = statuses(json.loads(layout.records.read_text()))
    assert saved[('ch/fails', 'jax')] == 'failed' and saved[('ch/fine', 'jax')] == 'executed'
    assert main(['execute', 'book/ch/fails.md'], layout) == 1
    err = capsys.readouterr().err
    assert '[jax] ch/fails failed in notebook cell 4 (id c005): broken()' in err
    assert 'ValueError: boom at 1' in err


@pytest.mark.slow
def test_a_notebook_past_its_timeout_fails(project):
    project.section('ch/slow', project.code('import time\ntime.sleep(60)'))
    with pytest.raises(ExecutionFailed, match=r'(?s)ch/slow failed in notebook cell 1.*timed out'):
        run(project, timeout=8)
    assert not project.layout.executed('pytorch', 'ch/slow').exists()


@pytest.mark.slow
def test_a_warning_in_an_output_fails_the_notebook(project):
    code = project.code
    project.section(
        'ch/warns',
        '# Warns\n',
        code('import warnings'),
        code("warnings.warn('.value access is deprecated', DeprecationWarning)", 'pytorch'),
        code("warnings.warn('.value access is deprecated', FutureWarning)", 'jax'),
    )
    with pytest.raises(ExecutionFailed) as failure:
        run(project)
    message = str(failure.value)
    for framework, category in (('pytorch', 'DeprecationWarning'), ('jax', 'FutureWarning')):
        assert f'[{framework}] ch/warns failed in notebook cell' in message
        assert f'<cell>:1: {category}: .value access is deprecated' in message
        assert not project.layout.executed(framework, 'ch/warns').exists()
    assert 'ALLOWED_WARNINGS' in message


def stream(text, name='stderr'):
    return nbformat.v4.new_code_cell(
        'x', outputs=[nbformat.v4.new_output('stream', name=name, text=text)]
    )


def test_warnings_in_finds_the_lines_python_and_loggers_print_as_warnings(monkeypatch):
    deprecation = (
        "<cell>:3: DeprecationWarning: '.value' access is now deprecated.\n"
        '  fresh = ffn.W_1.kernel.value\n'
    )
    assert warnings_in(stream(deprecation)) == [
        "<cell>:3: DeprecationWarning: '.value' access is now deprecated."
    ]
    tqdm = 'site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found.\n'
    assert warnings_in(stream('loss 2.1\n' + tqdm, 'stdout')) == [tqdm.strip()]
    logged = 'WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine\n'
    assert warnings_in(stream(logged)) == [logged.strip()]
    assert warnings_in(stream('Warning signs in the loss: none\nUserWarning is a class\n')) == []
    monkeypatch.setitem(outputs.ALLOWED_WARNINGS, r'xla_bridge:An NVIDIA GPU', 'a reason')
    assert warnings_in(stream(logged)) == []


def test_settings_validate_the_environment(monkeypatch):
    monkeypatch.setenv('BOOK_JOBS', '3')
    monkeypatch.setenv('BOOK_TIMEOUT', '90')
    assert settings() == (3, 90.0)
    monkeypatch.setenv('BOOK_JOBS', 'zero')
    with pytest.raises(ValueError, match='BOOK_JOBS'):
        settings()
    monkeypatch.delenv('BOOK_JOBS')
    monkeypatch.delenv('BOOK_TIMEOUT')
    monkeypatch.setattr(execute_module, 'cpu_cores', lambda: 2)
    assert settings()[0] == 1
    monkeypatch.setattr(execute_module, 'cpu_cores', lambda: 16)
    assert settings()[0] == 8
    monkeypatch.setenv('BOOK_TIMEOUT', '-1')
    with pytest.raises(ValueError, match='BOOK_TIMEOUT'):
        settings()
    with pytest.raises(ValueError, match='threads'):
        kernel_environment(0)
    env = kernel_environment(1)
    assert env['OMP_NUM_THREADS'] == env['MKL_NUM_THREADS'] == env['OPENBLAS_NUM_THREADS'] == '1'
    assert '--xla_cpu_multi_thread_eigen=false' in env['XLA_FLAGS']


def test_clean_text_strips_colour_progress_and_kernel_paths():
    raw = '\x1b[0;31mError\x1b[0m\n  1%\r 50%\r100%\nFile /tmp/ipykernel_4242/3012.py:3\r\n'
    assert clean_text(raw) == 'Error\n100%\nFile <cell>:3\n'


def test_clean_text_names_files_without_the_machine_they_ran_on():
    from tools.paths import ROOT

    raw = (
        f'File {ROOT}/d2l_mini/plotting.py:12, in plot\n'
        f'File {ROOT}/.venv/lib/python3.11/site-packages/jax/_src/api.py:3\n'
        'File /usr/lib/python3/dist-packages/numpy/core.py:9\n'
    )
    assert clean_text(raw) == (
        'File d2l_mini/plotting.py:12, in plot\n'
        'File site-packages/jax/_src/api.py:3\n'
        'File site-packages/numpy/core.py:9\n'
    )


@pytest.mark.slow
def test_every_notebook_of_the_book_ran_in_both_frameworks(executed_book):
    layout = executed_book
    names = find_sections(layout)
    assert names, 'the book has no sections'
    saved = statuses(json.loads(layout.records.read_text()))
    for rel in names:
        for framework in FRAMEWORKS:
            assert saved.get((rel, framework)) in ('executed', 'cached'), (rel, framework)
            split = nbformat.read(layout.notebook(framework, rel), as_version=4)
            executed = nbformat.read(layout.executed(framework, rel), as_version=4)
            assert executed.metadata[METADATA_KEY]['hash'] == notebook_hash(split, layout)
            for cell in executed.cells:
                if cell.cell_type == 'code' and 'raises-exception' not in cell.metadata.get(
                    'tags', []
                ):
                    assert all(o['output_type'] != 'error' for o in cell.outputs), (
                        rel,
                        framework,
                        cell.id,
                    )
        assert layout.merged(rel).is_file()
