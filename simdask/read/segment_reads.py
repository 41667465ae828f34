"""What :class:`~simdask.index.Index` reads of the segments: a range's live postings are its
committed segments (base + deltas, :mod:`simdask.storage.segments`) minus what tombstones
hide, merged on the fly, whole (:meth:`SegmentReads.shard`) or only the posting lists of a
query's chunk IDs (:meth:`SegmentReads.query_shards`). Opened segments, whole segments read
and the tombstone table are cached here, per committed state.

Read-only, like :mod:`simdask.index` (no dask, distributed or zarr imported).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import numpy as np

from simdask.config import IndexConfig
from simdask.errors import damaged
from simdask.kernels.segment_merge import live_doc_counts, live_mask
from simdask.kernels.similarity import query_postings
from simdask.read.segment_damage import check_counts, segment_damage
from simdask.storage import checksums
from simdask.storage.catalog import Catalog
from simdask.storage.segments import (
    Manifest,
    RangeReader,
    current_tombstones,
    merge_shards,
    restrict_shard,
    split_small,
)
from simdask.storage.shards import ShardData, ShardStore, shard_ranges
from simdask.storage.verified import verify_problems

__all__ = ["IO_THREADS", "SegmentReads", "segment_set", "threads"]

_NAMES = ("chunk_keys", "offsets", "doc_ids")


def segment_set(manifest: Manifest) -> set[tuple[int, int]]:
    """``{(range, generation)}`` of a manifest's segments."""
    return {(s, g) for s, segs in manifest.items() for g, _, _ in segs}


#: threads of a query's reads (:meth:`SegmentReads.query_shards`): mostly waiting on the disk
IO_THREADS = 16


def threads(fn, items: list, n: int | None = None) -> list:
    """``[fn(x) for x in items]`` on ``n`` threads (None: one per core; zstd, numpy and
    ``pread`` release the GIL)."""
    if len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(min(len(items), n or os.cpu_count() or 1)) as ex:
        return list(ex.map(fn, items))


class SegmentReads:
    """The segment reads of one open index: its folder ``path`` (where the files recorded in
    the catalog are measured), ``catalog``, shard ``store`` and ``config``; the size check of
    a segment's files before it is read (:meth:`check_sizes`)."""

    def __init__(self, path: Path, catalog: Catalog, store: ShardStore, config: IndexConfig):
        self.path, self.catalog, self.store, self.config = path, catalog, store, config
        self._recorded: tuple[int, dict, dict] | None = None  # generation, rows, by segment
        self._shards: dict[tuple[int, int], ShardData] = {}  # (generation, range): a segment
        self._tomb: tuple[int, np.ndarray] | None = None
        self._reader = RangeReader(store, self.check_sizes)
        self.preloaded = False
        # per committed generation: the manifest and each range's split (split_small)
        self._manifest: tuple[int, Manifest, dict] | None = None

    def clear(self) -> None:
        """Forget cached segments, opened arrays, tombstones and recorded file sizes."""
        self._shards.clear()
        self._reader.clear()
        self._tomb = None
        self._manifest = None
        self._recorded = None

    def check_sizes(
        self,
        generation: int,
        shard: int,
        files: dict[str, list[tuple[str, int, str]]] | None = None,
        counts: dict[tuple[int, int], tuple[int, int]] | None = None,
        lazy: bool = False,
    ) -> None:
        """Raise :class:`~simdask.errors.IndexDamagedError` when a file of the segment is
        missing, has another size or other contents than recorded at its commit (see
        :mod:`simdask.storage.checksums`): hashed whole the first time this process opens it,
        then remembered while the file is unchanged (:mod:`simdask.storage.verified`); or
        when its metadata declares other sizes than the catalog's (any store, URLs included:
        :func:`~simdask.read.segment_damage.check_counts`). ``files``, ``counts``: as
        :meth:`size_check` read them (None: read them here). ``lazy``: the caller reads the
        large arrays only with ``pread`` (:mod:`simdask.storage.direct_reads`), which verifies
        the blocks it reads: those with block checksums are not hashed whole here
        (:func:`~simdask.storage.verified.verify_problems`)."""
        if self.store.local_root is not None:  # a URL store: no local files to hash
            files = self.recorded_files() if files is None else files
            prefix = checksums.shard_prefix(generation, shard)
            problems = verify_problems(self.path, files.get(prefix, ()), lazy)
            if problems:
                raise damaged(f"index at {self.path}: " + "; ".join(problems[:3]))
        want = (self.segment_counts() if counts is None else counts).get((generation, shard))
        if want is not None:
            where = self.store.location
            with segment_damage(where):
                found = self.store.counts(generation, shard)
            check_counts(where, generation, shard, want, found)

    def segment_counts(self) -> dict[tuple[int, int], tuple[int, int]]:
        """``{(generation, range): (distinct chunks, postings)}`` of the committed segments,
        as the catalog recorded them."""
        return {(g, s): (k, n) for s, segs in self.manifest().items() for g, k, n in segs}

    def check_metadata(self, generation: int, shard: int) -> None:
        """:meth:`check_sizes` of the segment's metadata files only (``zarr.json``: what
        :meth:`~simdask.storage.shards.ShardStore.counts` reads)."""
        files = self.recorded_files().get(checksums.shard_prefix(generation, shard), [])
        meta = [f for f in files if f[0].endswith("zarr.json")]
        self.check_sizes(generation, shard, {checksums.shard_prefix(generation, shard): meta})

    def size_check(self, lazy: bool = False) -> Callable[[int, int], None]:
        """:meth:`check_sizes` with the recorded files of the committed generation read now:
        it reads no catalog, so threads may call it. ``lazy``: as in :meth:`check_sizes`."""
        files, counts = self.recorded_files(), self.segment_counts()
        return partial(self.check_sizes, files=files, counts=counts, lazy=lazy)

    def recorded_files(self) -> dict[str, list[tuple[str, int, str]]]:
        """The committed shard files' recorded ``(name, size in bytes, xxh3)`` by segment
        (see :func:`~simdask.storage.checksums.segment_files`), cached per generation."""
        return self._recorded_now()[2]

    def _recorded_now(self) -> tuple[int, dict[str, tuple[int, str]], dict]:
        gen = self.catalog.generation
        if self._recorded is None or self._recorded[0] != gen:
            rec = checksums.recorded(self.catalog)
            self._recorded = (gen, rec, checksums.segment_files(rec))
        return self._recorded

    def check_pack(self, pack: str) -> None:
        """:meth:`check_file` of the text pack ``pack``."""
        self.check_file(checksums.pack_name(pack))

    def check_file(self, name: str) -> None:
        """Raise :class:`~simdask.errors.IndexDamagedError` when the file ``name`` (relative
        to the index folder: a text pack, an LSH file) is missing or differs from the size
        and checksum recorded at its commit (hashed whole the first time this process reads
        it; not checked when none is recorded)."""
        want = self._recorded_now()[1].get(name)
        if want is not None:
            problems = verify_problems(self.path, [(name, *want)])
            if problems:
                raise damaged(f"index at {self.path}: " + "; ".join(problems))

    def recorded_sizes(self) -> dict[str, list[tuple[str, int]]]:
        """The committed shard files' recorded sizes (bytes) by segment."""
        return {p: [(n, size) for n, size, _ in f] for p, f in self.recorded_files().items()}

    def _ranges(self) -> list[tuple[int, int]]:
        cfg = self.config
        return shard_ranges(cfg.hash_bits, cfg.ranges)

    def manifest(self) -> Manifest:
        """The committed manifest (cached per generation; call inside a read snapshot to
        read it with what else the snapshot reads)."""
        gen = self.catalog.generation
        if self._manifest is None or self._manifest[0] != gen:
            manifest = self.catalog.segments()
            self._reader.retain(manifest)  # forget segments no longer listed, once
            split = {s: split_small(segs) for s, segs in manifest.items()}
            self._manifest = (gen, manifest, split)
        return self._manifest[1]

    def _split(self, manifest: Manifest) -> dict:
        """Each range's ``(generations looked up, generations combined)`` of ``manifest``."""
        if self._manifest is not None and self._manifest[1] is manifest:
            return self._manifest[2]
        self._reader.retain(manifest)
        return {s: split_small(segs) for s, segs in manifest.items()}

    def tombstones(self) -> np.ndarray:
        """``tomb[d]`` of the committed generation (cached per generation)."""
        gen = self.catalog.generation
        if self._tomb is None or self._tomb[0] != gen:
            self._tomb = (gen, current_tombstones(self.catalog))
        return self._tomb[1]

    def shard(self, shard: int, generation: int | None = None) -> ShardData:
        """One range's live postings as last committed (its segments merged, tombstones
        applied), or the single segment of the given generation."""
        if generation is not None:
            return self.segments_of({shard: [generation]})[(generation, shard)]
        with self.catalog.read_snapshot():  # manifest and tombstones agree
            manifest = self.catalog.segments()
            tomb = self.tombstones()
        gens = [g for g, _, _ in manifest.get(shard, [])]
        lo, hi = self._ranges()[shard]
        if not gens:
            return ShardData.empty(lo, hi)
        parts = self.segments_of({shard: gens})
        with segment_damage(self.store.location):  # offsets that decrease, IDs out of range
            return merge_shards([parts[(g, shard)] for g in gens], tomb, lo, hi)

    def segments_of(self, gens: dict[int, list[int]]) -> dict[tuple[int, int], ShardData]:
        """Whole segments ``{(generation, range): data}`` of the ranges ``gens`` (range ->
        generations), read in parallel threads and cached; cached segments of these ranges
        that are no longer listed (an update committed meanwhile) are dropped."""
        wanted = {(g, s) for s, lst in gens.items() for g in lst}
        missing = sorted(wanted - self._shards.keys())
        if missing:
            live = {gs for gs in self._shards if gs[1] not in gens} | wanted
            self._shards = {gs: d for gs, d in self._shards.items() if gs in live}
            check = self.size_check()  # the catalog read here: threads may not use it

            def read(gs: tuple[int, int]) -> ShardData:
                check(*gs)
                with segment_damage(self.store.location):
                    return self.store.read(*gs)

            loaded = threads(read, missing)
            self._shards.update(zip(missing, loaded, strict=True))
        return {gs: self._shards[gs] for gs in wanted}

    def preload(self) -> int:
        """See :meth:`simdask.index.Index.preload`; returns the bytes concerned."""
        with segment_damage(self.store.location):
            return self._preload()

    def _preload(self) -> int:
        manifest = self.catalog.segments()
        self._reader.retain(manifest)
        nbytes = 0
        streamed: dict[int, list[int]] = {}
        for s, segs in manifest.items():
            for g, _, _ in segs:
                arrays = self._reader.opened(s, g)
                if _mapped(arrays):
                    self.check_sizes(g, s)  # whole files: opened by a lazy check before?
                    nbytes += sum(_touch(arrays[name]) for name in _NAMES)
                else:
                    streamed.setdefault(s, []).append(g)
        nbytes += sum(d.nbytes for d in self.segments_of(streamed).values())
        ranges, tomb = self._ranges(), self.tombstones()
        for s, segs in manifest.items():  # small segments: merged in memory once
            small = split_small(segs)[1]
            if small:
                nbytes += self._reader.combined(s, small, tomb, *ranges[s]).nbytes
        self.preloaded = True
        return nbytes

    def query_shards(self, manifest: Manifest, tomb: np.ndarray, ids: dict, merge: bool):
        """``{range: [ShardData]}``: the postings of the query chunk IDs ``ids`` by range, one
        part per segment looked up (tombstones not yet applied) or, with ``merge``, the
        range's live postings merged into one part: looked up in the range's large segment
        (raw with a stored key sample: read with ``pread``, only the bytes needed, or, after
        :meth:`preload`, from its mapped pages; older raw: memory-mapped, the pages needed;
        compressed: the whole segment after
        :meth:`preload`, else streamed) and in its small segments, kept merged in memory
        (:class:`~simdask.storage.segments.RangeReader`).

        The ranges are opened and read in :data:`IO_THREADS` threads: on a cold page cache
        a query waits on thousands of small reads (segment metadata, key windows, posting
        lists), and several in flight finish sooner than one at a time."""
        ranges = self._ranges()
        splits = self._split(manifest)
        split = {s: splits.get(s, ([], [])) for s in ids}
        check = self.size_check()  # the catalog read here: threads may not use it
        direct = not self.preloaded  # pread, nothing mapped; preloaded: the mapped pages
        # looked-up segments read with pread verify the blocks they read (direct_reads.py)
        look_check = self.size_check(lazy=True) if direct else check
        whole: dict[int, list[int]] = {}
        if self.preloaded:  # compressed segments were read whole by preload
            for s, (look, _) in split.items():
                for g in look:
                    if not _mapped(self._reader.opened(s, g, check)):
                        whole.setdefault(s, []).append(g)
        loaded = self.segments_of(whole) if whole else {}
        store = self.store

        def subset(s: int) -> list[ShardData]:
            with segment_damage(store.location):
                return _subset(s)

        def _subset(s: int) -> list[ShardData]:
            look, small = split[s]
            parts = [
                restrict_shard(loaded[(g, s)], ids[s])
                if (g, s) in loaded
                else store.read_subset(self._reader.opened(s, g, look_check), ids[s], g, direct)
                for g in look
            ]
            if small:
                combined = self._reader.combined(s, small, tomb, *ranges[s], check)
                parts.append(restrict_shard(combined, ids[s]))
            if not parts:
                return [ShardData.empty(*ranges[s])]
            # with max_df a chunk's document frequency is that of the merged lists
            return [merge_shards(parts, tomb, *ranges[s])] if merge else parts

        order = sorted(ids)
        return dict(zip(order, threads(subset, order, IO_THREADS), strict=True))

    def query_live_postings(self, shards: dict, q_ids, sid, tomb: np.ndarray, max_df) -> list:
        """The doc IDs of the live postings (one per posting, unsorted) of one query text's
        chunk IDs ``q_ids`` in ranges ``sid``, per segment part (the documents holding them,
        for :meth:`~simdask.index.Index.holders`)."""
        parts = []
        for s in np.unique(sid).tolist():
            for seg in shards[s]:
                docs_s = query_postings(seg, q_ids[sid == s], max_df)
                parts.append(docs_s[live_mask(docs_s, seg.generation, tomb)])
        return parts

    def query_counts(self, shards: dict, q_ids, sid, tomb: np.ndarray, max_df, n_docs: int):
        """How many of one query text's chunk IDs ``q_ids`` (in ranges ``sid``) each document
        holds, by its live postings: sorted doc IDs and counts (int64), one ``bincount`` a
        generation (:func:`~simdask.kernels.segment_merge.live_doc_counts`: no test per posting)."""
        parts = [
            (query_postings(seg, q_ids[sid == s], max_df), seg.generation)
            for s in np.unique(sid).tolist()
            for seg in shards[s]
        ]
        return live_doc_counts(parts, tomb, n_docs)

    def counts(self) -> tuple[int, int, int, int]:
        """``(distinct chunks, postings, segments, tombstones)`` of the live index."""
        with self.catalog.read_snapshot():
            manifest = self.catalog.segments()
            tomb = self.tombstones()
        n_keys = n_post = 0
        for s, segs in manifest.items():
            if len(segs) == 1 and int(tomb.max(initial=0)) <= segs[0][0]:
                self.check_metadata(segs[0][0], s)  # declares the catalog's counts
                keys, postings = segs[0][1], segs[0][2]
            else:  # live postings: the segments merged
                data = self.shard(s)
                keys, postings = len(data.chunk_keys), data.n_postings
            n_keys += keys
            n_post += postings
        n_segs = sum(len(segs) for segs in manifest.values())
        return n_keys, n_post, n_segs, int(np.count_nonzero(tomb))


def _mapped(arrays: dict) -> bool:
    """True for the arrays of a raw segment opened as memory maps (ShardStore.open_arrays)."""
    return isinstance(arrays["chunk_keys"], np.ndarray)


def _touch(arr: np.ndarray) -> int:
    """Read one element of every 4 KiB page of a memory-mapped array (pulling the file into
    the page cache); returns its bytes."""
    if len(arr):
        int(np.asarray(arr[:: max(1, 4096 // arr.itemsize)]).sum())
    return arr.nbytes
