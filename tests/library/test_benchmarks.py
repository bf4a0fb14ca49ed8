"""The benchmarks name the frameworks as the framework table does."""

import pytest

from benchmarks import __main__ as benchmarks
from tools.frameworks import FRAMEWORKS


def test_the_book_settings_cover_the_frameworks_of_the_table():
    assert set(benchmarks.BOOK_MICRO_BATCHES) == set(FRAMEWORKS)


@pytest.mark.parametrize('frameworks', ['torch', 'pytorch,tensorflow'])
def test_names_outside_the_table_are_refused(frameworks, capsys):
    with pytest.raises(SystemExit) as info:
        benchmarks.main(['--frameworks', frameworks])
    assert info.value.code == 2
    assert 'framework must be one of' in capsys.readouterr().err
