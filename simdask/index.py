"""The Python API: :class:`Index` — open an index and read it: similarities, queries, texts,
evidence reports, statistics.

This module reads only (no lock: readers see the last committed state) and imports neither
dask, distributed nor zarr; the work of each read is in :mod:`simdask.read` (a text checked
against the index: :mod:`simdask.read.text_query`). Writing — creating, updating, removing,
garbage collection — is in :mod:`simdask.writer`; :meth:`Index.create`, :meth:`Index.update`,
:meth:`Index.remove` and :meth:`Index.writer` delegate to it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simdask.config import IndexConfig
from simdask.errors import ConfigError, DocumentNotFoundError, IndexNotFoundError
from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import compare_texts
from simdask.kernels.exclusions import Exclusions
from simdask.read import result_export, snapshots
from simdask.read.doc_freq import common_filter
from simdask.read.index_stats import index_stats
from simdask.read.segment_reads import SegmentReads
from simdask.read.text_query import hashed_similarity, live_holders, query_texts
from simdask.read.total_reads import DocTotal, query_total, read_totals
from simdask.read.undirected_pairs import Pair, orient, undirected
from simdask.storage import checksums
from simdask.storage.backends import open_shard_store
from simdask.storage.catalog import Catalog, PairRow
from simdask.storage.failures import Failure, current_failures
from simdask.storage.lookup import resolve_key
from simdask.storage.remote import index_folder
from simdask.storage.segments import migrate_legacy, waiting_bytes
from simdask.storage.shards import ShardData
from simdask.storage.text_packs import TextStore
from simdask.summary import QueryMatch, RunSummary
from simdask.write.compute_totals import compute_totals
from simdask.write.exclude import META_NAME, Template, index_exclusions, templates_from_meta
from simdask.writer import Writer, create_catalog

if TYPE_CHECKING:
    from simdask.read.lsh_search import LshMatch, LshPair

__all__ = ["Index", "QueryMatch", "RunSummary"]

_CATALOG = "catalog.sqlite"


class Index:
    """A simdask index directory: ``catalog.sqlite``, ``shards/gen-*/shard-*`` and ``work/``."""

    def __init__(self, path: Path, catalog: Catalog, config: IndexConfig):
        # absolute: the workers of a run may have another working directory (issue 32)
        self.path = Path(os.path.abspath(path))
        path = self.path
        self.catalog = catalog
        self.store = open_shard_store(
            catalog.meta("shard_store") or path / "shards", key_dtype=config.chunk_dtype
        )
        self.texts = TextStore(path / "texts")
        migrate_legacy(catalog, self.store)  # format 1 (one shard per range) -> segments
        self._doc_table: tuple[int, np.ndarray] | None = None
        #: segments opened and read, tombstones, recorded file sizes
        self.reads = SegmentReads(path, catalog, self.store, config)
        self.config = config
        self._excl: tuple[tuple, Exclusions] | None = None  # by (generation, config)

    # --- opening ---------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | os.PathLike,
        config: IndexConfig | None = None,
        shard_store: str | None = None,
    ) -> Index:
        """Create a new, empty index at ``path``: a new or empty folder (a file, or a folder
        holding anything else, raises :class:`~simdask.errors.NotAnIndexError`; an existing
        index :class:`~simdask.errors.IndexExistsError`).

        ``shard_store``: an fsspec URL (``s3://bucket/prefix``, ``file:///nfs/x``) where the
        shards are kept instead of ``path/shards``; the catalog and texts stay at ``path``.
        ``config.shards`` None (default): the first :meth:`update` chooses it for its cluster.
        """
        catalog = create_catalog(index_folder(path), config or IndexConfig(), shard_store)
        return cls(index_folder(path), catalog, catalog.check_format())

    @classmethod
    def open(cls, path: str | os.PathLike) -> Index:
        """Open an existing index (a folder, or a ``file://`` URL of one); checks its format
        version and stored config."""
        path = index_folder(path)
        if not (path / _CATALOG).exists():
            raise IndexNotFoundError(
                f"no simdask index at {path}: expected {path / _CATALOG} "
                "(create one with `simdask update INDEX SOURCE...`)"
            )
        catalog = Catalog(path / _CATALOG)
        config = catalog.check_format()
        return cls(path, catalog, config)

    @property
    def config(self) -> IndexConfig:
        """The index's settings (of the committed state last read, or of the running update)."""
        return self._config

    @config.setter
    def config(self, value: IndexConfig) -> None:
        self._config = value
        self.reads.config = value  # the ranges its reads cut follow the settings

    def snapshot(self) -> AbstractContextManager[Index]:
        """``with idx.snapshot():`` every read of the block sees one committed state, with its
        settings (:func:`simdask.read.snapshots.snapshot`); a writer is never blocked."""
        return snapshots.snapshot(self)

    @classmethod
    def open_or_create(
        cls,
        path: str | os.PathLike,
        config: IndexConfig | None = None,
        shard_store: str | None = None,
    ) -> Index:
        """Open the index at ``path``, creating it with ``config`` (and ``shard_store``) if
        there is none; an existing index must have been created with the same shard store."""
        if (index_folder(path) / _CATALOG).exists():
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

    def drop_caches(self) -> None:
        """Forget cached segments, opened arrays, tombstones, the document table and the
        recorded file sizes (re-read on demand)."""
        self.reads.clear()
        self._doc_table = None

    def close(self) -> None:
        """Close the catalog and drop cached shards."""
        self.drop_caches()
        self.catalog.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- writing: delegated to simdask.writer ---------------------------------------------
    def writer(self, wait: float = 0.0) -> Writer:
        """The write side of this index (:class:`simdask.writer.Writer`): ``with
        idx.writer(wait) as w:`` holds the writer lock for the block (taken once; ``wait``:
        seconds to wait for another writer, 0: fail at once)."""
        return Writer(self, wait)

    def update(
        self,
        sources: Iterable[str | os.PathLike] = (),
        *,
        wait: float = 0.0,
        **kwargs: Any,
    ) -> RunSummary:
        """Index what changed in ``sources`` (files, folders, JSONL files); one run, under the
        writer lock (taken for this call).

        New and modified documents (by content hash) are chunked, unchanged ones cost a hash
        check. Keywords: ``delete_missing``: documents indexed earlier from one of these
        sources and no longer in it are deleted; ``remove``: keys to delete (a key that is also
        in this run's sources is indexed from them instead). ``rebuild``: replace the whole
        index by the given sources (needed to change ``config`` of an index that has
        documents). ``client``: a ``distributed.Client`` (None: the active client, as Dask
        libraries take it, ``distributed.default_client()``; else the scheduler at Dask's
        ``scheduler-address`` / ``DASK_SCHEDULER_ADDRESS``; else a LocalCluster for this run,
        its workers threads of this process for at most 300 documents, else processes).
        ``options``: a :class:`~simdask.engine.run.RunOptions`; ``callback``: progress.
        ``wait``: seconds to wait for another writer (0: fail at once). ``items``: documents
        already listed by :func:`~simdask.ingest.sources.list_items` (e.g. with a key prefix),
        indexed after those of ``sources``. ``max_file_bytes``: files larger than this are not
        read but reported (kind ``too_large``; None: the ``options`` value, 100 MB by default).
        ``exclude``: template files (any format the extractors read) whose chunks are left out
        of every count, stored in the index (None: keep the stored ones; ``[]``: none); a
        change of them, or of ``config.exclude_quotes`` / ``exclude_bibliography`` (allowed
        without ``rebuild``), first re-chunks every document from its stored text
        (:mod:`simdask.write.rechunk`): the index then equals a full build with the new exclusions.
        ``key_prefix``: put before the keys of the documents of ``sources`` (``"2026/"``); a key
        another source gives, or a source inside (or holding) a folder indexed before, is
        refused before the run (:mod:`simdask.write.collisions`)."""
        return self.writer(wait).update(sources, **kwargs)

    def remove(self, keys: Iterable[str], *, wait: float = 0.0, **kwargs: Any) -> RunSummary:
        """Delete documents by key (a run without sources); unknown keys are an error."""
        return self.writer(wait).remove(keys, **kwargs)

    def collect_garbage(self, keep: Iterable[tuple[int, int]] = ()) -> dict[str, int]:
        """Delete segments, text packs and work files no committed state refers to (under
        the writer lock; see :meth:`simdask.writer.Writer.collect_garbage`)."""
        return self.writer().collect_garbage(keep)

    def compact(self, *, force: bool = False, wait: float = 0.0, **kwargs: Any) -> dict[str, Any]:
        """Merge segments as the merge policy says, or with ``force`` every range into one
        segment without tombstoned postings: a run of its own, under the writer lock (see
        :meth:`simdask.writer.Writer.compact`; ``client``, ``options``, ``callback``).
        Returns its statistics (``{}`` when nothing was due)."""
        return self.writer(wait).compact(force=force, **kwargs)

    # --- reading ---------------------------------------------------------------------------
    def similar(self, key: str, min_similarity: float = 0.0) -> list[PairRow]:
        """Stored similarities of the document ``key`` to others, best first. ``key`` is
        resolved as the command line resolves it (:meth:`resolve_key`: a key, a path, a
        unique end of a key)."""
        return self.catalog.pairs_of(self.resolve_key(key), min_similarity)

    def pairs(self, min_similarity: float = 0.0) -> list[PairRow]:
        """All stored directed similarities, best first."""
        return list(self.catalog.all_pairs(min_similarity))

    def iter_pairs(self, min_similarity: float = 0.0) -> Iterator[PairRow]:
        """All stored directed similarities, best first, streamed in batches (bounded memory;
        :func:`simdask.read.result_export.iter_pair_rows`); inside ``with idx.snapshot():`` every
        row is of one committed state."""
        return result_export.iter_pair_rows(self, min_similarity)

    def pairs_frame(self, min_similarity: float = 0.0, partitions: int | None = None):
        """The stored directed similarities as a lazy Dask DataFrame, one partition per range
        of doc IDs (:func:`simdask.read.result_export.pairs_frame`; needs
        ``simdask[dataframe]``)."""
        return result_export.pairs_frame(self, min_similarity, partitions)

    def totals(self, keys: Iterable[str] | None = None) -> list[DocTotal]:
        """The aligned total of every document that has one (or of those of ``keys``), by
        key (:class:`~simdask.read.total_reads.DocTotal`: percent, sources largest first)."""
        with self.snapshot():  # the totals and their sources of one committed state
            return read_totals(self.catalog, keys)

    def total(self, key: str) -> DocTotal | None:
        """The aligned total of document ``key`` (resolved: :meth:`resolve_key`); None: it
        has none (``totals --compute``)."""
        return next(iter(self.totals([self.resolve_key(key)])), None)

    def query_total(self, text: str, name: str = "query", top: int = 5) -> DocTotal:
        """A text's aligned total (named ``name``) against its ``top`` candidates, by source."""
        return query_total(self, name, text, self.query(text), top)[0]

    def compute_totals(self, **kwargs: Any) -> dict[str, Any]:
        """Align every document's top candidates, store every total (the arguments of
        :func:`simdask.write.compute_totals.compute_totals`: ``top``, ``client``, ``wait``, ...);
        without ``client``, on the cluster :meth:`update` would use: the active
        ``distributed.Client``, else ``DASK_SCHEDULER_ADDRESS`` (Dask's
        ``scheduler-address``), else in this process."""
        return compute_totals(self, **kwargs)

    def resolve_key(self, typed: str, *, ends: bool = True) -> str:
        """The key of the document ``typed`` names: a key, a path as given on the command line,
        or (``ends``) a unique end of a key (see :func:`simdask.storage.lookup.resolve_key`; an
        unknown name raises :class:`~simdask.errors.DocumentNotFoundError` naming the
        closest keys)."""
        return resolve_key(self.catalog, typed, ends=ends)

    def failures(self) -> list[Failure]:
        """The documents currently not indexed, and why (the latest error of each file still
        failing, and the too-short documents): see :mod:`simdask.storage.failures`."""
        return current_failures(self.catalog, self.config.k)

    def pair_list(self, min_similarity: float = 0.0, key: str | None = None) -> list[Pair]:
        """The stored similarities as unordered pairs, each once with both percentages
        (:func:`simdask.read.undirected_pairs.undirected`), the larger first; with ``key``: that
        document's pairs, seen from it (``a_key == key``), whichever direction was stored (``key``
        resolved: :meth:`resolve_key`)."""
        key = None if key is None else self.resolve_key(key)
        pairs = undirected(self.catalog.pair_rows(min_similarity, key), min_similarity)
        return orient(pairs, key) if key is not None else pairs

    def shard(self, shard: int, generation: int | None = None) -> ShardData:
        """One range's live postings as last committed (its segments merged, tombstones
        applied), or the single segment of the given generation; segments are cached in this
        object."""
        return self.reads.shard(shard, generation)

    def preload(self) -> int:
        """Make later queries independent of the disk (a query server calls it once).

        Raw (memory-mapped) segments, those of an index directory, are mapped and every page
        is touched once, which pulls them into the OS page cache: nothing is copied into this
        process, and the cache is shared with other processes. Compressed segments (a
        ``--shard-store`` URL, or written by an older simdask) are read whole into memory,
        after which a query takes tens of ms instead of seconds; a range's small (delta)
        segments are merged in memory once. Returns the bytes concerned.
        """
        return self.reads.preload()

    def query(
        self, text: str, min_similarity: float = 0.0, top: int | None = None
    ) -> list[QueryMatch]:
        """Compare a text that is not in the index against it (read-only, no lock).

        Returns documents whose similarity in either direction is >= ``min_similarity``
        percent (0: every document sharing a chunk), best (query -> document) first. A query
        reads only the postings it needs (memory-mapped shards: only the pages holding them);
        the :class:`Index` keeps the shards open for later queries (see
        ``docs/benchmarks.md``, "Query", for timings, and :meth:`preload`). ``top``: keep
        only the ``top`` documents with the largest similarity either way (None: all; see
        :meth:`query_top`).
        """
        return self.query_many([text], min_similarity, top)[0]

    def query_many(
        self, texts: Sequence[str], min_similarity: float = 0.0, top: int | None = None
    ) -> list[list[QueryMatch]]:
        """:meth:`query` for several texts at once (shards are read once for all)."""
        return [m for m, _ in self.query_top(texts, min_similarity, top)]

    def query_top(
        self, texts: Sequence[str], min_similarity: float = 0.0, top: int | None = None
    ) -> list[tuple[list[QueryMatch], int]]:
        """Per text: its matches and how many documents passed ``min_similarity`` percent.

        With ``top``, only the ``top`` documents with the largest similarity either way are
        kept (ties: the larger query -> document similarity, then the larger reverse one,
        then the key), so that a document held wholly in the query stays in the list however
        little of the query it is; keys are read for those only. The kept matches are ordered
        as :meth:`query` orders them.
        """
        if top is not None and top < 1:
            raise ConfigError(f"expected top >= 1 or None (all), found {top}")
        with self.snapshot():  # one committed state, from the manifest to the matches' keys
            return query_texts(self, texts, min_similarity, top)

    def holders(self, chunk_ids: np.ndarray) -> np.ndarray:
        """Sorted doc IDs of the live documents holding any of ``chunk_ids`` (every posting,
        ``max_df`` not applied): what a query reads, for a change of the exclusions
        (:func:`simdask.read.text_query.live_holders`)."""
        return live_holders(self, chunk_ids)

    def templates(self) -> tuple[Template, ...]:
        """The template texts the index excludes (``update --exclude``), as committed."""
        return templates_from_meta(self.catalog.meta(META_NAME))

    def pair_exclusions(self):
        """The index's exclusions as a pair report applies them to true chunks
        (:class:`~simdask.evidence.excluded.PairExclusions`)."""
        cfg = self.config
        texts = tuple(t.text for t in self.templates())
        return PairExclusions(cfg.exclude_quotes, cfg.exclude_bibliography, texts)

    def exclusions(self) -> Exclusions:
        """What every chunk set of the index leaves out (templates' chunk IDs, quotations,
        reference lists; :mod:`simdask.write.exclude`), cached per generation."""
        key = (self.catalog.generation, self.config)
        if self._excl is None or self._excl[0] != key:
            self._excl = (key, index_exclusions(self.config, self.templates()))
        return self._excl[1]

    def doc_chunks(self) -> np.ndarray:
        """``|d|`` of every document by doc ID (int64; 0 for free IDs), cached per generation."""
        gen = self.catalog.generation
        if self._doc_table is None or self._doc_table[0] != gen:
            self._doc_table = (gen, self.catalog.chunk_table())
        return self._doc_table[1]

    def lsh_pairs(self, min_jaccard: float = 0.0, exact: bool = False) -> list[LshPair]:
        """MinHash LSH: all candidate pairs with estimated Jaccard >= ``min_jaccard``
        (fraction 0..1), each unordered pair once (see
        :func:`simdask.read.lsh_search.index_pairs`)."""

        from simdask.read import lsh_search  # the MinHash LSH mode only: a query's cold start

        return lsh_search.index_pairs(self, min_jaccard, exact)

    def lsh_query(self, texts: Sequence[str], min_jaccard: float = 0.0) -> list[list[LshMatch]]:
        """MinHash LSH: indexed documents near each text (read-only; see
        :func:`simdask.read.lsh_search.index_query`)."""

        from simdask.read import lsh_search  # the MinHash LSH mode only: a query's cold start

        return lsh_search.index_query(self, texts, min_jaccard)

    def text(self, key: str) -> str:
        """The extracted text of a document, as it was indexed (``key`` resolved:
        :meth:`resolve_key`)."""
        doc = self.catalog.document(self.resolve_key(key))
        if doc.text_pack is None:
            raise DocumentNotFoundError(f"no stored text for {key!r}")
        self.reads.check_pack(doc.text_pack)
        return self.texts.read(doc.text_pack, doc.text_offset, doc.text_length)

    def report(
        self, key: str, other: str, min_chunks: int = 2, min_words: int = 0
    ) -> dict[str, Any]:
        """Evidence for a pair: exact similarity both ways from the two stored texts, the
        hashed similarity the index holds (or would compute, if below the threshold), and the
        matching passages with character offsets into each text (see
        :mod:`simdask.evidence.passages`); matches shorter than ``min_words`` words are
        ignored, in the exact similarities too (the stored one is unchanged). Both keys are
        resolved (:meth:`resolve_key`)."""
        key, other = self.resolve_key(key), self.resolve_key(other)
        stored = {r.other: r.similarity for r in self.similar(key)}
        return self.report_text(
            key, self.text(key), other, min_chunks, stored.get(other), min_words=min_words
        )

    def report_text(
        self,
        key: str,
        text: str,
        other: str,
        min_chunks: int = 2,
        hashed: float | None = None,
        *,
        min_words: int = 0,
        other_text: str | None = None,
        cache: Any = None,
        passages: bool = True,
    ) -> dict[str, Any]:
        """:meth:`report` for a text ``text`` named ``key`` (e.g. a query document, not in the
        index) and the stored document ``other`` (or, given ``other_text``, a text named
        ``other`` that need not be in the index); ``hashed``: the similarity (percent) the
        index holds for the pair, None: computed from the hashed chunk IDs of both texts. The
        index's exclusions apply (excluded text is listed under ``excluded``, not counted), and
        so does ``max_df`` (the chunks the stored similarities leave out); ``cache`` and
        ``passages`` (False: none listed): as :func:`~simdask.evidence.passages.compare_texts`."""
        b, cfg = (self.text(other) if other_text is None else other_text), self.config
        kw = {"exclusions": self.pair_exclusions(), "drop_shared": common_filter(self)}
        kw.update(cache=cache, passages=passages)
        ev = compare_texts(text, b, cfg.k, min_chunks, min_words, **kw)
        if hashed is None:
            hashed = hashed_similarity(self, text, b)
        return ev.report(key, other, hashed)

    def disk_bytes(self) -> int:
        """Bytes on disk: segments (current ones as recorded at their commit, else measured;
        older ones waiting for garbage collection measured), catalog and texts."""
        recorded: dict[str, int] = {}
        if self.store.local_root is not None:
            recorded = {p: sum(n for _, n in f) for p, f in self.reads.recorded_sizes().items()}
        shards = sum(
            recorded.get(checksums.shard_prefix(g, s)) or self.store.shard_nbytes(g, s)
            for s, segs in self.catalog.segments().items()
            for g, _, _ in segs
        )
        cat = sum(p.stat().st_size for p in self.path.glob(_CATALOG + "*"))
        cat += waiting_bytes(self.store, self.catalog.segments())  # older segments, until GC
        return shards + cat + self.texts.nbytes()

    def stats(self) -> dict[str, Any]:
        """Documents, distinct chunks, postings, similarity rows, shards, bytes, config
        (:func:`simdask.read.index_stats.index_stats`)."""
        return index_stats(self)
