"""The Time Machine corpus, its character vocabulary and its training windows.

Framework-free: ``d2l_mini.torch`` and ``d2l_mini.jax`` wrap :class:`TimeMachine`
and only convert the numpy batches that it builds into their own arrays.

Where the corpus lives
----------------------
The text is the d2l data hub's ``timemachine.txt`` (H. G. Wells, public domain).
It is looked for in a cache folder chosen as follows:

1. the folder named by the environment variable ``D2L_MINI_DATA``, if it is set;
2. otherwise ``data/`` at the project root (the folder that holds the
   ``d2l_mini`` package and ``pyproject.toml``, as in an editable install or a
   checkout of the repository);
3. otherwise (a regular, non-editable install) ``~/.cache/d2l_mini``.

A cached file whose SHA-1 matches is read without touching the network. A cached
file with another SHA-1 is never used: loading stops with an error that names the
file and both checksums. A missing file is downloaded once into a temporary file
in the same folder, checked, and moved into place atomically, so an interrupted
download never leaves a half-written corpus behind. Offline, put the file into the
cache folder by hand; the error message says which folder that is.
"""

import collections
import hashlib
import os
import pathlib
import re
import tempfile
import urllib.request

import numpy as np

from d2l_mini.checks import check_args

TIME_MACHINE_URL = 'http://d2l-data.s3-accelerate.amazonaws.com/timemachine.txt'
TIME_MACHINE_SHA1 = '090b5e7e70c295757f55df93cb0a180b9691891a'
DOWNLOAD_TIMEOUT = 20  # seconds; offline machines should fail fast


class ChecksumError(RuntimeError):
    """A cached data file exists but its SHA-1 is not the expected one."""


class CorpusUnavailableError(FileNotFoundError):
    """The data file is not cached and could not be downloaded."""


def data_dir():
    """Return the cache folder for downloaded data (see the module docstring)."""
    env = os.environ.get('D2L_MINI_DATA')
    if env:
        return pathlib.Path(env).expanduser()
    project = pathlib.Path(__file__).resolve().parent.parent
    if (project / 'pyproject.toml').exists():
        return project / 'data'
    return pathlib.Path.home() / '.cache' / 'd2l_mini'


def sha1_of(payload):
    """SHA-1 hex digest of a bytes object."""
    return hashlib.sha1(payload).hexdigest()


def _download(url, path, timeout=DOWNLOAD_TIMEOUT):
    """Write the bytes served at ``url`` into the file ``path``."""
    with urllib.request.urlopen(url, timeout=timeout) as response, open(path, 'wb') as f:
        while chunk := response.read(1 << 16):
            f.write(chunk)


def fetch(url=TIME_MACHINE_URL, sha1=TIME_MACHINE_SHA1, folder=None):
    """Return the verified bytes of the file at ``url``, cached in ``folder``.

    ``folder`` defaults to :func:`data_dir`. The cached copy is used when its
    SHA-1 is ``sha1``; a copy with another checksum raises :class:`ChecksumError`;
    a missing copy is downloaded (atomically) or :class:`CorpusUnavailableError`
    is raised with the URL, the checksum and the folder to put the file in.
    """
    folder = pathlib.Path(data_dir() if folder is None else folder)
    path = folder / url.rsplit('/', 1)[-1]
    if path.exists():
        payload = path.read_bytes()
        found = sha1_of(payload)
        if found != sha1:
            raise ChecksumError(
                f'the cached file {path} has the wrong SHA-1 checksum: '
                f'expected {sha1}, found {found}. It is not used; delete it or '
                f'replace it with a correct copy of {url}.'
            )
        return payload
    return _download_verified(url, sha1, folder, path)


def _download_verified(url, sha1, folder, path):
    def unavailable(reason):
        return CorpusUnavailableError(
            f'{path.name} is not in {folder} and downloading it failed '
            f'({reason}). Download {url} (SHA-1 {sha1}) and put it into the '
            f'folder {folder}, or point the environment variable D2L_MINI_DATA '
            f'at a folder that holds it.'
        )

    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f'.{path.name}.', suffix='.part')
        os.close(fd)
    except OSError as e:
        raise unavailable(f'cannot write into the folder: {e}') from e
    try:
        _download(url, tmp)
        payload = pathlib.Path(tmp).read_bytes()
        found = sha1_of(payload)
        if found != sha1:
            raise ChecksumError(f'the downloaded file has SHA-1 {found}')
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise unavailable(f'{type(e).__name__}: {e}') from e
    return payload


def read_time_machine(folder=None):
    """The raw text of The Time Machine (downloaded and cached on first use)."""
    return fetch(TIME_MACHINE_URL, TIME_MACHINE_SHA1, folder).decode('utf-8')


def preprocess(text):
    """Keep letters only: every run of other characters becomes one space;
    lower-case the result."""
    return re.sub('[^A-Za-z]+', ' ', text).lower()


class Vocab:
    """Token vocabulary: index 0 is ``'<unk>'``, then tokens by descending
    frequency (ties in alphabetical order)."""

    def __init__(self, tokens, min_freq=0, reserved_tokens=()):
        check_args(min_freq=min_freq)
        counts = collections.Counter(tokens)
        self.token_freqs = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        self.idx_to_token = ['<unk>'] + [t for t in reserved_tokens if t != '<unk>']
        seen = set(self.idx_to_token)
        for token, freq in self.token_freqs:
            if freq >= min_freq and token not in seen:
                self.idx_to_token.append(token)
                seen.add(token)
        self.token_to_idx = {t: i for i, t in enumerate(self.idx_to_token)}

    def __len__(self):
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        """Index of one token, or a list of indices for a list/tuple of tokens;
        unknown tokens map to ``unk`` (0)."""
        if isinstance(tokens, (list, tuple)):
            return [self[t] for t in tokens]
        return self.token_to_idx.get(tokens, self.unk)

    def to_tokens(self, indices):
        """Token of one index, or a list of tokens for a sequence of indices."""
        if np.ndim(indices) == 0:
            return self.idx_to_token[int(indices)]
        return [self.idx_to_token[int(i)] for i in np.asarray(indices).ravel()]

    @property
    def unk(self):
        return 0

    def __repr__(self):
        return f'Vocab(size={len(self)}, tokens={self.idx_to_token[:8]}...)'


class TimeMachine:
    """Character-level language-modelling windows of The Time Machine.

    Every stride-1 window of ``num_steps + 1`` characters gives an input ``X``
    (its first ``num_steps`` tokens) and a target ``Y`` (the same window shifted
    by one). The first ``num_train`` windows are for training, the next
    ``num_val`` for validation. Batches are numpy int64 arrays of shape
    ``(batch_size, num_steps)``; the framework modules convert them.

    ``train_dataloader()`` draws a fresh permutation of the training windows from
    a generator seeded by ``seed`` each time it is called (same seed, same
    sequence of batches) and drops the last incomplete batch, so every training
    batch has the same shape (a compiled step is reused). ``val_dataloader()``
    yields the validation windows in order, the last batch possibly smaller.
    """

    def __init__(
        self, batch_size, num_steps, num_train=10000, num_val=5000, tokenization='char', seed=0
    ):
        check_args(
            batch_size=batch_size,
            num_steps=num_steps,
            num_train=num_train,
            num_val=num_val,
            tokenization=tokenization,
            seed=seed,
        )
        self.batch_size, self.num_steps = int(batch_size), int(num_steps)
        self.num_train, self.num_val = int(num_train), int(num_val)
        self.tokenization = tokenization
        if self.batch_size > self.num_train:
            raise ValueError(f'batch_size ({batch_size}) must be at most num_train ({num_train})')
        text = preprocess(read_time_machine())
        self.vocab = Vocab(text)
        self.corpus = np.asarray(self.vocab[list(text)], dtype=np.int64)
        max_windows = len(self.corpus) - self.num_steps
        if self.num_train + self.num_val > max_windows:
            raise ValueError(
                f'num_train + num_val = {self.num_train + self.num_val} exceeds '
                f'the {max_windows} windows of num_steps + 1 = '
                f'{self.num_steps + 1} characters in the corpus; choose '
                f'num_train + num_val <= {max_windows}'
            )
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self._offsets = np.arange(self.num_steps + 1)

    def _batch(self, starts):
        windows = self.corpus[starts[:, None] + self._offsets]
        return windows[:, :-1], windows[:, 1:]

    def _convert(self, array):
        """Hook for the framework modules: numpy batch -> framework array."""
        return array

    def _batches(self, starts, drop_last):
        stop = len(starts) - len(starts) % self.batch_size if drop_last else len(starts)
        for i in range(0, stop, self.batch_size):
            X, Y = self._batch(starts[i : i + self.batch_size])
            yield self._convert(X), self._convert(Y)

    def train_dataloader(self):
        """Shuffled training batches ``(X, Y)`` (one epoch)."""
        return self._batches(self._rng.permutation(self.num_train), True)

    def val_dataloader(self):
        """Validation batches ``(X, Y)`` in corpus order."""
        starts = np.arange(self.num_train, self.num_train + self.num_val)
        return self._batches(starts, False)

    def __repr__(self):
        return (
            f'{type(self).__name__}(batch_size={self.batch_size}, '
            f'num_steps={self.num_steps}, num_train={self.num_train}, '
            f'num_val={self.num_val}, vocab_size={len(self.vocab)})'
        )


def training_batches(data, num_batches):
    """``num_batches`` training batches of ``data.train_dataloader()``, starting
    a new epoch (a fresh shuffle) whenever one ends."""
    produced = 0
    while produced < num_batches:
        for batch in data.train_dataloader():
            yield batch
            produced += 1
            if produced == num_batches:
                return
