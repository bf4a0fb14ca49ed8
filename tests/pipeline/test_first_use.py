"""Every NNX, JAX, optax and PyTorch API the book's code uses is explained at first use.

The book is walked in the table of contents' order.  The API names of every code cell
(``nnx.scan``, ``torch.func.grad``, ``F.gelu``, and the few methods of METHODS, such as
``token_emb.attend``) are collected with ``ast``; claim cells do not count, hidden ones
do.  A name is explained where its prose names it in a code span or a link: anywhere on
the bridge pages (BRIDGES), or in the prose read before its first use (earlier pages, the
same page above the cell, or the prose right under the cells that use it, where the book
says what the twins did).  The obvious names are allowed (ALLOWED).
"""

from __future__ import annotations

import ast
import dataclasses
import re

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from tools.paths import Layout
from tools.site.render import GENERATED_PAGES
from tools.source.sections import SourceCell, book_pages, read_section, toc_pages

# The pages that set NNX beside PyTorch and beside Linen: all their prose counts.
BRIDGES = ('pytorch-to-nnx', 'jax-to-nnx')
# The library's reference, which names d2l_mini's API rather than explaining the frameworks'.
SKIPPED = ('d2l-mini',)

# Where an import does not say which module a name is: the book's one convention.
ALIASES = {
    'torch': 'torch',
    'nn': 'torch.nn',
    'F': 'torch.nn.functional',
    'jax': 'jax',
    'jnp': 'jax.numpy',
    'nnx': 'flax.nnx',
    'optax': 'optax',
}
# Long module paths as the book writes them (most specific first).
SHORT = (
    ('torch.nn.functional.', 'F.'),
    ('torch.nn.', 'nn.'),
    ('flax.nnx.', 'nnx.'),
    ('jax.numpy.', 'jnp.'),
)
ROOTS = ('nnx', 'torch', 'nn', 'F', 'jax', 'optax')

# Methods and attributes worth explaining, called on an object rather than a module: the
# name is collected as ``.name`` where the receiver is not ``self`` (a class's own method).
METHODS = {
    'attend': 'nnx.Embed.attend, the tied output head (PyTorch: X @ emb.weight.T)',
    'layers': 'nnx.Sequential(...).layers, the list of its layers',
}

# The obvious, which no prose need name: arrays made, seeded and combined under NumPy's
# names and meanings; functions named for their formula; losses and layers named for what
# they compute. Everything else is a name a reader of the other framework may not know.
ALLOWED = frozenset({
    # arrays, as NumPy makes, combines and draws them (jnp.* is not collected at all)
    'torch.tensor', 'torch.zeros', 'torch.ones', 'torch.empty', 'torch.eye', 'torch.arange',
    'torch.zeros_like', 'torch.cat', 'torch.stack', 'torch.where', 'torch.sum', 'torch.outer',
    'torch.sqrt', 'torch.equal', 'torch.inf', 'torch.linalg.norm', 'torch.from_numpy',
    'torch.float64', 'torch.long', 'torch.bool', 'torch.rand', 'torch.randn',
    'torch.randn_like', 'torch.randint', 'torch.randperm', 'jax.random.key',
    'jax.random.normal', 'jax.random.uniform', 'jax.random.randint', 'jax.random.permutation',
    # functions named for their formula
    'torch.softmax', 'torch.log_softmax', 'torch.logsumexp', 'torch.sigmoid', 'torch.relu',
    'torch.rsqrt', 'jax.lax.rsqrt', 'F.gelu', 'F.relu', 'F.silu', 'F.softmax',
    'jax.nn.softmax', 'jax.nn.log_softmax', 'jax.nn.logsumexp', 'jax.nn.sigmoid', 'nnx.gelu',
    'nnx.relu', 'nnx.silu',
    # losses and layers named for what they compute
    'F.cross_entropy', 'optax.softmax_cross_entropy_with_integer_labels', 'nn.Module',
    'nn.Linear', 'nn.LayerNorm', 'nn.RMSNorm', 'nn.Embedding', 'nn.Dropout', 'nn.ReLU',
    'nn.Identity', 'nn.MaxPool2d', 'nn.Flatten', 'nnx.Module', 'nnx.Linear', 'nnx.LayerNorm',
    'nnx.RMSNorm', 'nnx.Embed', 'nnx.identity', 'nnx.max_pool',
})  # fmt: skip

CODE_SPAN = re.compile(r'(`+)(.+?)\1', re.S)
LINK_TARGET = re.compile(r'\]\(([^)\s]+)')
DOTTED = re.compile(r'(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+')


@dataclasses.dataclass(frozen=True)
class Use:
    page: str
    line: int
    name: str

    def __str__(self) -> str:
        return f'{self.page}.md:{self.line}: {self.name}'


def short(dotted: str) -> str:
    """A dotted name as the book writes it: ``torch.nn.functional.gelu`` -> ``F.gelu``."""
    for long, brief in SHORT:
        if dotted.startswith(long):
            return brief + dotted.removeprefix(long)
    return dotted


def is_api(name: str) -> bool:
    return name.startswith('.') or ('.' in name and name.split('.')[0] in ROOTS)


def explained_in(prose: str) -> set[str]:
    """The API names that prose names: in code spans, and in the targets of its links
    (``...#flax.nnx.scan``, ``.../torch.func.grad.html``)."""
    found = set()
    spans = [match[2] for match in CODE_SPAN.finditer(prose)]
    targets = [target.removesuffix('.html') for target in LINK_TARGET.findall(prose)]
    for text in spans + targets:
        found |= {short(name) for name in DOTTED.findall(text)}
        found |= {f'.{name}' for name in METHODS if re.search(rf'\.{name}\b', text)}
    return found


def imported(tree: ast.AST, aliases: dict[str, str]) -> None:
    """Add the names a cell's imports bind to ``aliases`` (name -> dotted path)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    aliases.setdefault(alias.name.split('.')[0], alias.name.split('.')[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f'{node.module}.{alias.name}'


def used_in(source: str, aliases: dict[str, str]) -> list[tuple[int, str]]:
    """(line in the cell, name) of every API name a code cell uses, in order; the cell's
    imports are added to ``aliases`` first."""
    tree = ast.parse(TransformerManager().transform_cell(source))  # IPython's % and ! lines
    imported(tree, aliases)
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in METHODS:
            if not (isinstance(node.value, ast.Name) and node.value.id == 'self'):
                found.append((node.lineno, f'.{node.attr}'))
        if id(node) in inner or not isinstance(node, ast.Attribute | ast.Name):
            continue
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in aliases and (parts or node.id not in ALIASES):
            name = short('.'.join([aliases[node.id], *reversed(parts)]))
            if is_api(name) and not name.startswith('.'):
                found.append((node.lineno, name))
    return sorted(set(found))


def code_line(path_lines: list[str], cell: SourceCell) -> int:
    """The Markdown line (from 1) of a code cell's first line of code."""
    first = cell.source.split('\n')[0]
    for number in range(cell.line + 1, len(path_lines) + 1):
        if path_lines[number - 1] == first:
            return number
    return cell.line


def prose_of(layout: Layout, page: str, is_section: bool) -> list[SourceCell]:
    if is_section:
        return list(read_section(layout, page).cells)
    text = layout.source(page).read_text(encoding='utf-8')
    return [SourceCell(0, 'markdown', text, {}, 1)]


def unexplained(layout: Layout) -> list[Use]:
    """The first use of every API name that is neither allowed nor explained before."""
    pages = book_pages(layout)
    order = [page for page in toc_pages(layout, GENERATED_PAGES) if page in pages]
    explained = set(ALLOWED)
    for bridge in BRIDGES:
        if bridge in pages:
            for cell in prose_of(layout, bridge, pages[bridge]):
                if cell.cell_type == 'markdown':
                    explained |= explained_in(cell.source)
    seen: set[str] = set()
    missing = []
    for page in order:
        if page in SKIPPED:
            continue
        cells = prose_of(layout, page, pages[page])
        lines = layout.source(page).read_text(encoding='utf-8').split('\n')
        aliases = dict(ALIASES)
        waiting: list[Use] = []  # used in the cells since the last prose
        for cell in cells:
            if cell.cell_type == 'markdown':
                explained |= explained_in(cell.source)
                missing += [use for use in waiting if use.name not in explained]
                waiting = []
                continue
            if 'claim' in cell.tags:
                continue
            start = code_line(lines, cell)
            for line, name in used_in(cell.source, aliases):
                if name not in seen and name not in explained:
                    waiting.append(Use(page, start + line - 1, name))
                seen.add(name)
        missing += [use for use in waiting if use.name not in explained]
    return missing


def test_every_api_is_explained_at_first_use():
    missing = unexplained(Layout())
    assert not missing, (
        'these names are used before the prose explains them or links their docs; say what '
        'each does in the prose before it (or right under the twins), or on a bridge page:\n'
        + '\n'.join(map(str, missing))
    )


# ------------------------------------------------------------- the collector itself


def test_names_are_collected_with_their_modules():
    aliases = dict(ALIASES)
    source = (
        '!ls\n'
        'nnx.scan(f); xp = jnp\n'
        'from jax.flatten_util import ravel_pytree\n'
        'import torch.nn.functional\n'
        'y = torch.nn.functional.gelu(F.silu(x)) + torch.func.grad(f)(x)\n'
        'flat, _ = ravel_pytree(params)\n'
        'for block in nnx.Sequential(a, b).layers:\n'
        '    logits = self.token_emb.attend(self.attend(h)) @ jnp.ones(3)\n'
    )
    assert used_in(source, aliases) == [
        (2, 'nnx.scan'),
        (5, 'F.gelu'),
        (5, 'F.silu'),
        (5, 'torch.func.grad'),
        (6, 'jax.flatten_util.ravel_pytree'),
        (7, '.layers'),
        (7, 'nnx.Sequential'),
        (8, '.attend'),
    ]


def test_prose_explains_code_spans_and_links():
    prose = (
        'The stack runs with `nnx.scan(step, in_axes=(nnx.Carry, 0))`; '
        '`stack.layers` lists the blocks, `torch.nn.functional.gelu` is GELU, and '
        '[a link](https://docs.pytorch.org/docs/stable/generated/torch.func.grad.html) '
        'and [another](https://flax.readthedocs.io/en/latest/api.html#flax.nnx.vmap) too. '
        'Plain nnx.jit is not in a code span.'
    )
    found = explained_in(prose)
    assert {'nnx.scan', 'nnx.Carry', '.layers', 'F.gelu', 'torch.func.grad', 'nnx.vmap'} <= found
    assert 'nnx.jit' not in found


@pytest.fixture
def book(project):
    """A small book: a bridge page, then a section of prose and code cells."""
    project.section(
        'jax-to-nnx',
        '# Bridge\n\n`nnx.grad` differentiates a model.\n',
        project.code('g = nnx.grad(loss)(model)'),
    )
    project.layout.toc.write_text(
        'format: jb-book\nroot: jax-to-nnx\nchapters:\n  - file: ch/section\n'
    )
    return project


def test_explained_before_use_passes(book):
    code = book.code
    book.section(
        'ch/section',
        '# A section\n\n`nnx.scan` runs one block after the other.\n',
        code('H = nnx.scan(f)(H)\ng = nnx.grad(loss)(model)'),
        code('x = torch.randn(2)', 'pytorch', 'claim', 'remove-cell'),
        code('y = nnx.vmap(f)(x)', 'jax', 'claim', 'remove-cell'),
    )
    assert unexplained(book.layout) == []


def test_explained_right_under_the_twins_passes(book):
    code = book.code
    book.section(
        'ch/section',
        '# A section\n',
        code('y = torch.func.vmap(f)(x)', 'pytorch'),
        code('y = nnx.vmap(f)(x)', 'jax'),
        'Here `torch.func.vmap` and `nnx.vmap` map `f` over the rows.\n',
    )
    assert unexplained(book.layout) == []


def test_used_before_it_is_explained_fails(book):
    code = book.code
    path = book.section(
        'ch/section',
        '# A section\n\nA first cell.\n',
        code('import math', 'pytorch'),
        code('stack = nnx.Sequential(a, b)', 'jax'),
        'Some prose.\n',
        code('x = 1', 'pytorch'),
        code('y = nnx.vmap(f)(stack.layers)', 'jax', 'hide-cell'),
        'Only now: `nnx.vmap` and `.layers`.\n',
        code('y = nnx.vmap(f)(x)'),
        'And `nnx.Sequential` at last.\n',
    )
    line = path.read_text().split('\n').index('stack = nnx.Sequential(a, b)') + 1
    assert [str(use) for use in unexplained(book.layout)] == [
        f'ch/section.md:{line}: nnx.Sequential'
    ]


def test_hidden_cells_count_and_claims_do_not(book):
    code = book.code
    book.section(
        'ch/section',
        '# A section\n',
        code('x = torch.func.grad(f)(x)', 'pytorch', 'claim', 'remove-cell'),
        code('x = nnx.value_and_grad(f)(x)', 'jax', 'claim', 'remove-cell'),
        'Prose.\n',
        code('x = torch.func.grad(f)(x)', 'pytorch', 'hide-cell'),
        code('x = nnx.value_and_grad(f)(x)', 'jax', 'hide-cell'),
        'More prose.\n',
    )
    names = [use.name for use in unexplained(book.layout)]
    assert names == ['torch.func.grad', 'nnx.value_and_grad']


def test_the_bridge_explains_for_the_whole_book(book):
    book.section('ch/section', '# A section\n', book.code('g = nnx.grad(f)(model)'))
    assert unexplained(book.layout) == []


def test_the_collector_reads_the_real_book():
    """The walk reaches the chapter: names the issue named are among those it collects."""
    layout = Layout()
    aliases = dict(ALIASES)
    names = set()
    for cell in read_section(layout, 'transformer-block/casebook').cells:
        if cell.cell_type == 'code' and 'claim' not in cell.tags:
            names |= {name for _, name in used_in(cell.source, aliases)}
    assert {'nnx.scan', 'nnx.vmap', 'nnx.update', 'nnx.state', 'nnx.Carry'} <= names
