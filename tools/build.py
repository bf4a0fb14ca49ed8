"""Build the whole book: check d2l_mini and the toc, split, execute, merge, render, then
the downloads (each framework's notebooks zipped, and its PDF printed from the HTML).

Stops at the first failing step with a non-zero exit status.  Ends by printing where
the HTML is.  ``--no-execute`` runs no kernel: it merges and renders the executed
notebooks already in ``_build/executed/`` (say, each framework's, executed by
``python -m tools execute --framework NAME`` on different machines and copied there)
and fails, naming them, if any is missing or out of date.  ``--no-pdf`` prints no PDF
(on a machine without Chromium).  ``--quick`` is the authoring loop (``make html``): a
quick render, which reads again only the pages that changed (tools/site/render.py), and
no PDF, which only a full render's HTML is printed from.
"""

from __future__ import annotations

import time
from pathlib import Path

from tools.frameworks import TABLE
from tools.paths import Layout
from tools.run.execute import execute, use_executed
from tools.site import downloads
from tools.site.merge import merge_all
from tools.site.render import render, site_toc
from tools.source import save
from tools.source.sections import find_sections
from tools.source.split import split_all
from tools.steps import Progress, StepFailed


class BuildFailed(StepFailed):
    """d2l_mini is out of date with the book; each later step raises its own StepFailed."""


def prune(layout: Layout, names: list[str]) -> list[Path]:
    """Remove notebooks of sections that no longer exist."""
    keep = set(names)
    removed = []
    for folder in layout.section_folders():
        for path in sorted(folder.rglob('*.ipynb')) if folder.is_dir() else []:
            if path.relative_to(folder).with_suffix('').as_posix() not in keep:
                path.unlink()
                removed.append(path)
    return removed


def build(
    layout: Layout,
    progress: Progress = print,
    render_html: bool = True,
    run_kernels: bool = True,
    print_pdfs: bool = True,
    quick: bool = False,
) -> None:
    """Run the steps in order; the first that fails raises its StepFailed (or UsageError).
    ``quick``: render quickly and print no PDF."""
    started = time.monotonic()

    def step(title: str) -> None:
        progress(f'\n== {title} ({time.monotonic() - started:.0f} s)')

    step("checking that d2l_mini is up to date with the book's #@save cells")
    stale = save.stale_modules(layout)
    if stale:
        names = ', '.join(str(p.relative_to(layout.root)) for p in stale)
        raise BuildFailed(
            f"{names} out of date with the book's #@save cells: run `make save` "
            '(python -m tools save), then build again'
        )
    # Before any notebook runs: a page that the toc lists and the book lacks stops it.
    site_toc(layout)
    names = find_sections(layout)
    labels = ' and '.join(fw.label for fw in TABLE)
    step(f'splitting {len(names)} section(s) into {labels} notebooks')
    split_all(names, layout)
    for path in prune(layout, names):
        progress(f'removed {path} (its section is gone)')
    if run_kernels:
        step('executing notebooks')
        execute(names, layout, split=False, progress=progress)
    else:
        step('checking the executed notebooks (executing nothing)')
        use_executed(names, layout, progress=progress)
    step("merging the frameworks' notebooks")
    merge_all(names, layout)
    if render_html:
        step('rendering the HTML')
        html = render(layout, quick=quick, progress=progress)
        step("zipping each framework's notebooks")
        downloads.write_zips(layout, progress=progress)
        if print_pdfs and not quick:
            step("printing each framework's PDF")
            downloads.write_pdfs(layout, progress=progress)
        progress(f'\nbook built in {time.monotonic() - started:.0f} s; open {html / "index.html"}')
    else:
        progress(f'\nnotebooks built in {time.monotonic() - started:.0f} s (HTML not rendered)')
