"""Every page written on every build, also when Sphinx read only the pages that changed.

A quick render (tools/site/render.py) reuses Sphinx's environment and reads again only
the pages that changed; Sphinx would then write only those, and an unchanged page would
keep the HTML of the last build: a link titled with a heading since renamed, a figure's
old number, a reference to a label since removed. Written again, it resolves its
references, numbers and titles against the pages as they are now, and a reference that
no longer resolves fails the build (-n -W), as in a build from scratch.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment


def every_page(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """The pages to write besides those read again: all of them."""
    return sorted(env.found_docs)


def setup(app: Sphinx) -> dict:
    app.connect('env-get-updated', every_page)
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
