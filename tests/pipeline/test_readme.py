"""The versions the README quotes are those of their one home: the pins of
requirements.txt and the lower bounds of pyproject.toml's extras."""

import re

from packaging.version import Version

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


def test_the_versions_table_quotes_the_lower_bounds_of_pyproject():
    layout = Layout()
    bounds = minimum_versions('pytorch', layout) | minimum_versions('jax', layout)
    rows = re.findall(r'^\| ([\w, -]+?) \| ([\d.]+) \|', README.read_text(encoding='utf-8'), re.M)
    lowest = {name: version for names, version in rows for name in names.split(', ')}
    assert lowest, 'the README has no Versions table with a lowest column'
    for name, bound in bounds.items():
        assert Version(lowest[name]) == Version(bound), name
