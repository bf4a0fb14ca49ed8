"""The benchmarks name the frameworks as the framework table does, and report
every figure as a share of the highest matmul rate of the same run."""

import pytest

from benchmarks import __main__ as benchmarks
from tools.frameworks import FRAMEWORKS


def test_every_framework_of_the_table_has_its_probes():
    assert set(benchmarks.PEAKS) == set(benchmarks.LOOPS) == set(FRAMEWORKS)


@pytest.mark.parametrize('frameworks', ['torch', 'pytorch,tensorflow'])
def test_names_outside_the_table_are_refused(frameworks, capsys):
    with pytest.raises(SystemExit) as info:
        benchmarks.main(['--frameworks', frameworks])
    assert info.value.code == 2
    assert 'framework must be one of' in capsys.readouterr().err


def test_the_report_gives_shares_of_the_highest_peak_and_ratios_to_the_line_above(capsys):
    flops = {('jax', size): (1000, 2e9) for size in benchmarks.SIZES}
    rates = {
        'slow matmul': 100e9,
        'fast matmul': 200e9,
        **{
            ('jax', size, name): r
            for size in benchmarks.SIZES
            for name, r in (('lesson step', 80e9), ('train_lm', 100e9))
        },
    }
    [(framework, train_lm, _, book_seconds)] = benchmarks.report(['jax'], rates, flops)
    shown = capsys.readouterr().out
    assert (framework, train_lm) == ('jax', 100e9)
    assert book_seconds == pytest.approx(benchmarks.BOOK_STEPS * 2e9 / 100e9)
    assert 'slow matmul' in shown and ' 50.0% of peak' in shown
    assert '1.25 x the line above' in shown
    assert 'fast matmul, 200.0 GFLOP/s' in shown
