"""Hyphenation of English prose for the PDFs: Liang's algorithm with the patterns of
Plain TeX (``hyphen-us.tex`` beside this module, copied unmodified as its notice asks).

Chromium hyphenates with ``hyphens: auto`` only where it has a dictionary, which a
headless Chromium on Linux does not; tools/site/pdf.py therefore collects the words of
the printed prose in the page, hyphenates them here and writes them back with soft
hyphens (U+00AD), at which Chromium breaks a line and prints a hyphen.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

PATTERNS = Path(__file__).with_name('hyphen-us.tex')
SOFT_HYPHEN = '\u00ad'
LEFT, RIGHT = 2, 3  # at least this many letters before and after a break (TeX's own)
MIN_WORD = 6  # shorter words are never broken
WORD = re.compile(r'[A-Za-z]+')


@functools.cache
def tables() -> tuple[dict[str, list[int]], dict[str, list[int]], int]:
    """(patterns: letters -> points, exceptions: word -> break positions, longest pattern)."""
    text = re.sub(r'%.*', '', PATTERNS.read_text(encoding='utf-8'))
    patterns = {}
    for pattern in re.search(r'\\patterns\{(.*?)\}', text, re.S)[1].split():
        letters = re.sub(r'\d', '', pattern)
        patterns[letters] = [int(d) if d else 0 for d in re.split(r'[.a-z]', pattern)]
    exceptions = {}
    for word in re.search(r'\\hyphenation\{(.*?)\}', text, re.S)[1].split():
        pieces = word.split('-')
        exceptions[''.join(pieces)] = [
            sum(len(piece) for piece in pieces[: i + 1]) for i in range(len(pieces) - 1)
        ]
    return patterns, exceptions, max(map(len, patterns))


def breaks(word: str) -> list[int]:
    """The places (letters before each) where ``word`` may be hyphenated."""
    lower = word.lower()
    if len(word) < MIN_WORD or not WORD.fullmatch(word) or not word[1:].islower():
        return []  # short, not a word, or a name in capitals (SwiGLU, LayerNorm)
    patterns, exceptions, longest = tables()
    if lower in exceptions:
        found = exceptions[lower]
    else:
        work = f'.{lower}.'
        points = [0] * (len(work) + 1)
        for i in range(len(work)):
            for j in range(i + 1, min(len(work), i + longest) + 1):
                for k, value in enumerate(patterns.get(work[i:j], ())):
                    points[i + k] = max(points[i + k], value)
        # points[m + 1] odd: a break between the word's letters m - 1 and m.
        found = [m for m in range(1, len(word)) if points[m + 1] % 2]
    return [m for m in found if m >= LEFT and len(word) - m >= RIGHT]


def hyphenate(word: str) -> str:
    """``word`` with a soft hyphen at each place it may break."""
    places = breaks(word)
    pieces = [word[a:b] for a, b in zip([0, *places], [*places, len(word)], strict=True)]
    return SOFT_HYPHEN.join(pieces)


def hyphenated(words: list[str]) -> dict[str, str]:
    """``{word: hyphenated}`` for the words that may break."""
    return {word: text for word in words if (text := hyphenate(word)) != word}
