"""The built HTML books that tests/site/test_html.py and test_browser.py look at.

Each is built at most once per test session:
- `real_site()`: the book itself, through tools.build.build() (split, execute with its
  cache, merge, render).
- `demo_site()`: a small project made here from the repository's _config.yml and
  book/_static, with plain pages and two sections whose split and merged notebooks are
  written by hand with nbformat, rendered by tools.site.render into a temporary folder. Its
  twin cells differ in height on purpose (for the scroll test) and in their lines (for
  the side-by-side view).
"""

import concurrent.futures
import dataclasses
import functools
import json
import shutil
import tempfile
from pathlib import Path

import nbformat
from nbformat import v4

from tests.project import FRONT_MATTER, one_build_at_a_time

REPO = Path(__file__).resolve().parents[2]


# A tiny red PNG (1x1), standing in for a plot.
PNG = (
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5E'
    'rkJggg=='
)


@dataclasses.dataclass
class Site:
    html: Path  # the HTML folder
    site: Path  # the folder jupyter-book built (holds _toc.yml, report.md)
    sections: list  # section paths (e.g. "demo/twins") built as notebook pages
    build: Path  # the _build folder with merged/, notebooks/, exec/
    real: bool  # the real book (True) or the hand-made project (False)


def code(source, tags=(), outputs=()):
    cell = v4.new_code_cell(source, outputs=list(outputs))
    if tags:
        cell.metadata['tags'] = list(tags)
    return cell


def stream(text):
    return v4.new_output('stream', name='stdout', text=text)


# The text/plain that d2l_mini.plotting gives a figure, and matplotlib's own.
PLOT_DESCRIPTION = 'Line plot of loss against step: up, down'
FIGURE_REPR = '<Figure size 350x250 with 1 Axes>'


# and a tiny blue one: the other framework's plot, which differs.
OTHER_PNG = (
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGMQTbgAAAHTAUY9MmCHAAAAAElFTkSuQmCC'
)


def figure(text=FIGURE_REPR, png=PNG):
    return v4.new_output('display_data', data={'image/png': png, 'text/plain': text})


# A drawing as matplotlib writes one for the book: 252 x 180 pt.
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="252pt" height="180pt" '
    'viewBox="0 0 252 180"><rect x="10" y="10" width="232" height="160" fill="none" '
    'stroke="#1560d0"/><path d="M 10 170 L 126 40 L 242 120" fill="none" stroke="#444"/></svg>'
)


def drawing(text, svg=SVG):
    return v4.new_output('display_data', data={'image/svg+xml': svg, 'text/plain': text})


# An inline literal longer than a phone's line, in prose both editions print (it must break).
LONG_LITERAL = 'numpy.lib.stride_tricks.sliding_window_view.__wrapped__.__qualname__'


def notebook(cells):
    nb = v4.new_notebook(cells=cells)
    nb.metadata['kernelspec'] = {
        'display_name': 'Python 3',
        'language': 'python',
        'name': 'python3',
    }
    nb.metadata['language_info'] = {'name': 'python', 'pygments_lexer': 'ipython3'}
    return nb


def twins_section():
    """Cells of the hand-made section 'demo/twins' (merged form)."""
    return [
        v4.new_markdown_cell(
            '(sec-twins)=\n# Twin cells\n\nA page with twin cells {cite:p}`vaswani2017attention`.'
        ),
        code('from d2l_mini import torch as d2l\nimport torch', ['pytorch']),
        code(
            'from d2l_mini import jax as d2l\nimport jax\nfrom jax import numpy as jnp\n'
            'from flax import nnx\nimport optax\nimport numpy as np',
            ['jax'],
        ),
        code('sizes = [1, 2, 3]'),
        v4.new_markdown_cell(
            '$$\ny = \\mathrm{softmax}(x)\n$$ (eq-demo)\n\nSee {eq}`eq-demo` and {ref}`sec-twins`.'
        ),
        code('print(torch.ones(2))', ['pytorch'], [stream('tensor([1., 1.])\n')]),
        code('print(jax.numpy.ones(2))', ['jax'], [stream('[1. 1.]\n')]),
        code('assert True', ['pytorch', 'claim', 'remove-cell']),
        code('assert True', ['jax', 'claim', 'remove-cell']),
        v4.new_markdown_cell(
            'The sum is [2.0]{.fw-value .fw-only-pytorch}[2.5]{.fw-value .fw-only-jax}.\n\n'
            '```{container} fw-only-pytorch\nPyTorch prints a tensor.\n```\n\n'
            '```{container} fw-only-jax\nJAX prints an array.\n```'
        ),
        code(
            'class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n'
            '        self.dense = nn.Linear(2, 2)\n\n    def forward(self, x):\n'
            '        return self.dense(x)',
            ['pytorch'],
        ),
        code(
            'class Net(nnx.Module):\n    def __init__(self, *, rngs):\n'
            '        self.dense = nnx.Linear(2, 2, rngs=rngs)\n\n    def __call__(self, x):\n'
            '        return self.dense(x)\n\nnet = Net(rngs=nnx.Rngs(0))',
            ['jax'],
        ),
        v4.new_markdown_cell(
            '## A plot\n\n[Two plots behind one tab bar. ]{.web-only}This text is long enough '
            f'to push the next cells down the page, past `{LONG_LITERAL}`.\n\n'
            + 'Filler text. '
            * 80
        ),
        code('d2l.plot([1, 2], [3, 4])', ['pytorch'], [figure(PLOT_DESCRIPTION)]),
        code('d2l.plot([1, 2], [3, 4])', ['jax'], [figure(png=OTHER_PNG)]),
        v4.new_markdown_cell('More prose between the groups.\n\n' + 'Filler text. ' * 300),
        code('x = torch.zeros(3)\nprint(x.shape)', ['pytorch'], [stream('torch.Size([3])\n')]),
        code('x = jax.numpy.zeros(3)\nprint(x.shape)', ['jax'], [stream('(3,)\n')]),
        # Twins that print the same: the output once, across both columns.
        code(
            'n = torch.tensor(sizes).numel()\nprint(n, "sizes")',
            ['pytorch'],
            [stream(SAME_OUTPUT)],
        ),
        code('n = jnp.array(sizes).size\nprint(n, "sizes")', ['jax'], [stream(SAME_OUTPUT)]),
        v4.new_markdown_cell('The end of the page.\n\n' + 'Filler text. ' * 300),
    ]


def more_section():
    """Cells of 'demo/more': the page after 'demo/twins'."""
    return [
        v4.new_markdown_cell(
            '# More twins\n\nBack to {ref}`sec-twins`.\n\n' + 'Filler text. ' * 40
        ),
        code('from d2l_mini import torch as d2l', ['pytorch']),
        code('from d2l_mini import jax as d2l', ['jax']),
        code('print(2 + 2)', outputs=[stream('4\n')]),
        code("print('source hidden')", ['hide-input'], [stream('source hidden\n')]),
        code('y = torch.arange(4)\nz = y + 1', ['pytorch', 'hide-input']),
        code('key = jax.random.key(0)\ny = jnp.arange(4)\nz = y + 1', ['jax', 'hide-input']),
        code('print(y.sum())', ['pytorch'], [stream('tensor(6)\n')]),
        code('print(y.sum())', ['jax'], [stream('6\n')]),
        # Twins folded whole, as the solutions fold theirs (hide-cell).
        code(
            'w = torch.ones(3)\nprint(w.sum())', ['pytorch', 'hide-cell'], [stream('tensor(3.)\n')]
        ),
        code('w = jnp.ones(3)\nprint(w.sum())', ['jax', 'hide-cell'], [stream('3.0\n')]),
        # Twin drawings (SVG), which "Both" scales to their columns.
        code('d2l.plot(y, z)', ['pytorch'], [drawing('Line plot of z against y: up')]),
        code(
            'd2l.plot(y, z, show=True)',
            ['jax'],
            [drawing('Line plot of z against y: up', SVG.replace('126 40', '126 60'))],
        ),
        v4.new_markdown_cell(
            '## A solution\n\n[Open the box below for the answer.]{.web-only}'
            '[The answer follows.]{.print-only}\n\n'
            '````{dropdown} Solution\nThe answer, derived.\n````'
        ),
        code('print(table)', outputs=[stream(WIDE_TABLE)]),
    ]


SAME_OUTPUT = '3 sizes\n'

# An output wider than a printed page's text at the outputs' size: the PDF keeps its rows.
WIDE_TABLE = ''.join(
    ' '.join(f'{cell:>11}' for cell in row) + '\n'
    for row in [[f'column {i}' for i in range(9)]]
    + [[f'{(r + 1) * (i + 1) * 0.125:.4f}' for i in range(9)] for r in range(4)]
)


SECTIONS = {'demo/twins': twins_section, 'demo/more': more_section}
# The package that holds each framework, as records name it.
PACKAGES = {'pytorch': 'torch', 'jax': 'jax'}


def split(cells, framework):
    other = {'pytorch': 'jax', 'jax': 'pytorch'}[framework]
    kept = [c for c in cells if other not in c.metadata.get('tags', [])]
    return notebook([nbformat.from_dict(json.loads(json.dumps(c))) for c in kept])


def make_project(root):
    """A project folder like the repository, with one section already merged."""
    root = Path(root)
    book = root / 'book'
    (book / 'demo').mkdir(parents=True)
    shutil.copy2(REPO / '_config.yml', root / '_config.yml')
    shutil.copytree(REPO / 'book' / '_static', book / '_static')
    shutil.copytree(REPO / 'book' / '_templates', book / '_templates')
    shutil.copy2(REPO / 'book' / 'references.bib', book / 'references.bib')
    shutil.copy2(REPO / 'book' / 'references.md', book / 'references.md')
    for name in ('requirements.txt', 'pyproject.toml'):  # the zips' requirements come from them
        shutil.copy2(REPO / name, root / name)
    (book / 'index.md').write_text(
        '# A small book\n\nThe landing page: {doc}`demo/twins`.\n\n'
        '```{book-downloads}\n```\n\n```{tableofcontents}\n```\n'
    )
    (book / 'demo' / 'index.md').write_text('# The demo chapter\n\nPlain page, no notebook.\n')
    (root / '_toc.yml').write_text(
        'format: jb-book\nroot: index\nparts:\n'
        '  - caption: Demo\n    numbered: true\n    chapters:\n'
        '      - file: demo/index\n        sections:\n'
        '          - file: demo/twins\n          - file: demo/more\n'
        '  - caption: Back matter\n    chapters:\n'
        '      - file: references\n      - file: report\n'
    )
    build = root / '_build'
    for rel, make_cells in SECTIONS.items():
        (book / f'{rel}.md').write_text(FRONT_MATTER + f'\n# {rel}\n')
        cells = make_cells()
        nbformat.write(notebook(cells), build_path(build, 'merged', rel))
        for framework in ('pytorch', 'jax'):
            for folder in ('notebooks', 'executed'):
                nbformat.write(
                    split(cells, framework), build_path(build, f'{folder}/{framework}', rel)
                )
    records = [
        {
            'section': rel,
            'framework': fw,
            'wall_s': wall,
            'status': status,
            'executed_at': '2026-01-02T03:04:05+00:00',
            'python': '3.11.7',
            'versions': {PACKAGES[fw]: '9.9.9', 'numpy': '2.4.6'},
            'hardware': 'CPU: 2 cores',
        }
        for rel in SECTIONS
        for fw, wall, status in (('pytorch', 3.25, 'executed'), ('jax', 4.5, 'cached'))
    ]
    build_path(build, 'exec', 'records').with_suffix('.json').write_text(json.dumps(records))
    return root


def build_path(build, folder, rel):
    path = Path(build, folder, f'{rel}.ipynb')
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def site_sections(layout, site):
    """The section paths that the site at `site` built as pages, in toc order."""
    import yaml

    from tools.source.sections import book_pages, toc_files

    pages = book_pages(layout)
    toc = yaml.safe_load((Path(site) / '_toc.yml').read_text())
    return [rel for rel in toc_files(toc) if pages.get(rel)]


_real = {}


def real_site():
    """The book itself, built by the pipeline.

    Built once per session: a failed build is not tried again by the next test, which
    gets the same error.
    """
    if 'site' not in _real:
        from tools.build import build
        from tools.paths import Layout

        try:
            layout = Layout()
            # In a thread of its own: the PDF step drives Chromium with Playwright's sync
            # API, which refuses to start where a test's browser session runs its loop.
            with one_build_at_a_time(layout), concurrent.futures.ThreadPoolExecutor(1) as thread:
                thread.submit(build, layout).result()
            site = layout.site
            _real['site'] = Site(
                layout.html, site, site_sections(layout, site), layout.build, True
            )
        except Exception as error:
            _real['site'] = error
    if isinstance(_real['site'], Exception):
        raise RuntimeError(f'building the book failed: {_real["site"]}') from _real['site']
    return _real['site']


@functools.cache
def demo_site():
    """The hand-made two-section project, rendered into a temporary folder."""
    from tools.paths import Layout
    from tools.site.render import render

    root = make_project(tempfile.mkdtemp(prefix='book-site-'))
    layout = Layout(root=root)
    html = render(layout, quiet=True, progress=lambda message: None)
    site = layout.site
    return Site(html, site, site_sections(layout, site), layout.build, False)
