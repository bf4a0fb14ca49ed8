"""A small project laid out like the repository, for the tools to work on."""

import contextlib
from pathlib import Path

import yaml
from filelock import FileLock

from tools.paths import Layout, read_config
from tools.run.settings import BLOCK as BOOK_EXECUTE

FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""

REQUIREMENTS = 'flax==0.12.8\njax==0.10.2\njaxlib==0.10.2\noptax==0.2.8\ntorch==2.13.0+cpu\n'
PYPROJECT = """[project]
name = "d2l_mini"
dependencies = ["numpy", "matplotlib", "tqdm"]
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
        self.layout = Layout(root)
        self.configure(repository={'url': 'https://example.org/owner/book'})

    def configure(self, **settings: object) -> None:
        """Write _config.yml: the repository's execution settings, then ``settings``."""
        config = {BOOK_EXECUTE: read_config(Layout())[BOOK_EXECUTE], **settings}
        self.layout.config.write_text(yaml.safe_dump(config, sort_keys=False))

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


@contextlib.contextmanager
def one_build_at_a_time(layout: Layout):
    """Hold the repository build's lock. Under pytest-xdist each process brings the book
    up to date before its tests look at it; one at a time, so that the first does what
    is left to do and the others find nothing to do, instead of writing the same files
    side by side."""
    layout.build.mkdir(parents=True, exist_ok=True)
    with FileLock(layout.build / 'tests-build.lock'):
        yield
