"""The Python API: :class:`Index` — create or open an index, update it, read similarities, query."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import zarr

from .catalog import Catalog, PairRow
from .chunks import chunk_batch
from .cluster import connect
from .config import FORMAT_VERSION, IndexConfig
from .errors import ConfigError, IndexExistsError, IndexNotFoundError
from .pipeline import RunOptions, run_build
from .progress import Callback
from .shards import ShardData, ShardStore
from .similarity import query_counts, sum_pair_counts
from .sources import list_items

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
    """What one update did: counts, per-stage seconds, generation committed."""

    run_id: int
    generation: int
    documents: int
    too_short: int
    failed: int
    similarity_rows: int
    skipped_chunks: int
    words: int
    postings: int
    index_bytes: int
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
        sources: Iterable[str | os.PathLike],
        *,
        client=None,
        options: RunOptions | None = None,
        callback: Callback | None = None,
        rebuild: bool = False,
        config: IndexConfig | None = None,
    ) -> RunSummary:
        """Index ``sources`` (files, folders, JSONL files) and compute similarities.

        This version builds the whole index from the given sources. On an index that already
        holds documents it needs ``rebuild=True`` and then replaces the previous contents
        (incremental runs are a later step). ``config`` may change settings on a rebuild.
        ``client``: a ``distributed.Client``; None starts a LocalCluster for this run.
        """
        cb = callback or Callback()
        options = options or RunOptions()
        n_existing = self.catalog.counts()["documents"]
        if n_existing and not rebuild:
            raise IndexExistsError(
                f"index at {self.path} already holds {n_existing} documents; this version "
                "rebuilds rather than updates: pass rebuild=True (CLI: --rebuild) to replace them"
            )
        if config is not None and config != self.config:
            if n_existing and not rebuild:
                raise ConfigError(f"index was built with {self.config}; got {config}")
            self.config = config
        started = time.perf_counter()
        t = time.perf_counter()
        cb.stage("scan", None)
        items = list_items(sources)
        cb.end_stage()
        scan_s = time.perf_counter() - t
        run_id = self.catalog.start_run()
        generation = run_id
        ctx = nullcontext(client) if client is not None else connect()
        try:
            with ctx as cl:
                if getattr(cl, "dashboard_link", None):
                    cb.message(f"Dask dashboard: {cl.dashboard_link}")
                out = run_build(
                    cl,
                    items,
                    self.config,
                    self.path / "work",
                    self.store,
                    generation,
                    run_id,
                    options,
                    cb,
                )
        except BaseException as e:
            self.catalog.fail_run(run_id, f"{type(e).__name__}: {e}")
            self.store.remove_generation(generation)
            raise
        t = time.perf_counter()
        cb.stage("commit", None)
        seconds = {"scan": scan_s, **out.stats["seconds"]}
        summary = RunSummary(
            run_id=run_id,
            generation=generation,
            documents=len(out.documents),
            too_short=sum(1 for d in out.documents if d[6] == "too_short"),
            failed=sum(1 for e in out.errors if e[1] != "too_short"),
            similarity_rows=len(out.rows[0]),
            skipped_chunks=out.stats["skipped_chunks"],
            words=out.stats["words"],
            postings=out.stats["postings"],
            index_bytes=0,
            seconds=seconds,
            errors=out.errors,
            extra={k: out.stats[k] for k in ("blocks", "candidate_pair_counts")},
        )
        previous = self.catalog.generation
        self._commit_config()
        self.catalog.commit_run(
            run_id,
            generation,
            out.documents,
            out.rows,
            out.errors,
            summary.to_dict(),
            replace_all=True,
        )
        cb.end_stage()
        if previous and previous != generation:
            self.store.remove_generation(previous)
        self._shards.clear()
        summary.seconds["commit"] = time.perf_counter() - t
        summary.seconds["total"] = time.perf_counter() - started
        summary.index_bytes = self.disk_bytes()
        return summary

    def _commit_config(self) -> None:
        import json

        with self.catalog.transaction() as c:
            c.execute(
                "UPDATE meta SET value = ? WHERE name = 'config'",
                (json.dumps(self.config.to_dict(), sort_keys=True),),
            )

    # --- reading ---------------------------------------------------------------------------
    def similar(self, key: str, min_similarity: float = 0.0) -> list[PairRow]:
        """Stored similarities of the document ``key`` to others, best first."""
        return self.catalog.pairs_of(key, min_similarity)

    def pairs(self, min_similarity: float = 0.0) -> list[PairRow]:
        """All stored directed similarities, best first."""
        return list(self.catalog.all_pairs(min_similarity))

    def shard(self, shard: int, generation: int | None = None) -> ShardData:
        """One shard of the current (or given) generation, cached in this object."""
        gen = self.catalog.generation if generation is None else generation
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

    def disk_bytes(self) -> int:
        """Bytes on disk: current shards plus catalog."""
        gen = self.catalog.generation
        shards = self.store.nbytes(gen) if gen else 0
        cat = sum(p.stat().st_size for p in self.path.glob(_CATALOG + "*"))
        return shards + cat

    def stats(self) -> dict[str, Any]:
        """Documents, distinct chunks, postings, similarity rows, shards, bytes, config."""
        gen = self.catalog.generation
        n_keys = n_post = 0
        if gen:
            for s in range(self.config.shards):
                group = zarr.open_group(str(self.store.path(gen, s)), mode="r")
                n_keys += group["chunk_keys"].shape[0]
                n_post += group["doc_ids"].shape[0]
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
