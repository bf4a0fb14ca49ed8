"""The project's environment: the pinned packages, and the corpus (tests/environment.py)."""

import re

import pytest

from d2l_mini import data
from tests.environment import corpus_problem, pin_problems, require_corpus
from tools.paths import Layout


def test_the_installed_packages_are_the_pinned_versions():
    problems = pin_problems(Layout())
    if problems:
        pytest.fail(
            'the environment differs from requirements.txt:\n  ' + '\n  '.join(problems),
            pytrace=False,
        )


def test_the_corpus_is_in_place():
    problem = corpus_problem()
    if problem:
        pytest.fail(problem, pytrace=False)


def test_a_missing_package_and_another_version_are_named(tmp_path):
    (tmp_path / 'requirements.txt').write_text(
        '# the pins\npytest==0.0.1\nno-such-package-here==1.0\n-e .\n'
    )
    assert pin_problems(Layout(tmp_path)) == [
        f'pytest {pytest.__version__} is installed: requirements.txt pins pytest==0.0.1',
        'no-such-package-here is not installed: requirements.txt pins no-such-package-here==1.0',
        'install the pinned versions with `make venv`',
    ]


def test_pins_that_hold_are_no_problem(tmp_path):
    (tmp_path / 'requirements.txt').write_text(
        f'pytest=={pytest.__version__}  # the test runner\n\n-e .\n'
    )
    assert pin_problems(Layout(tmp_path)) == []


def test_a_missing_corpus_is_named_with_the_setting(tmp_path, monkeypatch):
    monkeypatch.setenv('D2L_MINI_DATA', str(tmp_path / 'data'))
    assert corpus_problem() == (
        f'the corpus is not in {tmp_path / "data"}: set D2L_MINI_DATA to the folder that '
        f'holds timemachine.txt, or download it there once ({data.TIME_MACHINE_URL})'
    )


def test_a_corpus_with_another_checksum_is_named(tmp_path, monkeypatch):
    (tmp_path / 'timemachine.txt').write_text('Not the book.\n')
    monkeypatch.setenv('D2L_MINI_DATA', str(tmp_path))
    assert corpus_problem() == (
        f'{tmp_path / "timemachine.txt"} is not the corpus '
        f'(its SHA-1 is not {data.TIME_MACHINE_SHA1}): replace it with '
        f'{data.TIME_MACHINE_URL}, or set D2L_MINI_DATA to a folder that holds the right one'
    )


@pytest.mark.parametrize(
    'ci, outcome', [('', pytest.skip.Exception), ('true', pytest.fail.Exception)]
)
def test_without_the_corpus_a_test_skips_but_fails_in_ci(tmp_path, monkeypatch, ci, outcome):
    monkeypatch.setenv('D2L_MINI_DATA', str(tmp_path))
    monkeypatch.setenv('CI', ci)
    expected = f'this test reads the corpus: the corpus is not in {tmp_path}: set D2L_MINI_DATA'
    with pytest.raises(outcome, match=re.escape(expected)):
        require_corpus()


def test_with_the_corpus_a_test_gets_its_path(tmp_path, monkeypatch):
    monkeypatch.setenv('D2L_MINI_DATA', str(tmp_path))
    monkeypatch.setenv('CI', 'true')
    (tmp_path / 'timemachine.txt').write_bytes(b'The Time Traveller')
    monkeypatch.setattr(data, 'TIME_MACHINE_SHA1', data.sha1_of(b'The Time Traveller'))
    assert require_corpus() == tmp_path / 'timemachine.txt'
