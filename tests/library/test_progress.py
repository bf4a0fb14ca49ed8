"""d2l.progress: a bar where readers run the code, none in the book's build."""

import importlib
import io
import os
import subprocess
import sys
import warnings

import pytest

from d2l_mini import progress as progress_module
from tools.paths import ROOT
from tools.run.kernel import kernel_environment
from tools.run.outputs import clean_text

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
    silenced = run_loop(kernel_environment(1))
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
    pytest.importorskip({'torch': 'torch', 'jax': 'flax'}[framework])
    d2l = importlib.import_module(f'd2l_mini.{framework}')
    assert d2l.progress is progress_module.progress and 'progress' in d2l.__all__


def in_a_kernel(monkeypatch, widgets):
    """As in a Jupyter kernel, with or without ipywidgets."""
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(progress_module, 'in_jupyter_kernel', lambda: True)
    monkeypatch.setattr(
        importlib.util,
        'find_spec',
        lambda name, *a: (
            (real_find_spec(name, *a) if widgets else None)
            if name == 'ipywidgets'
            else real_find_spec(name, *a)
        ),
    )


def test_a_kernel_with_ipywidgets_gets_the_widget(monkeypatch):
    from tqdm.notebook import tqdm as jupyter_bar

    in_a_kernel(monkeypatch, widgets=True)
    assert progress_module.bar_class() is jupyter_bar


def test_a_kernel_without_ipywidgets_gets_one_quiet_text_line(monkeypatch):
    """No TqdmWarning (tqdm.auto warns 'IProgress not found'), and a text bar that
    redraws at most once a second: a loop of a thousand quick steps draws a few times."""
    from tqdm import std

    in_a_kernel(monkeypatch, widgets=False)
    monkeypatch.delenv('TQDM_DISABLE', raising=False)
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        bar = progress_module.progress(range(1000), desc='steps', delay=0, file=out)
        assert type(bar) is std.tqdm and bar.mininterval == progress_module.TEXT_REFRESH_S
        for _ in bar:
            pass
    drawn = out.getvalue()
    assert drawn.count('\r') <= 3 and '\n' not in drawn.rstrip('\n')
    assert drawn.rsplit('\r', 1)[-1].startswith('steps: 100%')


def test_in_a_kernel_without_ipywidgets_only_the_outer_of_nested_bars_shows(monkeypatch):
    """Inner bars (train_lm's, inside a sweep's) would print a line at every redraw of
    the outer one: once carriage returns apply, one line per loop stays."""
    in_a_kernel(monkeypatch, widgets=False)
    monkeypatch.delenv('TQDM_DISABLE', raising=False)
    out = io.StringIO()
    runs = progress_module.progress(range(3), desc='runs', delay=0, file=out, mininterval=0)
    for _ in runs:
        inner = progress_module.progress(range(50), desc='training', delay=0, file=out)
        assert inner.disable
        for _ in inner:
            pass
    lines = [line for line in clean_text(out.getvalue()).split('\n') if line.strip()]
    assert len(lines) == 1 and lines[0].startswith('runs: 100%')
    after = progress_module.progress(range(2), desc='next', delay=0, file=out)
    assert not after.disable  # the outer bar is closed: a new loop shows again


def test_outside_a_kernel_the_bar_is_text():
    from tqdm import std

    assert not progress_module.in_jupyter_kernel()
    assert progress_module.bar_class() is std.tqdm


def test_the_jupyter_bar_is_silenced_too(monkeypatch):
    """tqdm's Jupyter bar passes disable=False over TQDM_DISABLE; ours does not."""
    in_a_kernel(monkeypatch, widgets=True)
    monkeypatch.setenv('TQDM_DISABLE', '1')
    assert progress_module.progress(range(3), delay=0).disable
    monkeypatch.setenv('TQDM_DISABLE', '0')
    assert not progress_module.progress(range(3), delay=0, display=False).disable
