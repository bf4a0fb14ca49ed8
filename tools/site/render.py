"""Assemble the book's site from the merged notebooks and build its HTML.

`python -m tools render` lays out _build/site/ (configuration, plain pages, the merged
notebook of every section, the Execution report, the split notebooks for download) and
runs `jupyter-book build -W -n --keep-going` on it: any warning fails the build. The
HTML ends in _build/site/_build/html. When nothing it is made from changed since the
last successful render (inputs_hash), the HTML is kept as it is (`--force` rebuilds).

A full render, the default, starts from an empty _build/site/_build and reads every
page (`--all`). A quick render (`--quick`, the authoring loop of `make html`) reuses
Sphinx's environment of the last render and reads again only the site's files whose
content changed since (plan_render, from the site_record that each render keeps); it
renders in full instead when anything changed whose effects Sphinx's reuse of its
environment may miss: the configuration, the toc, the bibliography, templates or
static files, the set of files, the render code, d2l_mini, the pins or the packages.
Either way every page is written (tools/site/ext/write_all.py). The stamp says which
render made the HTML: only a full render's is current for the PDFs and publishing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tools.frameworks import FRAMEWORKS, TABLE
from tools.machines import margins
from tools.paths import ROOT, Layout, read_config, write_atomic
from tools.run.settings import BLOCK as BOOK_EXECUTE
from tools.site import report
from tools.source.sections import book_pages, read_toc, toc_pages
from tools.stamps import Digest, module_files, read_stamp, write_stamp
from tools.steps import Progress, StepFailed

GENERATED_PAGES = ('report',)
EXTENSION = 'tools.site.render_ext'  # the book's Sphinx extension, as _config.yml names it
# The code that makes the HTML: this step and the extension with its modules (and what they
# import from tools/, tools.stamps.Digest.code).
RENDER_CODE = (
    'tools.site.render',
    EXTENSION,
    *(f'tools.site.ext.{path.stem}' for path in sorted((ROOT / 'tools/site/ext').glob('*.py'))),
)
# The packages that turn the site into HTML: a new version renders again.
SITE_PACKAGES = (
    'jupyter-book',
    'myst-nb',
    'sphinx',
    'sphinx-book-theme',
    'sphinx-mathjax-offline',
)

# Which render made the HTML, as its stamp says.
FULL, QUICK = 'full', 'quick'
# The site's files whose change a quick render does not follow: any change renders in
# full. Its other files (pages, notebooks, images, downloads) are read again when they
# change.
FRAME = ('_config.yml', '_toc.yml', 'references.bib', '_static', '_templates')


class RenderError(StepFailed):
    """The site could not be assembled or its HTML did not build cleanly."""


def site_config(layout: Layout) -> str:
    """The book's _config.yml as the site needs it: with the framework table (names and
    labels) that the Sphinx extension gives the pages (``book_frameworks``), the
    extension's package on Sphinx's path, and without the execution settings (the site
    executes nothing)."""
    config = read_config(layout)
    config.pop(BOOK_EXECUTE, None)
    sphinx = config.setdefault('sphinx', {})
    # Sphinx imports the extension, tools.site.render_ext, from these tools.
    sphinx['local_extensions'] = {EXTENSION: str(ROOT)}
    sphinx_config = sphinx.setdefault('config', {})
    sphinx_config['book_frameworks'] = [{'name': fw.name, 'label': fw.label} for fw in TABLE]
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def copy_tree(src: Path, dst: Path) -> None:
    if Path(src).is_dir():
        shutil.copytree(
            src, dst, ignore=shutil.ignore_patterns('.*', '__pycache__', '*.ipynb_checkpoints')
        )


def site_toc(layout: Layout) -> tuple[dict, list[str]]:
    """The toc the site is built from and its sections, in order; MissingPage
    (tools.source.sections) when it lists a page that does not exist."""
    pages = book_pages(layout)
    listed = toc_pages(layout, GENERATED_PAGES)
    return read_toc(layout), [rel for rel in listed if pages.get(rel)]


def assemble(layout: Layout, progress: Progress = print) -> list[str]:
    """Lay out the layout's site for jupyter-book; returns the toc files that are sections."""
    book, site = layout.book, layout.site
    pages = book_pages(layout)
    toc, sections = site_toc(layout)
    needed = [layout.merged(rel) for rel in sections]
    needed += [layout.notebook(fw, rel) for rel in sections for fw in FRAMEWORKS]
    missing = [str(path) for path in needed if not path.is_file()]
    if missing:
        raise RenderError(
            'missing notebooks (run python -m tools execute and merge first): '
            + ', '.join(missing)
        )

    # Start from an empty site, keeping only the HTML of the last build (see render()).
    if site.exists():
        for path in site.iterdir():
            if path != layout.site_build:
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    site.mkdir(parents=True, exist_ok=True)
    (site / '_config.yml').write_text(site_config(layout), encoding='utf-8')
    (site / '_toc.yml').write_text(yaml.safe_dump(toc, sort_keys=False))
    if (book / 'references.bib').is_file():
        shutil.copy2(book / 'references.bib', site / 'references.bib')
    copy_tree(book / '_static', site / '_static')
    copy_tree(book / '_templates', site / '_templates')
    copy_tree(book / 'img', site / 'img')

    for rel, section in pages.items():
        target = site / (f'{rel}.ipynb' if section else f'{rel}.md')
        target.parent.mkdir(parents=True, exist_ok=True)
        if not section:
            shutil.copy2(book / f'{rel}.md', target)
        elif rel in sections:
            shutil.copy2(layout.merged(rel), target)

    downloads = layout.downloads
    downloads.mkdir(parents=True)
    for rel in sections:
        for fw in FRAMEWORKS:
            target = downloads / fw / f'{rel}.ipynb'
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(layout.notebook(fw, rel), target)

    records_path = layout.records
    if not records_path.is_file():
        progress(f'render: {records_path} does not exist; the Execution report lists no runs')
    report.write_report(
        records_path,
        site / 'report.md',
        sections=sections,
        linked=sections,
        margins_path=margins.path(layout),
    )
    return sections


def jupyter_book_command() -> str:
    local = Path(sys.executable).with_name('jupyter-book')
    found = str(local) if local.is_file() else shutil.which('jupyter-book')
    if found is None:
        raise RenderError('jupyter-book is not installed: pip install -r requirements.txt')
    return found


def build_html(site: Path, *, fresh: bool = True, quiet: bool = False) -> None:
    """Run jupyter-book on `site`, reading every page (`fresh`) or only those that changed
    since its last build; RenderError unless it built without a warning."""
    command = [jupyter_book_command(), 'build', str(site), '-W', '-n', '--keep-going']
    if fresh:
        command.insert(3, '--all')
    result = subprocess.run(command, capture_output=quiet, text=True)
    if result.returncode != 0:
        details = f'\n{result.stdout}\n{result.stderr}' if quiet else ''
        raise RenderError(
            f'jupyter-book build failed (exit {result.returncode}): {" ".join(command)}{details}'
        )


def file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def site_files(layout: Layout) -> dict[str, str]:
    """{path below the site: SHA-256} of every file of the assembled site, outside the
    folder jupyter-book builds into."""
    files = {}
    for top in sorted(layout.site.iterdir()):
        if top == layout.site_build:
            continue
        paths = [top] if top.is_file() else sorted(p for p in top.rglob('*') if p.is_file())
        for path in paths:
            files[path.relative_to(layout.site).as_posix()] = file_sha(path)
    return files


def in_frame(rel: str) -> bool:
    """Whether a file of the site (a path below it) is one of FRAME's."""
    return rel.split('/', 1)[0] in FRAME


def frame_files(layout: Layout) -> list[Path]:
    """The files outside the site whose change renders in full: the code that renders (this
    module, the Sphinx extension and what they import from tools/), d2l_mini (which the
    reference page documents) and the pins."""
    library = sorted(layout.library.rglob('*.py'))
    return [*module_files(RENDER_CODE), *library, layout.requirements]


def site_record(layout: Layout) -> dict:
    """What a render of the assembled site reads: ``frame``, one digest of what a quick
    render does not follow (SITE_PACKAGES, frame_files, the site's FRAME files and the
    names of all its files), and ``files``, the SHA-256 of each of its other files."""
    files = site_files(layout)
    frame = Digest(layout).packages(SITE_PACKAGES).files(frame_files(layout))
    for rel, sha in files.items():
        frame.text(rel, sha if in_frame(rel) else 'read again when it changes')
    pages = {rel: sha for rel, sha in files.items() if not in_frame(rel)}
    return {'frame': frame.hexdigest(), 'files': pages}


@dataclasses.dataclass(frozen=True)
class Plan:
    """How to render: in full, or reusing Sphinx's environment and reading ``changed``
    (paths below the site) again."""

    full: bool
    why: str
    changed: tuple[str, ...] = ()


def plan_render(last: dict, now: dict, *, environment: bool) -> Plan:
    """How a quick render renders the site whose site_record is ``now``, when Sphinx's
    environment (``environment``: whether there is one) holds what ``last`` records ({}
    when nothing is known of it)."""
    if not environment or not last:
        return Plan(True, 'no earlier render to build on')
    if last['frame'] != now['frame']:
        return Plan(
            True,
            'the configuration, toc, bibliography, templates, static files, set of files, '
            'render code, d2l_mini, pins or packages changed',
        )
    changed = tuple(rel for rel, sha in now['files'].items() if last['files'].get(rel) != sha)
    return Plan(False, f'{len(changed)} changed file(s) read again', changed)


def write_record(layout: Layout, record: dict) -> None:
    write_atomic(layout.render_record, json.dumps(record, indent=1, sort_keys=True) + '\n')


def prepare_build(layout: Layout, plan: Plan, now: dict) -> None:
    """Before jupyter-book runs: a full render starts from an empty build folder; a quick
    one makes the changed files newer than Sphinx's last reading of them, whatever their
    times were (Sphinx reads again the files modified since), and records only the
    files it leaves as they were, so that a build that fails reads the others again."""
    if plan.full:
        if layout.site_build.exists():
            shutil.rmtree(layout.site_build)
        return
    for rel in plan.changed:
        os.utime(layout.site / rel)
    kept = {rel: sha for rel, sha in now['files'].items() if rel not in plan.changed}
    write_record(layout, {'frame': now['frame'], 'files': kept})


def inputs_hash(layout: Layout) -> str:
    """The digest (tools.stamps) of what the HTML is made from: the book's sources and
    configuration, the code that renders (this module, the Sphinx extension and what they
    import from tools/), d2l_mini (the reference page documents it), the split and merged
    notebooks, the execution records (so that the report's executed/cached column is
    always the last run's), the machines' margins and jupyter-book's versions."""
    digest = Digest(layout).packages(SITE_PACKAGES)
    digest.files([layout.config, layout.toc, layout.requirements, layout.records])
    digest.file(margins.path(layout))
    digest.files(path for path in sorted(layout.book.rglob('*')) if path.is_file())
    digest.code(*RENDER_CODE)
    digest.files(sorted(layout.library.rglob('*.py')))
    for folder in (layout.merged_folder, *map(layout.split_folder, FRAMEWORKS)):
        digest.files(sorted(folder.rglob('*.ipynb')))
    return digest.hexdigest()


def html_is_current(layout: Layout, *, quick: bool = False) -> bool:
    """Whether the HTML was rendered from the inputs as they are now, by a full render
    (what the PDFs and publishing need) or, when ``quick``, by either."""
    if not (layout.html / 'index.html').is_file():
        return False
    stamp = read_stamp(layout.render_stamp)
    if stamp.get('inputs') != inputs_hash(layout):
        return False
    return quick or stamp.get('render', FULL) == FULL


def render(
    layout: Layout | None = None,
    *,
    html: bool = True,
    force: bool = False,
    quick: bool = False,
    quiet: bool = False,
    progress: Progress = print,
) -> Path:
    """Assemble the layout's site and, if `html`, build it; returns the HTML folder.

    Nothing is done when the HTML is current (html_is_current), unless `force`, which
    renders in full. A `quick` render reads again only the pages that changed, where it
    can (plan_render). Raises RenderError when a section's notebooks are missing or
    jupyter-book reports any warning.
    """
    layout = layout or Layout()
    if html and not force and html_is_current(layout, quick=quick):
        progress(
            'render: nothing changed since the last build; '
            f'HTML kept: {layout.html / "index.html"}'
        )
        return layout.html
    start = time.perf_counter()
    inputs = inputs_hash(layout)
    layout.render_stamp.unlink(missing_ok=True)
    sections = assemble(layout, progress=progress)
    progress(f'render: site assembled in {layout.site} ({len(sections)} sections)')
    if not html:
        return layout.html
    now = site_record(layout)
    if quick and not force:
        last = read_stamp(layout.render_record)
        plan = plan_render(last, now, environment=layout.sphinx_environment.is_file())
    else:
        plan = Plan(True, 'every page read')
    progress(f'render: {FULL if plan.full else QUICK} render ({plan.why})')
    prepare_build(layout, plan, now)
    build_html(layout.site, fresh=plan.full, quiet=quiet)
    write_record(layout, now)
    write_stamp(layout.render_stamp, inputs=inputs, render=FULL if plan.full else QUICK)
    progress(
        f'render: HTML built in {time.perf_counter() - start:.0f} s: {layout.html / "index.html"}'
    )
    return layout.html
