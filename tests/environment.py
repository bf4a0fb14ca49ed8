"""What the tests need of the project's environment: the packages that requirements.txt
pins (tests/pipeline/test_environment.py checks them) and the corpus (the tests that
read it ask for the fixture ``corpus`` of tests/conftest.py)."""

from __future__ import annotations

import hashlib
import os
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from d2l_mini import data
from tools.paths import Layout


def pin_problems(layout: Layout) -> list[str]:
    """Each package pinned in requirements.txt that is missing or installed at another
    version, and what to do about it; empty when every pin holds."""
    problems = []
    for line in layout.requirements.read_text(encoding='utf-8').splitlines():
        line = line.split('#', 1)[0].strip()
        if not line or line.startswith('-'):
            continue
        pin = Requirement(line)
        try:
            found = metadata.version(pin.name)
        except metadata.PackageNotFoundError:
            problems.append(f'{pin.name} is not installed: requirements.txt pins {pin}')
            continue
        if not pin.specifier.contains(found.split('+')[0], prereleases=True):
            problems.append(f'{pin.name} {found} is installed: requirements.txt pins {pin}')
    if problems:
        problems.append('install the pinned versions with `make venv`')
    return problems


def corpus_problem() -> str | None:
    """What is wrong with the corpus in d2l_mini's data folder; None when it is there,
    with its checksum."""
    corpus = data.data_dir() / 'timemachine.txt'
    if not corpus.is_file():
        return (
            f'the corpus is not in {corpus.parent}: set D2L_MINI_DATA to the folder that '
            f'holds timemachine.txt, or download it there once ({data.TIME_MACHINE_URL})'
        )
    if hashlib.sha1(corpus.read_bytes()).hexdigest() != data.TIME_MACHINE_SHA1:
        return (
            f'{corpus} is not the corpus (its SHA-1 is not {data.TIME_MACHINE_SHA1}): '
            f'replace it with {data.TIME_MACHINE_URL}, or set D2L_MINI_DATA to a folder '
            'that holds the right one'
        )
    return None


def require_corpus() -> Path:
    """The corpus's path; without it, skip the test asking for it, or fail it in CI
    (CI set), where no test may skip for want of the corpus."""
    problem = corpus_problem()
    if problem and os.environ.get('CI'):
        pytest.fail(f'this test reads the corpus: {problem}', pytrace=False)
    if problem:
        pytest.skip(f'this test reads the corpus: {problem}')
    return data.data_dir() / 'timemachine.txt'
