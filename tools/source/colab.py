"""The first cell of every notebook: installs what Colab or a fresh Jupyter lacks.

It checks, in the reader's runtime, every package the notebook needs: the packages of
its framework (the project's extra in pyproject.toml, with its lower bounds) and every
other package that the notebook's cells import (found in their source, e.g.
scikit-learn for ``import sklearn``; d2l_mini's own dependencies come with it).  A
package that is missing, or older than its lower bound, is installed at the version
pinned in requirements.txt (which made the outputs shown); one that is there stays,
and pip may upgrade but never downgrade it.  ``d2l_mini`` is installed from the
repository named by ``repository.url`` in ``_config.yml``, and again when the one
installed came from another commit (pip records a git install's commit in
``direct_url.json``); a local checkout (the book's own environment) stays.  When a
kept version differs from the pinned one, the cell says so in one line.  A failing
pip stops the cell with pip's message and what to do; so does a package that is
installed but does not import.  Where everything is in place (the book's own
environment) it installs and prints nothing.

The split notebooks name the repository without a commit, so that a new commit
re-executes nothing; ``tools.publish`` writes the cell again with the commit it
publishes (``install_source(..., commit=...)``).
"""

from __future__ import annotations

import ast
import json
import re
import string
import sys
import textwrap
import tomllib
import urllib.parse
from collections.abc import Iterable
from importlib import metadata

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from tools import facts
from tools.frameworks import framework as framework_row
from tools.paths import Layout
from tools.steps import UsageError

CELL_ID = 'install'
# The one line a reader sees of the cell, folded: Colab shows a cell whose first line is
# "# @title ..." and whose metadata says cellView "form" as a titled form, and JupyterLab
# collapses a cell with jupyter.source_hidden (split.py sets both).
TITLE = '# @title Install what this notebook needs (nothing, where it is installed)'
FOLDED = {'jupyter': {'source_hidden': True}, 'cellView': 'form'}
# The URL schemes that pip's git+ accepts; file:// needs a host (file://localhost/...),
# since the pip that Python 3.11 and 3.12 ship rejects git+file:///path.
GIT_SCHEMES = ('https', 'http', 'ssh', 'git', 'file')

# $names are filled in by install_source(); the rest is the cell as readers see it.
TEMPLATE = string.Template("""\
$title
$header
import json
import re
import subprocess
import sys
from importlib import import_module, invalidate_caches, metadata

LIBRARY = "$library"
# The book's commit that made the outputs shown (None: not published yet).
COMMIT = $commit
# package: (its module, the oldest version the book runs with, the one that made the outputs)
NEEDED = $needed


def release(version):  # "2.4.1+cu121" -> (2, 4, 1)
    return tuple(int(n) for n in re.findall(r"\\d+", version.split("+")[0])[:3])


def installed(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def library_commit():  # the commit pip installed d2l_mini from; "local" for a checkout
    try:
        record = metadata.distribution("d2l_mini").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    return json.loads(record or "{}").get("vcs_info", {}).get("commit_id", "local")


ADVICE = {  # what pip said: what to do
    "resolve host|establish a new connection|unreachable|name resolution": (
        "There is no network here: connect this runtime to the internet."),
    "ResolutionImpossible|conflicting dependencies": (
        "A version conflict with packages installed here: use a fresh environment "
        "(a new Colab runtime, or python -m venv)."),
    "Read-only file system|Permission denied|Errno 13|Errno 30": (
        "This Python's site-packages cannot be written: use a virtual environment of "
        "your own (python -m venv) as this notebook's kernel."),
    "git clone|Repository not found|did not match any|fatal:": (
        f"d2l_mini cannot be fetched from {LIBRARY}: check that this address can be "
        "reached from here."),
    "Invalid requirement|no such option|No matching distribution": (
        f"This pip ({installed('pip')}) may be too old, or this Python "
        f"({sys.version.split()[0]}) not one the book supports (3.11, 3.12): upgrade pip "
        "(python -m pip install --upgrade pip) and run this cell again."),
}


def pip_install(*arguments):
    command = [sys.executable, "-m", "pip", "install", "--quiet", *arguments]
    done = subprocess.run(command, capture_output=True, text=True)
    said = (done.stderr + done.stdout).strip()
    if done.returncode != 0:
        advice = [what for said_so, what in ADVICE.items() if re.search(said_so, said)]
        raise RuntimeError(f"pip could not install {' '.join(arguments)}:\\n{said}\\n\\n"
                           + (advice or ["Run this cell again once pip's error is fixed."])[0])
    if "ERROR" in said:  # pip installed, but reports a conflict with packages it kept
        print(said[said.index("ERROR"):])


install, keep, made_with, imported = [], [], [], []
for package, (module, oldest, pinned) in NEEDED.items():
    have = installed(package)
    if have is None or oldest and release(have) < release(oldest):
        if have:
            print(f"{package} {have} is older than {oldest}, the oldest the book runs "
                  f"with: installing {pinned}")
        install.append(f"{package}=={pinned}")
        imported += [package] if module in sys.modules else []
    else:
        keep.append(f"{package}>={have.split('+')[0]}")  # pip may upgrade it, not downgrade
        if release(have) != release(pinned):
            made_with.append(f"{package} {pinned} (here: {have})")
if made_with:
    print("The outputs shown were made with", ", ".join(made_with))
$gpu
have = library_commit()
if have is None:
    install.append(f"d2l_mini @ {LIBRARY}")
elif COMMIT and have not in (COMMIT, "local"):
    print(f"d2l_mini is installed from commit {have[:12]}: installing {COMMIT[:12]}'s")
    pip_install("--force-reinstall", "--no-deps", f"d2l_mini @ {LIBRARY}")
if install:
    pip_install(*install, *keep)
    invalidate_caches()
    if imported:
        raise RuntimeError(f"Installed {', '.join(imported)}, which this kernel had imported "
                           "before: restart the kernel, then run the notebook from the top.")
for module in $modules:
    try:
        import_module(module)
    except Exception as error:
        raise RuntimeError(
            f"{module} does not import ({type(error).__name__}: {error}): a package it "
            "needs is missing or broken here. Reinstall it at the version named above "
            "(pip install --force-reinstall PACKAGE==VERSION), restart the kernel and "
            "run the notebook from the top.") from error
""")


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
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    modules = set()
    for source in sources:
        try:
            tree = ast.parse(transform(source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split('.')[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split('.')[0])
    return modules


def imported_packages(sources: Iterable[str], layout: Layout) -> dict[str, str]:
    """``package -> module`` of every installed package that the code ``sources``
    import, other than the standard library and d2l_mini; UsageError for a module that
    no package installed here provides."""
    providers = metadata.packages_distributions()
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
) -> dict[str, tuple[str, str | None, str]]:
    """What the install cell checks: ``package -> (module, lower bound or None, pinned)``:
    the framework's packages, then the other packages that ``sources`` import (less
    those that come with d2l_mini)."""
    pins = pinned_versions(layout)
    needed = {
        name: (name, lower, pins.get(name, lower))
        for name, lower in minimum_versions(framework, layout).items()
    }
    skipped = library_dependencies(layout)
    for package, module in imported_packages(sources, layout).items():
        if package in needed or package in skipped:
            continue
        pinned = pins.get(package) or metadata.version(package)
        needed[package] = (module, None, pinned)
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
    needed = needed_packages(framework, layout, sources)
    if repository is not None:
        check_repository(repository)
    library = 'git+' + (repository or facts.repository_url(layout)).rstrip('/')
    if commit is not None:
        if not re.fullmatch(r'[0-9a-f]{40}', commit):
            raise UsageError(
                f'commit must be a full 40-digit hexadecimal commit id, got {commit!r}'
            )
        library = f'{library}@{commit}'
    row = framework_row(framework)
    others = [package for package, (_, lower, _) in needed.items() if lower is None]
    needs = '; '.join(["the book's library d2l_mini", row.install_label, *others])
    header = textwrap.wrap(
        f'Colab or a fresh Jupyter: install what this notebook needs ({needs}) where it is '
        "missing or too old. Nothing is downgraded; in the book's own environment this cell "
        'installs and prints nothing.',
        width=86,
    )
    lines = [
        f'    {_literal(name)}: ({", ".join(map(_literal, entry))}),'
        for name, entry in needed.items()
    ]
    return TEMPLATE.substitute(
        title=TITLE,
        header='\n'.join(f'# {line}' for line in header),
        library=library,
        commit=_literal(commit),
        needed='{\n' + '\n'.join(lines) + '\n}',
        gpu=row.gpu_install,
        modules=_literal(
            [f'd2l_mini.{row.module.removesuffix(".py")}', *(needed[p][0] for p in others)]
        ),
    ).rstrip('\n')


def _literal(value: object) -> str:
    """``value`` as Python source, strings in double quotes (the cell's style)."""
    return 'None' if value is None else json.dumps(value)
