"""d2l.progress: a bar where readers run the code, none in the book's build."""

import importlib
import io
import os
import subprocess
import sys

import pytest

from d2l_mini import progress as progress_module
from tools.paths import ROOT, Layout
from tools.run.kernel import kernel_environment
from tools.run.settings import read_settings

# A loop of three steps with a bar shown at once; prints how many it counted
# (a disabled bar counts nothing).
LOOP = (
    'import sys\n'
    'from d2l_mini.progress import progress\n'
    "bar = progress(range(3), desc='steps', delay=0, file=sys.stderr)\n"
    'for _ in bar: pass\n'
    "print('counted', bar.n)\n"
)


def run_loop(env: dict) -> subprocess.CompletedProcess:
    env = dict(env, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, '-c', LOOP],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def test_the_kernel_environment_silences_progress_bars():
    silenced = run_loop(kernel_environment(1, read_settings(Layout()).kernel_env))
    assert silenced.stdout.strip() == 'counted 0'
    assert silenced.stderr == ''


def test_without_the_kernel_environment_the_bar_shows():
    env = {k: v for k, v in os.environ.items() if not k.startswith('TQDM_')}
    shown = run_loop(env)
    assert shown.stdout.strip() == 'counted 3'
    assert 'steps' in shown.stderr and '3/3' in shown.stderr


def test_progress_counts_and_validates():
    out = io.StringIO()
    bar = progress_module.progress(range(4), desc='loop', delay=0, file=out, disable=False)
    assert list(bar) == [0, 1, 2, 3] and bar.n == 4
    assert 'loop' in out.getvalue() and '4/4' in out.getvalue()
    with pytest.raises(TypeError, match='desc must be a str'):
        progress_module.progress(range(2), desc=3)
    with pytest.raises(ValueError, match='total must be an int >= 0'):
        progress_module.progress(total=-1)


@pytest.mark.parametrize('framework', ['torch', 'jax'])
def test_both_frameworks_export_progress(framework):
    d2l = importlib.import_module(f'd2l_mini.{framework}')
    assert d2l.progress is progress_module.progress and 'progress' in d2l.__all__


def test_the_jupyter_bar_is_silenced_too(monkeypatch):
    """tqdm's Jupyter bar passes disable=False over TQDM_DISABLE; ours does not."""
    from tqdm.notebook import tqdm as jupyter_bar

    monkeypatch.setattr(progress_module, 'tqdm', jupyter_bar)
    monkeypatch.setenv('TQDM_DISABLE', '1')
    assert progress_module.progress(range(3), delay=0).disable
    monkeypatch.setenv('TQDM_DISABLE', '0')
    assert not progress_module.progress(range(3), delay=0, display=False).disable
