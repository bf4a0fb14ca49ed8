"""What the build adds to its kernels, and what importing the build leaves alone."""

import subprocess
import sys

import pytest

from tools.run.kernel import STARTUP_LINE

# A fresh interpreter with an IPython shell, as a kernel has: the build's start-up runs,
# then a cell plots with d2l_mini and ends (IPython's post_execute event).
CELL = f"""
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_cell({STARTUP_LINE!r}, store_history=False)
print(sorted(name for name in shell.user_ns if not name.startswith('_')
             and name not in shell.user_ns_hidden))
shown = []  # what the cell displays, as a front end would receive it
shell.display_pub.publish = lambda data, *args, **kwargs: shown.append(data)
from d2l_mini import torch as d2l
d2l.plot([1, 2, 3], xlabel='step', ylabel='loss')
shell.events.trigger('post_execute')
print(sorted(shown[0]))
print(shown[0]['text/plain'])
"""


def fresh_python(script, **env):
    result = subprocess.run(
        [sys.executable, '-c', script],
        capture_output=True,
        text=True,
        check=False,
        env={'PATH': '/usr/bin:/bin', **env},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


@pytest.mark.slow
def test_the_build_s_kernels_store_svg_png_and_alt_text():
    backend = 'module://matplotlib_inline.backend_inline'
    names, formats, plain = fresh_python(CELL, MPLBACKEND=backend)[-3:]
    assert names == '[]', 'the start-up left names in the notebook namespace'
    assert formats == repr(['image/png', 'image/svg+xml', 'text/plain'])
    assert plain == 'Line plot of loss against step'


def test_importing_the_build_changes_no_other_module():
    script = """
import sys
before = dict(sys.modules)
import tools, tools.run.execute
print(sorted(name for name, module in sys.modules.items()
             if module is None and before.get(name, 0) is not None))
"""
    assert fresh_python(script, PYTHONPATH='.')[-1] == '[]'


def test_reading_a_notebook_compiles_no_iri_grammar():
    """jsonschema compiles rfc3987-syntax's grammar on import (seconds in every process
    that reads a notebook) when that package is installed; nothing the book needs
    installs it."""
    script = 'import sys, nbformat; print("rfc3987_syntax" in sys.modules)'
    assert fresh_python(script)[-1] == 'False'
