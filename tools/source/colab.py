"""The first cell of every notebook: installs what Colab or a fresh Jupyter lacks.

Guarded by ``import d2l_mini``, so it does nothing where the book's environment is
installed (locally, in CI).  Elsewhere it installs ``d2l_mini`` from the repository
named by ``repository.url`` in ``_config.yml`` and a framework package only when it
is missing or older than the lower bound of the project's extras in pyproject.toml (a
framework already there, such as Colab's GPU builds, stays).  When an installed
version differs from the one pinned in requirements.txt, which made the outputs
shown, it says so in one line.

The split notebooks name the repository without a commit, so that a new commit
re-executes nothing; ``tools.publish`` writes the cell again with the commit it
publishes (``install_source(..., commit=...)``).
"""

from __future__ import annotations

import json
import re
import string

import tomllib
from packaging.requirements import InvalidRequirement, Requirement

from tools.frameworks import framework as framework_row
from tools.paths import Layout, read_config
from tools.steps import UsageError

CELL_ID = 'install'

# $names are filled in by install_source(); the rest is the cell as readers see it.
TEMPLATE = string.Template("""\
# Colab or a fresh Jupyter: install the book's library, d2l_mini, and $label
# where missing or too old. Where d2l_mini is installed, this cell does nothing.
try:
    import d2l_mini
except ImportError:
    import re
    from importlib import metadata

    def release(version):
        return tuple(int(n) for n in re.findall(r"\\d+", version.split("+")[0])[:3])

    # The oldest versions the book's code runs with, and those that made its outputs.
    needed = $minimum
    pinned = $pinned
    install, other = [], []
    for name, minimum in needed.items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = None
        if have is None or release(have) < release(minimum):
            install.append(f"{name}=={pinned[name]}")
        elif release(have) != release(pinned[name]):
            other.append(f"{name} {pinned[name]} (here: {have})")
    if other:
        print("The outputs shown were made with", ", ".join(other))
$gpu    packages = " ".join(install)
    %pip install --quiet {packages} "d2l_mini @ git+$repository"
""")


def repository_url(layout: Layout) -> str:
    """``repository.url`` from ``_config.yml``; UsageError when it is not set."""
    url = (read_config(layout).get('repository') or {}).get('url')
    if not url:
        raise UsageError(
            f'repository.url is not set in {layout.config}: the install cell installs '
            'd2l_mini from that repository; set it to https://github.com/<owner>/<name>'
        )
    return str(url).rstrip('/')


def pinned_versions(layout: Layout) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line of requirements.txt."""
    versions = {}
    if layout.requirements.is_file():
        for line in layout.requirements.read_text(encoding='utf-8').splitlines():
            match = re.match(r'^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;#]+)', line)
            if match:
                versions[match.group(1).lower()] = match.group(2).split('+')[0]
    return versions


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
        try:
            requirement = Requirement(entry)
        except InvalidRequirement as error:
            raise UsageError(f'{where}: {entry!r} is not a requirement: {error}') from None
        lower = [spec.version for spec in requirement.specifier if spec.operator == '>=']
        if len(lower) != 1:
            raise UsageError(
                f'{where}: {entry!r} needs one lower bound (name>=version), '
                "the oldest version the book's code runs with"
            )
        minimums[requirement.name.lower()] = lower[0]
    return minimums


def check_repository(repository: str, name: str = 'repository') -> None:
    """UsageError unless ``repository`` can go into the install cell's pip command."""
    if not re.fullmatch(r"[^\s\"']+", repository):
        raise UsageError(f'{name} must be a git URL without spaces or quotes, got {repository!r}')


def install_source(
    framework: str, layout: Layout, commit: str | None = None, repository: str | None = None
) -> str:
    """The install cell of ``framework``'s notebooks.

    ``commit``: the commit of the repository to install d2l_mini from (None: its
    default branch).  ``repository``: where to install it from (default:
    ``repository.url`` of _config.yml), any URL pip's ``git+`` accepts.
    """
    minimum = minimum_versions(framework, layout)
    pins = pinned_versions(layout)
    pinned = {name: pins.get(name, version) for name, version in minimum.items()}
    if repository is not None:
        check_repository(repository)
    source = (repository or repository_url(layout)).rstrip('/')
    if commit is not None:
        if not re.fullmatch(r'[0-9a-f]{40}', commit):
            raise UsageError(
                f'commit must be a full 40-digit hexadecimal commit id, got {commit!r}'
            )
        source = f'{source}@{commit}'
    return TEMPLATE.substitute(
        label=framework_row(framework).install_label,
        minimum=json.dumps(minimum),
        pinned=json.dumps(pinned),
        gpu=framework_row(framework).gpu_install,
        repository=source,
    ).rstrip('\n')
