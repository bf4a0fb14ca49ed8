"""The book's Sphinx extension, ``tools.site.render_ext`` in _config.yml: it sets up the
modules of tools/site/ext/, each a Sphinx extension with one job.

- ``settings``: the ``book_frameworks`` and ``notebooks_branch`` settings, and reading them.
- ``notebook_links``: under the title of each notebook page, its PyTorch and JAX
  notebooks (download, "Open in Colab").
- ``download_links``: the ``{book-downloads}`` directive (the PDFs, the notebooks' zips).
- ``framework_css``: the framework table for the tab script and the style rules that
  name a framework (``_static/frameworks-table.css``).
- ``code_cells``: code cells' HTML, with the links of ``library_links`` (each
  ``d2l.<name>`` to its entry on the d2l_mini reference page) and the twin cells' rows
  for the side-by-side view (tools/site/twins.py).
- ``image_alt``: alt texts for the images of notebook outputs.
- ``accessibility``: names and roles where the theme's, docutils' and myst-nb's HTML
  lack them.
- ``write_all``: every page written on every build, also by a quick render, which reads
  only the pages that changed.

tools/site/render.py puts the repository on Sphinx's path, so that Sphinx imports these
modules from the tools that build the site. MathJax is the sphinx-mathjax-offline
extension's (listed in _config.yml): it copies MathJax 3 into ``_static/mathjax``, so
that the book reads without a network.
"""

from __future__ import annotations

from sphinx.application import Sphinx

MODULES = (
    'settings',
    'notebook_links',
    'download_links',
    'framework_css',
    'code_cells',
    'image_alt',
    'accessibility',
    'write_all',
)


def setup(app: Sphinx) -> dict:
    for module in MODULES:
        app.setup_extension(f'tools.site.ext.{module}')
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
