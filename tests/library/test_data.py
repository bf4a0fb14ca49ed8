"""The Time Machine corpus loader, vocabulary and windows (both frameworks)."""

import hashlib
import io
import pathlib
import re
from typing import NamedTuple

import numpy as np
import pytest

from d2l_mini import data


class Flavour(NamedTuple):
    TimeMachine: type
    to_numpy: object  # a batch of this flavour as a NumPy array
    dtype: type  # the dtype of its token indices
    array_type: type  # the type of its batches


@pytest.fixture(params=['numpy', 'torch', 'jax'])
def framework(request):
    """The Flavour of each TimeMachine: NumPy's, PyTorch's, JAX's."""
    if request.param == 'numpy':
        return Flavour(data.TimeMachine, np.asarray, np.int64, np.ndarray)
    if request.param == 'torch':
        import torch

        from d2l_mini import torch as d2l

        return Flavour(d2l.TimeMachine, lambda t: t.numpy(), np.int64, torch.Tensor)
    import jax

    from d2l_mini import jax as d2l

    return Flavour(d2l.TimeMachine, np.asarray, np.int32, jax.Array)


# ---------------------------------------------------------------- the corpus


@pytest.mark.usefixtures('corpus')
def test_preprocessed_corpus_has_173428_characters_and_28_tokens():
    text = data.preprocess(data.read_time_machine())
    assert len(text) == 173428
    assert set(text) == set('abcdefghijklmnopqrstuvwxyz ')
    assert text.startswith('the time machine by h g wells ')
    vocab = data.Vocab(text)
    assert len(vocab) == 28


def test_preprocess_keeps_letters_and_lowercases():
    assert data.preprocess("It's 1895--Mr. Wells!") == 'it s mr wells '
    assert data.preprocess('A\n\nB') == 'a b'


def test_vocab_order_lookup_and_round_trip():
    vocab = data.Vocab('abracadabra')
    # <unk> first, then by frequency (ties alphabetically)
    assert vocab.idx_to_token == ['<unk>', 'a', 'b', 'r', 'c', 'd']
    assert vocab['a'] == 1 and vocab['r'] == 3
    assert vocab['z'] == 0 == vocab.unk
    assert vocab[['a', 'z', 'd']] == [1, 0, 5]
    assert vocab.to_tokens(2) == 'b'
    assert ''.join(vocab.to_tokens(vocab[list('cab')])) == 'cab'
    assert vocab.to_tokens(np.array([[1, 2]])) == ['a', 'b']


@pytest.mark.usefixtures('corpus')
def test_time_machine_vocab_is_sorted_by_frequency():
    tm = data.TimeMachine(8, 5, num_train=100, num_val=10)
    freqs = dict(tm.vocab.token_freqs)
    counts = [freqs[t] for t in tm.vocab.idx_to_token[1:]]
    assert counts == sorted(counts, reverse=True)
    assert tm.vocab.idx_to_token[:3] == ['<unk>', ' ', 'e']
    assert len(tm.corpus) == 173428 and tm.corpus.min() >= 1


# ---------------------------------------------------------------- the windows


@pytest.mark.usefixtures('corpus')
def test_batches_are_shifted_windows_of_the_corpus(framework):
    TimeMachine, to_numpy, dtype, _ = framework
    tm = TimeMachine(batch_size=4, num_steps=10, num_train=50, num_val=7)
    X, Y = next(iter(tm.train_dataloader()))
    X, Y = to_numpy(X), to_numpy(Y)
    assert X.shape == Y.shape == (4, 10)
    assert X.dtype == Y.dtype == dtype
    np.testing.assert_array_equal(X[:, 1:], Y[:, :-1])
    corpus = tm.corpus
    for x, y in zip(X, Y, strict=True):
        starts = [
            s for s in range(50) if (corpus[s : s + 10] == x).all() and corpus[s + 10] == y[-1]
        ]
        assert starts, 'every training row is a window of the first num_train'


@pytest.mark.usefixtures('corpus')
def test_validation_windows_follow_the_training_windows(framework):
    TimeMachine, to_numpy, _, _ = framework
    tm = TimeMachine(batch_size=3, num_steps=6, num_train=20, num_val=7)
    batches = [(to_numpy(X), to_numpy(Y)) for X, Y in tm.val_dataloader()]
    assert [len(X) for X, _ in batches] == [3, 3, 1]
    X = np.concatenate([X for X, _ in batches])
    Y = np.concatenate([Y for _, Y in batches])
    for i in range(7):
        np.testing.assert_array_equal(X[i], tm.corpus[20 + i : 26 + i])
        np.testing.assert_array_equal(Y[i], tm.corpus[21 + i : 27 + i])
    text = ''.join(tm.vocab.to_tokens(X[0]))
    assert text == data.preprocess(data.read_time_machine())[20:26]


@pytest.mark.usefixtures('corpus')
def test_framework_arrays(framework):
    tm = framework.TimeMachine(2, 3, num_train=4, num_val=2)
    X, Y = next(iter(tm.train_dataloader()))
    assert type(X) is type(Y) and isinstance(X, framework.array_type)


def epoch_starts(tm):
    """The window start of every row of one training epoch."""
    rows = [np.asarray(X) for X, _ in tm.train_dataloader()]
    lookup = {tuple(tm.corpus[s : s + tm.num_steps]): s for s in range(tm.num_train)}
    return [lookup[tuple(r)] for X in rows for r in X]


@pytest.mark.usefixtures('corpus')
def test_one_epoch_visits_each_full_batch_window_once():
    tm = data.TimeMachine(batch_size=8, num_steps=12, num_train=60, num_val=0)
    starts = epoch_starts(tm)
    assert len(starts) == 56  # the incomplete last batch is dropped
    assert len(set(starts)) == 56 and max(starts) < 60
    assert starts != sorted(starts)  # shuffled


@pytest.mark.usefixtures('corpus')
def test_same_seed_same_batches_other_seed_other_order(framework):
    TimeMachine, to_numpy, _, _ = framework

    def first_two_epochs(seed):
        tm = TimeMachine(4, 8, num_train=40, num_val=4, seed=seed)
        return [[to_numpy(X) for X, _ in tm.train_dataloader()] for _ in range(2)]

    a, b, c = first_two_epochs(0), first_two_epochs(0), first_two_epochs(1)
    np.testing.assert_array_equal(np.stack(a[0]), np.stack(b[0]))
    np.testing.assert_array_equal(np.stack(a[1]), np.stack(b[1]))
    assert not np.array_equal(np.stack(a[0]), np.stack(c[0]))
    assert not np.array_equal(np.stack(a[0]), np.stack(a[1]))  # reshuffled


@pytest.mark.usefixtures('corpus')
def test_the_book_setting_fits_and_the_maximum_is_exact():
    tm = data.TimeMachine(64, 128, num_train=100000, num_val=3000)
    assert len(tm.vocab) == 28
    largest = 173428 - 128
    data.TimeMachine(2, 128, num_train=largest - 5, num_val=5)
    with pytest.raises(ValueError, match='num_train') as info:
        data.TimeMachine(2, 128, num_train=largest - 5, num_val=6)
    message = str(info.value)
    assert 'num_train' in message and 'num_val' in message
    assert str(largest) in message


@pytest.mark.parametrize(
    'kwargs,name',
    [
        (dict(batch_size=0, num_steps=5), 'batch_size'),
        (dict(batch_size=4, num_steps=0), 'num_steps'),
        (dict(batch_size=4, num_steps=-3), 'num_steps'),
        (dict(batch_size=4, num_steps=5, num_train=0), 'num_train'),
        (dict(batch_size=4, num_steps=5, num_val=-1), 'num_val'),
        (dict(batch_size=40, num_steps=5, num_train=10), 'batch_size'),
        (dict(batch_size=4, num_steps=5, tokenization='word'), 'tokenization'),
    ],
)
def test_bad_arguments(framework, kwargs, name):
    TimeMachine, _, _, _ = framework
    with pytest.raises(ValueError, match=name):
        TimeMachine(**kwargs)


def test_non_integer_sizes_are_type_errors():
    with pytest.raises(TypeError, match='batch_size'):
        data.TimeMachine(2.5, 5)
    with pytest.raises(TypeError, match='num_steps'):
        data.TimeMachine(2, '5')
    with pytest.raises(TypeError, match="tokenization must be 'char', got 1"):
        data.TimeMachine(2, 5, tokenization=1)


@pytest.mark.parametrize(
    'seed, error', [(1.5, TypeError), ('0', TypeError), (True, TypeError), (-1, ValueError)]
)
def test_seed_must_be_an_int_at_least_zero(framework, seed, error):
    with pytest.raises(error, match=re.escape(f'seed must be an int >= 0, got {seed!r}')):
        framework.TimeMachine(2, 5, seed=seed)


def test_vocab_min_freq_is_a_count():
    with pytest.raises(TypeError, match="min_freq must be an int >= 0, got 'x'"):
        data.Vocab('abc', min_freq='x')
    assert data.Vocab('aab', min_freq=2).idx_to_token == ['<unk>', 'a']


# ---------------------------------------------------------------- the cache

URL, SHA1 = data.TIME_MACHINE_URL, data.TIME_MACHINE_SHA1


@pytest.fixture
def no_network(monkeypatch):
    """Fail loudly if anything tries to download."""
    calls = []

    def refuse(url, path, *args, **kwargs):
        calls.append(url)
        raise OSError('network is off in the tests')

    monkeypatch.setattr(data, '_download', refuse)
    return calls


def test_default_folder_and_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv('D2L_MINI_DATA', str(tmp_path))
    assert data.data_dir() == tmp_path
    monkeypatch.delenv('D2L_MINI_DATA')
    root = pathlib.Path(data.__file__).resolve().parent.parent
    assert data.data_dir() == root / 'data'


def test_cached_file_is_read_without_network(tmp_path, no_network, monkeypatch, corpus):
    (tmp_path / 'timemachine.txt').write_bytes(corpus.read_bytes())
    monkeypatch.setenv('D2L_MINI_DATA', str(tmp_path))
    text = data.read_time_machine()
    assert text.startswith('The Time Machine, by H. G. Wells')
    assert no_network == []


def test_wrong_checksum_is_reported_and_not_used(tmp_path, no_network, corpus):
    bad = tmp_path / 'timemachine.txt'
    bad.write_bytes(corpus.read_bytes().replace(b'Time Traveller', b'Time Travellor'))
    found = hashlib.sha1(bad.read_bytes()).hexdigest()
    with pytest.raises(data.ChecksumError) as info:
        data.read_time_machine(tmp_path)
    message = str(info.value)
    assert str(bad) in message and SHA1 in message and found in message
    assert 'delete' in message
    assert no_network == []  # never silently replaced...
    assert hashlib.sha1(bad.read_bytes()).hexdigest() == found  # ...or fixed


def test_missing_file_offline_names_url_checksum_and_folder(tmp_path, no_network):
    folder = tmp_path / 'cache'
    with pytest.raises(data.CorpusUnavailableError) as info:
        data.read_time_machine(folder)
    message = str(info.value)
    assert URL in message and SHA1 in message and str(folder) in message
    assert no_network == [URL]
    assert list(folder.iterdir()) == []  # no temporary file left behind
    assert isinstance(info.value, FileNotFoundError)


def test_download_is_verified_and_moved_into_place(tmp_path, monkeypatch, corpus):
    seen = []

    def fake_download(url, path, *args, **kwargs):
        seen.append((url, pathlib.Path(path)))
        assert pathlib.Path(path).parent == tmp_path  # same folder: atomic
        pathlib.Path(path).write_bytes(corpus.read_bytes())

    monkeypatch.setattr(data, '_download', fake_download)
    text = data.read_time_machine(tmp_path)
    assert len(data.preprocess(text)) == 173428
    assert [p.name for p in tmp_path.iterdir()] == ['timemachine.txt']
    assert seen[0][0] == URL and seen[0][1].name != 'timemachine.txt'
    # the second read uses the cache
    monkeypatch.setattr(data, '_download', lambda *a, **k: 1 / 0)
    assert data.read_time_machine(tmp_path) == text


@pytest.mark.parametrize('failure', ['corrupt', 'interrupted'])
def test_failed_download_leaves_nothing_behind(tmp_path, monkeypatch, corpus, failure):
    def fake_download(url, path, *args, **kwargs):
        payload = corpus.read_bytes()
        if failure == 'corrupt':
            pathlib.Path(path).write_bytes(payload[:-10])
        else:
            pathlib.Path(path).write_bytes(payload[:1000])
            raise ConnectionResetError('connection dropped')

    monkeypatch.setattr(data, '_download', fake_download)
    with pytest.raises(data.CorpusUnavailableError) as info:
        data.read_time_machine(tmp_path)
    message = str(info.value)
    assert URL in message and SHA1 in message and str(tmp_path) in message
    assert list(tmp_path.iterdir()) == []


def test_download_uses_urlopen_with_a_timeout(tmp_path, monkeypatch):
    requests = []

    class Response(io.BytesIO):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()

    def fake_urlopen(url, timeout=None):
        requests.append((url, timeout))
        return Response(b'x' * 100_000)

    monkeypatch.setattr(data.urllib.request, 'urlopen', fake_urlopen)
    target = tmp_path / 'file'
    data._download(URL, target)
    assert target.read_bytes() == b'x' * 100_000
    assert requests == [(URL, data.DOWNLOAD_TIMEOUT)]
    assert 0 < data.DOWNLOAD_TIMEOUT <= 60


def imported_roots(module, seen=None):
    """Top-level packages that ``d2l_mini.<module>`` imports, following the
    package's own modules (a static reading of the source, no import)."""
    import ast

    seen = set() if seen is None else seen
    seen.add(module)
    source = pathlib.Path(data.__file__).with_name(f'{module}.py').read_text()
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module] + [f'{node.module}.{a.name}' for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split('.')
            if parts[0] == 'd2l_mini':
                if (
                    len(parts) > 1
                    and parts[1] not in seen
                    and pathlib.Path(data.__file__).with_name(f'{parts[1]}.py').exists()
                ):
                    roots |= imported_roots(parts[1], seen)
            else:
                roots.add(parts[0])
    return roots


def test_no_tensorflow_and_no_cross_framework_imports():
    frameworks = {'torch', 'jax', 'jaxlib', 'flax', 'optax', 'tensorflow'}
    assert imported_roots('data') & frameworks == set()
    assert imported_roots('plotting') & frameworks == set()
    assert imported_roots('torch') & frameworks == {'torch'}
    assert imported_roots('jax') & frameworks == {'jax', 'flax', 'optax'}
