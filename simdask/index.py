"""The Python API: :class:`Index` — create or open an index, update it, read similarities, query."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import failpoints
from .catalog import Catalog, PairRow
from .chunks import chunk_batch
from .cluster import cluster_errors, connect
from .config import FORMAT_VERSION, IndexConfig
from .errors import ConfigError, DocumentNotFoundError, IndexExistsError, IndexNotFoundError
from .evidence import compare_texts
from .lock import WriterLock
from .pipeline import RunOptions, run_update
from .progress import Callback
from .shards import ShardData, ShardStore, shard_ranges
from .similarity import query_counts, sum_pair_counts
from .sources import list_items
from .texts import TextStore

__all__ = ["Index", "QueryMatch", "RunSummary"]

_CATALOG = "catalog.sqlite"


@dataclass(frozen=True)
class QueryMatch:
    """An indexed document sharing chunks with a query text.

    ``similarity``: percent of the query's chunks found in the document; ``reverse_similarity``:
    percent of the document's chunks found in the query.
    """

    key: str
    similarity: float
    reverse_similarity: float
    shared: int
    query_chunks: int
    doc_chunks: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


@dataclass
class RunSummary:
    """What one update did: documents added, modified, deleted, unchanged, failed (per-file
    errors, including duplicate keys; too-short documents are indexed and counted apart),
    similarity rows written, seconds per stage, the generation committed."""

    run_id: int
    generation: int
    added: int
    modified: int
    deleted: int
    unchanged: int
    failed: int
    too_short: int
    similarity_rows: int
    skipped_chunks: int
    words: int
    documents: int = 0
    index_bytes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (errors as ``[key, kind, message]`` lists)."""
        d = dict(self.__dict__)
        d["errors"] = [list(e) for e in self.errors]
        return d


class Index:
    """A simdask index directory: ``catalog.sqlite``, ``shards/gen-*/shard-*`` and ``work/``."""

    def __init__(self, path: Path, catalog: Catalog, config: IndexConfig):
        self.path = path
        self.catalog = catalog
        self.config = config
        self.store = ShardStore(path / "shards")
        self.texts = TextStore(path / "texts")
        self._shards: dict[tuple[int, int], ShardData] = {}

    # --- opening ---------------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | os.PathLike, config: IndexConfig | None = None) -> Index:
        """Create a new, empty index at ``path`` (the directory may exist but not the index)."""
        path = Path(path)
        if (path / _CATALOG).exists():
            raise IndexExistsError(f"an index already exists at {path}")
        path.mkdir(parents=True, exist_ok=True)
        config = config or IndexConfig()
        catalog = Catalog(path / _CATALOG, create=True)
        catalog.init_meta(config)
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
    def open_or_create(cls, path: str | os.PathLike, config: IndexConfig | None = None) -> Index:
        """Open the index at ``path``, creating it with ``config`` if there is none."""
        if (Path(path) / _CATALOG).exists():
            return cls.open(path)
        return cls.create(path, config)

    def close(self) -> None:
        """Close the catalog and drop cached shards."""
        self._shards.clear()
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
    ) -> RunSummary:
        """Index what changed in ``sources`` (files, folders, JSONL files); one run.

        New and modified documents (by content hash) are chunked, unchanged ones cost a hash
        check. ``delete_missing``: documents indexed earlier from one of these sources and no
        longer in it are deleted; ``remove``: keys to delete (a key that is also in this run's
        sources is indexed from them instead). ``rebuild``: replace the whole
        index by the given sources (needed to change ``config`` of an index that has
        documents). ``client``: a ``distributed.Client`` (None: a LocalCluster for this run).
        ``wait``: seconds to wait for another writer (0: fail at once).
        """
        cb = callback or Callback()
        options = options or RunOptions()
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
            items = list_items(sources)
            cb.end_stage()
            scan_s = time.perf_counter() - t
            run_id = self.catalog.start_run()
            before = set(self.catalog.shard_generations().values())
            before_gen = self.catalog.generation
            ctx = nullcontext(client) if client is not None else connect()
            unchanged = f"the index at {self.path} is unchanged (generation {before_gen})"
            try:
                with ctx as cl, cluster_errors(cl, unchanged):
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
                c = out.counts
                summary = RunSummary(
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
                self.catalog.commit_run(run_id, run_id, out.changes, summary.to_dict())
                cb.end_stage()
            except BaseException as e:
                self._abort_run(run_id, e)
                raise
            finally:
                shutil.rmtree(self.path / "work" / f"run-{run_id:06d}", ignore_errors=True)
            failpoints.hit("after_commit")
            self._shards.clear()
            self.collect_garbage(keep=before)
            summary.seconds["commit"] = time.perf_counter() - t
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

    def collect_garbage(self, keep: Iterable[int] = ()) -> dict[str, int]:
        """Delete shard generations, text packs and run folders no committed state refers to.

        Generations in ``keep`` (those current before the last commit) are kept one run
        longer, for readers that opened them. Call with the writer lock held.
        """
        live = set(self.catalog.shard_generations().values()) | set(keep)
        gone = [g for g in self.store.generations() if g not in live]
        for g in gone:
            self.store.remove_generation(g)
        packs = {
            r[0] for r in self.catalog.conn.execute("SELECT DISTINCT text_pack FROM documents")
        }
        dead_packs = [p for p in self.texts.packs() if p not in packs]
        for p in dead_packs:
            self.texts.remove(p)
        shutil.rmtree(self.path / "work", ignore_errors=True)
        return {"generations": len(gone), "packs": len(dead_packs)}

    # --- reading ---------------------------------------------------------------------------
    def similar(self, key: str, min_similarity: float = 0.0) -> list[PairRow]:
        """Stored similarities of the document ``key`` to others, best first."""
        return self.catalog.pairs_of(key, min_similarity)

    def pairs(self, min_similarity: float = 0.0) -> list[PairRow]:
        """All stored directed similarities, best first."""
        return list(self.catalog.all_pairs(min_similarity))

    def shard(self, shard: int, generation: int | None = None) -> ShardData:
        """One shard as last committed (or of the given generation), cached in this object."""
        gen = self.catalog.shard_generations().get(shard) if generation is None else generation
        if gen is None:
            lo, hi = shard_ranges(self.config.hash_bits, self.config.shards)[shard]
            return ShardData.empty(lo, hi)
        if (gen, shard) not in self._shards:
            self._shards[(gen, shard)] = self.store.read(gen, shard)
        return self._shards[(gen, shard)]

    def query(self, text: str, min_similarity: float = 0.0) -> list[QueryMatch]:
        """Compare a text that is not in the index against it (read-only).

        Returns documents whose similarity in either direction is >= ``min_similarity``
        percent, best (query -> document) first.
        """
        return self.query_many([text], min_similarity)[0]

    def query_many(
        self, texts: Sequence[str], min_similarity: float = 0.0
    ) -> list[list[QueryMatch]]:
        """:meth:`query` for several texts at once."""
        cfg = self.config
        cb = chunk_batch(list(texts), cfg.k, cfg.hash_bits, cfg.seed)
        if self.catalog.generation == 0:
            return [[] for _ in texts]
        docs = self.catalog.documents()
        by_id = {d.doc_id: d for d in docs}
        out = []
        for qi in range(len(texts)):
            ids = cb.chunk_ids[cb.doc == qi]
            n_q = int(cb.n_chunks[qi])
            parts = []
            shard_idx = ids.astype(np.int64) // cfg.shard_width
            for s in np.unique(shard_idx).tolist():
                docs_s, counts = query_counts(self.shard(s), ids[shard_idx == s], cfg.max_df)
                parts.append((docs_s.astype(np.uint64), counts))
            keys, shared = sum_pair_counts(parts)
            matches = []
            for d, s in zip(keys.tolist(), shared.tolist(), strict=True):
                row = by_id[d]
                fwd = 100.0 * s / n_q
                rev = 100.0 * s / row.n_chunks
                if max(fwd, rev) >= min_similarity:
                    matches.append(QueryMatch(row.key, fwd, rev, s, n_q, row.n_chunks))
            matches.sort(key=lambda m: (-m.similarity, -m.reverse_similarity, m.key))
            out.append(matches)
        return out

    def text(self, key: str) -> str:
        """The extracted text of a document, as it was indexed."""
        doc = self.catalog.document(key)
        if doc.text_pack is None:
            raise DocumentNotFoundError(f"no stored text for {key!r}")
        return self.texts.read(doc.text_pack, doc.text_offset, doc.text_length)

    def report(self, key: str, other: str, min_chunks: int = 2) -> dict[str, Any]:
        """Evidence for a pair: exact similarity both ways from the two stored texts, the
        hashed similarity the index holds (or would compute, if below the threshold), and the
        matching passages with character offsets into each text (see ``simdask.evidence``)."""
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
        """Bytes on disk: current shards plus catalog."""
        shards = sum(
            _du(self.store.path(g, s)) for s, g in self.catalog.shard_generations().items()
        )
        cat = sum(p.stat().st_size for p in self.path.glob(_CATALOG + "*"))
        return shards + cat + self.texts.nbytes()

    def stats(self) -> dict[str, Any]:
        """Documents, distinct chunks, postings, similarity rows, shards, bytes, config."""
        gen = self.catalog.generation
        n_keys = n_post = 0
        for s, g in self.catalog.shard_generations().items():
            keys, postings = self.store.counts(g, s)
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
            "bytes_on_disk": self.disk_bytes(),
            "last_run": last["run_id"] if last else None,
            "config": self.config.to_dict(),
        }


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
