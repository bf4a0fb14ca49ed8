"""Alt texts for the images of notebook outputs.

An image output gets its output's ``text/plain`` as alt text when that describes the
image (d2l_mini.plotting makes a figure's text/plain say what it plots: "Line plot of
training loss against step: SwiGLU, GELU"), and a generic one when it is only a Python
repr (``<Figure size ...>``). myst-nb writes no alt text for outputs.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

PYTHON_REPR = re.compile(r'<.*>', re.DOTALL)
UNDESCRIBED_IMAGE = 'Image output of the code cell'


def output_description(bundle: nodes.Element) -> str | None:
    """The text/plain of a notebook output's mime bundle, unless it is a bare repr."""
    for child in bundle.children:
        if child.get('mime_type') == 'text/plain':
            text = ' '.join(child.astext().split())
            return None if PYTHON_REPR.fullmatch(text) else text or None
    return None


class ImageOutputAlt(SphinxPostTransform):
    """Alt text for the images of notebook outputs, from the text/plain of the output.

    Runs before myst-nb's SelectMimeType (priority 4), which keeps only the richest type
    of each output's mime bundle and so drops the text/plain.
    """

    default_priority = 3

    def run(self, **kwargs: object) -> None:
        for bundle in self.document.findall(nodes.container):
            if bundle.get('nb_element') != 'mime_bundle':
                continue
            alt = output_description(bundle) or UNDESCRIBED_IMAGE
            for image in bundle.findall(nodes.image):
                image.setdefault('alt', alt)


def setup(app: Sphinx) -> dict:
    app.add_post_transform(ImageOutputAlt)
    return {'version': '1.0', 'parallel_read_safe': True, 'parallel_write_safe': True}
