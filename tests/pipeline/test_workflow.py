"""The workflow on the repository host (.github/workflows/book.yml) and the local action
that sets up each of its jobs (.github/actions/setup-book/action.yml).

They are checked against the published GitHub workflow and action schemas that
check-jsonschema carries (no network), and against the project: the frameworks of the
matrix, the commands it runs, the artefacts passed from job to job, the corpus's checksum.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from d2l_mini.data import TIME_MACHINE_SHA1
from tools.frameworks import FRAMEWORKS
from tools.paths import ROOT

WORKFLOW = ROOT / '.github' / 'workflows' / 'book.yml'
SETUP = './.github/actions/setup-book'  # as a job's step names it
ACTION = ROOT / SETUP / 'action.yml'


def validate(*paths: Path, schema: str = 'vendor.github-workflows') -> dict:
    """check-jsonschema's report on ``paths`` against one of GitHub's schemas."""
    result = subprocess.run(
        [
            sys.executable,
            '-m',
            'check_jsonschema',
            '--output-format',
            'json',
            '--builtin-schema',
            schema,
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def workflow() -> dict:
    data = yaml.safe_load(WORKFLOW.read_text(encoding='utf-8'))
    data['on'] = data.pop(True, data.get('on'))  # YAML 1.1 reads the key `on` as True
    return data


def action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding='utf-8'))


def runs(job: dict) -> str:
    return '\n'.join(step.get('run', '') for step in job['steps'])


def uses(steps: list[dict], name: str) -> list[dict]:
    """The steps that use the action ``name`` (at any version)."""
    return [step for step in steps if step.get('uses', '').split('@')[0] == name]


def test_the_workflow_matches_the_github_schema_and_a_broken_one_does_not(tmp_path):
    broken = tmp_path / 'book.yml'
    broken.write_text(WORKFLOW.read_text().replace('runs-on:', 'runs_on:', 1))
    report = validate(WORKFLOW, broken)  # one run of the checker for both
    assert report['status'] == 'fail' and not report['parse_errors']
    assert {(error['filename'], error['path']) for error in report['errors']} == {
        (str(broken), '$.jobs.test')
    }


def test_the_action_matches_the_github_schema_and_a_broken_one_does_not(tmp_path):
    broken = tmp_path / 'action.yml'
    broken.write_text(ACTION.read_text().replace('using: composite', 'using: compost'))
    report = validate(ACTION, broken, schema='vendor.github-actions')
    assert report['status'] == 'fail' and not report['parse_errors']
    assert {error['filename'] for error in report['errors']} == {str(broken)}


def test_pull_requests_run_the_readme_test_command():
    data = workflow()
    assert 'pull_request' in data['on']
    test = data['jobs']['test']
    assert 'pull_request' in test['if']
    assert 'bash .ci/run' in runs(test)
    assert 'make test' in (ROOT / '.ci' / 'run').read_text()
    assert 'make test' in (ROOT / 'README.md').read_text()


def test_main_executes_each_framework_in_its_own_job_then_publishes_once():
    data = workflow()
    assert data['on']['push']['branches'] == ['main']
    execute, publish = data['jobs']['execute'], data['jobs']['publish']
    assert sorted(execute['strategy']['matrix']['framework']) == sorted(FRAMEWORKS)
    assert 'python -m tools execute --framework ${{ matrix.framework }}' in runs(execute)
    [upload] = [
        s for s in execute['steps'] if s.get('uses', '').startswith('actions/upload-artifact@')
    ]
    assert '_build/executed/${{ matrix.framework }}' in upload['with']['path']
    assert publish['needs'] == 'execute'
    assert publish['permissions'] == {'contents': 'write'}
    [download] = [
        s for s in publish['steps'] if s.get('uses', '').startswith('actions/download-artifact@')
    ]
    assert download['with']['path'] == '_build' and download['with']['merge-multiple'] is True
    commands = runs(publish)
    order = ['tools records', 'tools build --no-execute', 'pytest', 'tools publish']
    positions = [commands.index(command) for command in order]
    assert positions == sorted(positions), f'expected the steps in the order {order}'
    for framework in FRAMEWORKS:
        assert f'_build/exec/records-{framework}.json' in commands


def run_step(step: dict, cwd: Path, tmp_path: Path) -> dict[str, str]:
    """Run a workflow step's script as the runner would; what it wrote to GITHUB_OUTPUT
    and GITHUB_ENV."""
    files = {name: tmp_path / name for name in ('GITHUB_OUTPUT', 'GITHUB_ENV')}
    for path in files.values():
        path.write_text('')
    subprocess.run(
        ['bash', '-e', '-c', step['run']],
        cwd=cwd,
        env={'PATH': os.environ['PATH'], 'HOME': str(tmp_path)}
        | {name: str(path) for name, path in files.items()},
        check=True,
        timeout=60,
    )
    return dict(
        line.split('=', 1) for path in files.values() for line in path.read_text().splitlines()
    )


def test_every_job_checks_out_then_sets_up_with_the_one_action():
    for name, job in workflow()['jobs'].items():
        first, second = (step.get('uses', '') for step in job['steps'][:2])
        assert first.startswith('actions/checkout@') and second == SETUP, name
        assert len(uses(job['steps'], SETUP)) == 1, name
        # What the action does, no job does again.
        for repeated in ('actions/setup-python', 'actions/cache'):
            assert not uses(job['steps'], repeated), f'{name} uses {repeated} itself'
        assert 'make venv' not in runs(job), name
    text = WORKFLOW.read_text()
    assert 'd2l_mini/data.py' not in text and 'grep' not in text
    assert TIME_MACHINE_SHA1 not in text + ACTION.read_text(), 'd2l_mini/data.py names it'


def test_the_action_caches_pip_installs_the_pins_and_caches_the_corpus(tmp_path):
    steps = action()['runs']['steps']
    assert action()['runs']['using'] == 'composite'
    [setup] = uses(steps, 'actions/setup-python')
    assert setup['with']['cache'] == 'pip'
    assert setup['with']['python-version'] == '${{ inputs.python-version }}'
    names = [step.get('uses', step.get('run', '')).split('@')[0].strip() for step in steps]
    assert names.index('make venv') < names.index('actions/cache'), 'the checksum needs .venv'
    [corpus] = [step for step in steps if step.get('id') == 'corpus']
    written = run_step(corpus, ROOT, tmp_path)
    assert written == {'D2L_MINI_DATA': f'{tmp_path}/d2l-data', 'sha1': TIME_MACHINE_SHA1}
    [cache] = uses(steps, 'actions/cache')
    assert cache['with']['key'] == 'd2l-data-${{ steps.corpus.outputs.sha1 }}'
    assert cache['with']['path'] == '~/d2l-data'
    # By default, the lowest Python the project supports (readers' jobs name theirs).
    lowest = re.search(r'requires-python = ">=([\d.]+)"', (ROOT / 'pyproject.toml').read_text())
    assert action()['inputs']['python-version']['default'] == lowest[1]


def test_the_corpus_step_fails_without_the_checksum(tmp_path):
    [corpus] = [step for step in action()['runs']['steps'] if step.get('id') == 'corpus']
    empty = tmp_path / 'checkout'
    empty.mkdir()
    with pytest.raises(subprocess.CalledProcessError):
        run_step(corpus, empty, tmp_path)  # no .venv: no command to give the checksum
    assert 'sha1' not in (tmp_path / 'GITHUB_OUTPUT').read_text()


def test_the_checksum_command_prints_d2l_mini_s(capsys, monkeypatch):
    from d2l_mini import data
    from tools.cli import main

    assert main(['facts', 'corpus-sha1']) == 0
    assert capsys.readouterr().out == f'{TIME_MACHINE_SHA1}\n'
    monkeypatch.setattr(data, 'TIME_MACHINE_SHA1', 'ab' * 20)
    assert main(['facts', 'corpus-sha1']) == 0
    assert capsys.readouterr().out == f'{"ab" * 20}\n', 'read from d2l_mini, not copied'
    assert main(['facts', 'no-such-fact']) == 2


def test_the_steps_the_workflow_runs_exist(capsys):
    from tools.cli import main

    text = WORKFLOW.read_text() + ACTION.read_text()
    steps = set(re.findall(r'python -m tools (\w+)', text))
    assert {'execute', 'build', 'records', 'publish', 'facts'} <= steps
    unknown = {step for step in steps if main([step, '--help']) != 0}
    assert not unknown, f'the workflow runs steps that do not exist: {sorted(unknown)}'
    assert main(['no-such-step', '--help']) == 2  # the check can fail


def test_the_readers_matrix_runs_weekly_and_on_demand_on_the_readers_pythons():
    from tools import readers
    from tools.paths import Layout
    from tools.source.sections import find_sections

    data = workflow()
    assert 'cron' in data['on']['schedule'][0] and 'workflow_dispatch' in data['on']
    job = data['jobs']['readers']
    assert 'schedule' in job['if'] and 'workflow_dispatch' in job['if']
    matrix = job['strategy']['matrix']
    assert matrix['python'] == ['3.11', '3.12']
    layout = Layout()
    assert sorted(matrix['environment']) == sorted(
        readers.environments(layout, find_sections(layout))
    )
    assert 'python -m tools readers --unexecuted --environments ${{ matrix.environment }}' in runs(
        job
    )
    [setup] = uses(job['steps'], SETUP)
    assert setup['with']['python-version'] == '${{ matrix.python }}'
    # torch from the CPU index, for the readers' environments too (they inherit it).
    assert data['env']['PIP_EXTRA_INDEX_URL'] == 'https://download.pytorch.org/whl/cpu'
    # The other jobs do not run on the schedule.
    for name in ('test', 'execute', 'publish'):
        assert 'schedule' not in data['jobs'][name].get('if', '')


def test_the_run_for_other_machines_runs_weekly_in_each_of_its_environments():
    from tools.machines.environments import ENVIRONMENTS

    job = workflow()['jobs']['machines']
    assert 'schedule' in job['if'] and 'workflow_dispatch' in job['if']
    assert job['strategy']['matrix']['environment'] == list(ENVIRONMENTS)
    assert 'python -m tools machines --environments ${{ matrix.environment }}' in runs(job)
    table = workflow()['jobs']['machines-table']
    assert table['needs'] == 'machines' and 'python -m tools machines --table-only' in runs(table)
