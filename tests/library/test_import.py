"""Importing d2l_mini changes nothing in the reader's process."""

import json
import subprocess
import sys

import pytest

# Each test starts a fresh Python that imports a framework (seconds each).
pytestmark = pytest.mark.slow

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
def test_plot_selects_svg_and_registers_nothing(module):
    """A reader's plot() shows figures as SVG and does nothing more: no IPython hook, and
    matplotlib's own text/plain for a figure (the build adds its alt text itself)."""
    script = """
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
from d2l_mini import {module} as d2l
d2l.plot([1, 2, 3], ylabel='loss')
from matplotlib import pyplot as plt
figure = plt.gcf()
data = shell.display_formatter.format(figure)[0]
print(sorted(data))
print(data['text/plain'].startswith('<Figure size'))
print([repr(callback) for callbacks in shell.events.callbacks.values()
       for callback in callbacks if 'd2l_mini' in getattr(callback, '__module__', '')])
""".replace('{module}', module)
    backend = 'module://matplotlib_inline.backend_inline'
    formats, plain, library_hooks = fresh_python(script, backend)[-3:]
    assert formats == repr(['image/svg+xml', 'text/plain'])
    assert plain == 'True'
    assert library_hooks == '[]'


@pytest.mark.parametrize('module', ['torch', 'jax'])
def test_the_library_imports_and_plots_without_ipython(module):
    """d2l_mini declares no IPython: in a plain Python it imports, plots and records a
    value (which has no page to go to there)."""
    script = """
import sys
sys.modules['IPython'] = None  # any import of IPython now fails
from d2l_mini import {module} as d2l
d2l.plot([1, 2, 3], ylabel='loss')
d2l.glue('answer', 42)
print('ran')
""".replace('{module}', module)
    assert fresh_python(script, 'Agg')[-1] == 'ran'


def test_a_bad_setting_fails_where_it_is_read_not_at_import():
    script = """
import os
os.environ['D2L_MINI_FULL_PROTOCOL'] = 'maybe'
from d2l_mini import torch, jax
try:
    from d2l_mini.settings import FULL_PROTOCOL
except ValueError as error:
    print(error)
"""
    assert fresh_python(script, 'Agg')[-1] == (
        "D2L_MINI_FULL_PROTOCOL='maybe': expected one of 1/true/yes/on or 0/false/no/off"
    )
