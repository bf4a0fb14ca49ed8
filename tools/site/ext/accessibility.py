"""Accessible names and roles where the theme's, docutils' and myst-nb's HTML lack them.

- Each collapsible entry of the sidebar's table of contents gets a name: its
  ``<summary>`` holds only an icon (a wrapper of the theme's toctree function).
- The bibliography's entries are list items of its ``role="list"`` (docutils' citation
  node, written again).
- myst-nb's toggles of hidden cell sources are named by their visible text (its
  HideCodeCellNode, written again).

Each is checked against the installed versions by tests/pipeline/test_render.py, which
fails when the upstream HTML has changed (and the fix may be dropped).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from bs4 import BeautifulSoup, Tag
from docutils import nodes
from sphinx.application import Sphinx

if TYPE_CHECKING:
    from myst_nb.sphinx_ import HideCodeCellNode
    from sphinx.writers.html5 import HTML5Translator


def name_toc_toggles(toctree: Tag | str) -> Tag | str:
    """Name each sidebar <summary> that holds only its chevron icon after the entry it
    expands. `toctree`: the theme's toctree, a BeautifulSoup (changed in place) or HTML."""
    soup = toctree if isinstance(toctree, Tag) else BeautifulSoup(toctree or '', 'html.parser')
    for summary in soup.select('li > details > summary'):
        link = summary.parent.find_previous_sibling('a')
        if summary.get_text(strip=True) or summary.has_attr('aria-label') or link is None:
            continue
        summary['aria-label'] = f'Sections of {link.get_text(" ", strip=True)}'
    return toctree if isinstance(toctree, Tag) else str(soup)


def with_named_toc_toggles(generate: Callable[..., str]) -> Callable[..., str]:
    def generate_named(*args: object, **kwargs: object) -> str:
        return name_toc_toggles(generate(*args, **kwargs))

    return generate_named


def name_theme_toc_toggles(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: nodes.document | None
) -> None:
    """The sidebar's toggles get their names as the theme's toctree function writes them.

    pydata-sphinx-theme (0.17) makes each collapsible entry of the sidebar a <details>
    whose <summary> holds only a presentational chevron (its toctree.py, since
    pydata/pydata-sphinx-theme#1582): a control without a name, which axe-core's
    summary-name rule (dequelabs/axe-core#4510) reports. No template or option of the
    theme names it, so the function it puts into the page context is wrapped.
    """
    if 'generate_toctree_html' in context:
        context['generate_toctree_html'] = with_named_toc_toggles(context['generate_toctree_html'])


def visit_citation(self: HTML5Translator, node: nodes.citation) -> None:
    """docutils' citation, as a list item of the citation list.

    docutils (0.21, writers/_html_base.py) gives each entry the role doc-biblioentry,
    which DPUB-ARIA 1.1 deprecates (w3c/dpub-aria#22): it is no valid child of the
    ``role="list"`` around the entries, so the list would have no items. The entry is a
    listitem instead; depart_citation stays docutils'.
    """
    if not isinstance(node.previous_sibling(), type(node)):
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, 'div', classes=[node.tagname], role='listitem'))


def visit_hidden_cell(self: HTML5Translator, node: HideCodeCellNode) -> None:
    """myst-nb's toggle of a hidden cell, named by its visible text.

    myst-nb (1.4, sphinx_.py) labels the toggle's <summary> "Toggle hidden content",
    which does not hold its visible text ("Show code cell source"): a name that must
    contain the visible label (WCAG 2.5.3). Without the label the name is that text;
    everything else is myst-nb's markup, and its depart_HideCellInput closes it.
    """
    classes = ' '.join(node['classes'])
    self.body.append(f'<details class="admonition hide {classes}">\n')
    self.body.append('<summary>\n')
    for state, prompt in (('collapsed', node['prompt_show']), ('expanded', node['prompt_hide'])):
        self.body.append(f'<p class="{state} admonition-title">{html.escape(prompt)}</p>\n')
    self.body.append('</summary>\n')


def setup(app: Sphinx) -> dict:
    # Here, not with the module, which tests import for its functions without myst-nb's
    # Sphinx side.
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    # After the theme put its functions into the page context (default priority 500).
    app.connect('html-page-context', name_theme_toc_toggles, priority=900)
    # The HTML of these nodes, in place of docutils' and myst-nb's: myst_nb is listed
    # before this extension in _config.yml, so this registration comes last and wins.
    app.add_node(nodes.citation, override=True, html=(visit_citation, None))
    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_HideCellInput))
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
