"""The pairs of a results table counted as a view shows them (issue 31, items 11 and 16): with
``--min-match WORDS``, ``compare`` prints and pages each pair's two percentages over the
matches of at least WORDS words only, each direction on its own
(:func:`~simdask.evidence.passages.compare_texts`: with ``--exclude-quotes``, a passage copied
from inside the other's quotation counts for the copier only), so that the table's numbers
and the passages shown say the same. The stored similarities are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import compare_texts
from simdask.ingest.sources import read_queries
from simdask.read.undirected_pairs import Pair

__all__ = ["group_texts", "recount_pairs"]


def group_texts(source: str, keys: Iterable[str]) -> dict[str, str]:
    """The texts of the documents ``keys`` of one group (a file, folder or JSONL file, keyed
    as ``compare`` keys them); a document that cannot be read is left out."""
    wanted = set(keys)
    return {k: t for k, t in read_queries([source]) if k in wanted and isinstance(t, str)}


def recount_pairs(
    pairs: Sequence[Pair],
    texts_a: dict[str, str],
    texts_b: dict[str, str],
    k: int,
    exclusions: PairExclusions | None,
    min_words: int,
    min_similarity: float = 0.0,
) -> list[Pair]:
    """``pairs`` (A's document as ``a_key``) with ``a_in_b`` and ``b_in_a`` (percent) counted
    over the matches of at least ``min_words`` words (in the copying text), ``shared`` A's
    count; those whose larger percentage falls below ``min_similarity`` left out, the rest
    the largest first. A pair whose texts are not in ``texts_a``/``texts_b`` keeps its
    numbers."""
    out = []
    for p in pairs:
        a, b = texts_a.get(p.a_key), texts_b.get(p.b_key)
        if a is not None and b is not None:
            ev = compare_texts(a, b, k, min_words=min_words, exclusions=exclusions)
            p = Pair(
                p.a_key,
                p.b_key,
                ev.similarity,
                ev.reverse_similarity,
                ev.shared,
                ev.doc_chunks,
                ev.other_chunks,
            )
        if p.larger >= min_similarity:
            out.append(p)
    out.sort(key=lambda p: (-p.larger, -p.a_in_b, p.a_key, p.b_key))
    return out
