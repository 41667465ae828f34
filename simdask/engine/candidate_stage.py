"""The candidate partners of one run, as Dask tasks (after the documents' IDs are resolved).

Three task stages with deterministic names (:func:`~.context.task_key`), the work in
:mod:`simdask.kernels.candidate_ranges`:

1. ``cfeat`` per batch of the run's new and modified documents: their texts (read from the
   text packs on the worker when it shares the index's files, else sent by the client)
   become content n-gram pairs, split by range of the feature-ID space (one bucket file per
   range and batch in the run's work folder, or kept on the worker);
2. ``cmerge`` per range: the range's committed segment without the recomputed documents'
   postings, with the new ones, written as this run's segment of the range
   (:func:`~simdask.storage.candidate_store.candidate_store`); returns the documents whose lists
   may change and the range's partner entries (small); once every range is merged, the
   run's bucket files are deleted (the scoring reads the segments: no peak of disk with both);
3. ``cscore`` per block of target documents (every document in a build; else the new ones
   and the affected ones): every range's partial scores of the block, summed and cut to each
   target's best ``depth``; returns the rows.

Nothing in the client reads every feature set: it reads only the new documents' texts when
the workers do not share the index's files. The result commits with the run
(:class:`~simdask.storage.candidate_store.CandidateChanges`). Thin: the work is in the kernels.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simdask.engine.context import RunContext
from simdask.kernels.candidate_ranges import (
    block_entries,
    block_neighbours,
    block_top,
    mass_vector,
    merge_range,
    range_mass,
    split_by_range,
)
from simdask.kernels.candidate_scores import CandidateConfig
from simdask.kernels.changes import DocumentRow, ResolvedChanges
from simdask.kernels.content_ngrams import CONTENT_NGRAM
from simdask.kernels.exclusions import Exclusions
from simdask.kernels.postings import ShardData, shard_ranges
from simdask.storage.candidate_store import (
    CandidateChanges,
    candidate_store,
    remove_unreferenced,
    stored_candidate_config,
    stored_segments,
)
from simdask.storage.catalog import Catalog
from simdask.storage.text_packs import TextStore

__all__ = [
    "BLOCK_ENTRIES",
    "FEATURE_BATCH",
    "CandidateJob",
    "candidate_changes",
    "feature_task",
    "merge_task",
    "run_candidate_stage",
    "score_task",
]

#: documents turned into features by one task
FEATURE_BATCH = 1000
#: partner entries a scoring task expands at most (about 72 bytes each at its peak; a
#: task also scans every range's doc IDs once, so fewer, larger blocks scan less)
BLOCK_ENTRIES = 1 << 25

_Row = tuple[int, str | None, int | None, int | None]


@dataclass(frozen=True)
class CandidateJob:
    """Where one run's candidate stage reads and writes: the ``catalog``, the text packs
    (``texts``), the index folder (``index_path``: its candidate store), the run's work
    folder (``work``), what chunk sets leave out (``exclusions``), the number of ranges."""

    catalog: Catalog
    texts: TextStore
    index_path: Path
    work: Path
    exclusions: Exclusions | None
    n_ranges: int


def _features(
    texts: list[str], ids: list[int], config: CandidateConfig, excl, n_ranges: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The range-split ``(feature, doc)`` pairs of ``texts`` (doc IDs ``ids``)."""
    cb = CONTENT_NGRAM.chunk(texts, config.ngram, config.hash_bits, config.seed, excl)
    docs = np.asarray(ids, np.uint32)[cb.doc] if len(ids) else np.zeros(0, np.uint32)
    return split_by_range(cb.chunk_ids, docs, config.hash_bits, n_ranges)


def _bucket(work: str, r: int, b: int) -> Path:
    return Path(work) / f"range-{r:04d}" / f"b{b:06d}.npy"


def feature_task(
    b: int,
    rows: list[_Row],
    texts: list[str] | None,
    text_root: str | None,
    work: str | None,
    config: CandidateConfig,
    exclusions: Exclusions | None,
    n_ranges: int,
) -> list[tuple[np.ndarray, np.ndarray]] | int:
    """Batch ``b``: the documents ``rows`` ``(doc ID, pack, offset, length)``, their
    ``texts`` (or read from the packs under ``text_root``). With ``work``: each range's
    pairs saved as ``work/range-RRRR/bNNNNNN.npy`` (a 2 x n uint array), returns the pairs
    written; else returns the pairs by range."""
    if texts is None:
        store = TextStore(text_root)  # type: ignore[arg-type]
        texts = [store.read(p, o, n) for _, p, o, n in rows]  # type: ignore[arg-type]
    parts = _features(texts, [r[0] for r in rows], config, exclusions, n_ranges)
    if work is None:
        return parts
    for r, (ids, docs) in enumerate(parts):
        path = _bucket(work, r, b)
        path.parent.mkdir(parents=True, exist_ok=True)
        width = np.uint32 if config.hash_bits <= 32 else np.uint64
        np.save(path, np.stack([ids.astype(width), docs.astype(width)]))
    return int(sum(len(d) for _, d in parts))


def _new_pairs(r: int, work: str | None, parts: list) -> tuple[np.ndarray, np.ndarray]:
    """Range ``r``'s pairs of the run: from its bucket files, or the batches' ``parts``."""
    if work is not None:
        folder = Path(work) / f"range-{r:04d}"
        got = [np.load(p) for p in sorted(folder.glob("b*.npy"))] if folder.is_dir() else []
        both = np.concatenate([np.zeros((2, 0), np.uint32), *got], axis=1)
        return both[0], both[1].astype(np.uint32)
    ids = np.concatenate([np.zeros(0, np.uint64), *[p[r][0] for p in parts]])
    docs = np.concatenate([np.zeros(0, np.uint32), *[p[r][1] for p in parts]])
    return ids, docs


def _open(source, r: int) -> ShardData:
    """Range ``r``'s segment: ``source`` is the segment itself, or ``(index folder,
    generation, lo, hi)`` (a generation of None: the range has none yet) to memory-map it."""
    if isinstance(source, ShardData):
        return source
    root, gen, lo, hi = source
    if gen is None:
        return ShardData.empty(lo, hi)
    store = candidate_store(root)
    return store.map(gen, r) or store.read(gen, r)


def merge_task(
    r: int, old, work: str | None, parts: list, dropped, max_df: int, generation: int, full: bool
) -> tuple[dict, ShardData | None]:
    """Range ``r`` after the run (:func:`~simdask.kernels.candidate_ranges.merge_range`),
    written as ``generation`` when ``old`` is a store reference and the range changed.
    Returns ``(info, data)``: info ``{"affected", "entries", "postings", "generation",
    "mass"}`` (the generation of the range's current segment; ``affected`` empty in a build,
    ``full``; ``mass`` the documents' weight masses in the range,
    :func:`~simdask.kernels.candidate_ranges.range_mass`), data the segment when it is not
    written here (else None)."""
    ids, docs = _new_pairs(r, work, parts)
    before = _open(old, r)
    m = merge_range(before, ids, docs, np.asarray(dropped, np.uint32), max_df)
    info = {
        "affected": np.zeros(0, np.uint32) if full else m.affected,
        "entries": m.entries,
        "postings": m.data.n_postings,
        "generation": generation if m.changed else old[1] if isinstance(old, tuple) else None,
        "mass": range_mass(m.data, max_df),
    }
    if not isinstance(old, tuple):
        return info, m.data
    if m.changed:
        candidate_store(old[0]).write(generation, r, m.data)
    return info, None


def score_task(
    targets: np.ndarray,
    sources: list,
    max_df: int,
    depth: int,
    mass: np.ndarray | None = None,
    neighbours: bool = False,
):
    """Rows ``(doc, other, score)`` of the block ``targets`` over every range's segment
    (``sources``: segments or store references, :func:`_open`); scores normalised by
    ``mass`` (by doc ID) when given. With ``neighbours``: ``(rows, the doc IDs sharing a
    weighted feature with a target)``."""
    parts = [block_entries(_open(s, r), targets, max_df) for r, s in enumerate(sources)]
    rows = block_top(parts, targets, depth, mass)
    return (rows, block_neighbours(parts)) if neighbours else rows


def _rows_of(rows: list[DocumentRow]) -> list[_Row]:
    return [(r.doc_id, r.text_pack, r.text_offset, r.text_length) for r in rows]


def _featurise(ctx: RunContext, job: CandidateJob, rows, config: CandidateConfig):
    """Submit the ``cfeat`` tasks of ``rows`` (those with a stored text); their futures and
    the bucket folder (None when the pairs stay on the workers)."""
    rows = [r for r in rows if r.text_pack is not None]
    work = str(job.work / "cbuckets") if ctx.shared else None
    root = str(job.texts.root) if ctx.shared else None
    futures = []
    for b, i in enumerate(range(0, len(rows), FEATURE_BATCH)):
        part = _rows_of(rows[i : i + FEATURE_BATCH])
        texts = None if ctx.shared else [job.texts.read(*t[1:]) for t in part]  # type: ignore[arg-type]
        args = (b, part, texts, root, work, config, job.exclusions, job.n_ranges)
        futures.append(ctx.client.submit(feature_task, *args, key=ctx.key("cfeat", b=b)))
    return futures, work


def _merge(ctx, job: CandidateJob, feats, work, segments, dropped, config, full):
    """The ``cmerge`` tasks; each range's info and its source for the scoring tasks."""
    ranges = shard_ranges(config.hash_bits, job.n_ranges)
    if work is not None:
        ctx.client.gather(feats)  # the bucket files are written
        parts: list = []
    else:
        parts = feats
    [dropped_f] = ctx.broadcast(np.asarray(dropped, np.uint32))
    futures = []
    for r, (lo, hi) in enumerate(ranges):
        gen = segments.get(r)
        old: Any
        if ctx.shared:
            old = (str(job.index_path), gen, lo, hi)
        else:
            old = _open((str(job.index_path), gen, lo, hi), r)
        args = (r, old, work, parts, dropped_f, config.max_df, ctx.run_id, full)
        futures.append(ctx.client.submit(merge_task, *args, key=ctx.key("cmerge", s=r)))
    out = ctx.client.gather(futures)
    if work is not None:  # every range's segment is written: its buckets are read for good
        shutil.rmtree(work, ignore_errors=True)
    infos = [i for i, _ in out]
    if ctx.shared:
        sources = [
            (str(job.index_path), i["generation"], lo, hi)
            for i, (lo, hi) in zip(infos, ranges, strict=True)
        ]
    else:  # the client writes the changed ranges; the tasks score the segments in memory
        store = candidate_store(job.index_path)
        sources = []
        for r, (info, data) in enumerate(out):
            if info["generation"] == ctx.run_id:
                store.write(ctx.run_id, r, data)
            else:
                info["generation"] = segments.get(r)
            sources.append(data)
    return infos, sources


def _blocks(targets: np.ndarray, entries: float, n_docs: int) -> list[np.ndarray]:
    """``targets`` cut into blocks of about :data:`BLOCK_ENTRIES` partner entries each
    (``entries``: those of all ``n_docs`` documents, spread evenly)."""
    if len(targets) == 0:
        return []
    per = entries / max(n_docs, 1)
    n = max(1, int(np.ceil(per * len(targets) / BLOCK_ENTRIES)))
    return [b for b in np.array_split(targets, n) if len(b)]


@dataclass
class _Scoring:
    """The ``cscore`` tasks of one run: what every round of them shares."""

    ctx: RunContext
    sources: list
    config: CandidateConfig
    mass: np.ndarray | None
    entries: float
    n_docs: int

    def round(self, targets: np.ndarray, n: int, neighbours: bool) -> tuple[list, np.ndarray]:
        """Round ``n``: the rows of ``targets`` per block, and (``neighbours``) the sorted
        doc IDs sharing a weighted feature with any of them (else none)."""
        ctx, cfg = self.ctx, self.config
        mass = ctx.broadcast(self.mass)[0] if self.mass is not None else None
        blocks = _blocks(targets, self.entries, self.n_docs)
        futures = [
            ctx.client.submit(
                score_task,
                *(blk, self.sources, cfg.max_df, cfg.depth, mass, neighbours),
                key=ctx.key("cscore", b=b, suffix=f"r{n}"),
            )
            for b, blk in enumerate(blocks)
        ]
        got = ctx.client.gather(futures)
        if not neighbours:
            return list(got), np.zeros(0, np.int64)
        near = np.unique(np.concatenate([np.zeros(0, np.int64), *[g[1] for g in got]]))
        return [g[0] for g in got], near


def _by_doc(rows: tuple) -> tuple:
    """The rows ``(doc, other, score)`` grouped by doc ascending, each doc's in their order."""
    order = np.argsort(rows[0], kind="stable")
    return tuple(a[order] for a in rows)


def candidate_changes(
    ctx: RunContext, job: CandidateJob, resolved: ResolvedChanges, replace_all: bool
) -> CandidateChanges:
    """The candidate changes of a run that resolved ``resolved``. A build
    (``replace_all``), or an index without committed segments (before the candidates, or
    of the earlier layout: every stored text is read), ranks every document's partners;
    otherwise the new documents' and those the ranges name as affected."""
    catalog = job.catalog
    config = CandidateConfig() if replace_all else stored_candidate_config(catalog)
    committed = stored_segments(catalog)
    remove_unreferenced(candidate_store(job.index_path), committed)  # never the committed
    segments = None if replace_all else committed
    full = replace_all or config is None or segments is None
    config = config or CandidateConfig()
    segments = {} if full else segments
    rows = list(resolved.upserted)
    gone = {int(d) for d in resolved.dropped} | {int(d) for d in resolved.deleted}
    if full and not replace_all:  # an index without segments: read every text
        fresh = {r.doc_id for r in rows}
        rows += [r for r in catalog.documents() if r.doc_id not in fresh | gone]
    dropped = np.asarray(sorted(gone), np.uint32)
    feats, work = _featurise(ctx, job, rows, config)
    infos, sources = _merge(ctx, job, feats, work, segments, dropped, config, full)
    live = [r.doc_id for r in rows] if full else []
    new = np.asarray(sorted({r.doc_id for r in resolved.upserted} | set(live)), np.uint32)
    targets = np.union1d(new, np.concatenate([new[:0], *[i["affected"] for i in infos]]))
    n_docs = catalog.n_documents() + len(resolved.upserted) if not full else len(live)
    entries = float(sum(i["entries"] for i in infos))
    mass = mass_vector([i["mass"] for i in infos]) if config.normalise else None
    scoring = _Scoring(ctx, sources, config, mass, entries, n_docs)
    # normalised: the lists holding a document whose mass changed (a new or affected one)
    # change too; those are the documents sharing a weighted feature with one (round 2)
    got, near = scoring.round(targets.astype(np.uint32), 0, config.normalise and not full)
    if len(near):
        more = np.setdiff1d(near, targets.astype(np.int64)).astype(np.uint32)
        targets = np.union1d(targets.astype(np.int64), more)
        got += scoring.round(more, 1, False)[0]
    empty = np.zeros(0, np.int64)
    rows_out = tuple(np.concatenate([empty, *[g[k] for g in got]]) for k in range(3))
    rows_out = _by_doc(rows_out)
    return CandidateChanges(
        config=config,
        segments={r: i["generation"] for r, i in enumerate(infos) if i["generation"] is not None},
        replaced=np.union1d(targets.astype(np.int64), dropped.astype(np.int64)),
        rows=rows_out,  # type: ignore[arg-type]
        full=full,
    )


def run_candidate_stage(
    ctx: RunContext,
    job: CandidateJob,
    resolved: ResolvedChanges,
    replace_all: bool,
    enabled: bool,
) -> tuple[CandidateChanges | None, dict[str, float]]:
    """The run's candidate changes (:func:`candidate_changes`; None: unchanged) and the
    seconds they took (``{"candidates": s}``, for the run's ``stats.seconds``). An index
    without ``candidates`` (its setting, ``enabled`` False) keeps none: stored ones (the
    setting turned off) are dropped by the commit."""
    if not enabled:
        remove_unreferenced(candidate_store(job.index_path), stored_segments(job.catalog))
        config = stored_candidate_config(job.catalog)
        off = None if config is None else CandidateChanges(config, full=True, off=True)
        return off, {}
    t = time.perf_counter()
    got = candidate_changes(ctx, job, resolved, replace_all)
    return got, {"candidates": time.perf_counter() - t}
