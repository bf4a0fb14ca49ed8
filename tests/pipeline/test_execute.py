"""tools.run.execute: the content-hash cache, clean outputs, failures, records; and one
real kernel for each thing only a kernel shows (its environment and the probe's records,
a failing cell's traceback, a timeout, a dead kernel).

The bookkeeping runs on the stand-in kernel of conftest.py (fake_kernel). The toy
sections use no framework, so their cells run in either kernel without torch or jax.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

import nbformat
import psutil
import pytest

import d2l_mini
from tools.cli import main
from tools.frameworks import FRAMEWORKS
from tools.paths import Layout, read_config
from tools.run import execute as execute_module
from tools.run import outputs
from tools.run.cache import METADATA_KEY, notebook_hash
from tools.run.execute import ExecutionFailed, execute, plan
from tools.run.kernel import kernel_environment
from tools.run.outputs import clean_text, warnings_in
from tools.run.settings import auto_jobs, cpu_cores, read_settings
from tools.site.merge import merge_section
from tools.source.sections import find_sections
from tools.source.split import split_section

NOISY = r"""print("\x1b[31mred\x1b[0m")
for step in range(3):
    print(f"\r{step}/3", end="")
print("\rdone")"""


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


def outputs_of(layout, framework, rel, source):
    notebook = nbformat.read(layout.executed(framework, rel), as_version=4)
    return next(c for c in notebook.cells if c.source == source).outputs


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
    project.section('ch/b', '# B\n', code("print('b')"))
    return project


# ------------------------------------------------------------- the bookkeeping


def test_both_frameworks_run_and_are_recorded(two_sections, fake_kernel):
    layout = two_sections.layout
    records, _ = run(two_sections)
    assert statuses(records) == {
        (s, fw): 'executed' for s in ('ch/a', 'ch/b') for fw in FRAMEWORKS
    }
    assert sorted(fake_kernel.started()) == sorted(statuses(records))
    printed = {}
    for framework in FRAMEWORKS:
        printed[framework] = outputs_of(layout, framework, 'ch/a', 'print(a * 10)')[0]['text']
        notebook = nbformat.read(layout.executed(framework, 'ch/a'), as_version=4)
        facts = notebook.metadata[METADATA_KEY]
        assert facts['hash'] == notebook_hash(
            nbformat.read(layout.notebook(framework, 'ch/a'), as_version=4), framework, layout
        )
        assert facts['wall_s'] > 0
        assert all(c.id != 'execution-probe' for c in notebook.cells)
    assert printed == {'pytorch': '10\n', 'jax': '20\n'}
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


def test_outputs_are_cleaned(two_sections, fake_kernel):
    run(two_sections)
    assert outputs_of(two_sections.layout, 'jax', 'ch/a', NOISY)[0]['text'] == 'red\ndone\n'


def test_kernels_get_the_settings_threads_and_their_folder(two_sections, fake_kernel, monkeypatch):
    monkeypatch.delenv('BOOK_JOBS', raising=False)
    layout = two_sections.layout
    two_sections.configure(
        book_execute={'jobs': 1, 'timeout': 99, 'kernel_env': {'BOOK_TEST': 'on'}},
        repository={'url': 'https://example.org/owner/book'},
    )
    run(two_sections, names=['ch/b'], jobs=None)
    assert [
        (r.timeout, r.env['BOOK_TEST'], r.env['OMP_NUM_THREADS']) for r in fake_kernel.runs
    ] == [(99.0, 'on', str(cpu_cores()))] * len(FRAMEWORKS)
    assert sorted(r.cwd for r in fake_kernel.runs) == sorted(
        layout.executed(fw, 'ch/b').parent for fw in FRAMEWORKS
    )


def test_a_prose_edit_reexecutes_nothing(two_sections, fake_kernel):
    layout = two_sections.layout
    run(two_sections)
    path = layout.source('ch/a')
    # A new paragraph cell before the code moves every code cell's id.
    path.write_text(
        path.read_text().replace('First words.\n', 'First words.\n\n+++\n\nNew words.\n')
    )
    fake_kernel.runs.clear()
    records, log = run(two_sections)
    assert set(statuses(records).values()) == {'cached'}
    assert not fake_kernel.runs and not any('started' in line for line in log)
    notebook = nbformat.read(layout.executed('pytorch', 'ch/a'), as_version=4)
    assert any(c.source == 'New words.' for c in notebook.cells)
    merged = merge_section('ch/a', layout)
    assert [c.outputs[0]['text'] for c in merged.cells if c.source == 'print(a * 10)'] == [
        '10\n',
        '20\n',
    ]


def test_planning_writes_nothing(two_sections, fake_kernel):
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


def test_a_new_install_cell_reexecutes_nothing(two_sections, fake_kernel):
    layout = two_sections.layout
    run(two_sections)
    two_sections.configure(repository={'url': 'https://github.com/other/book'})
    records, _ = run(two_sections)
    assert set(statuses(records).values()) == {'cached'}
    notebook = nbformat.read(layout.executed('jax', 'ch/a'), as_version=4)
    assert (
        notebook.cells[0].id == 'install'
        and 'git+https://github.com/other/book' in notebook.cells[0].source
    )
    assert outputs_of(layout, 'jax', 'ch/a', 'print(a * 10)')[0]['text'] == '20\n'


def test_a_code_edit_reexecutes_only_that_notebook(two_sections, fake_kernel):
    layout = two_sections.layout
    run(two_sections)
    path = layout.source('ch/a')
    path.write_text(path.read_text().replace('a = 2', 'a = 3'))
    fake_kernel.runs.clear()
    records, _ = run(two_sections)
    assert statuses(records) == {
        ('ch/a', 'pytorch'): 'cached',
        ('ch/a', 'jax'): 'executed',
        ('ch/b', 'pytorch'): 'cached',
        ('ch/b', 'jax'): 'cached',
    }
    assert fake_kernel.started() == [('ch/a', 'jax')]
    assert outputs_of(layout, 'jax', 'ch/a', 'print(a * 10)')[0]['text'] == '30\n'


def test_the_longest_notebook_runs_first(two_sections, fake_kernel):
    layout = two_sections.layout
    run(two_sections)
    saved = json.loads(layout.records.read_text())
    for record in saved:
        record['wall_s'] = {'ch/a': 1.0, 'ch/b': 5.0}[record['section']]
    layout.records.write_text(json.dumps(saved))
    fake_kernel.runs.clear()
    run(two_sections, force=True, jobs=1)
    assert [name for name, _ in fake_kernel.started()] == ['ch/b', 'ch/b', 'ch/a', 'ch/a']


def test_without_records_the_largest_notebook_runs_first(project, fake_kernel):
    code = project.code
    project.section('ch/a-short', '# Short\n', code('x = 1'))
    project.section('ch/b-long', '# Long\n', code('\n'.join(f'x{i} = {i}' for i in range(40))))
    run(project, jobs=1)
    assert [name for name, _ in fake_kernel.started()] == [
        'ch/b-long',
        'ch/b-long',
        'ch/a-short',
        'ch/a-short',
    ]


def test_long_runs_say_which_cell_they_are_at(project, fake_kernel, monkeypatch):
    code = project.code
    project.section('ch/long', code('x = 1'), code('y = 2'), code('z = 3'))
    monkeypatch.setattr(execute_module, 'PROGRESS_EVERY', 0.02)
    fake_kernel.cell_seconds = 0.1
    _, log = run(project, frameworks=('jax',))
    at = [line for line in log if line.startswith('  ... [jax] ch/long: ')]
    # The install cell, three cells and the probe: at cells 0 to 4 of 4.
    cells = [int(re.search(r'at cell (\d) of 4$', line)[1]) for line in at]
    assert cells == sorted(cells) and {1, 2, 3} <= set(cells), at


def test_a_failing_notebook_is_reported_and_the_others_still_run(project, fake_kernel, capsys):
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
    assert 'ValueError: boom at 1' in message
    assert not stale.exists()
    assert layout.executed('pytorch', 'ch/fails').is_file()
    assert layout.executed('jax', 'ch/fine').is_file()
    saved = statuses(json.loads(layout.records.read_text()))
    assert saved[('ch/fails', 'jax')] == 'failed' and saved[('ch/fine', 'jax')] == 'executed'
    assert main(['execute', 'book/ch/fails.md'], layout) == 1
    err = capsys.readouterr().err
    assert '[jax] ch/fails failed in notebook cell 4 (id c005): broken()' in err
    assert 'ValueError: boom at 1' in err


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
    first = notebook_hash(notebook, 'jax', layout)
    notebook.cells[1].source = '# Other words'
    assert notebook_hash(notebook, 'jax', layout) == first
    (layout.library / 'jax.py').write_text('VALUE = 1\n')
    second = notebook_hash(notebook, 'jax', layout)
    assert second != first
    layout.requirements.write_text(layout.requirements.read_text() + 'numpy==2.4.6\n')
    third = notebook_hash(notebook, 'jax', layout)
    assert third != second
    notebook.cells[2].metadata['tags'] = ['raises-exception']
    fourth = notebook_hash(notebook, 'jax', layout)
    assert fourth != third
    monkeypatch.setattr('tools.run.cache.installed_builds', lambda: 'torch==2.13.0+cu128')
    assert notebook_hash(notebook, 'jax', layout) != fourth


# ------------------------------------------------------------ the settings


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


def test_the_settings_come_from_the_config_and_the_environment(project, monkeypatch):
    monkeypatch.delenv('BOOK_JOBS', raising=False)
    monkeypatch.delenv('BOOK_TIMEOUT', raising=False)
    block = read_config(Layout())['book_execute']
    settings = read_settings(project.layout)
    assert settings.timeout == float(block['timeout'])
    assert settings.kernel_env == {name: str(value) for name, value in block['kernel_env'].items()}
    assert settings.jobs == (auto_jobs() if block['jobs'] == 'auto' else block['jobs'])
    monkeypatch.setattr('tools.run.settings.cpu_cores', lambda: 16)
    assert auto_jobs() == 16
    monkeypatch.setattr('tools.run.settings.cpu_cores', lambda: 1)
    assert auto_jobs() == 1
    monkeypatch.setenv('BOOK_JOBS', '3')
    monkeypatch.setenv('BOOK_TIMEOUT', '90')
    assert (read_settings(project.layout).jobs, read_settings(project.layout).timeout) == (3, 90)
    assert read_settings(project.layout, jobs=2, timeout=5).jobs == 2


@pytest.mark.parametrize(
    'setting, value, message',
    [
        ('BOOK_JOBS', 'zero', "BOOK_JOBS must be a positive whole number or auto, got 'zero'"),
        ('BOOK_JOBS', '1.5', 'BOOK_JOBS must be a positive whole number'),
        ('BOOK_TIMEOUT', '-1', "BOOK_TIMEOUT must be a positive number of seconds, got '-1'"),
        ('jobs', 0, 'book_execute.jobs must be a positive whole number or auto, got 0'),
        ('timeout', 'soon', 'book_execute.timeout must be a positive number of seconds'),
        ('kernel_env', ['A=1'], 'book_execute.kernel_env must map variable names to values'),
        ('kernel_env', {'A': [1]}, 'book_execute.kernel_env.A must be a string or a number'),
    ],
)
def test_bad_settings_stop_the_execute_step_by_name(
    project, monkeypatch, capsys, setting, value, message
):
    monkeypatch.delenv('BOOK_JOBS', raising=False)
    monkeypatch.delenv('BOOK_TIMEOUT', raising=False)
    if setting.isupper():
        monkeypatch.setenv(setting, value)
    else:
        block = dict(read_config(Layout())['book_execute'], **{setting: value})
        project.configure(book_execute=block)
    project.section('ch/a', project.code('x = 1'))
    with pytest.raises(ValueError, match=re.escape(message)):
        read_settings(project.layout)
    assert main(['execute', 'book/ch/a.md'], project.layout) == 2
    assert message in capsys.readouterr().err
    assert not project.layout.notebook('pytorch', 'ch/a').exists()


def test_without_execution_settings_the_execute_step_says_where_they_go(project, capsys):
    project.layout.config.write_text('repository:\n  url: https://example.org/owner/book\n')
    project.section('ch/a', project.code('x = 1'))
    assert main(['execute', 'book/ch/a.md'], project.layout) == 2
    assert 'book_execute in ' in capsys.readouterr().err


def test_the_kernel_environment_sets_threads_over_the_build_s_own(monkeypatch):
    monkeypatch.setenv('OMP_NUM_THREADS', '64')
    with pytest.raises(ValueError, match='threads'):
        kernel_environment(0, {})
    env = kernel_environment(1, {'NO_COLOR': '1'})
    assert env['OMP_NUM_THREADS'] == env['MKL_NUM_THREADS'] == env['OPENBLAS_NUM_THREADS'] == '1'
    assert '--xla_cpu_multi_thread_eigen=false' in env['XLA_FLAGS']
    assert env['NO_COLOR'] == '1' and env['PATH'] == os.environ['PATH']
    assert 'xla_cpu_multi_thread_eigen' not in kernel_environment(2, {}).get('XLA_FLAGS', '')


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


# ------------------------------------------------------------------ real kernels

PROBED = """import os, sys
print(os.getcwd())
print(os.environ['OMP_NUM_THREADS'], os.environ['TQDM_DISABLE'], os.environ['MPLBACKEND'])
print("\\x1b[31mred\\x1b[0m")
from d2l_mini.progress import progress
print(sum(progress(range(3), desc='loop', delay=0)))"""


@pytest.mark.slow
def test_a_kernel_runs_with_its_environment_in_its_folder_and_is_probed(project, monkeypatch):
    project.section('ch/probed', project.code(PROBED), project.code('import time\ntime.sleep(3)'))
    layout = project.layout
    monkeypatch.setattr(execute_module, 'PROGRESS_EVERY', 1.0)
    records, log = run(project, frameworks=('jax',), jobs=1)
    assert any(line.endswith('at cell 2 of 3') for line in log), 'nbclient says which cell runs'
    outputs = outputs_of(layout, 'jax', 'ch/probed', PROBED)
    text = ''.join(o['text'] for o in outputs if o['output_type'] == 'stream')
    folder = layout.executed('jax', 'ch/probed').parent
    env = read_settings(layout).kernel_env
    threads = cpu_cores()
    assert text == (f'{folder}\n{threads} {env["TQDM_DISABLE"]} {env["MPLBACKEND"]}\nred\n3\n'), (
        'the kernel works in its folder, with the settings, and shows no progress bar'
    )
    [record] = records
    assert record['status'] == 'executed'
    assert set(record['versions']) == {'jax', 'jaxlib', 'flax', 'optax'}
    assert record['hardware'].startswith(('CPU: ', 'GPU: ', 'TPU: '))
    facts = nbformat.read(layout.executed('jax', 'ch/probed'), as_version=4).metadata[METADATA_KEY]
    assert facts['python'] == record['python'] and facts['versions'] == record['versions']


@pytest.mark.slow
def test_a_failing_cell_is_named_with_its_traceback_without_colour(project):
    code = project.code
    project.section(
        'ch/fails',
        code('value = 1'),
        code("def broken():\n    raise ValueError('boom at ' + str(value))"),
        code('1 / 0', 'raises-exception'),
        code('broken()'),
        code("print('after')"),
    )
    with pytest.raises(ExecutionFailed) as failure:
        run(project, frameworks=('pytorch',), jobs=1)
    message = str(failure.value)
    assert '[pytorch] ch/fails failed in notebook cell 4 (id c003): broken()' in message
    assert 'ValueError: boom at 1' in message and 'raise ValueError' in message
    assert '\x1b[' not in message and 'ipykernel_' not in message
    assert not project.layout.executed('pytorch', 'ch/fails').exists()


@pytest.mark.slow
def test_a_notebook_past_its_timeout_fails_naming_the_setting(project):
    project.section('ch/slow', project.code('import time\ntime.sleep(600)'))
    # The limit counts from the kernel's start, however long that took: it falls in the
    # slow cell, after the install cell, on a loaded machine too.
    with pytest.raises(ExecutionFailed) as failure:
        run(project, timeout=10, frameworks=('pytorch',), jobs=1)
    message = str(failure.value)
    assert 'ch/slow failed in notebook cell 1' in message and 'timed out' in message
    assert 'book_execute.timeout in _config.yml, or BOOK_TIMEOUT, sets the limit' in message
    assert not project.layout.executed('pytorch', 'ch/slow').exists()


@pytest.mark.slow
def test_a_dead_kernel_is_reported(project):
    project.section(
        'ch/dies', project.code("print('alive')"), project.code('import os\nos._exit(1)')
    )
    with pytest.raises(ExecutionFailed) as failure:
        run(project, frameworks=('pytorch',), jobs=1)
    message = str(failure.value)
    assert '[pytorch] ch/dies failed in notebook cell 2 (id c001): import os' in message
    assert 'the kernel died' in message


@pytest.mark.slow
def test_an_interrupt_stops_the_run_and_shuts_its_kernel_down(project, tmp_path):
    """Ctrl-C (SIGINT) during a cell ends the step with status 130 and a message: the
    kernel is shut down, the next notebook (queued: one kernel at a time) does not start,
    nothing is written."""
    running = tmp_path / 'running'
    project.section(
        'ch/a', project.code(f'open({str(running)!r}, "w").close()\nimport time\ntime.sleep(60)')
    )
    project.section('ch/b', project.code("print('b ran')"))
    command = [sys.executable, '-m', 'tools', '--root', str(project.root), 'execute']
    step = subprocess.Popen(
        [*command, '--framework', 'pytorch'],
        cwd=Layout().root,
        env={**os.environ, 'BOOK_JOBS': '1'},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not running.exists() and time.monotonic() < deadline and step.poll() is None:
        time.sleep(0.2)
    assert running.exists(), step.communicate()
    kernels = psutil.Process(step.pid).children(recursive=True)
    assert kernels
    step.send_signal(signal.SIGINT)
    out, err = step.communicate(timeout=60)
    assert step.returncode == 130, err
    assert 'execute interrupted: the kernels are shut down' in err
    assert 'ch/a: started' in out and 'ch/b' not in out
    assert not project.layout.executed('pytorch', 'ch/a').exists()
    psutil.wait_procs(kernels, timeout=10)
    assert not [kernel for kernel in kernels if kernel.is_running()]


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
            assert executed.metadata[METADATA_KEY]['hash'] == notebook_hash(
                split, framework, layout
            )
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
