"""Which documents' similarity rows a run recomputes (:class:`Targets`), and the counts a
run's merge and similarity stages start from: ``|A|`` by doc ID after the run and the
tombstoned postings per range. Read from the catalog; returns values, changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from distributed import Future

from simdask.config import IndexConfig
from simdask.engine.similarity_stage import stored_heavy
from simdask.kernels.changes import ResolvedChanges
from simdask.kernels.heavy_bounded import needs_rebound
from simdask.storage.catalog import Catalog
from simdask.storage.reads import chunk_total
from simdask.storage.segments import Manifest
from simdask.summary import HeavyStats

__all__ = ["Targets", "choose_targets", "dead_after", "kept_heavy", "n_chunks_after"]


@dataclass(frozen=True)
class Targets:
    """The documents whose similarity rows a run recomputes: ``members`` (recomputed: changed
    or refilled) and ``changed`` (new content, with chunks), or ``full``: every document (a
    build). ``n_chunks_f``: the future of ``|A|`` by doc ID on every worker; ``n_docs``: its
    length; ``rows_replaced``: the lists the commit replaces (the touched documents and the
    members); ``refilled``: how many unchanged documents are recomputed because their list
    lost rows (None for a build); ``kept``: the heavy cutoff and similarity mode the index was
    built with (:func:`kept_heavy`); ``cutoff`` and ``mode``: those an incremental run keeps
    (a build chooses its own); ``bounded``: whether that build was bounded
    (kernels/heavy_bounded)."""

    full: bool
    members: np.ndarray
    changed: np.ndarray
    n_chunks_f: Future
    n_docs: int
    rows_replaced: np.ndarray
    kept: HeavyStats
    refilled: int | None = None
    cutoff: int | None = None
    mode: str = "informative"
    bounded: bool = False

    def config(self, config: IndexConfig) -> IndexConfig:
        """``config`` with the kept similarity mode, for the member rows of this run."""
        return config.replace(similarity_mode=self.mode)


def choose_targets(
    catalog: Catalog,
    config: IndexConfig,
    resolved: ResolvedChanges,
    *,
    replace_all: bool,
    n_known: int,
    n_chunks_f: Future,
    n_docs: int,
) -> Targets:
    """Which documents' rows are recomputed: all of them when nothing indexed before
    survives (or a bounded index re-bounds), else the changed ones and those whose full
    top-k list held a changed one. ``n_known``: documents indexed before the run."""
    survivors = n_known - resolved.counts.modified - resolved.counts.deleted
    kept = kept_heavy(catalog, config)  # a bounded index may re-bound
    if replace_all or survivors == 0 or needs_rebound(kept.bound_docs, n_docs):
        none = np.zeros(0, np.uint32)
        return Targets(
            full=True,
            members=none,
            changed=none,
            n_chunks_f=n_chunks_f,
            n_docs=n_docs,
            rows_replaced=resolved.touched,
            kept=kept,
        )
    changed = resolved.chunked
    refill = catalog.refill_candidates(resolved.touched, config.top_k)
    members = np.union1d(changed, refill).astype(np.uint32)
    return Targets(
        full=False,
        members=members,
        changed=changed,
        n_chunks_f=n_chunks_f,
        n_docs=n_docs,
        rows_replaced=np.union1d(resolved.touched, members),
        kept=kept,
        refilled=len(refill),
        cutoff=kept.cutoff,
        mode=kept.mode,
        bounded=bool(kept.bounded),
    )


def kept_heavy(catalog: Catalog, config: IndexConfig) -> HeavyStats:
    """The index's heavy cutoff and similarity mode (:func:`~.similarity_stage.stored_heavy`)."""
    last = catalog.last_run()
    return stored_heavy(last and last["summary"], config)


def dead_after(
    catalog: Catalog, dropped: np.ndarray, manifest: Manifest, n_ranges: int
) -> dict[int, float]:
    """Tombstoned postings per range after dropping ``dropped``: their ``|A|`` spread evenly."""
    total = chunk_total(catalog, dropped)
    if not total:
        return {}
    old = catalog.dead_postings()
    return {s: old.get(s, 0.0) + total / n_ranges for s in manifest}


def n_chunks_after(catalog: Catalog, resolved: ResolvedChanges, replace_all: bool) -> np.ndarray:
    """``|A|`` by doc ID after the run (0 for free IDs)."""
    before = np.zeros(0, np.int64) if replace_all else catalog.chunk_table()
    top = max([len(before) - 1, *(d.doc_id for d in resolved.upserted)])
    n = np.zeros(top + 1, dtype=np.int64)
    n[: len(before)] = before
    n[np.asarray(resolved.deleted, np.int64)] = 0
    for d in resolved.upserted:
        n[d.doc_id] = d.n_chunks
    return n
