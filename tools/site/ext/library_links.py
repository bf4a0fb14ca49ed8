"""Links from each use of a library name in a code cell (``d2l.train_lm``) to that
name's entry on the d2l_mini reference page (book/d2l-mini.md).

The reference page is made by autodoc, so each public name already has an entry with an
id, its full name (``d2l_mini.torch.train_lm``, or ``d2l_mini.data.Vocab`` for the
framework-free helpers both modules re-export), recorded in Sphinx's Python domain.
``d2l`` in a cell is the module of the cell's framework (tools/frameworks.py): a name
links to that module's entry, else to the one helper module's that documents it.

The post-transform LinkLibraryNames gives each code cell's source the targets of the
names it uses (the formatter option ``d2l_links``: name -> {framework: href}); the
Pygments formatter of tools/site/ext/code_cells.py wraps each use in a link
(link_library_names). A cell of one framework links to that framework's entries; an
untagged cell, shown once for both, links to the first framework's and carries the
others in ``data-fw-hrefs``, which a small script follows when another framework is
selected. A name that has no entry fails the build (a warning, under -W); a book
without a reference page links nothing.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence

from docutils import nodes
from pygments.lexers import PythonLexer
from pygments.token import Name, Operator
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from tools.frameworks import TABLE
from tools.site import twins
from tools.site.ext.settings import frameworks

logger = logging.getLogger(__name__)

ALIAS = 'd2l'  # what the cells import their framework's module as
PACKAGE = 'd2l_mini'
LINKS_OPTION = 'd2l_links'  # the formatter option (highlight_args) with a cell's targets
LINK_CLASS = 'reference internal d2l-ref'
# A use of a library name in Pygments' HTML of one line: d2l, the dot, the name.
NAME_USE = re.compile(
    rf'<span class="n\w*">{ALIAS}</span><span class="o">\.</span>'
    r'<span class="n\w*">(\w+)</span>'
)
# Chooses, where a link carries data-fw-hrefs, the target of the framework shown.
FOLLOW_SCRIPT = """\
['click', 'auxclick', 'contextmenu'].forEach(function (type) {
  document.addEventListener(type, function (event) {
    var link = event.target.closest && event.target.closest('a[data-fw-hrefs]');
    if (!link) return;
    var hrefs = JSON.parse(link.getAttribute('data-fw-hrefs'));
    for (var name in hrefs) {
      if (document.documentElement.classList.contains('fw-' + name)) {
        link.setAttribute('href', hrefs[name]);
      }
    }
  });
});"""


def framework_modules() -> dict[str, str]:
    """Each framework's d2l_mini module: ``{'pytorch': 'd2l_mini.torch', ...}``."""
    return {fw.name: f'{PACKAGE}.{fw.module.removesuffix(".py")}' for fw in TABLE}


def entry_name(
    name: str, module: str, documented: Collection[str], shared: Sequence[str]
) -> str | None:
    """The full name of ``d2l.<name>``'s entry, where ``d2l`` is ``module``: the module's
    own entry, else that of the first of the ``shared`` helper modules that documents
    the name; None when ``documented`` (the full names on the page) has neither."""
    for home in (module, *shared):
        if f'{home}.{name}' in documented:
            return f'{home}.{name}'
    return None


def names_used(source: str) -> Iterator[str]:
    """The library names that a cell's source uses (``d2l.<name>``), as Python's lexer
    sees them: not in strings or comments."""
    window: list[tuple[object, str]] = []
    for token, text in PythonLexer().get_tokens(source):
        window = [*window[-2:], (token, text)]
        if len(window) == 3:
            (t1, v1), (t2, v2), (t3, v3) = window
            if t1 in Name and v1 == ALIAS and t2 in Operator and v2 == '.' and t3 in Name:
                yield v3


def link_library_names(line_html: str, links: Mapping[str, Mapping[str, str]]) -> str:
    """Pygments' HTML of one line of code with each ``d2l.<name>`` whose name ``links``
    holds ({framework: href}, the first framework's target first) wrapped in a link to
    it. Names that ``links`` lacks are left as they are."""

    def link(use: re.Match) -> str:
        targets = links.get(use[1])
        if not targets:
            return use[0]
        hrefs = list(dict.fromkeys(targets.values()))
        attributes = f'class="{LINK_CLASS}" href="{html.escape(hrefs[0])}"'
        if len(hrefs) > 1:
            attributes += f' data-fw-hrefs="{html.escape(json.dumps(dict(targets)))}"'
        return f'<a {attributes}>{use[0]}</a>'

    return NAME_USE.sub(link, line_html)


class LinkLibraryNames(SphinxPostTransform):
    """The targets of the library names that each code cell uses (LINKS_OPTION), on the
    reference page that autodoc made of d2l_mini; a warning for a name it lacks."""

    default_priority = 400
    formats = ('html',)

    def run(self, **kwargs: object) -> None:
        entries = {
            full: entry
            for full, entry in self.env.get_domain('py').objects.items()
            if full.startswith(f'{PACKAGE}.')
        }
        if not entries:
            return  # no reference page in this book
        modules = framework_modules()
        table = [name for name, _ in frameworks(self.config)]
        # The framework-free modules whose names the page documents (d2l_mini.data, ...).
        homes = {full.rsplit('.', 1)[0] for full in entries if full.count('.') == 2}
        shared = sorted(homes - set(modules.values()))
        builder = self.app.builder
        for cell in list(self.document.findall(nodes.container)):
            if cell.get('nb_element') != 'cell_code':
                continue
            block = twins.cell_source(cell)
            if block is None:
                continue
            framework = twins.cell_framework(cell, table)
            runs_in = [framework] if framework else table
            links = {}
            for name in dict.fromkeys(names_used(block.rawsource)):
                targets = {}
                for fw in runs_in:
                    full = entry_name(name, modules[fw], entries, shared)
                    if full is None:
                        logger.warning(
                            '%s.%s in a %s cell has no entry on the d2l_mini reference '
                            'page: none of %s documents %s',
                            ALIAS,
                            name,
                            fw,
                            ', '.join((modules[fw], *shared)),
                            name,
                            location=block,
                        )
                        break
                    entry = entries[full]
                    page = builder.get_relative_uri(self.env.docname, entry.docname)
                    targets[fw] = f'{page}#{entry.node_id}'
                else:
                    links[name] = targets
            if links:
                block['highlight_args'] = {**block.get('highlight_args', {}), LINKS_OPTION: links}


def setup(app: Sphinx) -> dict:
    app.setup_extension('tools.site.ext.settings')
    app.add_post_transform(LinkLibraryNames)
    app.add_js_file(None, body=FOLLOW_SCRIPT)
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
