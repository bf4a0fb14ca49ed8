"""The book's downloads: each framework's PDF and its notebooks' zip.

Made after the HTML (the PDFs are printed from it) into _build/downloads/, then copied
into the HTML's ``downloads/`` folder, where the pages' ``{book-downloads}`` links point
and from where ``python -m tools publish`` publishes them with the site.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.facts import DOWNLOADS_DIR
from tools.frameworks import FRAMEWORKS
from tools.paths import Layout
from tools.site import bundle, pdf, render
from tools.steps import Progress


def site_sections(layout: Layout) -> list[str]:
    """The sections the site holds, in the toc's order."""
    return render.site_toc(layout)[1]


def copy_downloads(layout: Layout) -> Path | None:
    """Put the PDFs and zips of _build/downloads/ into the HTML's downloads/ folder
    (nothing when there is no HTML yet); returns that folder."""
    if not (layout.html / 'index.html').is_file():
        return None
    target = layout.html / DOWNLOADS_DIR
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for path in sorted(layout.book_downloads.glob('*')):
        if path.suffix in ('.pdf', '.zip'):
            shutil.copy2(path, target / path.name)
    return target


def write_zips(layout: Layout, progress: Progress = print) -> dict[str, Path]:
    paths = bundle.write_bundles(layout, site_sections(layout))
    for path in paths.values():
        progress(f'zip: {path} ({path.stat().st_size / 1e6:.1f} MB)')
    copy_downloads(layout)
    return paths


def write_pdfs(layout: Layout, force: bool = False, progress: Progress = print) -> dict[str, Path]:
    paths = pdf.write_pdfs(layout, force=force, progress=progress)
    copy_downloads(layout)
    return paths


def missing_or_stale(layout: Layout) -> list[str]:
    """What keeps the downloads in the HTML from being published as they are."""
    problems = []
    if not pdf.pdfs_are_current(layout):
        problems.append('the PDFs are missing or older than the HTML')
    folder = layout.html / DOWNLOADS_DIR
    expected = [pdf.pdf_path(layout, fw, folder) for fw in FRAMEWORKS]
    expected += [bundle.zip_path(layout, fw, folder) for fw in FRAMEWORKS]
    absent = [path.name for path in expected if not path.is_file()]
    if absent:
        problems.append(f'{folder} lacks {", ".join(absent)}')
    return problems
