"""Claims: the results that the book's prose states, asserted by the run.

A claim cell holds its assertions in one ``with`` block::

    with d2l.claims():
        assert 0.5 < loss < 1.5, loss

The numbers of a training run differ between machines (other CPUs, thread
counts, a GPU) and library versions, so a window sized on one machine can miss
on another. What happens then depends on who runs the notebook:

* **The book's build** (``D2L_MINI_STRICT_CLAIMS=1``, which the build and CI
  set) stops at the failed assertion, as ``assert`` always does: the book is
  not published with a sentence its own run contradicts.
* **A reader** (the default) sees one line: the assertion the book makes, what
  this run gave and why the two can differ; the notebook goes on with its next
  cell. The rest of the block is skipped.
"""

import ast
import contextlib
import linecache
import sys
import textwrap
import traceback

from d2l_mini import settings

NOT_MET = 'Claim not met in this run'
WHY = (
    'results of training differ a little between machines, thread counts and library '
    'versions, so a window sized on the machine that made the book can miss here. '
    'The notebook goes on.'
)


def _statement(error):
    """The condition of the assert statement that raised ``error``, as its source."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    last = getattr(frame, 'end_lineno', None) or frame.lineno
    source = ''.join(linecache.getline(frame.filename, n) for n in range(frame.lineno, last + 1))
    source = textwrap.dedent(source)
    try:
        statement = ast.parse(source).body[0]
    except (SyntaxError, IndexError):
        return ' '.join(source.split()) or 'its assertion'
    if isinstance(statement, ast.Assert):
        return ' '.join(ast.get_source_segment(source, statement.test).split())
    return ' '.join(source.split())


@contextlib.contextmanager
def claims(*conditions, strict=None):
    """Check the assertions of one claim cell.

    The conditions are the ``assert`` statements inside the ``with`` block, so
    that a failed one can name its source; ``claims`` takes none itself.
    ``strict`` True re-raises a failed assertion (the build's behaviour); False
    prints one line naming it and lets the notebook go on (a reader's); None,
    the default, reads ``D2L_MINI_STRICT_CLAIMS`` from the environment.
    """
    if conditions:
        raise TypeError(
            f'claims() takes no condition, got {conditions[0]!r}: write each condition as '
            "an assert statement inside the with block, e.g. 'with d2l.claims(): assert x < 1'"
        )
    if strict is not None and not isinstance(strict, bool):
        raise TypeError(f'strict must be True, False or None, got {strict!r}')
    if strict is None:
        strict = settings.strict_claims()
    try:
        yield
    except AssertionError as error:
        if strict:
            if hasattr(error, 'add_note'):
                error.add_note(
                    'A claim of the book does not hold in this run: size its window to the '
                    'spread across machines (python -m tools machines), or change what the '
                    'prose claims.'
                )
            raise
        got = ' '.join(str(error).split()) or 'a value outside the window'
        print(
            f'{NOT_MET}: the book asserts {_statement(error)}; this run gave {got}. The {WHY}',
            file=sys.stdout,
        )
