"""Shared by every test: small throw-away projects, no kernel outside the slow half,
JAX's compilation cache."""

from __future__ import annotations

import sys
from pathlib import Path

import jupyter_client
import pytest

from tests.site.book_site import FRONT_MATTER
from tools.paths import Layout

REQUIREMENTS = 'flax==0.12.8\njax==0.10.2\njaxlib==0.10.2\noptax==0.2.8\ntorch==2.13.0+cpu\n'
PYPROJECT = """[project]
name = "d2l_mini"
[project.optional-dependencies]
torch = ["torch>=2.0"]
jax = ["jax>=0.7.1", "jaxlib>=0.7.1", "flax>=0.12", "optax>=0.2.5"]
"""


class Project:
    """A project folder laid out like the repository, for the tools to work on."""

    def __init__(self, root: Path):
        self.root = root
        (root / 'book').mkdir(parents=True)
        (root / 'd2l_mini').mkdir()
        (root / 'd2l_mini' / '__init__.py').write_text('"""Stand-in library."""\n')
        (root / 'requirements.txt').write_text(REQUIREMENTS)
        (root / 'pyproject.toml').write_text(PYPROJECT)
        (root / '_config.yml').write_text('repository:\n  url: https://example.org/owner/book\n')
        self.layout = Layout(root)

    @staticmethod
    def code(source: str, *tags: str) -> str:
        """A MyST code cell."""
        options = f':tags: [{", ".join(tags)}]\n' if tags else ''
        return f'```{{code-cell}} ipython3\n{options}{source}\n```\n'

    def section(self, rel: str, *blocks: str) -> Path:
        """Write ``book/<rel>.md`` from Markdown paragraphs and code cells."""
        path = self.layout.source(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(FRONT_MATTER + '\n' + '\n'.join(blocks))
        return path

    def page(self, rel: str, text: str) -> Path:
        """Write a plain Markdown page (no notebook front matter)."""
        path = self.layout.source(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path


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
