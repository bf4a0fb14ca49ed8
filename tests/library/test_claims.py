"""d2l.claims: a failed claim stops the build and explains itself to a reader."""

import pytest

from d2l_mini import claims as claims_module
from d2l_mini.claims import claims


def test_in_the_build_a_failed_claim_raises_with_what_to_do():
    ratio = 0.3
    with pytest.raises(AssertionError, match=r'0\.3') as raised, claims(strict=True):
        assert 1e-6 < ratio < 3e-6, ratio
    assert 'spread across machines' in ' '.join(raised.value.__notes__)


def test_for_a_reader_a_failed_claim_prints_one_line_and_the_notebook_goes_on(capsys):
    reached = []
    with claims(strict=False):
        ratio = {'W_q': 9.4e-07}
        assert 1e-6 < ratio['W_q'] < 3e-6, ratio
        reached.append('the rest of the block')
    reached.append('after the block')
    [line] = capsys.readouterr().out.splitlines()
    assert reached == ['after the block']
    assert "the book asserts 1e-6 < ratio['W_q'] < 3e-6;" in line
    assert "this run gave {'W_q': 9.4e-07}" in line
    assert 'differ' in line and 'goes on' in line


def test_a_claim_over_several_lines_is_quoted_whole(capsys):
    with claims(strict=False):
        values = [3, 4]
        assert max(values, default=0) > 5, values
    assert 'asserts max(values, default=0) > 5;' in capsys.readouterr().out


def test_claims_that_hold_print_nothing_in_either_mode(capsys):
    for strict in (True, False):
        with claims(strict=strict):
            assert 1 < 2
    assert capsys.readouterr().out == ''


def test_other_errors_pass_through_in_either_mode():
    for strict in (True, False):
        with pytest.raises(KeyError), claims(strict=strict):
            {}['missing']


@pytest.mark.parametrize(('value', 'raises'), [('1', True), ('0', False), ('', False)])
def test_by_default_the_environment_chooses(monkeypatch, capsys, value, raises):
    monkeypatch.setenv('D2L_MINI_STRICT_CLAIMS', value)
    missed = 0.7
    if raises:
        with pytest.raises(AssertionError), claims():
            assert missed < 0.5, 'missed'
    else:
        with claims():
            assert missed < 0.5, 'missed'
        assert 'this run gave missed' in capsys.readouterr().out


def test_a_bad_setting_or_argument_is_named(monkeypatch):
    monkeypatch.setenv('D2L_MINI_STRICT_CLAIMS', 'maybe')
    with pytest.raises(ValueError, match='D2L_MINI_STRICT_CLAIMS'), claims():
        pass
    with pytest.raises(TypeError, match='strict must be True, False or None'), claims(strict=1):
        pass


def test_both_frameworks_offer_the_same_claims():
    from d2l_mini import jax as d2l_jax
    from d2l_mini import torch as d2l_torch

    assert d2l_torch.claims is d2l_jax.claims is claims_module.claims


def test_a_condition_given_to_claims_is_refused_with_the_way_to_write_it():
    loss = 0.7
    with pytest.raises(TypeError, match=r'takes no condition, got True.*assert statement'):
        with claims(loss < 1.5):
            pass
