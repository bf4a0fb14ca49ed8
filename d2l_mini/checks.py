"""Argument checks shared by d2l_mini's PyTorch and JAX modules and its data module.

One call checks all the arguments of a constructor or function, each by the rule
that goes with its name::

    check_args(num_hiddens=num_hiddens, num_heads=num_heads, dropout=dropout)

One exception type per kind of mistake: a value of the wrong type (a float or a
bool where an int is needed, a string where a number is) raises TypeError; a value
of the right type outside the accepted range or set raises ValueError. Each message
names the argument and what it accepts.
"""

import numbers


def positive_int(name, value):
    _int(name, value, 'an int >= 1')
    if value < 1:
        raise ValueError(f'{name} must be an int >= 1, got {value!r}')


def count(name, value):
    _int(name, value, 'an int >= 0')
    if value < 0:
        raise ValueError(f'{name} must be an int >= 0, got {value!r}')


def _int(name, value, accepted):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f'{name} must be {accepted}, got {value!r}')


def _number(name, value, accepted):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f'{name} must be {accepted}, got {value!r}')


def probability(name, value):
    """A dropout rate: a number in [0, 1)."""
    _number(name, value, 'a number in [0, 1)')
    if not 0 <= value < 1:
        raise ValueError(f'{name} must be a number in [0, 1), got {value!r}')


def positive_number(name, value):
    _number(name, value, 'a number > 0')
    if not value > 0:
        raise ValueError(f'{name} must be a number > 0, got {value!r}')


def boolean(name, value):
    if not isinstance(value, bool):
        raise TypeError(f'{name} must be True or False, got {value!r}')


def one_of(*choices):
    """The rule for a string flag that must be one of ``choices``."""
    accepted = ' or '.join(map(repr, choices))

    def rule(name, value):
        if not isinstance(value, str):
            raise TypeError(f'{name} must be {accepted}, got {value!r}')
        if value not in choices:
            raise ValueError(f'{name} must be {accepted}, got {value!r}')

    return rule


def text(name, value):
    """A string that holds at least one character."""
    if not isinstance(value, str):
        raise TypeError(f'{name} must be a non-empty string, got {value!r}')
    if not value:
        raise ValueError(f'{name} must be a non-empty string, got {value!r}')


def instance_of(cls, accepted):
    """The rule for an argument that must be a ``cls``, described to the reader as
    ``accepted``. A framework's module passes it to :func:`checker` for its own
    types, so that this module imports no framework."""

    def rule(name, value):
        if not isinstance(value, cls):
            raise TypeError(f'{name} must be {accepted}, got {value!r}')

    return rule


RULES = {
    'num_hiddens': positive_int,
    'num_heads': positive_int,
    'dropout': probability,
    'norm': one_of('rms', 'layer'),
    'act': one_of('gelu', 'swiglu'),
    'pre_norm': boolean,
    'bias': boolean,
    'vocab_size': positive_int,
    'num_blks': positive_int,
    'max_len': positive_int,
    'batch_size': positive_int,
    'num_steps': positive_int,
    'num_updates': positive_int,
    'num_train': positive_int,
    'num_val': count,
    'tokenization': one_of('char'),
    'micro_batches': positive_int,
    'num_chars': count,
    'temperature': positive_number,
    'prefix': text,
    'seed': count,
    'min_freq': count,
}

# Pairs of arguments where the first must divide the second.
DIVIDES = [('num_heads', 'num_hiddens'), ('micro_batches', 'batch_size')]


def checker(**extra_rules):
    """A ``check_args`` that knows ``extra_rules`` besides ``RULES``: a framework's
    module makes its own for its types (``checker(rngs=instance_of(...))``), so that
    this module imports no framework and ``RULES`` stays as it is."""
    rules = {**RULES, **extra_rules}

    def check_args(**arguments):
        """Check every keyword argument by the rule for its name (``RULES``), then
        that each pair in ``DIVIDES`` given together divides evenly."""
        for name, value in arguments.items():
            if name not in rules:
                raise KeyError(f'check_args has no rule for {name!r}')
            rules[name](name, value)
        for divisor, total in DIVIDES:
            given = divisor in arguments and total in arguments
            if given and arguments[total] % arguments[divisor]:
                raise ValueError(
                    f'{divisor} ({arguments[divisor]}) must divide {total} ({arguments[total]})'
                )

    return check_args


check_args = checker()
