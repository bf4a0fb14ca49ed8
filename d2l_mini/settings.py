"""Run-time settings of the book, each read from the environment in this one place.

``FULL_PROTOCOL`` selects the full experimental protocol of exercises whose complete
runs need a GPU (for example a learning-rate sweep over seven rates). By default the
book executes a documented reduced protocol that fits a two-core CPU; set
``D2L_MINI_FULL_PROTOCOL=1`` before executing the notebooks to run the full one.
"""

import os

_TRUE = {'1', 'true', 'yes', 'on'}


def _flag(name):
    value = os.environ.get(name, '').strip().lower()
    if value and value not in _TRUE | {'0', 'false', 'no', 'off'}:
        raise ValueError(f'{name}={value!r}: expected one of 1/true/yes/on or 0/false/no/off')
    return value in _TRUE


FULL_PROTOCOL = _flag('D2L_MINI_FULL_PROTOCOL')


def strict_claims():
    """Whether a failed claim stops the notebook (``D2L_MINI_STRICT_CLAIMS=1``: the
    book's build and CI) or prints what it asserted and lets the notebook go on (a
    reader's run, the default). Read at each call, so that a test can set it."""
    return _flag('D2L_MINI_STRICT_CLAIMS')
