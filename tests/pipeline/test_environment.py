"""The tests' own check of the project's environment (tests/conftest.py): what it names."""

import pytest

from d2l_mini import data
from tests.conftest import environment_problems
from tools.paths import Layout


def test_the_project_s_environment_has_everything():
    assert environment_problems(Layout()) == []


def test_a_missing_package_another_version_and_a_missing_corpus_are_named(tmp_path, monkeypatch):
    (tmp_path / 'requirements.txt').write_text(
        '# the pins\npytest==0.0.1\nno-such-package-here==1.0\n-e .\n'
    )
    monkeypatch.setenv('D2L_MINI_DATA', str(tmp_path / 'data'))
    assert environment_problems(Layout(tmp_path)) == [
        f'pytest {pytest.__version__} is installed: requirements.txt pins pytest==0.0.1',
        'no-such-package-here is not installed: requirements.txt pins no-such-package-here==1.0',
        'install the pinned versions with `make venv`',
        f'the corpus is not in {tmp_path / "data"}: set D2L_MINI_DATA to the folder that '
        f'holds timemachine.txt, or download it there once ({data.TIME_MACHINE_URL})',
    ]


def test_a_corpus_with_another_checksum_is_named(tmp_path, monkeypatch):
    (tmp_path / 'requirements.txt').write_text(f'pytest=={pytest.__version__}\n')
    (tmp_path / 'timemachine.txt').write_text('Not the book.\n')
    monkeypatch.setenv('D2L_MINI_DATA', str(tmp_path))
    assert environment_problems(Layout(tmp_path)) == [
        f'{tmp_path / "timemachine.txt"} is not the corpus '
        f'(its SHA-1 is not {data.TIME_MACHINE_SHA1})'
    ]
