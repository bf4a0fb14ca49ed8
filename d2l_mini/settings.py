"""Run-time settings of the book, each read from the environment in this one place,
when it is used: a bad value stops the cell that asks for it, with a message that
names the variable, and importing the library never fails on one.

``full_protocol()`` selects the full experimental protocol of exercises whose complete
runs need a GPU (for example a learning-rate sweep over seven rates). By default the
book executes a documented reduced protocol that fits a two-core CPU; set
``D2L_MINI_FULL_PROTOCOL=1`` before executing the notebooks to run the full one. The
solutions write ``from d2l_mini.settings import FULL_PROTOCOL``, which reads it then.
"""

import os

_TRUE = {'1', 'true', 'yes', 'on'}
_FALSE = {'0', 'false', 'no', 'off'}


def _flag(name):
    value = os.environ.get(name, '').strip().lower()
    if value and value not in _TRUE | _FALSE:
        raise ValueError(f'{name}={value!r}: expected one of 1/true/yes/on or 0/false/no/off')
    return value in _TRUE


def full_protocol():
    """Whether the exercises run their full protocol (``D2L_MINI_FULL_PROTOCOL=1``)."""
    return _flag('D2L_MINI_FULL_PROTOCOL')


def strict_claims():
    """Whether a failed claim stops the notebook (``D2L_MINI_STRICT_CLAIMS=1``: the
    book's build and CI) or prints what it asserted and lets the notebook go on (a
    reader's run, the default). Read at each call, so that a test can set it."""
    return _flag('D2L_MINI_STRICT_CLAIMS')


def __getattr__(name):
    # ``FULL_PROTOCOL`` is read when it is imported (PEP 562), not when this module is.
    if name == 'FULL_PROTOCOL':
        return full_protocol()
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
