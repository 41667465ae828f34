"""A chunk-ID range as base + delta segments − tombstones, read from a :class:`ShardStore`.

Every generation writes at most one segment per range, stored exactly as a shard
(``gen-GGGGGG/shard-SSSS``, :mod:`simdask.storage.shards`), so ``(range, generation)`` names a
segment. The catalog's ``segments`` table is the per-range manifest of the committed
generation; its ``tombstones`` table says which postings of older segments are hidden
(:mod:`simdask.kernels.segment_merge`). Readers merge a range's segments on the fly: whole
(:func:`read_range`) or only the posting lists of given chunk IDs (:class:`RangeReader`), which
is what queries and the similarity of changed documents need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from simdask.kernels.postings import doc_mask
from simdask.kernels.segment_merge import (
    concat_disjoint,
    live_mask,
    merge_segments,
    restrict,
    tombstone_table,
)
from simdask.storage.shards import ShardData, ShardStore

if TYPE_CHECKING:
    from simdask.storage.catalog import Catalog

__all__ = [
    "Manifest",
    "RangeReader",
    "add_delta",
    "current_tombstones",
    "merge_shards",
    "migrate_legacy",
    "read_range",
    "remove_segment",
    "restrict_shard",
    "split_small",
    "stored_segments",
    "waiting_bytes",
]

#: called with ``(generation, range)`` before a segment is opened (e.g. the size check)
SizeCheck = Callable[[int, int], None]

#: ``{range: [(generation, keys, postings)]}``, oldest segment first (Catalog.segments())
Manifest = dict[int, list[tuple[int, int, int]]]


def current_tombstones(catalog: Catalog, size: int = 0) -> np.ndarray:
    """``tomb[d]`` (int64): newest committed tombstone generation of each doc ID."""
    docs, gens = catalog.tombstones()
    return tombstone_table(docs, gens, size)


def merge_shards(parts: list[ShardData], tomb: np.ndarray, lo: int, hi: int) -> ShardData:
    """Segments of one range (``part.generation`` each) merged into their live postings."""
    if len(parts) == 1 and not len(tomb):
        return parts[0]
    if len(parts) == 1 and live_mask(parts[0].doc_ids, parts[0].generation, tomb).all():
        return parts[0]
    arrays = merge_segments(
        [(p.chunk_keys, p.offsets, p.doc_ids) for p in parts],
        [p.generation for p in parts],
        tomb,
    )
    gen = max((p.generation for p in parts), default=0)
    return ShardData(lo, hi, *arrays, generation=gen)


def add_delta(before: ShardData, delta: ShardData, tomb: np.ndarray) -> ShardData:
    """``merge_shards([before, delta], tomb, ...)`` for a run's ``delta`` and the committed
    live postings ``before`` (of some chunks): the postings of ``before`` that ``tomb`` (with
    this run's tombstones) hides are dropped and the delta's lists appended, without the
    k-way merge's sort, when no document of the delta has a live posting in ``before`` (the
    rule: a run's documents are new, or tombstoned by it). Lists are then not sorted by doc
    ID (as none of the pair kernels needs); otherwise it merges."""
    live = live_mask(before.doc_ids, before.generation, tomb)
    docs = np.unique(delta.doc_ids)
    if doc_mask(docs, np.asarray(before.doc_ids)[live]).any():
        return merge_shards([before, delta], tomb, delta.lo, delta.hi)
    keys, offsets, doc_ids = before.chunk_keys, before.offsets, before.doc_ids
    if not live.all():
        df: np.ndarray = np.diff(np.asarray(offsets, np.int64))
        chunk = np.repeat(np.arange(len(df)), df)[live]
        kept = np.bincount(chunk, minlength=len(df))
        offsets = np.zeros(len(df) + 1, np.uint64)
        np.cumsum(kept, out=offsets[1:])
        doc_ids = np.asarray(doc_ids)[live]
        keep = kept > 0
        keys = np.asarray(keys)[keep]
        offsets = np.concatenate([[0], offsets[1:][keep]]).astype(np.uint64)
    arrays = concat_disjoint(
        (keys, offsets, doc_ids), (delta.chunk_keys, delta.offsets, delta.doc_ids)
    )
    gen = max(before.generation, delta.generation)
    return ShardData(delta.lo, delta.hi, *arrays, generation=gen)


def restrict_shard(data: ShardData, chunk_ids: np.ndarray) -> ShardData:
    """A segment held in memory restricted to the sorted, distinct ``chunk_ids``."""
    arrays = restrict((data.chunk_keys, data.offsets, data.doc_ids), chunk_ids)
    return ShardData(data.lo, data.hi, *arrays, generation=data.generation)


def read_range(
    store: ShardStore, shard: int, gens: Iterable[int], tomb: np.ndarray, lo: int, hi: int
) -> ShardData:
    """The live postings of one range whose segments are ``gens`` (whole, in memory)."""
    parts = [store.read(g, shard) for g in gens]
    if not parts:
        return ShardData.empty(lo, hi)
    return merge_shards(parts, tomb, lo, hi)


#: a range's segments other than its largest are combined in memory by :class:`RangeReader`
#: while they hold at most this many postings together (~8 bytes each)
SMALL_POSTINGS = 8 << 20


def split_small(segs: list[tuple[int, int, int]]) -> tuple[list[int], list[int]]:
    """``(generations looked up one by one, generations combined in memory)`` of a range's
    segments ``[(generation, keys, postings)]``: the largest segment is looked up; the others
    are combined when they hold at most :data:`SMALL_POSTINGS` postings together."""
    if len(segs) <= 2:
        return [g for g, _, _ in segs], []
    order = sorted(segs, key=lambda x: (-x[2], x[0]))
    rest = order[1:]
    if sum(p for _, _, p in rest) > SMALL_POSTINGS:
        return [g for g, _, _ in segs], []
    return [order[0][0]], sorted(g for g, _, _ in rest)


def _open_arrays(store: ShardStore, generation: int, shard: int) -> dict[str, Any]:
    return store.open_arrays(generation, shard)


class RangeReader:
    """Reads the posting lists of given chunk IDs from the segments of ranges, keeping each
    segment's arrays open (memory maps for a local index) for later reads.

    A range's small segments (the deltas of incremental runs, :func:`split_small`) are read
    whole once and kept merged in memory, so a query costs about two lookups per range
    however many runs have added segments since the last compaction."""

    def __init__(
        self,
        store: ShardStore,
        check: SizeCheck | None = None,
        opener: Callable[[ShardStore, int, int], dict[str, Any]] | None = None,
    ) -> None:
        self.store = store
        #: called with ``(generation, range)`` before a segment is first opened or read (e.g.
        #: the size check against the recorded checksums)
        self.check = check or (lambda generation, shard: None)
        #: opens a segment's arrays: ``opener(store, generation, range)`` (default
        #: :meth:`ShardStore.open_arrays`; e.g. :meth:`~simdask.storage.kept_maps.KeptMaps.
        #: open_arrays`, which keeps them mapped for later runs)
        self.opener = opener or _open_arrays
        self._open: dict[tuple[int, int], dict[str, Any]] = {}
        self._small: dict[tuple[int, tuple[int, ...]], ShardData] = {}

    def opened(self, shard: int, generation: int, check: SizeCheck | None = None) -> dict[str, Any]:
        """The stored arrays of one segment (opened once; see ShardStore.open_arrays);
        ``check``: instead of :attr:`check` (e.g. one that threads may call)."""
        key = (generation, shard)
        if key not in self._open:
            (check or self.check)(generation, shard)
            self._open[key] = self.opener(self.store, generation, shard)
        return self._open[key]

    def retain(self, manifest: Manifest) -> None:
        """Forget opened segments that are not in ``manifest`` any more."""
        live = {(g, s) for s, segs in manifest.items() for g, _, _ in segs}
        self._open = {k: v for k, v in self._open.items() if k in live}
        self._small = {k: v for k, v in self._small.items() if all((g, k[0]) in live for g in k[1])}

    def combined(
        self,
        shard: int,
        gens: list[int],
        tomb: np.ndarray,
        lo: int,
        hi: int,
        check: SizeCheck | None = None,
    ) -> ShardData:
        """The live postings of the segments ``gens`` of a range, merged in memory and kept
        (its generation: the newest of them; later tombstones still apply to it as to each
        of them, since every later tombstone is newer than all of them); ``check`` as in
        :meth:`opened`."""
        key = (shard, tuple(gens))
        if key not in self._small:
            for g in gens:
                (check or self.check)(g, shard)
            parts = [self.store.read(g, shard) for g in gens]
            self._small[key] = merge_shards(parts, tomb, lo, hi)
        return self._small[key]

    def subset(
        self,
        shard: int,
        gens: list[int],
        chunk_ids: np.ndarray,
        tomb: np.ndarray,
        lo: int,
        hi: int,
    ) -> ShardData:
        """Live postings of the sorted, distinct ``chunk_ids`` in range ``shard`` whose
        segments are ``gens``: per-segment lookups merged (only the pages holding them are
        read from memory-mapped segments)."""
        if not gens:
            return ShardData.empty(lo, hi)
        parts = [self.store.read_subset(self.opened(shard, g), chunk_ids, g) for g in gens]
        return merge_shards(parts, tomb, lo, hi)

    def clear(self) -> None:
        """Forget every opened segment."""
        self._open.clear()
        self._small.clear()


def remove_segment(store: ShardStore, generation: int, shard: int) -> None:
    """Delete one segment (missing is fine); its generation's directory goes when empty."""
    store.remove_shard(generation, shard)


def migrate_legacy(catalog: Catalog, store: ShardStore) -> bool:
    """Give an index written before segments (a ``shards`` table) its manifest: one segment
    per range, sizes read from the stored metadata. Returns True if it migrated."""
    if catalog.meta("format_version") != "1":
        return False
    legacy = catalog.legacy_shards()
    manifests = {s: [(g, *store.counts(g, s))] for s, g in legacy.items()}
    catalog.migrate_shards(manifests)
    return True


def stored_segments(store: ShardStore) -> list[tuple[int, int]]:
    """``(generation, range)`` of every segment directory in the store, committed or not."""
    return sorted((g, s) for g in store.generations() for s in store.stored_ranges(g))


def waiting_bytes(store: ShardStore, manifest: Manifest) -> int:
    """Bytes of the stored segments the committed ``manifest`` does not list: those garbage
    collection keeps one run longer for readers, or has not removed yet (measured on disk)."""
    live = {(g, s) for s, segs in manifest.items() for g, _, _ in segs}
    return sum(store.shard_nbytes(g, s) for g, s in stored_segments(store) if (g, s) not in live)
