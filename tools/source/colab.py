"""The first cell of every notebook: installs what Colab or a fresh Jupyter lacks.

The cell is the module ``install_cell.py`` beside this one, real Python that ruff checks;
its first line is the title Colab shows for it.  For each notebook the build writes three
of its lines again, the ones below the comment "Written for this notebook by the book's
build" (``install_source``):

- ``LIBRARY``: ``d2l_mini[<extra>] @ git+<repository>[@<commit>]``, the library with the
  extra of the notebook's framework in pyproject.toml (its packages and their lower
  bounds), from ``repository.url`` of _config.yml;
- ``COMMIT``: the commit the book was published from (None in the split notebooks, so
  that a new commit re-executes nothing; ``tools.publish`` writes the cell again with the
  commit it publishes);
- ``PACKAGES``: ``package: (lower bound, pinned version)`` of the framework's packages and
  every other package that the notebook's cells import (:func:`needed_packages`, the one
  place that computes them; d2l_mini's own dependencies come with it).

In the reader's runtime the cell runs pip once where something is missing: the packages
that are absent or older than their lower bound, at the versions that made the outputs
(what is there and recent enough stays), and ``LIBRARY`` where d2l_mini is absent; a
d2l_mini installed from another commit is uninstalled first (pip keeps an
installed version of the same number otherwise).  A checkout of the book (the book's own
environment) stays.  A failing pip stops the cell with pip's command and message.  It
then prints the versions that made the outputs where those here differ.  Where all is in
place it runs no pip and prints nothing.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import tomllib
import urllib.parse
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from tools import facts
from tools.frameworks import framework as framework_row
from tools.paths import Layout
from tools.steps import UsageError

CELL_ID = 'install'
# The cell as readers see it, but for the lines of LIBRARY, COMMIT and PACKAGES.
CELL = Path(__file__).with_name('install_cell.py')
# The one line a reader sees of the cell, folded: Colab shows a cell whose first line is
# "# @title ..." and whose metadata says cellView "form" as a titled form, and JupyterLab
# collapses a cell with jupyter.source_hidden (split.py sets both).
TITLE = '# @title Install what this notebook needs (nothing, where it is installed)'
FOLDED = {'jupyter': {'source_hidden': True}, 'cellView': 'form'}
# The URL schemes that pip's git+ accepts; file:// needs a host (file://localhost/...),
# since the pip that Python 3.11 and 3.12 ship rejects git+file:///path.
GIT_SCHEMES = ('https', 'http', 'ssh', 'git', 'file')


def pinned_versions(layout: Layout) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line of requirements.txt
    (names in pip's canonical form: ``scikit-learn``, ``pyyaml``)."""
    versions = {}
    if layout.requirements.is_file():
        for line in layout.requirements.read_text(encoding='utf-8').splitlines():
            match = re.match(r'^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;#]+)', line)
            if match:
                versions[canonicalize_name(match.group(1))] = match.group(2).split('+')[0]
    return versions


def _project(layout: Layout) -> dict:
    try:
        return tomllib.loads(layout.pyproject.read_text(encoding='utf-8'))['project']
    except (OSError, KeyError, tomllib.TOMLDecodeError) as error:
        raise UsageError(
            f'{layout.pyproject}: cannot read its [project] table ({error!r}); the install '
            "cell reads the book's packages and their lower bounds there"
        ) from None


def minimum_versions(framework: str, layout: Layout) -> dict[str, str]:
    """``name -> lower bound`` of the framework's extra in pyproject.toml."""
    extra = framework_row(framework).extra
    where = f'{layout.pyproject} [project.optional-dependencies] {extra}'
    try:
        project = tomllib.loads(layout.pyproject.read_text(encoding='utf-8'))['project']
        entries = project['optional-dependencies'][extra]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as error:
        raise UsageError(
            f"{where}: cannot read the framework's packages ({error!r}); "
            f'list them there with lower bounds, e.g. {extra} = ["{extra}>=1.0"]'
        ) from None
    minimums = {}
    for entry in entries:
        requirement = _requirement(entry, where)
        lower = [spec.version for spec in requirement.specifier if spec.operator == '>=']
        if len(lower) != 1:
            raise UsageError(
                f'{where}: {entry!r} needs one lower bound (name>=version), '
                "the oldest version the book's code runs with"
            )
        minimums[canonicalize_name(requirement.name)] = lower[0]
    return minimums


def _requirement(entry: str, where: str) -> Requirement:
    try:
        return Requirement(entry)
    except InvalidRequirement as error:
        raise UsageError(f'{where}: {entry!r} is not a requirement: {error}') from None


def library_dependencies(layout: Layout) -> set[str]:
    """The packages that come with d2l_mini (``[project] dependencies`` of pyproject.toml)."""
    where = f'{layout.pyproject} [project] dependencies'
    entries = _project(layout).get('dependencies', [])
    return {canonicalize_name(_requirement(entry, where).name) for entry in entries}


def imported_modules(sources: Iterable[str]) -> set[str]:
    """The top-level modules that ``import`` statements of the code ``sources`` name
    (IPython's magics and shell lines are left out; a cell that is no Python is skipped)."""
    return set().union(*(cell_imports(source) for source in sources))


@functools.lru_cache(maxsize=4096)
def cell_imports(source: str) -> frozenset[str]:
    """The top-level modules that one cell imports, found once per process for each cell
    (IPython's transformation of a cell is slow, and the build reads each cell often)."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        tree = ast.parse(TransformerManager().transform_cell(source))
    except SyntaxError:
        return frozenset()
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split('.')[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split('.')[0])
    return frozenset(modules)


@functools.cache
def module_providers() -> dict[str, list[str]]:
    """``module -> distributions`` of this environment, read once per process: it reads
    every installed distribution's file list, which takes about a second, and the build
    splits up to 22 notebooks."""
    return metadata.packages_distributions()


def imported_packages(sources: Iterable[str], layout: Layout) -> dict[str, str]:
    """``package -> module`` of every installed package that the code ``sources``
    import, other than the standard library and d2l_mini; UsageError for a module that
    no package installed here provides."""
    providers = module_providers()
    packages = {}
    for module in sorted(imported_modules(sources) - set(sys.stdlib_module_names)):
        if module == 'd2l_mini':
            continue
        if module not in providers:
            raise UsageError(
                f'a code cell imports {module!r}, which neither the standard library nor a '
                "package of the book's environment provides: add the package to "
                'requirements.txt (pinned) and install it (make venv)'
            )
        packages.setdefault(canonicalize_name(providers[module][0]), module)
    return packages


def needed_packages(
    framework: str, layout: Layout, sources: Iterable[str] = ()
) -> dict[str, tuple[str | None, str]]:
    """What a notebook needs besides d2l_mini, ``package -> (lower bound or None, pinned
    version)``: the framework's packages (its extra), then the other packages that its
    code cells ``sources`` import (less those that come with d2l_mini)."""
    pins = pinned_versions(layout)
    needed: dict[str, tuple[str | None, str]] = {
        name: (lower, pins.get(name, lower))
        for name, lower in minimum_versions(framework, layout).items()
    }
    skipped = library_dependencies(layout)
    for package in imported_packages(sources, layout):
        if package not in needed and package not in skipped:
            needed[package] = (None, pins.get(package) or metadata.version(package))
    return needed


def check_repository(repository: str, name: str = 'repository') -> None:
    """UsageError unless readers' pip can install ``git+<repository>@<commit>``."""
    if not re.fullmatch(r"[^\s\"']+", repository):
        raise UsageError(f'{name} must be a git URL without spaces or quotes, got {repository!r}')
    url = urllib.parse.urlsplit(repository)
    accepted = f'a git URL that pip can install from ({", ".join(GIT_SCHEMES)})'
    if url.scheme not in GIT_SCHEMES:
        fix = f' file://localhost{repository}' if repository.startswith('/') else ''
        raise UsageError(f'{name} must be {accepted}, got {repository!r}{fix and ";" + fix}')
    if not url.netloc:
        raise UsageError(
            f"{name} {repository!r} has no host, which readers' pip rejects (pip 23 and 24 "
            f'say "Invalid requirement"): write file://localhost{url.path}'
        )
    if '@' in url.path:
        raise UsageError(
            f'{name} {repository!r} names a revision (@...): give the repository alone; '
            'the install cell adds the published commit'
        )


def install_source(
    framework: str,
    layout: Layout,
    commit: str | None = None,
    repository: str | None = None,
    sources: Iterable[str] = (),
) -> str:
    """The install cell of one of ``framework``'s notebooks.

    ``commit``: the commit of the repository to install d2l_mini from (None: its
    default branch).  ``repository``: where to install it from (default:
    ``repository.url`` of _config.yml), any URL pip's ``git+`` accepts.  ``sources``:
    the notebook's code cells, whose imports the cell provides.
    """
    packages = needed_packages(framework, layout, sources)
    if repository is not None:
        check_repository(repository)
    library = 'git+' + (repository or facts.repository_url(layout)).rstrip('/')
    if commit is not None:
        if not re.fullmatch(r'[0-9a-f]{40}', commit):
            raise UsageError(
                f'commit must be a full 40-digit hexadecimal commit id, got {commit!r}'
            )
        library = f'{library}@{commit}'
    values = {
        'LIBRARY': f'd2l_mini[{framework_row(framework).extra}] @ {library}',
        'COMMIT': commit,
        'PACKAGES': {
            name: (release(lower or '0'), release(pinned))
            for name, (lower, pinned) in packages.items()
        },
    }
    lines = CELL.read_text(encoding='utf-8').rstrip('\n').splitlines()
    for index, line in enumerate(lines):
        name = line.split(' = ')[0]
        if name in values:
            lines[index] = f'{name} = {values.pop(name)!r}'
    if values or lines[0] != TITLE:
        raise AssertionError(f'{CELL} lacks the title or the line of {sorted(values)}')
    return '\n'.join(lines)


def release(version: str) -> tuple[int, ...]:
    """``(2, 13, 0)`` for ``2.13.0+cpu``: a version as the install cell compares it."""
    return tuple(int(n) for n in re.findall(r'\d+', version.split('+')[0])[:3])
