"""The Python API: :class:`Index` — create or open an index, update it, read similarities, query."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simdask import failpoints
from simdask.config import FORMAT_VERSION, IndexConfig
from simdask.errors import ConfigError, DocumentNotFoundError, IndexExistsError, IndexNotFoundError
from simdask.ingest.sources import SourceItem, list_items
from simdask.kernels.hashing import chunk_batch
from simdask.kernels.segments import live_mask
from simdask.kernels.similarity import query_counts, sum_pair_counts
from simdask.progress import Callback
from simdask.storage.catalog import Catalog, PairRow
from simdask.storage.lock import WriterLock
from simdask.storage.remote import RemoteStore, is_url
from simdask.storage.segments import (
    RangeReader,
    current_tombstones,
    merge_shards,
    migrate_legacy,
    remove_segment,
    restrict_shard,
    split_small,
    stored_segments,
)
from simdask.storage.shards import ShardData, ShardStore, shard_ranges
from simdask.storage.text_packs import TextStore
from simdask.summary import QueryMatch, RunSummary

if TYPE_CHECKING:
    from simdask.engine.run import RunOptions

__all__ = ["Index", "QueryMatch", "RunSummary"]

_CATALOG = "catalog.sqlite"
_NAMES = ("chunk_keys", "offsets", "doc_ids")


class Index:
    """A simdask index directory: ``catalog.sqlite``, ``shards/gen-*/shard-*`` and ``work/``."""

    def __init__(self, path: Path, catalog: Catalog, config: IndexConfig):
        self.path = path
        self.catalog = catalog
        self.config = config
        self.store = ShardStore(catalog.meta("shard_store") or path / "shards")
        self.texts = TextStore(path / "texts")
        migrate_legacy(catalog, self.store)
        self._shards: dict[tuple[int, int], ShardData] = {}  # (generation, range): a segment
        self._doc_table: tuple[int, np.ndarray] | None = None
        self._tomb: tuple[int, np.ndarray] | None = None
        self._reader = RangeReader(self.store)  # opened segments, for queries
        self._preloaded = False

    # --- opening ---------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | os.PathLike,
        config: IndexConfig | None = None,
        shard_store: str | None = None,
    ) -> Index:
        """Create a new, empty index at ``path`` (the directory may exist but not the index).

        ``shard_store``: an fsspec URL (``s3://bucket/prefix``, ``file:///nfs/x``) where the
        shards are kept instead of ``path/shards``; the catalog and texts stay at ``path``.
        """
        path = Path(path)
        if (path / _CATALOG).exists():
            raise IndexExistsError(f"an index already exists at {path}")
        if shard_store is not None and not is_url(shard_store):
            raise ConfigError(
                f"shard store must be an fsspec URL such as s3://bucket/prefix or "
                f"file:///path; found {shard_store!r}"
            )
        if shard_store is not None:
            RemoteStore(shard_store)  # an unknown protocol or missing library fails here
        path.mkdir(parents=True, exist_ok=True)
        config = config or IndexConfig()
        catalog = Catalog(path / _CATALOG, create=True)
        catalog.init_meta(config)
        if shard_store is not None:
            catalog.set_meta("shard_store", shard_store)
        return cls(path, catalog, config)

    @classmethod
    def open(cls, path: str | os.PathLike) -> Index:
        """Open an existing index; checks its format version and stored config."""
        path = Path(path)
        if not (path / _CATALOG).exists():
            raise IndexNotFoundError(
                f"no simdask index at {path}: expected {path / _CATALOG} "
                "(create one with `simdask update INDEX SOURCE...`)"
            )
        catalog = Catalog(path / _CATALOG)
        config = catalog.check_format()
        return cls(path, catalog, config)

    @classmethod
    def open_or_create(
        cls,
        path: str | os.PathLike,
        config: IndexConfig | None = None,
        shard_store: str | None = None,
    ) -> Index:
        """Open the index at ``path``, creating it with ``config`` (and ``shard_store``) if
        there is none; an existing index must have been created with the same shard store."""
        if (Path(path) / _CATALOG).exists():
            idx = cls.open(path)
            if shard_store is not None and shard_store != idx.store.location:
                found = idx.store.location
                idx.close()
                raise ConfigError(
                    f"index at {path} keeps its shards at {found}; got --shard-store "
                    f"{shard_store} (the shard store is chosen when an index is created)"
                )
            return idx
        return cls.create(path, config, shard_store)

    def close(self) -> None:
        """Close the catalog and drop cached shards."""
        self._shards.clear()
        self._reader.clear()
        self._doc_table = self._tomb = None
        self.catalog.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- updating --------------------------------------------------------------------------
    def update(
        self,
        sources: Iterable[str | os.PathLike] = (),
        *,
        client=None,
        options: RunOptions | None = None,
        callback: Callback | None = None,
        delete_missing: bool = False,
        remove: Iterable[str] = (),
        rebuild: bool = False,
        config: IndexConfig | None = None,
        wait: float = 0.0,
        items: Sequence[SourceItem] = (),
        max_file_bytes: int | None = None,
    ) -> RunSummary:
        """Index what changed in ``sources`` (files, folders, JSONL files); one run.

        New and modified documents (by content hash) are chunked, unchanged ones cost a hash
        check. ``delete_missing``: documents indexed earlier from one of these sources and no
        longer in it are deleted; ``remove``: keys to delete (a key that is also in this run's
        sources is indexed from them instead). ``rebuild``: replace the whole
        index by the given sources (needed to change ``config`` of an index that has
        documents). ``client``: a ``distributed.Client`` (None: a LocalCluster for this run).
        ``wait``: seconds to wait for another writer (0: fail at once). ``items``: documents
        already listed by :func:`~simdask.ingest.sources.list_items` (e.g. with a key prefix),
        indexed
        after those of ``sources``. ``max_file_bytes``: files larger than this are not read
        but reported (kind ``too_large``; None: the ``options`` value, 100 MB by default).
        """
        # imported here: reading and querying an index needs neither dask nor distributed
        from simdask.cluster.connect import cluster_errors, connect
        from simdask.engine.run import RunOptions, run_update

        cb = callback or Callback()
        options = options or RunOptions()
        if options.worker_cache is None:  # worth it only on a cluster that outlives this run
            options = dataclasses.replace(options, worker_cache=client is not None)
        if max_file_bytes is not None:
            options = dataclasses.replace(options, max_file_bytes=max_file_bytes)
        if config is not None and config != self.config:
            if self.catalog.counts()["documents"] and not rebuild:
                raise ConfigError(
                    f"index at {self.path} was built with {self.config}; got {config}: "
                    "pass rebuild=True (CLI: --rebuild) to rebuild it with the new settings"
                )
            self.config = config
        started = time.perf_counter()
        with WriterLock(self.path, wait=wait):
            self.catalog.abandon_stale_runs()
            t = time.perf_counter()
            cb.stage("scan", None)
            items = [*list_items(sources), *items]
            cb.end_stage()
            scan_s = time.perf_counter() - t
            run_id = self.catalog.start_run()
            before = _segment_set(self.catalog.segments())
            before_gen = self.catalog.generation
            unchanged = f"the index at {self.path} is unchanged (generation {before_gen})"
            with contextlib.ExitStack() as stack:
                try:
                    cl = stack.enter_context(nullcontext(client) if client else connect())
                    with cluster_errors(cl, unchanged):
                        if getattr(cl, "dashboard_link", None):
                            cb.message(f"Dask dashboard: {cl.dashboard_link}")
                        out = run_update(
                            cl,
                            self.catalog,
                            self.store,
                            self.path / "texts",
                            self.path / "work",
                            self.config,
                            items,
                            run_id=run_id,
                            options=options,
                            cb=cb,
                            remove_keys=frozenset(remove),
                            delete_missing_from=frozenset(i.source for i in items)
                            | frozenset(str(s) for s in sources)
                            if delete_missing
                            else frozenset(),
                            replace_all=rebuild,
                        )
                    failpoints.hit("before_commit")
                    t = time.perf_counter()
                    cb.stage("commit", None)
                    summary = _run_summary(run_id, out, scan_s)
                    self.catalog.commit_run(run_id, run_id, out.changes, summary.to_dict())
                    cb.end_stage()
                except BaseException as e:
                    self._abort_run(run_id, e)
                    raise
                finally:
                    shutil.rmtree(self.path / "work" / f"run-{run_id:06d}", ignore_errors=True)
                failpoints.hit("after_commit")
                summary.seconds["commit"] = time.perf_counter() - t
                self._auto_compact(cl, options, cb, summary)
            self._shards.clear()
            self.collect_garbage(keep=before)
        summary.seconds["total"] = time.perf_counter() - started
        summary.documents = self.catalog.counts()["documents"]
        summary.index_bytes = self.disk_bytes()
        return summary

    def _abort_run(self, run_id: int, error: BaseException) -> None:
        """After a failed run: record it (if the disk lets us) and free what it wrote."""
        self.store.remove_generation(run_id)
        for pack in self.texts.packs():
            if pack.startswith(f"r{run_id:06d}-"):
                self.texts.remove(pack)
        # e.g. the disk is still full: then the next run marks it abandoned
        with contextlib.suppress(Exception):
            self.catalog.fail_run(run_id, f"{type(error).__name__}: {error}")

    def remove(self, keys: Iterable[str], **kwargs) -> RunSummary:
        """Delete documents by key (a run without sources); unknown keys are an error."""
        keys = list(keys)
        known = self.catalog.known_documents()
        missing = [k for k in keys if k not in known]
        if missing:
            raise DocumentNotFoundError(f"no document with key {missing[0]!r} in the index")
        return self.update((), remove=keys, **kwargs)

    def collect_garbage(self, keep: Iterable[tuple[int, int]] = ()) -> dict[str, int]:
        """Delete segments, text packs and run folders no committed state refers to.

        Segments ``(range, generation)`` in ``keep`` (those committed before the last commit)
        are kept one run longer, for readers that opened them. Call with the writer lock held.
        """
        live = _segment_set(self.catalog.segments()) | set(keep)
        gone = [(g, s) for g, s in stored_segments(self.store) if (s, g) not in live]
        for g, s in gone:
            remove_segment(self.store, g, s)
        live_gens = {g for _, g in live}
        for g in self.store.generations():  # e.g. an interrupted run's temporary files
            if g not in live_gens:
                self.store.remove_generation(g)
        packs = {
            r[0] for r in self.catalog.conn.execute("SELECT DISTINCT text_pack FROM documents")
        }
        dead_packs = [p for p in self.texts.packs() if p not in packs]
        for p in dead_packs:
            self.texts.remove(p)
        shutil.rmtree(self.path / "work", ignore_errors=True)
        return {"segments": len(gone), "packs": len(dead_packs)}

    def compact(
        self,
        *,
        client=None,
        force: bool = False,
        options: RunOptions | None = None,
        callback: Callback | None = None,
        wait: float = 0.0,
    ) -> dict[str, Any]:
        """Merge segments as the merge policy (``options.merge_policy``) says, or, with
        ``force``, every range into one segment without tombstoned postings. A run of its own
        (generation, one commit). Returns its statistics (``{}`` when nothing was due)."""
        from simdask.cluster.connect import connect
        from simdask.engine.compact import compact_index
        from simdask.engine.run import RunOptions

        options = options or RunOptions()
        cb = callback or Callback()
        with WriterLock(self.path, wait=wait):
            self.catalog.abandon_stale_runs()
            before = _segment_set(self.catalog.segments())
            with nullcontext(client) if client else connect() as cl:
                use_cache = (
                    client is not None if options.worker_cache is None else options.worker_cache
                )
                out = compact_index(self, cl, options, cb, force=force, use_cache=use_cache)
            self._shards.clear()
            self.collect_garbage(keep=before)
        return out

    def _auto_compact(self, client, options, cb, summary: RunSummary) -> None:
        """After a committed run: compact if the merge policy says so (in the summary)."""
        from simdask.engine.compact import compact_index

        try:
            out = compact_index(self, client, options, cb, use_cache=bool(options.worker_cache))
        except Exception as e:  # the run is committed; the next run compacts again
            summary.extra["compaction_error"] = f"{type(e).__name__}: {e}"
            return
        if out:
            summary.extra["compaction"] = out
            summary.seconds["compaction"] = out["seconds"]

    # --- reading ---------------------------------------------------------------------------
    def similar(self, key: str, min_similarity: float = 0.0) -> list[PairRow]:
        """Stored similarities of the document ``key`` to others, best first."""
        return self.catalog.pairs_of(key, min_similarity)

    def pairs(self, min_similarity: float = 0.0) -> list[PairRow]:
        """All stored directed similarities, best first."""
        return list(self.catalog.all_pairs(min_similarity))

    def shard(self, shard: int, generation: int | None = None) -> ShardData:
        """One range's live postings as last committed (its segments merged, tombstones
        applied), or the single segment of the given generation; segments are cached in this
        object."""
        ranges = shard_ranges(self.config.hash_bits, self.config.shards)
        if generation is not None:
            return self._segments_of({shard: [generation]})[(generation, shard)]
        with self._snapshot():
            manifest = self.catalog.segments()
            tomb = self._tombstones()
        gens = [g for g, _, _ in manifest.get(shard, [])]
        parts = self._segments_of({shard: gens})
        if not gens:
            return ShardData.empty(*ranges[shard])
        return merge_shards([parts[(g, shard)] for g in gens], tomb, *ranges[shard])

    @contextlib.contextmanager
    def _snapshot(self):
        """One read transaction: manifest, tombstones and documents agree."""
        conn = self.catalog.conn
        conn.execute("BEGIN")
        try:
            yield
        finally:
            conn.execute("COMMIT")

    def _tombstones(self) -> np.ndarray:
        """``tomb[d]`` of the committed generation (cached per generation)."""
        gen = self.catalog.generation
        if self._tomb is None or self._tomb[0] != gen:
            self._tomb = (gen, current_tombstones(self.catalog))
        return self._tomb[1]

    def _segments_of(self, gens: dict[int, list[int]]) -> dict[tuple[int, int], ShardData]:
        """Whole segments ``{(generation, range): data}`` of the ranges ``gens`` (range ->
        generations), read in parallel threads and cached; cached segments of these ranges
        that are no longer listed (an update committed meanwhile) are dropped."""
        wanted = {(g, s) for s, lst in gens.items() for g in lst}
        missing = sorted(wanted - self._shards.keys())
        if missing:
            live = {gs for gs in self._shards if gs[1] not in gens} | wanted
            self._shards = {gs: d for gs, d in self._shards.items() if gs in live}
            loaded = _threads(lambda gs: self.store.read(*gs), missing)
            self._shards.update(zip(missing, loaded, strict=True))
        return {gs: self._shards[gs] for gs in wanted}

    def preload(self) -> int:
        """Make later queries independent of the disk (a query server calls it once).

        Raw (memory-mapped) segments, those of an index directory, are mapped and every page
        is touched once, which pulls them into the OS page cache: nothing is copied into this
        process, and the cache is shared with other processes. Compressed segments (a
        ``--shard-store`` URL, or written by an older simdask) are read whole into memory,
        after which a query takes tens of ms instead of seconds. Returns the bytes concerned.
        """
        manifest = self.catalog.segments()
        self._reader.retain(manifest)
        nbytes, streamed = 0, {}
        for s, segs in manifest.items():
            for g, _, _ in segs:
                arrays = self._reader.opened(s, g)
                if _mapped(arrays):
                    nbytes += sum(_touch(arrays[name]) for name in _NAMES)
                else:
                    streamed.setdefault(s, []).append(g)
        nbytes += sum(d.nbytes for d in self._segments_of(streamed).values())
        ranges = shard_ranges(self.config.hash_bits, self.config.shards)
        tomb = self._tombstones()
        for s, segs in manifest.items():  # small segments: merged in memory once
            small = split_small(segs)[1]
            if small:
                nbytes += self._reader.combined(s, small, tomb, *ranges[s]).nbytes
        self._preloaded = True
        return nbytes

    def _query_shards(
        self, manifest: dict, tomb: np.ndarray, ids: dict[int, np.ndarray], merge: bool
    ):
        """``{range: [ShardData]}``: the postings of the query chunk IDs ``ids`` by range, one
        part per segment looked up (tombstones not yet applied) or, with ``merge``, the
        range's live postings merged into one part:
        looked up in the range's large segment (memory-mapped: the pages needed; compressed:
        the whole segment after :meth:`preload`, else streamed) and in its small segments,
        kept merged in memory (:class:`~simdask.storage.segments.RangeReader`); in threads."""
        ranges = shard_ranges(self.config.hash_bits, self.config.shards)
        self._reader.retain(manifest)
        split = {s: split_small(manifest.get(s, [])) for s in ids}
        whole = {}
        for s, (look, _) in split.items():  # opened here: warnings filters are not thread-safe
            for g in look:
                if self._preloaded and not _mapped(self._reader.opened(s, g)):
                    whole.setdefault(s, []).append(g)
        loaded = self._segments_of(whole) if whole else {}

        def subset(s: int) -> ShardData:
            look, small = split[s]
            parts = [
                restrict_shard(loaded[(g, s)], ids[s])
                if (g, s) in loaded
                else self.store.read_subset(self._reader.opened(s, g), ids[s], g)
                for g in look
            ]
            if small:
                combined = self._reader.combined(s, small, tomb, *ranges[s])
                parts.append(restrict_shard(combined, ids[s]))
            if not parts:
                return [ShardData.empty(*ranges[s])]
            # with max_df a chunk's document frequency is that of the merged lists
            return [merge_shards(parts, tomb, *ranges[s])] if merge else parts

        order = sorted(ids)
        return dict(zip(order, _threads(subset, order), strict=True))

    def query(self, text: str, min_similarity: float = 0.0) -> list[QueryMatch]:
        """Compare a text that is not in the index against it (read-only, no lock).

        Returns documents whose similarity in either direction is >= ``min_similarity``
        percent (0: every document sharing a chunk), best (query -> document) first. A query
        reads only the postings it needs (memory-mapped shards: only the pages holding them);
        the :class:`Index` keeps the shards open for later queries (see
        ``docs/benchmarks.md``, "Query", for timings, and :meth:`preload`).
        """
        return self.query_many([text], min_similarity)[0]

    def query_many(
        self, texts: Sequence[str], min_similarity: float = 0.0
    ) -> list[list[QueryMatch]]:
        """:meth:`query` for several texts at once (shards are read once for all)."""
        cfg = self.config
        cb = chunk_batch(list(texts), cfg.k, cfg.hash_bits, cfg.seed)
        with self._snapshot():  # manifest, tombstones and documents agree
            manifest = self.catalog.segments()
            tomb = self._tombstones()
            n_chunks = self._doc_chunks()
        if not manifest:
            return [[] for _ in texts]
        shard_of = cb.chunk_ids.astype(np.int64) // cfg.shard_width
        ids = {s: np.unique(cb.chunk_ids[shard_of == s]) for s in np.unique(shard_of).tolist()}
        shards = self._query_shards(manifest, tomb, ids, merge=cfg.max_df is not None)
        out = []
        for qi in range(len(texts)):
            mine = cb.doc == qi
            q_ids, sid = cb.chunk_ids[mine], shard_of[mine]
            parts = []
            for s in np.unique(sid).tolist():
                for seg in shards[s]:  # counts per segment, those of hidden documents dropped
                    docs_s, counts = query_counts(seg, q_ids[sid == s], cfg.max_df)
                    live = live_mask(docs_s, seg.generation, tomb)
                    parts.append((docs_s[live].astype(np.uint64), counts[live]))
            docs, shared = sum_pair_counts(parts)
            out.append(self._matches(docs, shared, int(cb.n_chunks[qi]), n_chunks, min_similarity))
        return out

    def _doc_chunks(self) -> np.ndarray:
        """``|d|`` of every document by doc ID (int64; 0 for free IDs), cached per generation."""
        gen = self.catalog.generation
        if self._doc_table is None or self._doc_table[0] != gen:
            rows = self.catalog.conn.execute("SELECT doc_id, n_chunks FROM documents").fetchall()
            arr = np.array(rows, dtype=np.int64).reshape(-1, 2)
            table = np.zeros(int(arr[:, 0].max()) + 1 if len(arr) else 0, dtype=np.int64)
            table[arr[:, 0]] = arr[:, 1]
            self._doc_table = (gen, table)
        return self._doc_table[1]

    def _matches(self, docs, shared, n_q: int, n_chunks: np.ndarray, min_sim: float):
        """QueryMatch objects of the documents passing ``min_sim`` (keys fetched for those only)."""
        docs = docs.astype(np.int64)
        shared = shared.astype(np.int64)
        nd = n_chunks[docs]
        fwd = 100.0 * shared / n_q if n_q else np.zeros(len(docs))
        rev = 100.0 * shared / nd
        keep = np.maximum(fwd, rev) >= min_sim
        docs, shared, nd, fwd, rev = docs[keep], shared[keep], nd[keep], fwd[keep], rev[keep]
        keys = self.catalog.keys_of(docs.tolist())
        matches = [
            QueryMatch(keys[d], f, r, s, n_q, n)
            for d, f, r, s, n in zip(
                docs.tolist(), fwd.tolist(), rev.tolist(), shared.tolist(), nd.tolist(), strict=True
            )
        ]
        matches.sort(key=lambda m: (-m.similarity, -m.reverse_similarity, m.key))
        return matches

    def text(self, key: str) -> str:
        """The extracted text of a document, as it was indexed."""
        doc = self.catalog.document(key)
        if doc.text_pack is None:
            raise DocumentNotFoundError(f"no stored text for {key!r}")
        return self.texts.read(doc.text_pack, doc.text_offset, doc.text_length)

    def report(self, key: str, other: str, min_chunks: int = 2) -> dict[str, Any]:
        """Evidence for a pair: exact similarity both ways from the two stored texts, the
        hashed similarity the index holds (or would compute, if below the threshold), and the
        matching passages with character offsets into each text (see
        :mod:`simdask.evidence.passages`)."""
        from simdask.evidence.passages import compare_texts

        a, b = self.text(key), self.text(other)
        ev = compare_texts(a, b, self.config.k, min_chunks)
        stored = {r.other: r.similarity for r in self.similar(key)}
        if other in stored:
            hashed = stored[other]
        else:
            cfg = self.config
            ids = chunk_batch([a, b], cfg.k, cfg.hash_bits, cfg.seed)
            ia = set(ids.chunk_ids[ids.doc == 0].tolist())
            ib = set(ids.chunk_ids[ids.doc == 1].tolist())
            hashed = 100.0 * len(ia & ib) / len(ia) if ia else 0.0
        return ev.report(key, other, hashed)

    def disk_bytes(self) -> int:
        """Bytes on disk: current segments plus catalog and texts."""
        shards = sum(
            self.store.shard_nbytes(g, s)
            for s, segs in self.catalog.segments().items()
            for g, _, _ in segs
        )
        cat = sum(p.stat().st_size for p in self.path.glob(_CATALOG + "*"))
        return shards + cat + self.texts.nbytes()

    def stats(self) -> dict[str, Any]:
        """Documents, distinct chunks, postings, similarity rows, shards, bytes, config."""
        gen = self.catalog.generation
        with self._snapshot():
            manifest = self.catalog.segments()
            tomb = self._tombstones()
        n_keys = n_post = 0
        for s, segs in manifest.items():
            if len(segs) == 1 and int(tomb.max(initial=0)) <= segs[0][0]:
                keys, postings = self.store.counts(segs[0][0], s)  # metadata only
            else:  # live postings: the segments merged
                data = self.shard(s)
                keys, postings = len(data.chunk_keys), data.n_postings
            n_keys += keys
            n_post += postings
        counts = self.catalog.counts()
        last = self.catalog.last_run()
        return {
            "path": str(self.path),
            "format_version": FORMAT_VERSION,
            "generation": gen,
            "documents": counts["documents"],
            "too_short": counts["too_short"],
            "words": counts["words"],
            "distinct_chunks": n_keys,
            "postings": n_post,
            "similarity_rows": counts["similarity_rows"],
            "skipped_chunks": int(self.catalog.meta("skipped_chunks") or 0),
            "shards": self.config.shards,
            "segments": sum(len(segs) for segs in manifest.values()),
            "tombstones": int(np.count_nonzero(tomb)),
            "bytes_on_disk": self.disk_bytes(),
            "last_run": last["run_id"] if last else None,
            "config": self.config.to_dict(),
        }


def _segment_set(manifest: dict) -> set[tuple[int, int]]:
    """``{(range, generation)}`` of a manifest's segments."""
    return {(s, g) for s, segs in manifest.items() for g, _, _ in segs}


def _run_summary(run_id: int, out, scan_s: float) -> RunSummary:
    """The summary of a run from its outcome (see :class:`~simdask.engine.run.RunOutcome`)."""
    c = out.counts
    return RunSummary(
        run_id=run_id,
        generation=run_id,
        added=c["added"],
        modified=c["modified"],
        deleted=c["deleted"],
        unchanged=c["unchanged"],
        failed=c["failed"],
        too_short=c["too_short"],
        similarity_rows=len(out.changes.rows[0]),
        skipped_chunks=out.changes.skipped_chunks,
        words=out.stats.get("words", 0),
        seconds={"scan": scan_s, **out.stats["seconds"]},
        errors=out.changes.errors,
        extra={k: v for k, v in out.stats.items() if k not in ("seconds", "words")},
    )


def _threads(fn, items: list) -> list:
    """``[fn(x) for x in items]`` on one thread per core (zstd and numpy release the GIL)."""
    if len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(min(len(items), os.cpu_count() or 1)) as ex:
        return list(ex.map(fn, items))


def _mapped(arrays: dict) -> bool:
    """True for the arrays of a raw shard opened as memory maps (see ShardStore.open_arrays)."""
    return isinstance(arrays["chunk_keys"], np.ndarray)


def _touch(arr: np.ndarray) -> int:
    """Read one element of every 4 KiB page of a memory-mapped array (pulling the file into
    the page cache); returns its bytes."""
    if len(arr):
        int(np.asarray(arr[:: max(1, 4096 // arr.itemsize)]).sum())
    return arr.nbytes


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
