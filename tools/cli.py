"""The build's command line: ``python -m tools <step> [options]`` (``--help`` lists the steps).

Exit status, the same for every step: 0 done; 1 the step found a problem (a failing
cell, a stale file, a refused publish: tools.steps.StepFailed); 2 it could not start
(a bad argument or input: tools.steps.UsageError, or the command line's own errors);
130 interrupted (Ctrl-C or SIGTERM), its kernels shut down.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from tools import build, facts, publish, readers
from tools.frameworks import FRAMEWORKS
from tools.machines import environments as machine_environments
from tools.machines import margins
from tools.machines import run as machines_run
from tools.paths import Layout, write_atomic
from tools.run import execute, records
from tools.site import downloads, merge, render, report, screenshot
from tools.source import save, split
from tools.source.sections import chosen_sections
from tools.steps import StepFailed, UsageError

# The authoring loop's option (make html): of render, and of build.
QUICK_HELP = (
    "read again only the pages that changed, reusing Sphinx's environment "
    '(a full render where that cannot be trusted)'
)


def say(line: str) -> None:
    print(line, flush=True)


def shown(path: Path, layout: Layout) -> Path:
    """``path`` relative to the project when it is inside it."""
    return path.relative_to(layout.root) if path.is_relative_to(layout.root) else path


def run_split(args: argparse.Namespace, layout: Layout) -> None:
    for rel, paths in split.split_all(chosen_sections(layout, args.sections), layout).items():
        for framework, path in paths.items():
            say(f'split {rel} [{framework}] -> {shown(path, layout)}')


def run_execute(args: argparse.Namespace, layout: Layout) -> None:
    names = chosen_sections(layout, args.sections)
    execute.execute(
        names,
        layout,
        force=args.force,
        progress=say,
        frameworks=(args.framework,) if args.framework else FRAMEWORKS,
    )


def run_merge(args: argparse.Namespace, layout: Layout) -> None:
    for rel, path in merge.merge_all(chosen_sections(layout, args.sections), layout).items():
        say(f'merged {rel} -> {shown(path, layout)}')


def run_render(args: argparse.Namespace, layout: Layout) -> None:
    render.render(layout, html=not args.no_html, force=args.force, quick=args.quick, progress=say)


def run_pdf(args: argparse.Namespace, layout: Layout) -> None:
    downloads.write_pdfs(layout, force=args.force, progress=say)


def run_zip(args: argparse.Namespace, layout: Layout) -> None:
    downloads.write_zips(layout, progress=say)


def run_build(args: argparse.Namespace, layout: Layout) -> None:
    build.build(
        layout,
        progress=say,
        render_html=not args.no_render,
        run_kernels=not args.no_execute,
        print_pdfs=not args.no_pdf,
        quick=args.quick,
    )


def run_save(args: argparse.Namespace, layout: Layout) -> None:
    stale = save.stale_modules(layout)
    if args.check:
        if stale:
            raise StepFailed(
                ''.join(
                    f"{shown(path, layout)} is out of date with the book's #@save cells\n"
                    for path in stale
                )
                + 'run `make save` (python -m tools save) and commit the result'
            )
        return
    for path, text in stale.items():
        write_atomic(path, text)
        say(f'updated {shown(path, layout)}')


def run_records(args: argparse.Namespace, layout: Layout) -> None:
    merged = records.merge_files(layout, args.files)
    say(f'{layout.records}: {len(merged)} record(s)')


def run_report(args: argparse.Namespace, layout: Layout) -> None:
    source = args.records or layout.records
    if not Path(source).is_file():
        raise UsageError(f'{source} does not exist: run python -m tools execute first')
    out = args.out or layout.site / 'report.md'
    report.write_report(source, out)
    say(f'wrote {out}')


def run_publish(args: argparse.Namespace, layout: Layout) -> None:
    publish.publish(
        layout,
        remote=args.remote,
        install_from=args.install_from,
        dry_run=args.dry_run,
        progress=say,
    )


def run_readers(args: argparse.Namespace, layout: Layout) -> None:
    readers.readers(
        layout,
        names=args.environments or None,
        notebooks=args.notebooks or None,
        unexecuted=args.unexecuted,
        python=args.python,
        fresh=args.fresh,
        progress=say,
    )


def run_machines(args: argparse.Namespace, layout: Layout) -> None:
    if not args.table_only:
        machines_run.machines(
            layout,
            chosen_sections(layout, args.sections),
            machine_environments.chosen(args.environments),
            frameworks=(args.framework,) if args.framework else FRAMEWORKS,
            progress=say,
        )
    written = margins.write(layout)
    say(margins.table(layout, limit=args.limit))
    say(f'the whole table: {shown(written, layout)}')


def run_screenshot(args: argparse.Namespace, layout: Layout) -> None:
    out = args.out or layout.screenshot
    shot = screenshot.screenshot(
        args.html or layout.html, args.page, out, framework=args.framework, width=args.width
    )
    say(f'wrote {shot}')


def run_facts(args: argparse.Namespace, layout: Layout) -> None:
    say(facts.FACTS[args.name](layout))


def sections_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('sections', nargs='*', help='book/<rel>.md files (default: every section)')


def command_line() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='python -m tools',
        description=__doc__.split('\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split('\n\n', 1)[1],
    )
    parser.add_argument(
        '--root', type=Path, help='the project: _config.yml, _toc.yml (default: this repository)'
    )
    parser.add_argument('--book', type=Path, help='the sources (default: <root>/book)')
    parser.add_argument('--build', type=Path, help='the build products (default: <root>/_build)')
    steps = parser.add_subparsers(dest='step', required=True, metavar='STEP')

    def step(
        name: str, run: Callable[[argparse.Namespace, Layout], None], help: str
    ) -> argparse.ArgumentParser:
        sub = steps.add_parser(name, help=help, description=help)
        sub.set_defaults(run=run)
        return sub

    sections_argument(
        step('split', run_split, 'split each section into one notebook per framework')
    )
    sub = step(
        'execute', run_execute, 'execute the split notebooks whose code, library or pins changed'
    )
    sections_argument(sub)
    sub.add_argument(
        '--force', action='store_true', help='execute even if the cache is up to date'
    )
    sub.add_argument(
        '--framework', choices=FRAMEWORKS, help="execute only this framework's notebooks"
    )
    sections_argument(
        step('merge', run_merge, "merge each section's executed notebooks into its page")
    )
    sub = step('render', run_render, 'assemble the site and build its HTML with jupyter-book')
    sub.add_argument('--no-html', action='store_true', help='assemble the site only')
    sub.add_argument(
        '--force', action='store_true', help='rebuild the HTML in full even if nothing changed'
    )
    sub.add_argument('--quick', action='store_true', help=QUICK_HELP)
    sub = step('pdf', run_pdf, "print each framework's PDF of the book from the HTML")
    sub.add_argument('--force', action='store_true', help='print again even if nothing changed')
    step('zip', run_zip, "zip each framework's executed notebooks, with a README")
    sub = step(
        'build',
        run_build,
        'check d2l_mini, split, execute, merge and render the whole book, then its downloads',
    )
    sub.add_argument('--no-render', action='store_true', help='stop after merging (no HTML)')
    sub.add_argument(
        '--no-pdf', action='store_true', help='make the HTML and the zips, but no PDF'
    )
    sub.add_argument(
        '--no-execute',
        action='store_true',
        help='run no notebook: use the executed ones, failing if any is missing or out of date',
    )
    sub.add_argument('--quick', action='store_true', help=f'{QUICK_HELP}; print no PDF')
    sub = step('save', run_save, "copy the book's #@save cells into d2l_mini")
    sub.add_argument(
        '--check', action='store_true', help='only name the modules that differ from the book'
    )
    sub = step('records', run_records, 'merge records files into _build/exec/records.json')
    sub.add_argument('files', nargs='+', type=Path, help='records.json files (a later one wins)')
    sub = step('report', run_report, 'write the Execution report page from the records')
    sub.add_argument('records', nargs='?', type=Path, help='default: _build/exec/records.json')
    sub.add_argument('out', nargs='?', type=Path, help='default: _build/site/report.md')
    sub = step('publish', run_publish, 'push the HTML to gh-pages and the notebooks to notebooks')
    sub.add_argument(
        '--remote', default='origin', help="a remote's name, a URL or a path (default: origin)"
    )
    sub.add_argument(
        '--install-from',
        metavar='URL',
        default=None,
        help='where the install cell fetches d2l_mini (default: repository.url of _config.yml)',
    )
    sub.add_argument(
        '--dry-run',
        metavar='DIR',
        type=Path,
        default=None,
        help="write the two branches' trees into DIR instead of pushing",
    )
    sub = step(
        'readers',
        run_readers,
        'publish to a local repository and run the notebooks in fresh environments (the matrix)',
    )
    sub.add_argument(
        '--environments', nargs='+', metavar='NAME', help='default: all of them (see the module)'
    )
    sub.add_argument(
        '--notebooks', nargs='+', metavar='FW/PAGE', help='only these, e.g. jax/how-to-use'
    )
    sub.add_argument(
        '--unexecuted',
        action='store_true',
        help='publish the split notebooks: no outputs, no up-to-date build needed',
    )
    sub.add_argument(
        '--python', default=None, help='the Python to make the environments with (default: this)'
    )
    sub.add_argument(
        '--fresh', action='store_true', help='make the environments anew, even if kept'
    )
    sub = step(
        'machines',
        run_machines,
        'execute every notebook under numerics that stand for other machines; '
        "print each claim's margin",
    )
    sections_argument(sub)
    sub.add_argument(
        '--environments',
        nargs='+',
        metavar='NAME',
        help=f'default: all ({", ".join(machine_environments.ENVIRONMENTS)})',
    )
    sub.add_argument('--framework', choices=FRAMEWORKS, help="only this framework's notebooks")
    sub.add_argument(
        '--table-only', action='store_true', help='run nothing: print the table of the last run'
    )
    sub.add_argument('--limit', type=int, default=20, help='rows printed (default: 20)')
    sub = step('screenshot', run_screenshot, 'save a screenshot of a built page for the README')
    sub.add_argument('--html', type=Path, default=None, help='default: _build/site/_build/html')
    sub.add_argument('--page', default='how-to-use', help='a page path without .html')
    sub.add_argument('--out', type=Path, default=None, help='default: docs/screenshot.png')
    sub.add_argument(
        '--framework',
        choices=screenshot.CHOICES,
        default=None,
        help="the tabs' choice to show (default: the first framework)",
    )
    sub.add_argument('--width', type=int, default=1200, help='in pixels (default: 1200)')
    sub = step('facts', run_facts, "print one of the book's facts (tools/facts.py), for scripts")
    sub.add_argument('name', choices=facts.FACTS, help='which fact')
    return parser


def main(argv: list[str] | None = None, layout: Layout | None = None) -> int:
    """Run one step; returns the exit status (see the module's docstring)."""
    parser = command_line()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, or a usage error that argparse reported
        return stop.code if isinstance(stop.code, int) else 2
    try:
        layout = layout or Layout(
            **{
                key: value
                for key, value in (('root', args.root), ('book', args.book), ('build', args.build))
                if value is not None
            }
        )
        args.run(args, layout)
    except StepFailed as error:
        print(f'\n{args.step} failed: {error}', file=sys.stderr, flush=True)
        return 1
    except UsageError as error:
        print(f'python -m tools {args.step}: error: {error}', file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        print(
            f'\n{args.step} interrupted: the kernels are shut down, and nothing of a notebook '
            'that had not finished was written; run it again to go on',
            file=sys.stderr,
            flush=True,
        )
        return 130
    return 0
