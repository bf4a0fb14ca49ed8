"""The notebooks of one framework in one download: ``<book>-<framework>-notebooks.zip``.

    python -m tools zip

Each zip holds one folder, ``<book>-<framework>-notebooks/``, with every executed
notebook of that framework in the book's folder layout (``transformer-block/vit.ipynb``),
a ``requirements.txt`` (the packages the notebooks import, d2l_mini from the book's
repository, each at the version pinned in the project's requirements.txt) and a
``README.md`` that says how to set up an environment and which versions made the outputs
(from _build/exec/records.json).  The build writes the zips into _build/downloads/ with
the executed notebooks as they are; ``python -m tools publish`` writes them again from the
notebooks it publishes, whose install cell names the published commit.  The same
inputs give the same bytes (fixed timestamps, sorted entries).
"""

from __future__ import annotations

import io
import tomllib
import zipfile
from pathlib import Path

import nbformat
from packaging.utils import canonicalize_name

from tools import facts
from tools.frameworks import FRAMEWORKS
from tools.frameworks import framework as framework_row
from tools.paths import Layout, read_config, write_atomic
from tools.run import records as run_records
from tools.site.report import environment_rows
from tools.source import colab
from tools.steps import StepFailed

# Every entry gets this time, so that the same notebooks give the same zip.
ZIP_TIME = (2020, 1, 1, 0, 0, 0)
KERNEL_PACKAGE = 'ipykernel'  # what makes an environment a Jupyter kernel


class BundleError(StepFailed):
    """A notebook to bundle is missing, or a package the notebooks need is not pinned."""


def book_title(layout: Layout) -> str:
    return str(read_config(layout).get('title') or 'The book')


def code_sources(notebook: nbformat.NotebookNode) -> list[str]:
    """The sources of the notebook's code cells."""
    return [cell.source for cell in notebook.cells if cell.cell_type == 'code']


def required_packages(layout: Layout, framework: str, sources: list[str]) -> list[str]:
    """What the zip's requirements pin, sorted: the packages the notebooks need as the
    install cell computes them (``colab.needed_packages``: the framework's extra and the
    packages their code imports), d2l_mini's own dependencies and the kernel package."""
    needed = colab.needed_packages(framework, layout, sources)
    return sorted(set(needed) | colab.library_dependencies(layout) | {KERNEL_PACKAGE})


def requirements_text(
    layout: Layout, framework: str, sources: list[str], commit: str | None, repository: str | None
) -> str:
    pins = {canonicalize_name(name): v for name, v in colab.pinned_versions(layout).items()}
    lines = []
    for name in required_packages(layout, framework, sources):
        if name not in pins:
            raise BundleError(
                f'the {framework} notebooks need {name}, which requirements.txt does not pin: '
                f'add {name}==<version> there'
            )
        lines.append(f'{name}=={pins[name]}')
    source = (repository or facts.repository_url(layout)).rstrip('/')
    lines.append(f'd2l_mini @ git+{source}' + (f'@{commit}' if commit else ''))
    return '\n'.join(lines) + '\n'


def notebook_title(notebook: nbformat.NotebookNode, rel: str) -> str:
    for cell in notebook.cells:
        if cell.cell_type == 'markdown':
            for line in cell.source.splitlines():
                if line.startswith('# '):
                    return line[2:].strip()
    return rel


def versions_table(layout: Layout, framework: str, sections: list[str]) -> str:
    mine = [
        r
        for r in run_records.load(layout)
        if r['framework'] == framework and r['section'] in sections
    ]
    rows = environment_rows(mine)
    if not rows:
        return 'The build kept no record of the runs (no _build/exec/records.json).\n'
    ((_, seen),) = rows
    lines = ['| | made with |', '| --- | --- |']
    lines += [f'| {name} | {", ".join(values)} |' for name, values in seen.items()]
    return '\n'.join(lines) + '\n'


def run_time(seconds: float | None) -> str:
    """' (ran in 7 min)': a notebook's recorded wall time, for the list of notebooks."""
    if seconds is None:
        return ''
    if seconds < 60:
        return ' (ran in under a minute)'
    return f' (ran in {round(seconds / 60)} min)'


def readme_text(layout: Layout, framework: str, titles: dict[str, str], commit: str | None) -> str:
    row = framework_row(framework)
    walls = {
        r['section']: r.get('wall_s')
        for r in run_records.load(layout)
        if r['framework'] == framework
    }
    listed = '\n'.join(
        f'- `{rel}.ipynb`: {title}{run_time(walls.get(rel))}' for rel, title in titles.items()
    )
    at = f' at commit {commit[:12]}' if commit else ''
    kernel = f'd2l-book-{framework}'
    project = tomllib.loads(layout.pyproject.read_text(encoding='utf-8')).get('project', {})
    python = project.get('requires-python', '>=3.10')
    python = f'{python[2:]} or newer' if python.startswith('>=') else python
    gpu = GPU_NOTES.get(framework, '').format(**colab.pinned_versions(layout))
    return f"""# {book_title(layout)}: the {row.label} notebooks

Every section of the book as a {row.label} notebook, executed: the outputs are the ones
the book shows. The folders are those of the book:

{listed}

## Set up

The notebooks need Python {python} and the packages of `requirements.txt`:
{row.install_label}, and the book's library `d2l_mini` from the book's repository{at}.

```sh
python3 -m venv .venv
.venv/bin/pip install -r requirements.txt jupyterlab
.venv/bin/python -m ipykernel install --user --name {kernel}
.venv/bin/jupyter lab
```

Then open a notebook in JupyterLab (or Notebook, or VS Code) with the kernel "{kernel}".
The first cell of every notebook does nothing where `d2l_mini` is installed; elsewhere
(in Colab, say) it installs what is missing. {gpu} The times in the list above are those
of the run that made the outputs, on the hardware named below.

Results of training differ a little between machines, thread counts and versions. Where
a result that the book states does not hold in your run, the notebook prints one line
saying what the book asserts and what your run gave, and goes on.

## The versions that made the outputs

{versions_table(layout, framework, list(titles))}"""


# How each framework runs on an NVIDIA GPU ({name}: a version from requirements.txt).
GPU_NOTES = {
    'pytorch': "On Linux, PyPI's torch wheel is the CUDA build (several GB), which uses an "
    'NVIDIA GPU. Without one, install the CPU build first, then the requirements: '
    '`pip install torch=={torch} --index-url https://download.pytorch.org/whl/cpu`.',
    'jax': 'On an NVIDIA GPU, install JAX\'s CUDA build too: `pip install "jax[cuda12]=={jax}"`.',
}


def zip_entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def bundle(
    layout: Layout,
    framework: str,
    sections: list[str],
    notebooks: Path,
    commit: str | None = None,
    repository: str | None = None,
) -> bytes:
    """The zip of ``framework``'s notebooks ``<notebooks>/<rel>.ipynb``, as bytes."""
    folder = facts.download_name(facts.repo_name(layout), framework, 'notebooks')
    folder = folder.removesuffix('.zip')
    sources, titles, files = [], {}, {}
    for rel in sections:
        path = Path(notebooks, f'{rel}.ipynb')
        if not path.is_file():
            raise BundleError(f'{path} is missing: run `make book` (python -m tools build) first')
        data = path.read_bytes()
        notebook = nbformat.reads(data.decode('utf-8'), as_version=4)
        sources += code_sources(notebook)
        titles[rel] = notebook_title(notebook, rel)
        files[f'{rel}.ipynb'] = data
    requirements = requirements_text(layout, framework, sources, commit, repository)
    files['requirements.txt'] = requirements.encode()
    files['README.md'] = readme_text(layout, framework, titles, commit).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as archive:
        for name in sorted(files):
            archive.writestr(zip_entry(f'{folder}/{name}'), files[name])
    return buffer.getvalue()


def zip_path(layout: Layout, framework: str, folder: Path | None = None) -> Path:
    name = facts.download_name(facts.repo_name(layout), framework, 'notebooks')
    return Path(folder or layout.book_downloads) / name


def write_bundles(
    layout: Layout,
    sections: list[str],
    folder: Path | None = None,
    notebooks: Path | None = None,
    commit: str | None = None,
    repository: str | None = None,
) -> dict[str, Path]:
    """One zip per framework in ``folder`` (default _build/downloads/), from the executed
    notebooks (or those below ``notebooks``, ``<framework>/<rel>.ipynb``)."""
    written = {}
    for framework in FRAMEWORKS:
        source = Path(notebooks) / framework if notebooks else layout.executed_folder(framework)
        data = bundle(layout, framework, sections, source, commit, repository)
        path = zip_path(layout, framework, folder)
        write_atomic(path, data)  # only when its bytes changed
        written[framework] = path
    return written
