"""Shared by every test: the corpus for those that read it, a throw-away project, no
kernel outside the slow half, JAX's compilation cache."""

from __future__ import annotations

import sys
from pathlib import Path

import jupyter_client
import pytest

from tests.environment import require_corpus
from tests.project import Project

# ----------------------------------------------------- the corpus, where it is read


@pytest.fixture(scope='session')
def corpus() -> Path:
    """The Time Machine corpus, for the tests that read it: without it, or with another
    file in its place, they skip (fail in CI) with what to do, naming D2L_MINI_DATA."""
    return require_corpus()


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
