"""The versions the README quotes are those of their one home: the pins of
requirements.txt and the lower bounds of pyproject.toml's extras."""

import re

from tools.paths import Layout
from tools.source.colab import minimum_versions, pinned_versions

README = Layout().root / 'README.md'
# `name==version` and `name[extra]==version`, as pip is given them.
PINNED = re.compile(r'\b([A-Za-z][\w.-]*)(?:\[[\w,]+\])?==([\w.+]+)')


def quoted_pins(text: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for name, version in PINNED.findall(text):
        found.setdefault(name.lower(), set()).add(version.split('+')[0])
    return found


def test_the_readme_quotes_the_pins_of_requirements_txt():
    quoted = quoted_pins(README.read_text(encoding='utf-8'))
    assert quoted, 'the README quotes no pin: drop this test'
    pins = pinned_versions(Layout())
    assert quoted == {name: {pins.get(name)} for name in quoted}


def test_a_pin_quoted_wrongly_is_found():
    assert quoted_pins('pip install "jax[cuda12]==0.1.0" torch==2.13.0+cpu') == {
        'jax': {'0.1.0'},
        'torch': {'2.13.0'},
    }


def test_the_readme_quotes_the_lower_bounds_of_pyproject():
    text = ' '.join(README.read_text(encoding='utf-8').split())
    layout = Layout()
    bounds = minimum_versions('pytorch', layout) | minimum_versions('jax', layout)
    quoted = re.search(
        r'lower bound in `pyproject.toml`\'s extras \(PyTorch ([\d.]+); Flax ([\d.]+)', text
    )
    assert quoted, 'the README no longer quotes the lower bounds: drop this test'
    assert quoted.groups() == (bounds['torch'], bounds['flax'])
