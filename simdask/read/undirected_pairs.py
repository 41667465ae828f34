"""Undirected pairs for people: one row per unordered pair, both percentages, plain wording.

The index stores *directed* similarities (``doc -> other``: the percent of ``doc``'s chunks
found in ``other``), each direction kept only if it passes the threshold and the document's
``top_k``. A person asks "which two documents share text, and who holds how much of whom",
so the human views (tables, the site, the web page) show each unordered pair once
(:class:`Pair`): ``a_key`` is the document of which the larger share is found in the other
(a copy inside a longer text is wholly found in it), ``a_in_b`` that share, ``b_in_a`` the
reverse. Both come from the one shared-chunk count, so a pair whose reverse row was not
stored still gets both.
JSONL and CSV outputs keep the directed rows unless asked for pairs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from simdask.kernels.measures import CONTAINMENT, containment
from simdask.storage.catalog import PairRow

__all__ = ["PAIR_FIELDS", "Pair", "counted", "holds", "orient", "pct", "undirected"]

#: fields of an undirected pair, as ``--pairs`` JSONL/CSV print them (README "Pairs")
PAIR_FIELDS = ("a_key", "b_key", "a_in_b", "b_in_a", "shared", "a_chunks", "b_chunks")


def pct(value: float) -> str:
    """A percentage for a sentence: ``62 %``, ``4.4 %``, ``0.3 %``
    (:meth:`~simdask.kernels.measures.Measure.say` of the stored measure)."""
    return CONTAINMENT.say(value)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it takes: ``1 shared chunk``, ``2 shared chunks``,
    ``0 checked documents`` (``plural``: when it is not the noun and ``s``)."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def holds(a: str, b: str, a_in_b: float, b_in_a: float) -> str:
    """The plain wording of a pair: ``"B holds 62 % of A; A holds 18 % of B"`` (``a_in_b``:
    percent of A's chunks found in B; ``b_in_a`` the reverse;
    :meth:`~simdask.kernels.measures.Measure.holds` of the stored measure)."""
    return CONTAINMENT.holds(a, b, a_in_b, b_in_a)


@dataclass(frozen=True)
class Pair:
    """One unordered pair of documents: ``a_in_b`` percent of ``a_key``'s chunks are found in
    ``b_key``, ``b_in_a`` percent of ``b_key``'s in ``a_key``; ``shared`` distinct chunks in
    common; ``a_chunks``, ``b_chunks`` each document's distinct chunks."""

    a_key: str
    b_key: str
    a_in_b: float
    b_in_a: float
    shared: int
    a_chunks: int
    b_chunks: int

    @property
    def larger(self) -> float:
        """The larger of the two percentages (what pairs are sorted and filtered by)."""
        return max(self.a_in_b, self.b_in_a)

    @property
    def wording(self) -> str:
        """``"B holds 62 % of A; A holds 18 % of B"``."""
        return holds(self.a_key, self.b_key, self.a_in_b, self.b_in_a)

    def to_dict(self) -> dict[str, Any]:
        """The pair as ``--pairs`` JSONL prints it (:data:`PAIR_FIELDS`)."""
        return {f: getattr(self, f) for f in PAIR_FIELDS}

    def table_row(self) -> dict[str, Any]:
        """The pair with its wording (column ``in_words``), for tables."""
        return {**self.to_dict(), "in_words": self.wording}

    def swapped(self) -> Pair:
        """The same pair seen from ``b_key``."""
        return Pair(
            self.b_key,
            self.a_key,
            self.b_in_a,
            self.a_in_b,
            self.shared,
            self.b_chunks,
            self.a_chunks,
        )


def _from_row(r: PairRow, reverse: float | None) -> Pair:
    if reverse is None:  # the row's reverse count (its own unless quotations are directed)
        back = r.shared if r.reverse_shared is None else r.reverse_shared
        reverse = containment(back, r.other_chunks)
    rev = reverse
    return Pair(r.doc, r.other, r.similarity, rev, r.shared, r.doc_chunks, r.other_chunks)


def undirected(rows: Iterable[PairRow], min_similarity: float = 0.0) -> list[Pair]:
    """The unordered pairs of directed rows, each once, oriented so that ``a_in_b >= b_in_a``
    (ties: the smaller key first), the larger percentage first (then by keys).

    A pair stored in one direction only gets the other from its reverse shared-chunk count
    (:attr:`PairRow.reverse_shared`: the row's own count unless the index keeps quotations
    out of the checked document only, docs/term.md). Pairs
    whose larger percentage is below ``min_similarity`` (percent) are left out.
    """
    by_pair: dict[tuple[str, str], dict[tuple[str, str], PairRow]] = {}
    for r in rows:
        by_pair.setdefault(tuple(sorted((r.doc, r.other))), {})[(r.doc, r.other)] = r
    out = []
    for (x, y), found in by_pair.items():
        fwd, rev = found.get((x, y)), found.get((y, x))
        if fwd is not None:
            p = _from_row(fwd, rev.similarity if rev is not None else None)
        else:
            p = _from_row(rev, None).swapped()
        if p.b_in_a > p.a_in_b:
            p = p.swapped()
        if p.larger >= min_similarity:
            out.append(p)
    out.sort(key=lambda p: (-p.larger, -min(p.a_in_b, p.b_in_a), p.a_key, p.b_key))
    return out


def orient(pairs: Iterable[Pair], key: str) -> list[Pair]:
    """``pairs`` seen from the document ``key`` (``a_key == key`` in each), same order."""
    return [p if p.a_key == key else p.swapped() for p in pairs]
