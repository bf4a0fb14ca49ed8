"""Importing d2l_mini changes nothing in the reader's process."""

import json
import subprocess
import sys

import pytest

# Run in a fresh interpreter that holds an IPython shell, as a notebook's kernel does:
# what the process looks like before and after the import, as JSON.
SNAPSHOT = """
import json, os, sys
import matplotlib
from IPython.core.interactiveshell import InteractiveShell
from matplotlib.figure import Figure

shell = InteractiveShell.instance()
{frameworks}  # what the frameworks themselves do on import is theirs
from d2l_mini import checks

def snapshot():
    plain = shell.display_formatter.formatters['text/plain']
    return {
        'os.environ': dict(os.environ),
        'matplotlib.rcParams': {key: repr(value) for key, value in matplotlib.rcParams.items()},
        'IPython hooks': {event: [repr(callback) for callback in callbacks]
                          for event, callbacks in shell.events.callbacks.items()},
        'IPython text/plain printers': sorted(map(repr, plain.type_printers)),
        'checks.RULES': sorted(checks.RULES),
    }

before = snapshot()
import d2l_mini.{module}
print(json.dumps(dict(before=before, after=snapshot())))
"""


FRAMEWORKS = {
    'torch': 'import torch, matplotlib.pyplot',
    'jax': 'import jax, optax, flax.nnx, matplotlib.pyplot',
}


def fresh_python(script, backend):
    """The lines that ``script`` prints in a fresh interpreter with matplotlib's
    ``backend`` and no other setting of this process's environment."""
    result = subprocess.run(
        [sys.executable, '-c', script],
        capture_output=True,
        text=True,
        check=False,
        env={'MPLBACKEND': backend, 'PATH': '/usr/bin:/bin'},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


@pytest.mark.parametrize('module', ['torch', 'jax'])
def test_importing_the_library_changes_no_global_state(module):
    script = SNAPSHOT.replace('{module}', module).replace('{frameworks}', FRAMEWORKS[module])
    states = json.loads(fresh_python(script, 'Agg')[-1])
    for what, before in states['before'].items():
        after = states['after'][what]
        if isinstance(before, dict):
            changed = {
                key for key in before.keys() | after.keys() if before.get(key) != after.get(key)
            }
        else:
            changed = set(before) ^ set(after)
        assert not changed, f'importing d2l_mini.{module} changed {what}: {sorted(changed)}'


@pytest.mark.parametrize('module', ['torch', 'jax'])
def test_use_svg_display_is_the_call_that_describes_figures(module):
    """The one explicit call that changes the kernel: figures then show as SVG and their
    text/plain is the words of ``describe``, which the HTML book uses as alt text."""
    script = """
from IPython.core.interactiveshell import InteractiveShell
from matplotlib import pyplot as plt
shell = InteractiveShell.instance()
from d2l_mini import {module} as d2l
figure = plt.figure()
figure.gca().plot([1, 2], [3, 4])
figure.gca().set_ylabel('loss')
before = shell.display_formatter.format(figure)[0].get('text/plain', '')
d2l.use_svg_display()
after = shell.display_formatter.format(figure)[0].get('text/plain', '')
print(repr(before)); print(repr(after))
""".replace('{module}', module)
    backend = 'module://matplotlib_inline.backend_inline'
    before, after = fresh_python(script, backend)[-2:]
    assert 'Line plot' not in before
    assert after == repr('Line plot of loss')
