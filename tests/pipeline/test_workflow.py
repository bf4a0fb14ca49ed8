"""The workflow on the repository host (.github/workflows/book.yml).

It is checked against the published GitHub workflow schema that check-jsonschema
carries (no network), and against the project: the frameworks of the matrix, the
commands it runs, the artefacts passed from job to job.
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


def validate(*paths: Path) -> dict:
    """check-jsonschema's report on ``paths`` against GitHub's workflow schema."""
    result = subprocess.run(
        [
            sys.executable,
            '-m',
            'check_jsonschema',
            '--output-format',
            'json',
            '--builtin-schema',
            'vendor.github-workflows',
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


def runs(job: dict) -> str:
    return '\n'.join(step.get('run', '') for step in job['steps'])


def test_the_workflow_matches_the_github_schema_and_a_broken_one_does_not(tmp_path):
    broken = tmp_path / 'book.yml'
    broken.write_text(WORKFLOW.read_text().replace('runs-on:', 'runs_on:', 1))
    report = validate(WORKFLOW, broken)  # one run of the checker for both
    assert report['status'] == 'fail' and not report['parse_errors']
    assert {(error['filename'], error['path']) for error in report['errors']} == {
        (str(broken), '$.jobs.test')
    }


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


def test_every_job_caches_pip_and_the_corpus_keyed_on_its_checksum(tmp_path):
    for name, job in workflow()['jobs'].items():
        setup = [s for s in job['steps'] if s.get('uses', '').startswith('actions/setup-python@')]
        assert setup and setup[0]['with']['cache'] == 'pip', name
        [corpus] = [s for s in job['steps'] if s.get('id') == 'corpus']
        written = run_step(corpus, ROOT, tmp_path)
        assert written == {'D2L_MINI_DATA': f'{tmp_path}/d2l-data', 'sha1': TIME_MACHINE_SHA1}
        cache = [s for s in job['steps'] if s.get('uses', '').startswith('actions/cache@')]
        assert cache and cache[0]['with']['key'] == 'd2l-data-${{ steps.corpus.outputs.sha1 }}'
    assert TIME_MACHINE_SHA1 not in WORKFLOW.read_text(), 'd2l_mini/data.py names it'


def test_the_corpus_checksum_is_read_from_d2l_mini(tmp_path):
    [corpus] = [s for s in workflow()['jobs']['test']['steps'] if s.get('id') == 'corpus']
    other = tmp_path / 'checkout'
    (other / 'd2l_mini').mkdir(parents=True)
    source = (ROOT / 'd2l_mini' / 'data.py').read_text()
    (other / 'd2l_mini' / 'data.py').write_text(source.replace(TIME_MACHINE_SHA1, 'ab' * 20))
    assert run_step(corpus, other, tmp_path)['sha1'] == 'ab' * 20
    (other / 'd2l_mini' / 'data.py').write_text('"""No checksum."""\n')
    with pytest.raises(subprocess.CalledProcessError):
        run_step(corpus, other, tmp_path)


def test_the_steps_the_workflow_runs_exist(capsys):
    from tools.cli import main

    steps = set(re.findall(r'python -m tools (\w+)', WORKFLOW.read_text()))
    assert {'execute', 'build', 'records', 'publish'} <= steps
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
    setup = next(s for s in job['steps'] if s.get('uses', '').startswith('actions/setup-python@'))
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
