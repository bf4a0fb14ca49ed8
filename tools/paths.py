"""Where the build reads sources and writes its products.

Every step takes a :class:`Layout`, so tests can point the whole pipeline at a
temporary project.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

import yaml

from tools.frameworks import FRAMEWORKS, check_framework

ROOT = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class Layout:
    root: Path = ROOT
    book: Path | None = None
    build: Path | None = None

    def __post_init__(self) -> None:
        root = Path(self.root).resolve()
        object.__setattr__(self, 'root', root)
        object.__setattr__(self, 'book', Path(self.book or root / 'book').resolve())
        object.__setattr__(self, 'build', Path(self.build or root / '_build').resolve())

    def source(self, rel: str) -> Path:
        return self.book / f'{rel}.md'

    def split_folder(self, framework: str) -> Path:
        return self.build / 'notebooks' / check_framework(framework)

    def executed_folder(self, framework: str) -> Path:
        return self.build / 'executed' / check_framework(framework)

    @property
    def merged_folder(self) -> Path:
        return self.build / 'merged'

    def section_folders(self) -> list[Path]:
        """Every folder that holds one notebook per section."""
        return [self.merged_folder] + [
            folder(fw) for folder in (self.split_folder, self.executed_folder) for fw in FRAMEWORKS
        ]

    def notebook(self, framework: str, rel: str) -> Path:
        """The split notebook of a section (unexecuted)."""
        return self.split_folder(framework) / f'{rel}.ipynb'

    def executed(self, framework: str, rel: str) -> Path:
        return self.executed_folder(framework) / f'{rel}.ipynb'

    def merged(self, rel: str) -> Path:
        return self.merged_folder / f'{rel}.ipynb'

    @property
    def site(self) -> Path:
        """The folder jupyter-book builds: configuration, pages, merged notebooks."""
        return self.build / 'site'

    @property
    def site_build(self) -> Path:
        """What jupyter-book writes inside the site (kept between renders)."""
        return self.site / '_build'

    @property
    def sphinx_environment(self) -> Path:
        """Sphinx's environment of the last render, which a quick render reuses."""
        return self.site_build / '.doctrees' / 'environment.pickle'

    @property
    def render_record(self) -> Path:
        """What Sphinx's environment was read from (tools/site/render.py)."""
        return self.site_build / 'render-record.json'

    @property
    def html(self) -> Path:
        return self.site_build / 'html'

    @property
    def downloads(self) -> Path:
        """The site's copies of the split notebooks, ``<framework>/<page>.ipynb``: each
        page links to them (tools/site/ext/notebook_links.py serves them from html_extra_path)."""
        from tools.facts import NOTEBOOKS_DIR  # tools.facts imports this module

        return self.site / '_extra' / NOTEBOOKS_DIR

    @property
    def book_downloads(self) -> Path:
        """The PDFs and notebook zips of each framework (tools/site/pdf.py, bundle.py),
        copied into the HTML's downloads/ folder after each build."""
        return self.build / 'downloads'

    @property
    def render_stamp(self) -> Path:
        """What the HTML was last rendered from (tools/site/render.py)."""
        return self.build / 'render-stamp.json'

    @property
    def tools(self) -> Path:
        return self.root / 'tools'

    @property
    def screenshot(self) -> Path:
        return self.root / 'docs' / 'screenshot.png'

    @property
    def records(self) -> Path:
        return self.build / 'exec' / 'records.json'

    @property
    def library(self) -> Path:
        return self.root / 'd2l_mini'

    @property
    def requirements(self) -> Path:
        return self.root / 'requirements.txt'

    @property
    def pyproject(self) -> Path:
        return self.root / 'pyproject.toml'

    @property
    def config(self) -> Path:
        return self.root / '_config.yml'

    @property
    def toc(self) -> Path:
        return self.root / '_toc.yml'


def read_config(layout: Layout) -> dict:
    """The parsed ``_config.yml`` ({} when there is none)."""
    if not layout.config.is_file():
        return {}
    return yaml.safe_load(layout.config.read_text(encoding='utf-8')) or {}


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, content: str | bytes) -> bool:
    """Write ``content`` (text as UTF-8, or bytes) to ``path`` through a temporary file;
    skip if the file holds it already.

    Returns whether the file was (re)written.
    """
    path = Path(path)
    data = content.encode('utf-8') if isinstance(content, str) else content
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.', suffix='.tmp')
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True
