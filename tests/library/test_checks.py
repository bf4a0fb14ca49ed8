"""check_args: one exception type per kind of mistake, messages that name the
argument and what it accepts."""

import re

import numpy as np
import pytest

from d2l_mini import checks
from d2l_mini.checks import check_args


@pytest.mark.parametrize(
    'arguments, message',
    [
        (dict(num_heads=2.0), 'num_heads must be an int >= 1, got 2.0'),
        (dict(num_heads=True), 'num_heads must be an int >= 1, got True'),
        (dict(num_val='3'), "num_val must be an int >= 0, got '3'"),
        (dict(dropout='0.1'), "dropout must be a number in [0, 1), got '0.1'"),
        (dict(dropout=None), 'dropout must be a number in [0, 1), got None'),
        (dict(temperature=False), 'temperature must be a number > 0, got False'),
        (dict(pre_norm='yes'), "pre_norm must be True or False, got 'yes'"),
        (dict(bias='no'), "bias must be True or False, got 'no'"),
        (dict(bias=0), 'bias must be True or False, got 0'),
        (dict(norm=1), "norm must be 'rms' or 'layer', got 1"),
        (dict(act=['gelu']), "act must be 'gelu' or 'swiglu', got ['gelu']"),
        (dict(tokenization=1), "tokenization must be 'char', got 1"),
        (dict(seed=1.5), 'seed must be an int >= 0, got 1.5'),
        (dict(min_freq='x'), "min_freq must be an int >= 0, got 'x'"),
        (dict(prefix=5), 'prefix must be a non-empty string, got 5'),
        (dict(prefix=['a']), "prefix must be a non-empty string, got ['a']"),
    ],
)
def test_wrong_types_are_type_errors(arguments, message):
    with pytest.raises(TypeError) as info:
        check_args(**arguments)
    assert str(info.value) == message


@pytest.mark.parametrize(
    'arguments, message',
    [
        (dict(num_heads=0), 'num_heads must be an int >= 1, got 0'),
        (dict(num_val=-1), 'num_val must be an int >= 0, got -1'),
        (dict(dropout=1.0), 'dropout must be a number in [0, 1), got 1.0'),
        (dict(temperature=0.0), 'temperature must be a number > 0, got 0.0'),
        (dict(norm='batch'), "norm must be 'rms' or 'layer', got 'batch'"),
        (dict(seed=-1), 'seed must be an int >= 0, got -1'),
        (dict(min_freq=-2), 'min_freq must be an int >= 0, got -2'),
        (dict(prefix=''), "prefix must be a non-empty string, got ''"),
        (dict(num_hiddens=16, num_heads=3), 'num_heads (3) must divide num_hiddens (16)'),
        (dict(micro_batches=3, batch_size=4), 'micro_batches (3) must divide batch_size (4)'),
    ],
)
def test_values_out_of_range_are_value_errors(arguments, message):
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        check_args(**arguments)
    assert str(info.value) == message


def test_good_arguments_pass():
    check_args(
        num_hiddens=16,
        num_heads=np.int64(4),
        dropout=0,
        num_val=0,
        norm='layer',
        act='gelu',
        pre_norm=False,
        temperature=0.5,
        micro_batches=2,
        batch_size=8,
        bias=True,
        seed=np.int64(3),
        min_freq=0,
        prefix='t',
    )


def test_an_argument_without_a_rule_is_a_programming_error():
    with pytest.raises(KeyError, match='num_layers'):
        check_args(num_layers=2)


def test_instance_of_rejects_other_types_with_the_description():
    rule = checks.instance_of(dict, 'a dict of options')
    rule('options', {})
    with pytest.raises(TypeError) as info:
        rule('options', [('a', 1)])
    assert str(info.value) == "options must be a dict of options, got [('a', 1)]"
