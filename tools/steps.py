"""What every step of the build shares: how it reports progress and how it fails.

- ``Progress``: the callback each step is given for its progress lines (``print`` by
  default; ``python -m tools`` flushes each line).
- :class:`StepFailed`, exit status 1: the step ran and found a problem in the book or in
  the build (a failing cell, a stale file, a notebook that is not executed, a refused
  publish).
- :class:`UsageError`, exit status 2: the step could not start (a bad argument, a setting
  or an input file it cannot use); the command line's own errors give 2 as well.
"""

from collections.abc import Callable

Progress = Callable[[str], None]


class StepFailed(Exception):
    """The step found a problem; the message says what, where and what to do."""


class UsageError(ValueError):
    """The step was asked for something it cannot do; the message says what it accepts."""
