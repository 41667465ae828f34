"""Words and sentences of a text with code-point offsets into the text as given.

A word is a maximal run of :data:`simdask.kernels.words.WORD_PATTERN` (letters or digits),
normalised (NFKC, casefold) for matching but located in the original text. A sentence ends
before a word when the gap before it holds ``.``, ``!``, ``?`` or a blank line and the word
does not start in lower case; a word in lower case starts one too when the gap starts with a
single full stop followed by white space and the word before it is not an abbreviation (a
single letter or one of :data:`ABBREVIATIONS`), as in Punkt (Kiss and Strunk 2006, the
splitter Sanchez-Perez et al. used): a full stop after an ordinary word ends a sentence
whatever the case of the next word (a student who does not capitalise, or an obfuscation that
moves a sentence's words). Excluded spans (templates, quotations, ...) drop the words they
touch and are hard breaks: no sentence, and no passage, reaches across one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simdask.kernels.exclusions import merge_spans
from simdask.kernels.words import WORD_PATTERN, normalize, utf8_word_spans

__all__ = ["ABBREVIATIONS", "Segmented", "segment", "word_spans"]

_TERMINATOR = re.compile(r"[.!?]|\n[ \t\r\f\v]*\n")
#: a full stop and white space: the gap after an ordinary word that ends a sentence
_FULL_STOP = re.compile(r"\.[\"'”’)\]]*\s")
#: words (normalised, without their full stop) after which a full stop does not end a sentence
#: when a word in lower case follows ("e.g. the", "et al. show"); single letters are
#: abbreviations too (initials, "i.e.", "z.B.")
ABBREVIATIONS = frozenset(
    [
        "al",
        "approx",
        "ca",
        "cf",
        "ch",
        "chap",
        "co",
        "corp",
        "dept",
        "dr",
        "ed",
        "eds",
        "eq",
        "eqs",
        "esp",
        "etc",
        "fig",
        "figs",
        "inc",
        "jr",
        "ltd",
        "mr",
        "mrs",
        "ms",
        "no",
        "nos",
        "op",
        "p",
        "pp",
        "prof",
        "resp",
        "sec",
        "sr",
        "st",
        "vol",
        "vols",
        "vs",
    ]
)


@dataclass(frozen=True)
class Segmented:
    """A text split into words and sentences (units of the aligner).

    ``starts``/``ends``: code-point spans of the kept words (int64); ``tokens``: their
    normalised forms; ``sentence``: the sentence of each word (int64, non-decreasing);
    ``sent_first``/``sent_last``: first and last word of each sentence; ``barrier``: per
    sentence, whether an excluded span lies just before it; ``breaks``: per word, how many
    excluded spans lie before it (two words with the same count have none between them).
    """

    starts: np.ndarray
    ends: np.ndarray
    tokens: list[str]
    sentence: np.ndarray
    sent_first: np.ndarray
    sent_last: np.ndarray
    barrier: np.ndarray
    breaks: np.ndarray

    @property
    def n_sentences(self) -> int:
        """The number of sentences."""
        return len(self.sent_first)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Code-point span ``[start, end)`` of sentences ``first..last`` (inclusive)."""
        return int(self.starts[self.sent_first[first]]), int(self.ends[self.sent_last[last]])


def word_spans(text: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Start and end code-point offsets (int64) and normalised forms of the words of
    ``text`` (:data:`WORD_PATTERN` runs of the text as given). The spans are found in numpy
    on the UTF-8 bytes (:func:`utf8_word_spans`), byte offsets turned into code points by
    discounting continuation bytes; ASCII words are normalised by ``lower``."""
    if text.isascii():
        starts, ends = utf8_word_spans(np.frombuffer(text.encode("ascii"), dtype=np.uint8))
        return starts.astype(np.int64), ends.astype(np.int64), WORD_PATTERN.findall(text.lower())
    buf = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    starts, ends = utf8_word_spans(buf)
    before = np.zeros(len(buf) + 1, dtype=np.int64)  # continuation bytes before each offset
    np.cumsum((buf & 0xC0) == 0x80, out=before[1:])
    found = WORD_PATTERN.findall(text)
    # each distinct word normalised once (a text repeats most of its words)
    forms = {w: w.lower() if w.isascii() else normalize(w) for w in dict.fromkeys(found)}
    tokens = list(map(forms.__getitem__, found))
    return starts - before[starts], ends - before[ends], tokens


def _touched(starts: np.ndarray, ends: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """Per word: whether it shares a character with one of ``spans`` (sorted, merged, int64
    rows ``(start, end)``)."""
    k = np.searchsorted(spans[:, 0], ends, side="left") - 1  # last span starting before its end
    return (k >= 0) & (spans[np.maximum(k, 0), 1] > starts)


def _sentence_starts(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per word: whether a sentence starts at it (terminator in the gap before it)."""
    n = len(starts)
    flag = np.zeros(n, dtype=bool)
    if n == 0:
        return flag
    flag[0] = True
    pos = np.fromiter((m.start() for m in _TERMINATOR.finditer(text)), np.int64)
    if len(pos):
        k = np.searchsorted(starts, pos, side="right")  # the word after the terminator
        ok = (k > 0) & (k < n)
        k = k[ok]
        k = k[pos[ok] >= ends[k - 1]]
        k = np.unique(k)
        upper = np.fromiter((not text[int(i)].islower() for i in starts[k]), bool, len(k))
        flag[k[upper]] = True
        flag[[i for i in k[~upper].tolist() if _full_stop(text, starts, ends, i)]] = True
    return flag


def _full_stop(text: str, starts: np.ndarray, ends: np.ndarray, i: int) -> bool:
    """Whether the gap before word ``i`` (``i > 0``) is a full stop ending a sentence: a single
    ``.`` (closing quotes or brackets may follow) then white space, after a word that is not
    an abbreviation."""
    gap_start = int(ends[i - 1])
    if not _FULL_STOP.match(text, gap_start) or text.startswith("..", gap_start):
        return False
    before = text[int(starts[i - 1]) : gap_start].lower()
    return len(before) > 1 and before not in ABBREVIATIONS


def _join_short(first: np.ndarray, barrier: np.ndarray, n_words: int, min_words: int):
    """Sentence start flags after joining each sentence of at most ``min_words`` words to the
    next one (repeatedly), never across a barrier."""
    keep = np.ones(len(first), dtype=bool)
    lengths = np.diff(np.append(first, n_words))
    run = 0
    for i in range(len(first)):
        if i and run <= min_words and not barrier[i]:
            keep[i] = False  # joined to the running sentence
            run += int(lengths[i])
        else:
            run = int(lengths[i])
    return keep


def segment(
    text: str, excluded: Sequence[tuple[int, int]] = (), min_sentence_words: int = 3
) -> Segmented:
    """Words and sentences of ``text`` (see the module doc); ``excluded`` are code-point
    spans ``(start, end)`` whose words are dropped and which break sentences."""
    starts, ends, tokens = word_spans(text)
    new = _sentence_starts(text, starts, ends)
    merged = merge_spans([(int(a), int(b)) for a, b in excluded if int(b) > int(a)])
    spans = np.asarray(merged, dtype=np.int64).reshape(-1, 2)
    hard = np.zeros(len(starts), dtype=bool)
    if len(spans):
        kept = ~_touched(starts, ends, spans)
        # a span starts between kept word i-1 and i: a hard break before i
        ks, ke = starts[kept], ends[kept]
        before = np.searchsorted(spans[:, 0], ks, side="left")
        prev = np.searchsorted(spans[:, 0], np.r_[0, ke[:-1]], side="left")
        hard = before > prev
        new = new[kept] | hard
        starts, ends = ks, ke
        tokens = [t for t, k in zip(tokens, kept.tolist(), strict=True) if k]
    if len(starts):
        new[0] = True
    first = np.flatnonzero(new)
    barrier = hard[first]
    keep = _join_short(first, barrier, len(starts), min_sentence_words)
    first, barrier = first[keep], barrier[keep]
    sentence = np.cumsum(np.isin(np.arange(len(starts)), first)) - 1
    last = np.append(first[1:], len(starts)) - 1
    return Segmented(
        starts, ends, tokens, sentence.astype(np.int64), first, last, barrier, np.cumsum(hard)
    )
