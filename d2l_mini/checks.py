"""Argument checks shared by the PyTorch and the JAX modules of d2l_mini.

Each raises ValueError or TypeError with a message that names the argument and
what it accepts.
"""
import numpy as np


def check_heads(num_hiddens, num_heads):
    for name, value in (('num_hiddens', num_hiddens),
                        ('num_heads', num_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f'{name} must be a positive int, got {value!r}')
    if num_hiddens % num_heads:
        raise ValueError(f'num_hiddens ({num_hiddens}) must be divisible by '
                         f'num_heads ({num_heads})')


def check_dropout(dropout):
    if isinstance(dropout, (bool, str)) or not np.isscalar(dropout):
        raise TypeError(f'dropout must be a number in [0, 1), got {dropout!r}')
    if not 0 <= dropout < 1:
        raise ValueError(f'dropout must be in [0, 1), got {dropout!r}')


def check_num_steps(num_steps):
    if isinstance(num_steps, bool) or not isinstance(num_steps, int) \
            or num_steps < 1:
        raise ValueError(f'num_steps must be an int >= 1, got {num_steps!r}')


def check_micro_batches(micro_batches, batch_size=None):
    """``micro_batches`` is a positive int that divides ``batch_size`` (when
    given): the slices of a batch must be of equal size."""
    if isinstance(micro_batches, bool) or not isinstance(micro_batches, int) \
            or micro_batches < 1:
        raise ValueError(f'micro_batches must be an int >= 1, '
                         f'got {micro_batches!r}')
    if batch_size is not None and batch_size % micro_batches:
        raise ValueError(f'micro_batches ({micro_batches}) must divide the '
                         f'batch size ({batch_size})')
