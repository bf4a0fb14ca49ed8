"""Shared by every test: the project's environment checked, a throw-away project, no
kernel outside the slow half, JAX's compilation cache."""

from __future__ import annotations

import hashlib
import sys
from importlib import metadata

import jupyter_client
import pytest
from packaging.requirements import Requirement

from d2l_mini import data
from tests.project import Project
from tools.paths import Layout

# ------------------------------------------- the project's environment, or no tests


def environment_problems(layout: Layout) -> list[str]:
    """What the project's environment lacks: each package pinned in requirements.txt,
    installed at its pinned version, and the corpus, with its checksum."""
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
    corpus = data.data_dir() / 'timemachine.txt'
    if not corpus.is_file():
        problems.append(
            f'the corpus is not in {corpus.parent}: set D2L_MINI_DATA to the folder that '
            f'holds timemachine.txt, or download it there once ({data.TIME_MACHINE_URL})'
        )
    elif hashlib.sha1(corpus.read_bytes()).hexdigest() != data.TIME_MACHINE_SHA1:
        problems.append(f'{corpus} is not the corpus (its SHA-1 is not {data.TIME_MACHINE_SHA1})')
    return problems


def pytest_configure(config):
    """No test runs in an environment that lacks a pinned package or the corpus: the
    tests would fail, or skip, for the environment's sake rather than the code's. (The
    browser tests still skip outside CI on a machine without Chromium or axe-core.)"""
    if hasattr(config, 'workerinput') or config.option.help:
        return  # pytest-xdist's workers: their controller checked
    problems = environment_problems(Layout())
    if problems:
        raise pytest.UsageError(
            "the tests need the project's environment, which lacks this:\n  "
            + '\n  '.join(problems)
        )


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path / 'project')


# ------------------------------------------------- make test-fast starts no kernel

KERNEL_GUARD = pytest.StashKey[pytest.MonkeyPatch]()
KERNELS_STARTED = pytest.StashKey[list]()


class KernelInFastTest(RuntimeError):
    """Raised when a test outside the slow half starts a Jupyter kernel."""


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Outside the slow half, starting a Jupyter kernel (in the test or its fixtures)
    raises, and the test errors: make test-fast must stay fast."""
    if item.get_closest_marker('slow'):
        return
    started = item.stash[KERNELS_STARTED] = []

    def refuse(manager, *args, **kwargs):
        started.append(manager.kernel_name)
        raise KernelInFastTest(
            f'{item.nodeid} started a Jupyter kernel: mark it @pytest.mark.slow'
        )

    guard = item.stash[KERNEL_GUARD] = pytest.MonkeyPatch()
    for manager in (jupyter_client.KernelManager, jupyter_client.AsyncKernelManager):
        guard.setattr(manager, 'start_kernel', refuse)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        return (yield)
    finally:
        if KERNEL_GUARD in item.stash:
            item.stash[KERNEL_GUARD].undo()
            if item.stash[KERNELS_STARTED]:
                pytest.fail(
                    f'{item.nodeid} started a Jupyter kernel but is not marked slow '
                    '(make test-fast must start none)',
                    pytrace=False,
                )


def pytest_collection_modifyitems(items):
    """The tests marked ``minutes`` first: make test gives pytest-xdist's processes a test
    file (or class) each at a time, in this order, and the longest, started last, would run
    on alone."""
    items.sort(key=lambda item: item.get_closest_marker('minutes') is None)


def pytest_collection_finish(session):
    """Keep JAX's compiled programs between runs, in pytest's cache folder: a rerun
    compiles only what changed (the fast half is mostly XLA compilation)."""
    jax = sys.modules.get('jax')  # imported by the collected test modules, if any
    cache = getattr(session.config, 'cache', None)  # None under -p no:cacheprovider
    if jax is None or cache is None:
        return
    jax.config.update('jax_compilation_cache_dir', str(cache.mkdir('jax-compilation-cache')))
    jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)
    jax.config.update('jax_persistent_cache_min_entry_size_bytes', -1)
