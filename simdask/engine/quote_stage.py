"""The quote stage of a run (issue 31 item 4, docs/term.md "Quotations"): after the similarity
stage, with ``exclude_quotes`` on, the lists the run recomputes are corrected from the
symmetric count ``S`` to the directed ``S + E`` (a quotation in ``X`` does not count as
``X``'s copied text, while the same words unquoted in ``Y`` are found in ``X``).

Thin wiring around :mod:`simdask.kernels.quoted`:

1. ``qsplit`` tasks (deterministic names, one per batch of :data:`SPLIT_BATCH` texts): the U
   and Q of every list document (:func:`~simdask.kernels.quoted.split_quoted`), from the
   texts the client reads from the text packs (the run's own, written by its chunk stage);
2. on the client: the live U postings after the run of every chunk of those sets, looked up
   in the segments of the run's manifest with its tombstones
   (:class:`~simdask.storage.segments.RangeReader`, as the delta stage reads them); the Q map
   of every live document (the catalog's ``quoted_chunks`` minus the recomputed documents,
   plus theirs); then :func:`~simdask.kernels.quoted.quoted_rows` on the engine's rows.

The run's new and modified documents' Q is committed with it
(:class:`~simdask.storage.quoted_chunks.QuotedChanges`). The cost at 10,000 essays:
docs/term.md.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from simdask.config import IndexConfig
from simdask.engine.context import RunContext
from simdask.kernels.changes import ResolvedChanges
from simdask.kernels.exclusions import Exclusions
from simdask.kernels.postings import shard_of, shard_ranges
from simdask.kernels.quoted import (
    Lookups,
    add_quoted,
    encode_ids,
    posting_pairs,
    quote_map,
    quoted_pairs,
    reverse_counts,
    split_quoted,
)
from simdask.kernels.segment_merge import live_mask
from simdask.kernels.top_rows import Rows
from simdask.storage.catalog import Catalog
from simdask.storage.commit import RunChanges
from simdask.storage.quoted_chunks import QuotedChanges, read_quoted
from simdask.storage.reads import text_locations
from simdask.storage.segments import Manifest, RangeReader
from simdask.storage.shards import ShardStore
from simdask.storage.text_packs import TextStore

__all__ = ["SPLIT_BATCH", "QuoteJob", "QuoteResult", "quote_stage", "split_task"]

#: texts split into U and Q per task
SPLIT_BATCH = 500


class QuoteJob(Protocol):
    """What the quote stage reads (a run's job): the catalog, shard store and texts of the
    index, its settings and exclusions, and the committed segments (``manifest``) and
    tombstones (``tomb``, by doc ID) the run started from; ``replace_all``: a full build."""

    @property
    def catalog(self) -> Catalog: ...
    @property
    def store(self) -> ShardStore: ...
    @property
    def texts(self) -> TextStore: ...
    @property
    def config(self) -> IndexConfig: ...
    @property
    def exclusions(self) -> Exclusions | None: ...
    @property
    def manifest(self) -> Manifest: ...
    @property
    def tomb(self) -> np.ndarray: ...
    @property
    def replace_all(self) -> bool: ...


def split_task(
    texts: list[str], k: int, hash_bits: int, seed: int, exclusions: Exclusions
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One batch's U and Q as ``(u_ids, u_doc, q_ids, q_doc)`` (doc: index into the batch)."""
    sp = split_quoted(texts, k, hash_bits, seed, exclusions)
    return sp.u.chunk_ids, sp.u.doc.astype(np.int64), sp.q_ids, sp.q_doc


@dataclass(frozen=True)
class QuoteResult:
    """What the quote stage gives the run to commit: ``rows``, the lists corrected to
    ``S + E``; ``ranked_again``, the documents whose lists got a row from a recomputed list
    (the commit ranks them again: the run's ``trim``); ``quoted``, the Q of the run's new and
    modified documents; ``seconds``: ``quotes`` (wall) and ``quotes_cpu`` (this process's
    CPU), for the run's ``stats.seconds``."""

    rows: Rows
    ranked_again: np.ndarray
    quoted: QuotedChanges
    seconds: dict[str, float]


def quote_stage(
    ctx: RunContext,
    job: QuoteJob,
    resolved: ResolvedChanges,
    changes: RunChanges,
    rows: Rows,
    n_chunks: np.ndarray,
) -> QuoteResult:
    """The engine's ``rows`` (lists of ``changes.rows_replaced`` computed
    ``stored_depth + 1`` deep, by ``S``) corrected to ``S + E`` (:class:`QuoteResult`).
    ``changes``: the run's changes so far, read, never changed (its recomputed lists,
    segments and tombstones); ``n_chunks``: ``|U|`` by doc ID after the run."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    lists = np.asarray(changes.rows_replaced, np.int64)
    docs = lists[(lists < len(n_chunks))]
    docs = docs[n_chunks[docs] > 0]
    u_ids, u_doc, q_ids, q_doc = _split(ctx, job, resolved, docs)
    ids = np.unique(np.concatenate([u_ids, q_ids]).astype(np.uint64))
    hold = _holders(job, changes, ctx.run_id, ids)
    touched = np.union1d(np.asarray(resolved.touched, np.int64), docs)
    qmap = _q_map(job, touched, q_ids, q_doc)
    look = Lookups(lists, u_ids, u_doc, q_ids, q_doc, hold, hold, qmap)
    cfg = job.config
    pairs = quoted_pairs(look, cfg.max_df)
    out = add_quoted(rows, pairs, n_chunks, cfg.threshold, lists, cfg.stored_depth + 1)
    rest = np.asarray(out[0], np.int64)[~np.isin(out[0], lists)]  # rows to a list document
    mine = {d.doc_id for d in resolved.upserted}
    written = {}
    for d in np.unique(q_doc).tolist():
        if d in mine:
            lo, hi = np.searchsorted(q_doc, [d, d + 1])
            written[int(d)] = encode_ids(q_ids[lo:hi], cfg.hash_bits)
    removed = np.union1d(np.asarray(resolved.touched, np.int64), np.asarray(sorted(mine)))
    reverse = reverse_counts(pairs, n_chunks, cfg.threshold)
    quoted = QuotedChanges(removed.astype(np.int64), written, job.replace_all, lists, reverse)
    seconds = {
        "quotes": time.perf_counter() - t0,
        "quotes_cpu": time.process_time() - cpu0,
    }
    ctx.cb.message(f"quotations: {len(docs):,} lists counted in the checked document's direction")
    return QuoteResult(out, np.unique(rest), quoted, seconds)


def _texts(job: QuoteJob, resolved: ResolvedChanges, docs: np.ndarray) -> list[str]:
    """The stored texts of ``docs`` (the run's own from its packs, the others' from the
    catalog's locations), in the order of ``docs``."""
    where: dict[int, tuple[Any, Any, Any]] = {
        d.doc_id: (d.text_pack, d.text_offset, d.text_length) for d in resolved.upserted
    }
    rest = [int(d) for d in docs.tolist() if int(d) not in where]
    for d, pack, off, length in text_locations(job.catalog, rest):
        where[int(d)] = (pack, off, length)
    out = []
    for d in docs.tolist():
        pack, off, length = where.get(int(d), (None, 0, 0))
        out.append("" if pack is None else job.texts.read(pack, off, length))
    return out


def _split(
    ctx: RunContext, job: QuoteJob, resolved: ResolvedChanges, docs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """U and Q of ``docs`` as distinct ``(chunk, doc ID)`` pairs; Q sorted by doc then chunk."""
    cfg = job.config
    futures = []
    for b, i in enumerate(range(0, len(docs), SPLIT_BATCH)):
        texts = _texts(job, resolved, docs[i : i + SPLIT_BATCH])
        args = (texts, cfg.k, cfg.hash_bits, cfg.seed, job.exclusions)
        futures.append(ctx.client.submit(split_task, *args, key=ctx.key("qsplit", b=b)))
    parts = ctx.client.gather(futures)
    empty = np.zeros(0, np.uint64), np.zeros(0, np.int64)
    u_ids, u_doc, q_ids, q_doc = [empty[0]], [empty[1]], [empty[0]], [empty[1]]
    for b, (ui, ud, qi, qd) in enumerate(parts):
        ids = docs[b * SPLIT_BATCH : (b + 1) * SPLIT_BATCH]
        u_ids.append(np.asarray(ui, np.uint64))
        u_doc.append(ids[ud])
        q_ids.append(np.asarray(qi, np.uint64))
        q_doc.append(ids[qd])
    qd_all, qi_all = np.concatenate(q_doc), np.concatenate(q_ids)
    order = np.lexsort((qi_all, qd_all))
    return np.concatenate(u_ids), np.concatenate(u_doc), qi_all[order], qd_all[order]


def _tomb_after(tomb: np.ndarray, dropped: np.ndarray, run_id: int) -> np.ndarray:
    """``tomb`` with the run's tombstones (``dropped`` at ``run_id``)."""
    dropped = np.asarray(dropped, np.int64)
    out = np.zeros(max(len(tomb), int(dropped.max()) + 1 if len(dropped) else 0), np.int64)
    out[: len(tomb)] = tomb
    out[dropped] = run_id
    return out


def _holders(
    job: QuoteJob, changes: RunChanges, run_id: int, ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The live U postings after the run of the sorted chunk IDs ``ids``: ``(chunk, doc)``
    sorted by chunk (the run's segments are written; its manifest is not committed yet)."""
    cfg = job.config
    manifest = {**job.manifest, **changes.manifests}
    tomb = _tomb_after(job.tomb, changes.tombstones, run_id)
    reader = RangeReader(job.store)
    ranges = shard_ranges(cfg.hash_bits, cfg.ranges)
    sid = shard_of(ids, cfg.shard_width)
    chunks, holders = [np.zeros(0, np.uint64)], [np.zeros(0, np.int64)]
    for s in np.unique(sid).tolist():
        gens = [g for g, _, _ in manifest.get(s, [])]
        probe = ids[sid == s].astype(np.dtype(cfg.chunk_dtype))
        data = reader.subset(s, gens, probe, tomb, *ranges[s])
        c, d = posting_pairs(data.chunk_keys, data.offsets, data.doc_ids)
        live = live_mask(d, data.generation, tomb)  # a single part comes back unmerged
        chunks.append(c[live])
        holders.append(d[live])
    c, h = np.concatenate(chunks), np.concatenate(holders)
    order = np.lexsort((h, c))
    return c[order], h[order]


def _q_map(
    job: QuoteJob, touched: np.ndarray, q_ids: np.ndarray, q_doc: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The Q map of every live document after the run: the stored Q of those not in
    ``touched`` (recomputed, modified or deleted), and the recomputed ones' ``q_ids``."""
    docs, sets = (np.zeros(0, np.int64), []) if job.replace_all else _stored(job)
    keep = ~np.isin(docs, touched)
    run_docs, starts = np.unique(q_doc, return_index=True)
    ends = np.append(starts[1:], len(q_doc))[: len(starts)]
    all_docs = np.concatenate([docs[keep], run_docs]).astype(np.int64)
    all_sets = [s for s, k in zip(sets, keep.tolist(), strict=True) if k]
    all_sets += [q_ids[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    return quote_map(all_docs, all_sets)


def _stored(job: QuoteJob) -> tuple[np.ndarray, list[np.ndarray]]:
    """Every stored Q set (by doc ID)."""
    return read_quoted(job.catalog, job.config.hash_bits)
