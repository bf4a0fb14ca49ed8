"""The readers' matrix: the published notebooks, run where readers run them.

    python -m tools readers [--environments NAME ...] [--notebooks FW/PAGE ...]
                            [--unexecuted] [--python PYTHON] [--fresh]

Publishes the book (``tools.publish``) to a local bare repository, with the install
cells fetching d2l_mini from it at the published commit, clones its ``notebooks``
branch as a reader would, and executes the notebooks with nbclient in fresh virtual
environments that do not contain the project, each environment in turn:

- ``bare-pytorch-first``, ``bare-jax-first``: only ipykernel; a PyTorch notebook, then
  a JAX notebook in the same environment, and the reverse (the install cell installs
  each framework; the second notebook finds d2l_mini installed by the first);
- ``lowest-pytorch``, ``lowest-jax``: every notebook of the framework, with the lower
  bounds of its extra in pyproject.toml installed beforehand (the install cell keeps
  them);
- ``newest-pytorch``, ``newest-jax``: every notebook of the framework, with the newest
  releases that pip serves of the framework, numpy, matplotlib and scikit-learn.

A notebook passes when every cell runs, no output holds a warning and no cell floods
its output with progress lines; a claim that does not hold there (``d2l.claims`` prints
a line and goes on, as it does for readers) is listed with the pass.  The table gives,
for each environment and notebook, ``pass`` or the first failing cell and its
exception, and the time each environment
took (its setup included).  The environments are kept in ``_build/readers/envs``,
keyed on what they install and the Python they are made with, so that a rerun
installs nothing again (``--fresh`` makes them anew); before each use, whatever a
notebook installed into one is removed.  Results go to ``_build/readers/results.json``.

Publishing needs what ``tools.publish`` needs (a clean commit and an up-to-date
build: ``make book``); ``--unexecuted`` publishes the split notebooks instead (no
outputs; no build needed), enough to find out whether the code runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from packaging.utils import canonicalize_name

from tools.frameworks import FRAMEWORKS
from tools.paths import Layout, write_atomic
from tools.run.outputs import clean_text, warnings_in
from tools.source import colab
from tools.source.sections import find_sections
from tools.steps import Progress, StepFailed, UsageError

CELL_TIMEOUT = 3600  # seconds for one cell: the longest trainings on two busy cores
# A progress bar's text line, with its count. Once a notebook's carriage returns are
# applied (as Jupyter does when it saves), a bar leaves one line, at its end; lines of
# unfinished counts beyond a few are a flood.
BAR_LINE = re.compile(r'\|\s*(\d+)/(\d+)\s*\[')
MAX_UNFINISHED = 2
# The newest releases, for the newest environments (besides the framework's packages).
NEWEST_ALSO = ('numpy', 'matplotlib', 'scikit-learn')
# The first notebook of each framework in the bare environments, and the second.
BARE_PAIR = {'pytorch': 'transformer-block/vit', 'jax': 'transformer-block/block-by-hand'}


class ReadersFailed(StepFailed):
    """A notebook failed in a reader's environment; the table says which and where."""


@dataclasses.dataclass(frozen=True)
class Environment:
    name: str
    packages: tuple[str, ...]  # pip requirements installed before any notebook runs
    notebooks: tuple[str, ...]  # '<framework>/<page>', run in this order
    newest: bool = False  # newest releases: pip upgraded, no constraint file

    @property
    def frameworks(self) -> tuple[str, ...]:
        """The frameworks of its notebooks, in the order they first run."""
        return tuple(dict.fromkeys(name.split('/')[0] for name in self.notebooks))

    def running(self, notebooks: list[str]) -> Environment:
        """The environment running ``notebooks`` instead, those of its frameworks, a
        framework's after the other's as in its own order (bare: PyTorch's first, or JAX's)."""
        chosen = tuple(nb for fw in self.frameworks for nb in notebooks if nb.split('/')[0] == fw)
        return dataclasses.replace(self, notebooks=chosen)

    def pip_env(self) -> dict[str, str]:
        """The environment of its pip calls (and of its kernels, whose install cell runs
        pip): for the newest releases, without the machine's pip configuration files,
        which may cap versions (``PIP_*`` variables, such as an extra index, still hold)."""
        env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'VIRTUAL_ENV')}
        if self.newest:
            env['PIP_CONFIG_FILE'] = os.devnull
        return env


def lowest_requirements(framework: str, layout: Layout) -> tuple[str, ...]:
    """``name==lower bound`` of each package of the framework's extra."""
    return tuple(
        f'{name}=={low}' for name, low in colab.minimum_versions(framework, layout).items()
    )


def environments(layout: Layout, pages: list[str]) -> dict[str, Environment]:
    """The matrix: name -> Environment, for the pages ``pages`` (in the toc's order)."""
    kernel = f'ipykernel=={colab.pinned_versions(layout).get("ipykernel", "7.4.0")}'
    every = {fw: tuple(f'{fw}/{page}' for page in pages) for fw in FRAMEWORKS}
    table = {}
    for first, second in (FRAMEWORKS, FRAMEWORKS[::-1]):
        table[f'bare-{first}-first'] = Environment(
            f'bare-{first}-first',
            (kernel,),
            (f'{first}/{BARE_PAIR[first]}', f'{second}/{BARE_PAIR[second]}'),
        )
    for fw in FRAMEWORKS:
        table[f'lowest-{fw}'] = Environment(
            f'lowest-{fw}', (kernel, *lowest_requirements(fw, layout)), every[fw]
        )
    for fw in FRAMEWORKS:
        newest = (*colab.minimum_versions(fw, layout), *NEWEST_ALSO)
        table[f'newest-{fw}'] = Environment(
            f'newest-{fw}', (kernel, 'pip', *newest), every[fw], newest=True
        )
    return table


# ---- the environments --------------------------------------------------------------


def python_version(python: str) -> str:
    return subprocess.run(
        [python, '-c', 'import sys; print(sys.version.split()[0])'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def installed(python: Path) -> dict[str, str]:
    """``package -> version`` of what ``python``'s environment holds (canonical names)."""
    listed = subprocess.run(
        [str(python), '-m', 'pip', 'list', '--format=json', '--disable-pip-version-check'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {canonicalize_name(entry['name']): entry['version'] for entry in json.loads(listed)}


def pip(python: Path, environment: Environment, *arguments: str) -> None:
    command = [str(python), '-m', 'pip', *arguments, '--disable-pip-version-check']
    done = subprocess.run(command, capture_output=True, text=True, env=environment.pip_env())
    if done.returncode != 0:
        raise ReadersFailed(
            f'{environment.name}: `pip {" ".join(arguments)}` failed:\n'
            f'{(done.stderr + done.stdout).strip()}'
        )


def prepare(
    environment: Environment, base: Path, python: str, fresh: bool, progress: Progress
) -> Path:
    """The environment's Python, in a virtual environment made once per what it installs
    and restored to that state: whatever notebooks installed since is uninstalled."""
    key = json.dumps([python_version(python), environment.packages, environment.newest])
    folder = base / f'{environment.name}-{hashlib.sha256(key.encode()).hexdigest()[:12]}'
    interpreter, stamp = folder / 'bin' / 'python', folder / 'installed.json'
    if not fresh and stamp.is_file() and interpreter.is_file():
        made = json.loads(stamp.read_text())
        now = installed(interpreter)
        added = sorted(set(now) - set(made))
        if all(now.get(name) == version for name, version in made.items()):
            if added:
                pip(interpreter, environment, 'uninstall', '--yes', *added)
            progress(f'{environment.name}: reusing {folder.name}')
            return interpreter
    shutil.rmtree(folder, ignore_errors=True)
    progress(f'{environment.name}: making {folder.name} ({" ".join(environment.packages)})')
    subprocess.run([python, '-m', 'venv', str(folder)], check=True)
    upgrade = ['--upgrade'] if environment.newest else []
    pip(interpreter, environment, 'install', '--quiet', *upgrade, *environment.packages)
    stamp.write_text(json.dumps(installed(interpreter), indent=1) + '\n')  # last: complete
    return interpreter


# ---- running a notebook --------------------------------------------------------------


@dataclasses.dataclass
class Result:
    environment: str
    notebook: str
    passed: bool
    said: str  # 'pass', or where and how it failed
    seconds: float
    install_output: str = ''  # what the install cell printed


def kernel_env(environment: Environment, layout: Layout) -> dict[str, str]:
    """A reader's kernel environment: none of the book's build settings."""
    from d2l_mini.data import data_dir

    env = environment.pip_env()
    for name in ('TQDM_DISABLE', 'MPLBACKEND', 'PYTHONHASHSEED', 'OMP_NUM_THREADS'):
        env.pop(name, None)
    project_bin = str(Path(sys.executable).parent)
    env['PATH'] = os.pathsep.join(
        p for p in env.get('PATH', '').split(os.pathsep) if p != project_bin
    )
    env['D2L_MINI_DATA'] = str(data_dir())
    # Not the book's setting but the matrix machine's: environments run side by side
    # there, and PyTorch's idle OpenMP threads would spin on the cores the other needs.
    env['OMP_WAIT_POLICY'] = 'PASSIVE'
    return env


def first_failure(notebook: nbformat.NotebookNode) -> str | None:
    """'cell N (id X): Error: message' of the first cell that failed (other than by the
    error a ``raises-exception`` cell is meant to raise), warned or flooded."""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != 'code':
            continue
        where = f'cell {index} (id {cell.get("id")})'
        expected = 'raises-exception' in cell.metadata.get('tags', [])
        for output in cell.outputs:
            if output.get('output_type') == 'error' and not expected:
                lines = [
                    line for line in clean_text(output.get('evalue', '')).splitlines() if line
                ]
                said = (
                    ' ... '.join(dict.fromkeys([lines[0][:200], lines[-1][:200]])) if lines else ''
                )
                return f'{where}: {output.get("ename")}: {said}'
        warned = warnings_in(cell)
        if warned:
            return f'{where}: a warning: {warned[0][:200]}'
        text = ''.join(o.get('text', '') for o in cell.outputs if o.get('output_type') == 'stream')
        bars = BAR_LINE.findall(clean_text(text))
        unfinished = sum(done != total for done, total in bars)
        if unfinished > MAX_UNFINISHED:
            return f'{where}: {unfinished} lines of unfinished progress bars in its output'
    return None


def claims_not_met(notebook: nbformat.NotebookNode) -> list[str]:
    """The lines in which the notebook's claim cells said that a claim did not hold
    (``d2l.claims`` prints them for a reader and lets the notebook go on)."""
    from d2l_mini.claims import NOT_MET

    return [
        line.strip()
        for cell in notebook.cells
        if cell.cell_type == 'code'
        for output in cell.outputs
        if output.get('output_type') == 'stream'
        for line in output.get('text', '').splitlines()
        if line.startswith(NOT_MET)
    ]


def said_of(failure: str | None, not_met: list[str]) -> str:
    """A notebook's result: its failure, else 'pass', with the claims it did not meet."""
    if failure:
        return failure
    if not not_met:
        return 'pass'
    return f'pass; {len(not_met)} claim(s) not met, the first: {not_met[0][:300]}'


def run_notebook(
    path: Path, python: Path, workdir: Path, env: dict[str, str]
) -> nbformat.NotebookNode:
    """Execute ``path`` top to bottom in a kernel of ``python``; errors stay in the
    outputs (the first one stops the run)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    from tools.run.kernel import stop_on_interrupt

    spec = workdir / 'kernels' / 'reader'
    spec.mkdir(parents=True, exist_ok=True)
    argv = [str(python), '-m', 'ipykernel_launcher', '-f', '{connection_file}']
    (spec / 'kernel.json').write_text(
        json.dumps({'argv': argv, 'display_name': 'reader', 'language': 'python'})
    )
    manager = AsyncKernelManager(
        kernel_name='reader', kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)])
    )
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == 'code':
            cell.outputs = []
    client = NotebookClient(
        notebook,
        km=manager,
        timeout=CELL_TIMEOUT,
        allow_errors=False,
        resources={'metadata': {'path': str(workdir)}},
        on_notebook_start=lambda notebook: stop_on_interrupt(),
    )
    try:
        # The kernel is shut down at the end: the client does so on its own only for a
        # kernel manager it made itself.
        client.execute(env=env, cleanup_kc=True)
    except CellExecutionError:
        pass  # the error is in the failing cell's outputs
    return notebook


def run_environment(
    environment: Environment,
    notebooks: Path,
    base: Path,
    envs: Path,
    python: str,
    fresh: bool,
    layout: Layout,
    progress: Progress,
) -> tuple[list[Result], float]:
    started = time.monotonic()
    interpreter = prepare(environment, envs, python, fresh, progress)
    results = []
    for name in environment.notebooks:
        workdir = base / 'work' / environment.name / name
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        began = time.monotonic()
        try:
            notebook = run_notebook(
                notebooks / f'{name}.ipynb', interpreter, workdir, kernel_env(environment, layout)
            )
            nbformat.write(notebook, workdir / 'executed.ipynb')  # to look into
            failure = first_failure(notebook)
            said = said_of(failure, claims_not_met(notebook))
            install = notebook.cells[0] if notebook.cells else {'outputs': []}
            printed = ''.join(o.get('text', '') for o in install.get('outputs', []))
        except Exception as error:  # the kernel did not start, or died
            failure, printed = f'{type(error).__name__}: {error}', ''
            said = failure
        seconds = time.monotonic() - began
        result = Result(environment.name, name, failure is None, said, seconds, printed.strip())
        results.append(result)
        progress(f'{environment.name}: {name}: {result.said} ({seconds:.0f} s)')
        if printed.strip():
            progress('    the install cell printed: ' + printed.strip().replace('\n', '\n    '))
    return results, time.monotonic() - started


# ---- publishing ------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ['git', *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def publish_locally(layout: Layout, base: Path, unexecuted: bool, progress: Progress) -> Path:
    """Publish HEAD to ``base/book.git`` and clone its notebooks as a reader would;
    returns the clone."""
    from tools.publish import branches, check_clean, publish, write_notebooks

    commit = check_clean(layout)
    remote = base / 'book.git'
    if not remote.is_dir():
        remote.mkdir(parents=True)
        git(remote, 'init', '--quiet', '--bare', '--initial-branch', 'main')  # pip clones HEAD
    git(layout.root, 'push', '--quiet', '--force', str(remote), f'{commit}:refs/heads/main')
    install_from = f'file://localhost{remote}'
    branch = branches(layout)['notebooks']
    if unexecuted:
        from tools.source.split import split_all

        pages = find_sections(layout)
        split_all(pages, layout)
        staging = base / 'unexecuted'
        shutil.rmtree(staging, ignore_errors=True)
        write_notebooks(layout, pages, commit, install_from, staging, executed=False)
        progress(f'wrote the split notebooks of {commit[:12]}, installing from {install_from}')
        return staging
    publish(layout, remote=str(remote), install_from=install_from, progress=progress)
    clone = base / 'notebooks'
    shutil.rmtree(clone, ignore_errors=True)
    git(
        base,
        'clone',
        '--quiet',
        '--branch',
        branch,
        '--single-branch',
        remote.as_uri(),
        str(clone),
    )
    return clone


# ---- the table ---------------------------------------------------------------------------


def table(results: list[Result], times: dict[str, float]) -> str:
    rows = [('environment', 'notebook', 'result', 'seconds')]
    rows += [(r.environment, r.notebook, r.said, f'{r.seconds:.0f}') for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        '  '.join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True))
        + f'  {row[3]:>7}'
        for row in rows
    ]
    lines.insert(1, '-' * len(lines[0]))
    lines.append('')
    lines += [f'{name}: {seconds / 60:.1f} min in all' for name, seconds in times.items()]
    return '\n'.join(lines)


def readers(
    layout: Layout,
    names: list[str] | None = None,
    notebooks: list[str] | None = None,
    *,
    unexecuted: bool = False,
    python: str | None = None,
    fresh: bool = False,
    envs: Path | None = None,
    progress: Progress = print,
) -> list[Result]:
    """Run the matrix (or the environments ``names``; each running, of ``notebooks``,
    those of its frameworks instead of its own); returns the results, raises
    ReadersFailed if any notebook failed.
    ``envs``: where the environments are kept (default: _build/readers/envs)."""
    pages = find_sections(layout)
    matrix = environments(layout, pages)
    unknown = sorted(set(names or ()) - set(matrix))
    if unknown:
        raise UsageError(f'no environment named {unknown}: choose from {sorted(matrix)}')
    known = {f'{fw}/{page}' for fw in FRAMEWORKS for page in pages}
    strange = sorted(set(notebooks or ()) - known)
    if strange:
        raise UsageError(
            f'no notebook {strange}: name them <framework>/<page>, e.g. pytorch/{pages[0]}'
        )
    chosen = [matrix[name] for name in (names or matrix)]
    if notebooks:
        chosen = [env.running(notebooks) for env in chosen]
        chosen = [env for env in chosen if env.notebooks]
    python = python or sys.executable
    base = layout.build / 'readers'
    clone = publish_locally(layout, base, unexecuted, progress)
    results, times = [], {}
    for environment in chosen:
        done, times[environment.name] = run_environment(
            environment, clone, base, envs or base / 'envs', python, fresh, layout, progress
        )
        results += done
    report = table(results, times)
    progress('\n' + report)
    write_atomic(
        base / 'results.json',
        json.dumps(
            {'results': [dataclasses.asdict(r) for r in results], 'seconds': times}, indent=1
        )
        + '\n',
    )
    failed = [r for r in results if not r.passed]
    if failed:
        raise ReadersFailed(
            f'{len(failed)} of {len(results)} notebook run(s) failed for readers:\n'
            + '\n'.join(f'  {r.environment}: {r.notebook}: {r.said}' for r in failed)
        )
    return results
