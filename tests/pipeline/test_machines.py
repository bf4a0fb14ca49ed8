"""The run that stands for other machines: claims recorded, margins, environments."""

from __future__ import annotations

import json
import math

import pytest

from tools.machines import environments, margins
from tools.machines.environments import Environment, probe
from tools.machines.instrument import RECORD_VARIABLE, RECORDER_SOURCE, recorded_source
from tools.machines.run import machines, record_path, status_path
from tools.steps import StepFailed, UsageError

CLAIM = """\
import contextlib
with contextlib.nullcontext():
    rms = [1.0002, 0.9991]
    assert 1e-6 < ratio < 3e-6, ratio
    for name in ('W_v', 'W_o'):
        assert 0.65 < share[name] < 0.85 and share[name] != 0, share
    assert all(abs(r - 1) < 1e-3 for r in rms), rms
    assert int(3) == 3
    assert missing > 0
"""


def run_recorded(source: str, tmp_path, **names) -> list[dict]:
    path = tmp_path / 'claims.jsonl'
    namespace = dict(names)
    exec(RECORDER_SOURCE, namespace)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(RECORD_VARIABLE, str(path))
        exec(recorded_source(source, 7), namespace)
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_assertion_of_a_claim_cell_is_recorded_and_none_raises(tmp_path):
    records = run_recorded(CLAIM, tmp_path, ratio=9.4e-7, share={'W_v': 0.7, 'W_o': 0.9})
    by_source = {(r['source'], r['occurrence']): r for r in records}
    ratio = by_source[('1e-6 < ratio < 3e-6', 0)]
    assert (ratio['passed'], ratio['rows'], ratio['ops']) == (
        False,
        [[1e-6, 9.4e-7, 3e-6]],
        ['<', '<'],
    )
    assert ratio['constant'] == [True, False, True] and ratio['cell'] == 7
    # the parts of an `and`, each time round the loop
    assert by_source[('0.65 < share[name] < 0.85', 0)]['passed'] is True
    assert by_source[('0.65 < share[name] < 0.85', 1)]['passed'] is False
    assert by_source[('share[name] != 0', 1)]['passed'] is True
    rows = by_source[('all(abs(r - 1) < 1e-3 for r in rms)', 0)]
    assert rows['passed'] and len(rows['rows']) == 2
    assert by_source[('int(3) == 3', 0)]['passed'] is True
    broken = by_source[('missing > 0', 0)]
    assert broken['passed'] is False and broken['error'].startswith('NameError')


def write_records(layout, environment, framework, rel, records, status='passed'):
    path = record_path(layout, environment, framework, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(''.join(json.dumps(r) + '\n' for r in records))
    status_path(layout, environment, framework, rel).write_text(
        json.dumps(
            {'environment': environment, 'framework': framework, 'section': rel, 'status': status}
        )
    )


def claim(value, source='0.5 < x < 1.5', passed=True, line=1):
    return {
        'cell': 3,
        'line': line,
        'part': 0,
        'occurrence': 0,
        'source': source,
        'ops': ['<', '<'],
        'constant': [True, False, True],
        'passed': passed,
        'rows': [[0.5, value, 1.5]],
    }


def test_margins_put_failed_claims_first_then_the_least_room(project):
    layout = project.layout
    write_records(
        layout, 'build', 'jax', 'ch/a', [claim(1.0), claim(1.4, line=2), claim(0.9, line=3)]
    )
    write_records(
        layout,
        'one-thread',
        'jax',
        'ch/a',
        [claim(1.0), claim(1.45, line=2), claim(1.6, passed=False, line=3)],
    )
    found, envs, statuses = margins.claims(layout)
    assert envs == ['build', 'one-thread'] and len(statuses) == 2
    by_line = {c.key[3]: c for c in found}
    assert math.isclose(by_line[1].margin, 0.5 / 1.5) and by_line[1].spread == 0
    assert math.isclose(by_line[2].margin, 0.05 / 1.5)
    assert math.isclose(by_line[2].spread, 0.05 / 1.45)
    assert not by_line[2].has_room and by_line[1].has_room
    assert by_line[3].failed_in == ['one-thread']
    rows = [line for line in margins.table(layout).splitlines() if line.startswith('| [')]
    assert [row.split(' | ')[2:4] for row in rows] == [
        ['0.9', '1.6 FAILS'],
        ['1.4', '1.45'],
        ['1', '1'],
    ]
    assert margins.write(layout).read_text() == margins.table(layout)


def test_an_exact_claim_has_no_margin_and_is_listed_only_where_it_failed(project):
    exact = dict(
        claim(0), ops=['=='], constant=[False, True], rows=[[3.0, 3.0]], source='count == 3'
    )
    write_records(project.layout, 'build', 'pytorch', 'ch/a', [exact])
    [found] = margins.claims(project.layout)[0]
    assert found.margin is None and found.has_room
    assert 'count == 3' not in margins.table(project.layout)


def test_unknown_environments_are_named():
    with pytest.raises(UsageError, match=r'unknown environment.*fast-math.*choose from build'):
        environments.chosen(['build', 'fast-math'])
    assert [e.name for e in environments.chosen(None)] == list(environments.ENVIRONMENTS)


def test_xla_flags_add_to_the_build_s():
    env = environments.merged_env({'XLA_FLAGS': '--a'}, {'XLA_FLAGS': '--b', 'X': '1'})
    assert env == {'XLA_FLAGS': '--a --b', 'X': '1'}


@pytest.mark.parametrize(
    ('variables', 'named'),
    [
        ({'XLA_FLAGS': '--xla_cpu_max_isa=NOSUCH'}, 'XLA does not know a setting of XLA_FLAGS'),
        ({'XLA_FLAGS': '--xla_no_such_flag=1'}, 'XLA does not know a setting of XLA_FLAGS'),
        ({'ATEN_CPU_CAPABILITY': 'nosuch'}, 'ATEN_CPU_CAPABILITY=nosuch did not take'),
    ],
)
@pytest.mark.slow
def test_a_setting_that_a_framework_does_not_know_is_reported(variables, named):
    with pytest.raises(StepFailed, match=named):
        probe(Environment('odd', 'a setting nobody knows', 1, variables), 1)


@pytest.mark.slow
def test_the_environments_that_stand_for_other_machines_take_and_move_the_bits():
    """Each environment changes the bits of a matrix product or a long sum in a framework,
    and the capped ones change PyTorch's and JAX's, on any CPU (MKL's conservative path,
    XLA's own kernels)."""
    build = probe(environments.ENVIRONMENTS['build'], 2)
    no_fma = probe(environments.ENVIRONMENTS['no-fma'], 1)
    assert no_fma.report.startswith('no-fma: ATen DEFAULT, 1 thread(s)')
    assert 'MKL_ENABLE_INSTRUCTIONS, MKL_CBWR, ONEDNN_MAX_CPU_ISA set, not checkable' in (
        no_fma.report
    )
    others = [no_fma, probe(environments.ENVIRONMENTS['avx2'], 2)]
    assert environments.check_moves(build, others) == [
        'no-fma: changes the bits of pytorch, jax',
        'avx2: changes the bits of pytorch, jax',
    ]


def _probed(name, pytorch, jax):
    return environments.Probed(name, name, {'pytorch': pytorch, 'jax': jax})


def test_an_environment_that_moves_nothing_or_never_pytorch_stops_the_run():
    build = _probed('build', 'p', 'j')
    with pytest.raises(StepFailed, match='environment same computes the same bits'):
        environments.check_moves(build, [_probed('moves', 'p2', 'j'), _probed('same', 'p', 'j')])
    with pytest.raises(StepFailed, match="no environment changes PyTorch's bits"):
        environments.check_moves(build, [_probed('jax only', 'p', 'j2')])
    assert environments.check_moves(
        build, [_probed('jax only', 'p', 'j2'), _probed('x', 'p3', 'j')]
    )


@pytest.mark.slow
def test_a_notebook_runs_in_each_environment_and_its_claims_are_recorded(project):
    project.section(
        'ch/one',
        project.code('import os\nthreads = os.environ["OMP_NUM_THREADS"]'),
        project.code('assert threads in "12", threads\nassert int(threads) > 1', 'claim'),
        project.code('raise RuntimeError("after the claims")'),
    )
    layout = project.layout
    chosen = environments.chosen(['build', 'one-thread'])
    statuses = machines(
        layout, ['ch/one'], chosen, frameworks=('jax',), progress=lambda line: None
    )
    assert {s['status'] for s in statuses} == {'failed'}
    assert all('after the claims' in s['why'] for s in statuses)
    found, _, _ = margins.claims(layout)
    by_source = {c.source: c for c in found}
    threads = by_source['int(threads) > 1']
    assert threads.failed_in == ['one-thread'], 'one thread there; the claim did not stop it'
    assert not by_source['threads in "12"'].failed_in


def test_every_claim_cell_of_the_book_is_one_claims_block_that_the_run_can_record():
    import ast

    from tools.machines.instrument import RECORDER
    from tools.paths import Layout
    from tools.source.sections import find_sections, read_section

    layout = Layout()
    seen = 0
    for rel in find_sections(layout):
        for cell in read_section(layout, rel).cells:
            if 'claim' not in cell.tags:
                continue
            seen += 1
            where = f'{rel}, line {cell.line}'
            [block] = ast.parse(cell.source).body
            assert isinstance(block, ast.With), f'{where}: not one with block'
            [item] = block.items
            assert ast.unparse(item.context_expr) == 'd2l.claims()', where
            recorded = recorded_source(cell.source, 0)
            assert 'assert ' not in recorded and recorded.count(RECORDER) >= 1, where
    assert seen > 100


def test_room_is_the_slack_against_how_far_it_moves(project):
    far = dict(claim(0), ops=['<'], constant=[False, True], source='error < 1e-4')
    write_records(
        project.layout,
        'build',
        'jax',
        'ch/a',
        [dict(far, rows=[[1e-7, 1e-4]]), dict(far, line=2, rows=[[0.6e-4, 1e-4]])],
    )
    write_records(
        project.layout,
        'no-fma',
        'jax',
        'ch/a',
        [dict(far, rows=[[3e-7, 1e-4]]), dict(far, line=2, rows=[[0.8e-4, 1e-4]])],
    )
    by_line = {c.key[3]: c for c in margins.claims(project.layout)[0]}
    # tripled, yet a thousandth of its bound: room; moved by half its slack: none
    assert by_line[1].spread > 0.5 and by_line[1].has_room
    assert not by_line[2].has_room


def test_results_compared_with_each_other_have_room_by_their_ratio(project):
    timing = dict(claim(0), ops=['<'], constant=[False, False], source='fast < slow')
    write_records(project.layout, 'build', 'jax', 'ch/a', [dict(timing, rows=[[0.008, 0.09]])])
    write_records(
        project.layout, 'one-thread', 'jax', 'ch/a', [dict(timing, rows=[[0.0125, 0.18]])]
    )
    [found] = margins.claims(project.layout)[0]
    # both slower by half on one thread: the ratio, about 12, moves by a few per cent
    assert found.has_room
