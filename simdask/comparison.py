"""Compare two groups of documents: which documents of group A share text with which of B.

:func:`compare_groups` indexes the union of both groups in a temporary index (one run, on a
Dask cluster like :meth:`simdask.Index.update`) and keeps only the *cross-group* pairs: one
document from A and one from B. Pairs inside a group are computed by the run but not
reported. Keys are prefixed by their group inside the temporary index (``A/`` and ``B/``), so a
key present in both groups names two documents; the result gives each group's own key.

``exclude`` (template files) and ``config.exclude_quotes`` / ``exclude_bibliography`` leave
text out of every count as in :meth:`simdask.Index.update` (the same kernels:
:mod:`simdask.kernels.exclusions`); :attr:`CompareResult.exclusions` applies them to the
passages of a pair (:mod:`simdask.evidence.excluded`).

Both directions come from one shared-chunk count: ``a_in_b`` is
:func:`~simdask.kernels.similarity.containment` ``(shared, |a|)`` percent (how much of the A
document is found in the B document), ``b_in_a`` is ``containment(shared, |b|)``; with
``exclude_quotes`` each direction has its own count (a quotation is left out of its own
document only, docs/term.md).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from simdask.config import IndexConfig
from simdask.engine.run import RunOptions
from simdask.errors import ConfigError, IndexExistsError
from simdask.evidence.excluded import PairExclusions
from simdask.evidence.recount import recount_pairs
from simdask.index import Index, RunSummary
from simdask.ingest.sources import list_items
from simdask.kernels.measures import containment
from simdask.progress import Callback
from simdask.read.undirected_pairs import (
    Pair as CrossPair,  # a pair across the groups: A in B, B in A
)
from simdask.storage.failures import WARNING_KINDS

__all__ = ["GROUP_PREFIXES", "CompareResult", "CrossPair", "compare_groups"]

#: key prefixes of the two groups inside the temporary index
GROUP_PREFIXES = ("A/", "B/")


@dataclass
class CompareResult:
    """The cross-group pairs, best first (larger of the two directions, then A→B), and the
    summary of the run that indexed both groups (per-file errors carry group-prefixed keys);
    ``exclusions``: what the counts left out, for the passages of a pair."""

    pairs: list[CrossPair]
    summary: RunSummary
    documents: dict[str, int] = field(default_factory=dict)
    index_path: Path | None = None
    exclusions: PairExclusions = field(default_factory=PairExclusions)

    @property
    def errors(self) -> list[tuple[str, str, str, str]]:
        """``(group, key, kind, message)`` of documents that could not be read or were left
        out (``group`` ``"A"``/``"B"``, ``key`` the group's own key)."""
        out = []
        for key, kind, msg in self.summary.errors:
            g, k = _split(key)
            out.append(("AB"[g], k, kind, msg))
        return out

    @property
    def unreadable(self) -> list[tuple[str, str, str, str]]:
        """:attr:`errors` other than ``too_short`` (documents of fewer than ``k`` words are
        read and indexed, they just have no chunks) and warnings about indexed documents."""
        return [e for e in self.errors if e[2] != "too_short" and e[2] not in WARNING_KINDS]


def compare_groups(
    a_sources: Iterable[str | os.PathLike],
    b_sources: Iterable[str | os.PathLike],
    *,
    threshold: float = 1.0,
    min_similarity: float = 0.0,
    config: IndexConfig | None = None,
    client=None,
    options: RunOptions | None = None,
    callback: Callback | None = None,
    keep_index: str | os.PathLike | None = None,
    exclude: Iterable[str | os.PathLike] | None = None,
    min_match: int = 0,
) -> CompareResult:
    """Documents of ``a_sources`` similar to documents of ``b_sources`` (cross-group only).

    Sources are files, folders and JSONL files as for :meth:`Index.update`. ``threshold``:
    least similarity, in percent, either direction, for a pair to be computed (the temporary
    index's threshold); ``min_similarity``: report only pairs whose larger direction is at
    least this many percent. ``config``: other index settings (``hash_bits``, ``shards``,
    ``max_df``...); its ``threshold`` is replaced by ``threshold`` and its ``top_k`` by the
    number of documents, so no cross-group pair is cut by a per-document limit. ``client``:
    a ``distributed.Client`` (None: a LocalCluster for this call). ``keep_index``: build the
    index in this (new) directory and keep it (keys there carry the ``A/``/``B/`` prefixes);
    otherwise it lives in a temporary directory removed afterwards. ``exclude``: template
    files whose chunks are left out of every count (a missing or unreadable one raises
    :class:`~simdask.errors.SourceError` before anything runs); quotations and reference
    lists are left out by ``config.exclude_quotes`` / ``config.exclude_bibliography``.
    ``min_match`` (``--min-match``): each pair's percentages counted over the matches of at
    least this many words only, each direction on its own (:mod:`simdask.evidence.recount`),
    and ``min_similarity`` applied to them; 0: the stored ones.
    """
    a_items = list_items(a_sources, prefix=GROUP_PREFIXES[0])
    b_items = list_items(b_sources, prefix=GROUP_PREFIXES[1])
    if not a_items or not b_items:
        empty = "A" if not a_items else "B"
        raise ConfigError(
            f"group {empty} holds no documents: expected files, folders with .txt/.md files "
            "or .jsonl files with at least one line"
        )
    cfg = (config or IndexConfig()).replace(
        threshold=threshold, top_k=max(1, len(a_items) + len(b_items))
    )
    tmp = None
    if keep_index is not None:
        path = Path(keep_index)
        if path.exists() and any(path.iterdir()):
            raise IndexExistsError(f"--keep-index: expected a new or empty directory, got {path}")
    else:
        tmp = tempfile.mkdtemp(prefix="simdask-compare-")
        path = Path(tmp) / "index"
    try:
        with Index.create(path, cfg) as idx:
            summary = idx.update(
                items=[*a_items, *b_items],
                client=client,
                options=options,
                callback=callback,
                exclude=None if exclude is None else list(exclude),
            )
            pairs = cross_pairs(idx, 0.0 if min_match else min_similarity)
            counts = _group_counts(idx)
            excl = idx.pair_exclusions()
            if min_match:
                pairs = _recounted(idx, pairs, excl, min_match, min_similarity)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return CompareResult(pairs, summary, counts, None if tmp is not None else path, excl)


def _recounted(idx: Index, pairs, excl, min_match: int, min_similarity: float) -> list:
    """``pairs`` counted over the matches of at least ``min_match`` words, from the texts
    the index holds (:func:`~simdask.evidence.recount.recount_pairs`)."""
    a_pre, b_pre = GROUP_PREFIXES
    texts_a = {p.a_key: idx.text(a_pre + p.a_key) for p in pairs}
    texts_b = {p.b_key: idx.text(b_pre + p.b_key) for p in pairs}
    k = idx.config.k
    return recount_pairs(pairs, texts_a, texts_b, k, excl, min_match, min_similarity)


def _split(key: str) -> tuple[int, str]:
    """Group (0: A, 1: B) and the group's own key of a prefixed key."""
    return (0 if key.startswith(GROUP_PREFIXES[0]) else 1), key[len(GROUP_PREFIXES[0]) :]


def cross_pairs(idx: Index, min_similarity: float = 0.0) -> list[CrossPair]:
    """The cross-group pairs stored in an index whose keys carry :data:`GROUP_PREFIXES`.

    A pair is included when either direction is stored; the other direction is computed from
    the row's reverse count (the same shared count, or with ``exclude_quotes`` the other
    document's own, docs/term.md; it may be below the index's threshold).
    """
    found: dict[tuple[str, str], CrossPair] = {}
    for r in idx.pairs():
        (gd, kd), (go, ko) = _split(r.doc), _split(r.other)
        if gd == go:
            continue
        if gd == 0:
            a, b, na, nb, a_in_b, b_in_a = kd, ko, r.doc_chunks, r.other_chunks, r.similarity, None
        else:
            a, b, na, nb, a_in_b, b_in_a = ko, kd, r.other_chunks, r.doc_chunks, None, r.similarity
        old = found.get((a, b))
        if old is not None:  # the other direction was seen first: keep both stored values
            a_in_b = old.a_in_b if a_in_b is None else a_in_b
            b_in_a = old.b_in_a if b_in_a is None else b_in_a
        # the direction not stored: the row's reverse count (its own unless quotations
        # are counted per direction, docs/term.md)
        back = r.shared if r.reverse_shared is None else r.reverse_shared
        found[(a, b)] = CrossPair(
            a,
            b,
            containment(back, na) if a_in_b is None else a_in_b,
            containment(back, nb) if b_in_a is None else b_in_a,
            r.shared,
            na,
            nb,
        )
    pairs = [p for p in found.values() if max(p.a_in_b, p.b_in_a) >= min_similarity]
    pairs.sort(key=lambda p: (-max(p.a_in_b, p.b_in_a), -p.a_in_b, p.a_key, p.b_key))
    return pairs


def _group_counts(idx: Index) -> dict[str, int]:
    """Documents indexed per group (``{"A": n, "B": m}``)."""
    counts = {"A": 0, "B": 0}
    for d in idx.catalog.documents():
        counts["AB"[_split(d.key)[0]]] += 1
    return counts
