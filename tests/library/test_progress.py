"""d2l.progress: a bar where readers run the code, none in the book's build."""

import importlib
import io
import os
import subprocess
import sys
import warnings
from typing import ClassVar

import pytest
from tqdm import std

from d2l_mini import progress as progress_module
from tools.paths import ROOT, Layout
from tools.run.kernel import kernel_environment
from tools.run.settings import read_settings

# A loop of three steps with a bar shown at once, in a plain Python; prints how many it
# counted (a disabled bar counts nothing) and whether IPython was imported.
LOOP = (
    'import sys\n'
    'from d2l_mini.progress import progress\n'
    "bar = progress(range(3), desc='steps', delay=0)\n"
    'for _ in bar: pass\n'
    "print('counted', bar.n, 'IPython' in sys.modules)\n"
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
    assert silenced.stdout.strip() == 'counted 0 False'
    assert silenced.stderr == ''


def test_without_the_kernel_environment_the_bar_shows():
    env = {k: v for k, v in os.environ.items() if not k.startswith('TQDM_')}
    shown = run_loop(env)
    assert shown.stdout.strip() == 'counted 3 False'
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


class Display:
    """Stands in for IPython's ``display``: keeps what each display output showed, in
    order, as a front end would show it (``update_display_data`` replaces it)."""

    def __init__(self, monkeypatch):
        import IPython.display

        self.outputs = []  # one list of shown texts per display output
        monkeypatch.setattr(IPython.display, 'display', self.display)

    def display(self, data, raw, display_id):
        assert raw and display_id is True and set(data) == {'text/plain'}
        shown = [data['text/plain']]
        self.outputs.append(shown)

        class Handle:
            def update(self, data, raw):
                assert raw and set(data) == {'text/plain'}
                shown.append(data['text/plain'])

        return Handle()


def in_a_kernel(monkeypatch):
    """As in a Jupyter kernel (with ipywidgets or without: it makes no difference),
    with bars shown; returns the stand-in for IPython's display."""
    monkeypatch.setattr(progress_module, 'in_jupyter_kernel', lambda: True)
    monkeypatch.delenv('TQDM_DISABLE', raising=False)
    return Display(monkeypatch)


def test_in_a_kernel_a_bar_is_one_display_updated_in_place_that_keeps_its_last_line(
    monkeypatch, capsys
):
    """No widget (a front end without ipywidgets' extension freezes it), nothing on
    stderr (a strip a front end cannot overwrite), and a redraw at most once a second:
    a loop of a thousand quick steps updates its output a few times."""
    display = in_a_kernel(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        bar = progress_module.progress(range(1000), desc='steps', delay=0)
        assert type(bar) is std.tqdm and bar.mininterval == progress_module.TEXT_REFRESH_S
        for _ in bar:
            pass
    [shown] = display.outputs
    assert 2 <= len(shown) <= 4, shown
    assert shown[0].startswith('steps:   0%') and '0/1000' in shown[0]
    assert shown[-1].startswith('steps: 100%') and shown[-1].endswith(']')
    assert '1000/1000' in shown[-1]
    assert not any('\r' in line or '\n' in line for line in shown)
    assert capsys.readouterr() == ('', '')


def test_in_a_kernel_a_bar_that_does_not_leave_empties_its_output(monkeypatch, capsys):
    display = in_a_kernel(monkeypatch)
    with progress_module.progress(
        total=5, desc='training', delay=0, mininterval=0, leave=False
    ) as bar:
        for _ in range(5):
            bar.update(1)
    [shown] = display.outputs
    assert shown[0].startswith('training:   0%') and any('5/5' in line for line in shown)
    assert shown[-1] == ''
    assert capsys.readouterr() == ('', '')


def test_in_a_kernel_a_quick_or_disabled_loop_makes_no_output(monkeypatch):
    display = in_a_kernel(monkeypatch)
    assert sum(progress_module.progress(range(100), desc='quick')) == 4950
    with progress_module.progress(total=3, desc='quick', leave=False) as bar:
        bar.update(3)
    monkeypatch.setenv('TQDM_DISABLE', '1')
    bar = progress_module.progress(range(3), desc='off', delay=0)
    assert bar.disable and list(bar) == [0, 1, 2]
    assert display.outputs == []


def test_in_a_kernel_only_the_outer_of_nested_bars_shows(monkeypatch):
    """Inner bars (train_lm's, inside a sweep's) would each leave an output of their
    own: one output stays, the outer bar's."""
    display = in_a_kernel(monkeypatch)
    runs = progress_module.progress(range(3), desc='runs', delay=0, mininterval=0)
    for _ in runs:
        inner = progress_module.progress(range(50), desc='training', delay=0, leave=False)
        assert inner.disable
        for _ in inner:
            pass
    [shown] = display.outputs
    assert shown[-1].startswith('runs: 100%') and '3/3' in shown[-1]
    after = progress_module.progress(range(2), desc='next', delay=0)
    assert not after.disable  # the outer bar is closed: a new loop shows again
    list(after)
    assert len(display.outputs) == 2


def test_the_display_line_shows_the_line_tqdm_writes(monkeypatch):
    """tqdm writes '\\r' and the line, padded with spaces to the last one's length;
    a newline ends a line (it stays), a blank line clears it."""
    display = in_a_kernel(monkeypatch)
    line = progress_module.DisplayLine()
    line.write('')
    line.write('\r' + ' ' * 5)
    assert display.outputs == [], 'nothing to show yet: no output'
    line.write('\rloop:  50%|#  | 1/2')
    line.write('\rloop: 100%|## | 2/2')
    line.flush()
    line.write('\n')
    line.write('\rnext  ')
    line.write('\x1b[A')  # tqdm's move up between nested bars draws nothing
    line.write('\r' + ' ' * 7)
    line.write('\r')
    assert display.outputs == [['loop:  50%|#  | 1/2', 'loop: 100%|## | 2/2', 'next', '']]


def test_outside_a_kernel_the_bar_is_tqdm_s_text_bar_on_stderr(capsys):
    assert not progress_module.in_jupyter_kernel()
    assert list(progress_module.progress(range(2), desc='loop', delay=0, disable=False))
    out, err = capsys.readouterr()
    assert out == '' and err.startswith('\rloop:   0%') and '2/2' in err


def test_the_bar_is_silenced_by_the_environment_unless_the_caller_says(monkeypatch):
    """tqdm's Jupyter bar passes disable=False over TQDM_DISABLE; ours gives the
    environment's setting to every bar, and a caller's ``disable`` still wins."""
    in_a_kernel(monkeypatch)
    monkeypatch.setenv('TQDM_DISABLE', '1')
    assert progress_module.progress(range(3), delay=0).disable
    monkeypatch.setenv('TQDM_DISABLE', '0')
    bar = progress_module.progress(range(3), delay=0)
    assert not bar.disable
    bar.close()


# A real kernel, as nbclient (and nbconvert, which uses it) runs a notebook: ipywidgets
# is installed there, as in a reader's JupyterLab.
KERNEL_CELLS = (
    'import time\nfrom d2l_mini.progress import progress',
    "for _ in progress(range(4), desc='kept', delay=0, mininterval=0):\n    time.sleep(0.05)",
    "with progress(total=3, desc='gone', delay=0, mininterval=0, leave=False) as bar:\n"
    '    for _ in range(3):\n'
    '        time.sleep(0.05)\n'
    '        bar.update(1)\n'
    "print('trained')",
)


@pytest.mark.slow
def test_in_a_real_kernel_a_bar_is_one_display_output_updated_in_place():
    import nbformat
    from nbclient import NotebookClient
    from nbformat import v4

    class Recording(NotebookClient):
        messages: ClassVar[list] = []

        def process_message(self, msg, cell, cell_index):
            self.messages.append((cell_index, msg['msg_type'], msg['content']))
            return super().process_message(msg, cell, cell_index)

    notebook = v4.new_notebook(cells=[v4.new_code_cell(c) for c in KERNEL_CELLS])
    env = {k: v for k, v in os.environ.items() if not k.startswith('TQDM_')}
    env['PYTHONPATH'] = str(ROOT)
    client = Recording(notebook, kernel_name='python3', timeout=120)
    client.execute(env=env)
    for index in (1, 2):
        kinds = [kind for cell, kind, _ in client.messages if cell == index]
        assert kinds.count('display_data') == 1 and 'update_display_data' in kinds, kinds
        assert 'stream' not in kinds or index == 2
        assert not [
            content
            for cell, kind, content in client.messages
            if cell == index and kind == 'stream' and content['name'] == 'stderr'
        ]
    # What the notebook keeps, as nbconvert saves it: the final state of each output.
    [kept] = notebook.cells[1].outputs
    assert kept['output_type'] == 'display_data' and set(kept['data']) == {'text/plain'}
    final = kept['data']['text/plain']
    assert final.startswith('kept: 100%') and '4/4' in final
    gone, printed = notebook.cells[2].outputs
    assert gone['output_type'] == 'display_data' and gone['data'] == {'text/plain': ''}
    assert printed['output_type'] == 'stream' and printed['text'] == 'trained\n'
    nbformat.validate(notebook)
