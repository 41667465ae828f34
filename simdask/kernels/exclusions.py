"""Text a user may leave out of the shared counts (issue 16): quotations and reference lists.

Pure functions of a text giving character spans ``[start, end)``; :func:`blank_spans` replaces
the spans' characters by spaces, so that the words left are exactly those outside the spans and
every character offset into the text stays valid (for reports that show the excluded text).

* **Quotations**: text between quotation marks of the common languages, within one paragraph
  (no blank line inside) and at most :data:`MAX_QUOTE` characters: ``"…"``, ``“…”``, ``„…“``,
  ``„…”``, ``«…»``, ``»…«``, ``‹…›``, ``›…‹``, ``‚…‘``, ``「…」``, ``『…』``, ``‘…’`` (the last only
  opened after a space or line start, so apostrophes are not quotes); and block quotes where
  plain text shows them: lines starting with ``>`` (e-mail, Markdown).
* **Bibliography**: from the *last* line that is only a reference-list heading (References,
  Bibliography, Works Cited, Literature, Literatura, Seznam literatury, Použitá literatura,
  Literaturverzeichnis, Bibliographie, Références, Bibliografía, Referencias, …, optionally
  numbered, optionally ending in ``:``) to the end of the text or to the next appendix heading.

:class:`Exclusions` is what an index leaves out of every chunk set (``update --exclude``,
``--exclude-quotes``, ``--exclude-bibliography``): a chunk whose ``k`` words all lie inside
the spans above, and the chunk IDs of template texts. :func:`chunk_excluding` chunks texts
under them (:func:`simdask.kernels.hashing.chunk_batch`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from simdask.kernels.hashing import ChunkedBatch, chunk_batch, window_chunks

__all__ = [
    "MAX_QUOTE",
    "Exclusions",
    "bibliography_span",
    "blank_spans",
    "chunk_excluding",
    "excluded_spans",
    "merge_spans",
    "quote_spans",
    "template_chunk_ids",
    "window_chunks_excluding",
]

#: longest quotation taken, in characters (an unclosed mark must not swallow a chapter)
MAX_QUOTE = 3000

_PAIRS = (
    ('"', '"'),
    ("“", "”"),
    ("„", "“"),
    ("„", "”"),
    ("«", "»"),
    ("»", "«"),
    ("‹", "›"),
    ("›", "‹"),
    ("‚", "‘"),
    ("「", "」"),
    ("『", "』"),
)
# the shortest quotation opened at a mark: up to the first closing mark; one that crosses a
# blank line (a paragraph break, :data:`_BLANK_LINE`) is no quotation
_QUOTE_RES = [
    (o, re.compile(rf"{re.escape(o)}[^{re.escape(c)}]{{1,{MAX_QUOTE}}}{re.escape(c)}"))
    for o, c in _PAIRS
] + [("‘", re.compile(rf"(?:(?<=\s)|^)‘[^’]{{1,{MAX_QUOTE}}}’", re.M))]
_BLANK_LINE = re.compile(r"\n\s*\n")
# every opening mark is one character: a character class, searched much faster than an
# alternation
_OPENERS = re.compile("[" + "".join(sorted({re.escape(o) for o, _ in _QUOTE_RES})) + "]")
_BLOCK_QUOTE = re.compile(r"^[ \t]*>.*(?:\n[ \t]*>.*)*", re.M)

_BIB_NAMES = (
    "references",
    "reference list",
    "bibliography",
    "works cited",
    "literature",
    "literature cited",
    "literatura",
    "použitá literatura",
    "seznam literatury",
    "seznam použité literatury",
    "seznam použitých zdrojů",
    "zoznam použitej literatúry",
    "literaturverzeichnis",
    "bibliographie",
    "références",
    "références bibliographiques",
    "bibliografía",
    "referencias",
    "bibliografia",
    "riferimenti bibliografici",
    "referenties",
    "litteratur",
    "kirjallisuus",
    "irodalomjegyzék",
)
# a whole line (matched line by line: scanning the text with ^...$ tries every position)
_BIB_HEADING = re.compile(
    r"[ \t]*(?:(?:\d+|[IVXLC]+)(?:\.\d+)*\.?[ \t]+)?(?:"
    + "|".join(re.escape(n) for n in sorted(_BIB_NAMES, key=len, reverse=True))
    + r")[ \t]*:?[ \t]*",
    re.I,
)
#: longest line taken for a reference-list heading, in characters
_MAX_HEADING = 80
_APPENDIX = re.compile(
    r"^[ \t]*(?:appendix|appendices|annex|annexe|anhang|příloh[ay]|prílohy|apéndice|allegat[oi])"
    r"\b[^\n]{0,80}$",
    re.M | re.I,
)


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, non-overlapping union of the spans."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def quote_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the quotations in ``text`` (marks included), merged and sorted.

    Scanned left to right: at each opening mark outside a quotation already taken, the
    shortest quotation opened there is taken (so the closing mark of ``«…»`` never opens a
    ``»…«``)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while (m := _OPENERS.search(text, pos)) is not None:
        found = [
            q.span()
            for o, rx in _QUOTE_RES
            if o == m.group()
            and (q := rx.match(text, m.start()))
            and not _BLANK_LINE.search(text, q.start(), q.end())
        ]
        if found:
            spans.append(min(found, key=lambda sp: sp[1]))
            pos = spans[-1][1]
        else:
            pos = m.end()
    if ">" in text:
        spans += [m.span() for m in _BLOCK_QUOTE.finditer(text)]
    return merge_spans(spans)


def bibliography_span(text: str) -> tuple[int, int] | None:
    """The span of the reference list (heading included), or None if there is no heading."""
    last = None
    pos = 0
    for line in text.split("\n"):
        if len(line) <= _MAX_HEADING and _BIB_HEADING.fullmatch(line):
            last = (pos, pos + len(line))
        pos += len(line) + 1
    if last is None:
        return None
    end = len(text)
    nxt = _APPENDIX.search(text, last[1])
    if nxt is not None:
        end = nxt.start()
    return last[0], end


def blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the characters of ``spans`` replaced by spaces (same length; newlines
    kept so that line structure stays)."""
    chars = list(text)
    for s, e in spans:
        for i in range(s, e):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def excluded_spans(text: str, quotes: bool, bibliography: bool) -> list[tuple[int, int, str]]:
    """The spans of ``text`` left out under the settings, each with its kind (``quote`` or
    ``bibliography``), sorted and not overlapping (a quotation inside the reference list
    counts as the reference list)."""
    bib = bibliography_span(text) if bibliography else None
    out = []
    if quotes:
        for s, e in quote_spans(text):
            if bib is not None and s < bib[1] and bib[0] < e:  # clipped to outside the list
                for a, b in ((s, min(e, bib[0])), (max(s, bib[1]), e)):
                    if a < b:
                        out.append((a, b, "quote"))
            else:
                out.append((s, e, "quote"))
    if bib is not None and bib[0] < bib[1]:
        out.append((bib[0], bib[1], "bibliography"))
    return sorted(out)


@dataclass(frozen=True, eq=False)
class Exclusions:
    """What an index leaves out of every chunk set (and so of ``|A|`` and of every shared
    count): chunks whose words all lie in a quotation (``quotes``) or in the reference list
    (``bibliography``), and the chunk IDs ``chunk_ids`` (sorted, distinct: the chunks of the
    template texts named by ``update --exclude``)."""

    quotes: bool = False
    bibliography: bool = False
    chunk_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))

    @property
    def active(self) -> bool:
        """Whether anything is left out."""
        return self.quotes or self.bibliography or len(self.chunk_ids) > 0

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The merged character spans of ``text`` whose words are left out."""
        return merge_spans(
            [(s, e) for s, e, _ in excluded_spans(text, self.quotes, self.bibliography)]
        )


def template_chunk_ids(texts: list[str], k: int, hash_bits: int, seed: int) -> np.ndarray:
    """The sorted distinct chunk IDs of the template texts (every window of each)."""
    ids = chunk_batch(list(texts), k, hash_bits, seed).chunk_ids
    return np.unique(ids)


def chunk_excluding(
    texts: list[str], k: int, hash_bits: int, seed: int, exclusions: Exclusions | None
) -> ChunkedBatch:
    """:func:`~simdask.kernels.hashing.chunk_batch` of ``texts`` with ``exclusions`` applied
    (None or nothing active: plain chunking)."""
    if exclusions is None or not exclusions.active:
        return chunk_batch(texts, k, hash_bits, seed)
    spans, drop = _exclusion_args(texts, exclusions)
    return chunk_batch(texts, k, hash_bits, seed, excluded_spans=spans, drop_ids=drop)


def window_chunks_excluding(
    texts: list[str], k: int, hash_bits: int, seed: int, exclusions: Exclusions | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~simdask.kernels.hashing.window_chunks` (every window's chunk ID in document
    order, repeats kept) of ``texts`` with ``exclusions`` applied: the same sets as
    :func:`chunk_excluding`, unsorted."""
    if exclusions is None or not exclusions.active:
        return window_chunks(texts, k, hash_bits, seed)
    spans, drop = _exclusion_args(texts, exclusions)
    return window_chunks(texts, k, hash_bits, seed, excluded_spans=spans, drop_ids=drop)


def _exclusion_args(
    texts: list[str], exclusions: Exclusions
) -> tuple[list[list[tuple[int, int]]] | None, np.ndarray | None]:
    """The chunking kernels' ``excluded_spans`` (quotations, reference lists; None when
    neither is excluded) and ``drop_ids`` (template chunk IDs) for ``texts``."""
    spans = None
    if exclusions.quotes or exclusions.bibliography:
        spans = [exclusions.spans(t) for t in texts]
    return spans, exclusions.chunk_ids
