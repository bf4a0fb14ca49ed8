"""The schematic figures in book/img are what their committed scripts draw."""

import importlib

import pytest

from tools.paths import ROOT


@pytest.mark.parametrize(
    'module',
    sorted(f'tools.figures.{path.stem}' for path in (ROOT / 'tools' / 'figures').glob('*.py')),
)
def test_committed_svg_matches_its_script(module):
    script = importlib.import_module(module)
    drawn = script.svg()
    assert drawn == script.svg(), 'drawing twice gives two different files'
    assert script.OUT.read_text(encoding='utf-8') == drawn, (
        f'{script.OUT.relative_to(ROOT)} is out of date: run `make figures`'
    )
    assert drawn.startswith('<svg') and drawn.rstrip().endswith('</svg>')
