"""The functions that the steps run in the page (tools/site/js/*.js): each file is one
JavaScript function, written as an expression, as Playwright's ``evaluate`` takes it.

Node.js parses and evaluates each, wrapped in parentheses so that anything but a single
expression fails, and as Playwright evaluates it (``eval`` of the trimmed text), and
checks that both give a function (nothing of it runs: no page here).
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tools.site import pdf, screenshot
from tools.site.browser import SCRIPTS

NODE = shutil.which('node')
needs_node = pytest.mark.skipif(NODE is None, reason='Node.js is not installed')
# What node runs: the file's text as one expression, then as Playwright evaluates it;
# each must give a function.
WRAPPER = """const script = (
{text}
);
const evaluated = eval({quoted}.trim());
for (const value of [script, evaluated]) {{
  if (typeof value !== 'function') {{
    throw new TypeError('not a function but a ' + typeof value);
  }}
}}
"""


def check(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    text = path.read_text(encoding='utf-8')
    wrapped = tmp_path / f'wrapped-{path.name}'
    wrapped.write_text(WRAPPER.format(text=text, quoted=json.dumps(text)), encoding='utf-8')
    return subprocess.run([NODE, str(wrapped)], capture_output=True, text=True, timeout=60)


def test_every_script_is_one_that_a_step_runs():
    used = {*pdf.SCRIPTS, screenshot.SCROLL_TO_FIGURE}
    assert {path.stem for path in SCRIPTS.glob('*.js')} == used


@needs_node
@pytest.mark.parametrize('path', sorted(SCRIPTS.glob('*.js')), ids=lambda path: path.name)
def test_each_script_is_one_function(path, tmp_path):
    result = check(path, tmp_path)
    assert result.returncode == 0, f'{path}:\n{result.stderr}'


@needs_node
@pytest.mark.parametrize(
    'text, error',
    [
        ('() => {\n  return [1, 2;\n}', 'SyntaxError'),
        ('const x = 1;\n() => x', 'SyntaxError'),
        ("'a string'", 'not a function'),
    ],
)
def test_the_check_fails_on_what_is_not_one_function(text, error, tmp_path):
    broken = tmp_path / 'broken.js'
    broken.write_text(text)
    result = check(broken, tmp_path)
    assert result.returncode != 0 and error in result.stderr
