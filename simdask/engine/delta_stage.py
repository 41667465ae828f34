"""An incremental run in proportion to its change (DESIGN §3, "Incremental cost").

Instead of rewriting every range a change touches, the run writes, per range, a small delta
segment of its new postings (:func:`~simdask.engine.segment_tasks.delta_task`) and tombstones
for the documents it modifies or removes. The recomputed documents' similarities come from
the posting lists of their chunks only: the driver reads those lists from the range's
committed segments (memory-mapped pages; tombstones applied), and one task per range adds the
delta and counts the members' pairs (:func:`~simdask.engine.segment_tasks.delta_pairs_task`).
Existing documents' top-k lists get the reverse rows, as in a full run; the result is exact.

With ``max_df`` a chunk whose document count crosses it changes the pairs of every document
holding it. The chunks whose count a run changes are exactly those probed (the delta's and
those of the dropped documents), so each range's task finds the documents holding a crossed
chunk (:func:`~simdask.engine.segment_tasks.delta_after_task`); they are recomputed too, from
the posting lists of their chunks, read like the others'.
"""

from __future__ import annotations

import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from simdask import failpoints
from simdask.config import IndexConfig
from simdask.engine.block_driver import BlockPass, run_blocks
from simdask.engine.context import RunContext
from simdask.engine.heavy_candidates import (
    HeavySteps,
    delta_light,
    delta_overlap,
    heavy_rows_submitter,
    uses_hold,
)
from simdask.engine.merge_stage import MergeSpec, MergeStage
from simdask.engine.segment_tasks import (
    RangeProbe,
    crossed_after,
    crossed_head,
    delta_after_task,
    delta_head,
    delta_keys,
    delta_pairs_task,
    delta_task,
    extend_after_task,
)
from simdask.engine.similarity_stage import (
    SimilarityResult,
    member_pass,
    member_results,
    member_rows,
)
from simdask.engine.stage import drive
from simdask.kernels.exclusions import Exclusions
from simdask.kernels.features import SORTED_CHUNK
from simdask.kernels.postings import pack_pairs, pair_chunks, sort_pairs, split_sorted_by_shard
from simdask.storage.catalog import Catalog
from simdask.storage.reads import text_locations
from simdask.storage.segments import Manifest, RangeReader
from simdask.storage.shards import ShardStore
from simdask.storage.text_packs import TextStore

__all__ = ["DeltaInputs", "DeltaResult", "run_delta", "stored_chunk_ids"]


@dataclass
class DeltaInputs:
    """What :func:`run_delta` needs besides the cluster: the run's broadcast ID maps
    (``prov_f``, ``final_f``), the recomputed documents (``members``, sorted uint32) and those
    whose content changed (``changed``), documents removed or replaced (``dropped``), the
    committed ``manifest`` and tombstones (``tomb_old``) and those after this run
    (``tomb_new``), ``|A|`` by doc ID after the run (``n_chunks_f`` broadcast, ``n_docs``),
    and the heavy-chunk ``cutoff`` the index was built with (None: no chunk is heavy), the
    index's ``exclusions`` (for re-chunking stored texts) and ``tomb_old`` broadcast
    (``tomb_old_f``: tasks reading their probed lists themselves apply it); ``bounded``: the
    index was built bounded (:mod:`simdask.kernels.heavy_bounded`)."""

    prov_f: object
    final_f: object
    members: np.ndarray
    changed: np.ndarray
    dropped: np.ndarray
    manifest: Manifest
    tomb_old: np.ndarray
    tomb_new: np.ndarray
    n_chunks_f: object
    n_docs: int
    cutoff: int | None = None
    exclusions: Exclusions | None = None
    tomb_old_f: object = None
    bounded: bool = False


def cross_counts(max_df: int | None) -> int | None:
    """The document count whose crossing changes other documents' rows in an incremental
    run: ``max_df`` (a chunk counted or not; None: none). The cutoff of a bounded index is
    not one: a chunk crossing it changes no stored value (every counted chunk is counted,
    light or heavy), only which pairs have light evidence; between re-bounds that is taken
    as of the run that computes a pair (:func:`~simdask.kernels.heavy_bounded.needs_rebound`,
    docs/design.md "Bounded all-pairs work"), so the holders of such a chunk are not
    recomputed."""
    return max_df


def stored_chunk_ids(
    catalog: Catalog,
    texts: TextStore,
    config: IndexConfig,
    doc_ids: np.ndarray,
    exclusions: Exclusions | None = None,
) -> list[np.ndarray]:
    """Per range: the sorted distinct chunk IDs of the committed documents ``doc_ids``,
    chunked again from their stored texts under the index's ``exclusions`` (costs what those
    documents cost)."""
    empty = [np.zeros(0, config.chunk_dtype) for _ in range(config.shards)]
    ids = [int(d) for d in doc_ids]
    if not ids:
        return empty
    rows = text_locations(catalog, ids)
    if not rows:
        return empty
    docs = np.array([r[0] for r in rows], np.uint32)
    cb = SORTED_CHUNK.chunk(
        [texts.read(p, o, n) for _, p, o, n in rows],
        config.k,
        config.hash_bits,
        config.seed,
        exclusions,
    )
    keys = sort_pairs(pack_pairs(cb.chunk_ids, docs[cb.doc]))
    parts = split_sorted_by_shard(keys, config.shard_width, config.shards)
    return [np.unique(pair_chunks(p)) for p in parts]


def _befores(store, manifest, probes, tomb, ranges) -> list:
    """Per range: its committed live postings of the probed chunks (threads; the pages of
    memory-mapped segments are read by the OS, zstd and numpy release the GIL)."""
    reader = RangeReader(store)
    # opened here, not in threads: warnings filters are not thread-safe
    for s, segs in manifest.items():
        for g, _, _ in segs:
            reader.opened(s, g)

    def one(s: int):
        gens = [g for g, _, _ in manifest.get(s, [])]
        return reader.subset(s, gens, probes[s], tomb, *ranges[s])

    with ThreadPoolExecutor(4) as ex:
        return list(ex.map(one, range(len(ranges))))


@dataclass
class DeltaResult:
    """What :func:`run_delta` computed: the segments written ``{range: (keys, postings)}``,
    the members' rows, the skipped-chunk change, seconds per step (writing the deltas,
    reading the probed posting lists, counting pairs and rows) and the documents recomputed
    because a chunk crossed ``max_df`` (``crossed``, sorted uint32; not in the run's
    members)."""

    segments: dict[int, tuple[int, int]]
    rows: SimilarityResult
    skipped_delta: int
    seconds: dict[str, float]
    crossed: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))


def _write_deltas(ctx: RunContext, store: ShardStore, specs, buckets, inp: DeltaInputs):
    """One :func:`delta_task` per range; returns the futures and the gathered deltas (with no
    shared filesystem the client writes the small deltas itself)."""
    args = (inp.prov_f, inp.final_f)
    stage = MergeStage(ctx, store, specs, buckets, delta_task, args, "delta", needs_old=False)
    drive(ctx, stage)
    deltas = ctx.client.gather(stage.futures)
    ctx.traffic.received(deltas)
    if not ctx.shared:  # the workers cannot write the store: the client does
        for s, d in enumerate(deltas):
            if d.n_postings:
                store.write(d.generation, s, d)
    return stage.futures, deltas


def run_delta(
    ctx: RunContext,
    store: ShardStore,
    catalog: Catalog,
    texts: TextStore,
    config: IndexConfig,
    specs: list[MergeSpec],
    buckets,
    inp: DeltaInputs,
) -> DeltaResult:
    """Write the run's delta segments and compute the recomputed documents' rows (exact: the
    members' pairs counted on the live postings of their chunks after the run)."""
    t0 = time.perf_counter()
    delta_f, deltas = _write_deltas(ctx, store, specs, buckets, inp)
    written = {s: (len(d.chunk_keys), d.n_postings) for s, d in enumerate(deltas) if d.n_postings}
    failpoints.hit("after_merge")
    t1 = time.perf_counter()
    ranges = [(sp.lo, sp.hi) for sp in specs]
    refill = np.setdiff1d(inp.members, inp.changed)
    cross = cross_counts(config.max_df)
    probe_docs = refill if cross is None else np.union1d(refill, inp.dropped)
    stored = stored_chunk_ids(catalog, texts, config, probe_docs, inp.exclusions)
    if cross is None and ctx.shared and store.can_mmap:
        # each range's task reads its probed lists itself, from the memory-mapped segments
        probes = None
        befores = [_range_probe(sp, stored[s], config) for s, sp in enumerate(specs)]
    else:
        probes = [
            np.union1d(deltas[s].chunk_keys, stored[s]).astype(config.chunk_dtype)
            for s in range(len(ranges))
        ]
        befores = _befores(store, inp.manifest, probes, inp.tomb_old, ranges)
    ctx.traffic.sent(befores)
    t2 = time.perf_counter()
    tomb_f, members_f, changed_f = ctx.broadcast(inp.tomb_new, inp.members, inp.changed)
    crossed = np.zeros(0, np.uint32)
    if cross is None:
        res, skipped = _member_pairs(
            ctx, config, inp, delta_f, befores, tomb_f, members_f, changed_f
        )
    else:
        args = (ctx, store, catalog, texts, config, inp, delta_f, befores, probes, tomb_f)
        res, skipped, crossed = _crossing_pairs(*args)
    ctx.traffic.received(res.rows)
    t3 = time.perf_counter()
    return DeltaResult(
        segments=written,
        rows=res,
        skipped_delta=skipped,
        seconds={"delta": t1 - t0, "probe": t2 - t1, "pairs": t3 - t2},
        crossed=crossed,
    )


def _range_probe(spec: MergeSpec, extra: np.ndarray, config: IndexConfig) -> RangeProbe:
    """The probe of one range read by its task: the committed segments of ``spec``, the
    chunks of the delta and ``extra``."""
    dtype = np.dtype(config.chunk_dtype).str
    extra = np.asarray(extra, dtype)
    gens = spec.old_generations
    return RangeProbe(spec.store_root, spec.shard, spec.lo, spec.hi, gens, extra, dtype)


#: counting work per block (pair keys, or dense counters / :data:`SLOTS_PER_KEY`) above which a
#: delta run's members are counted in several blocks, one per worker. A second block costs a
#: task per range and a rows task more, ~50 ms on two workers: at 100,000 documents and
#: 1.4 M keys (10 M dense counters) one block took 0.38 s of ``delta.pairs`` against 0.46 s
#: in two (medians of 10 adds of 100 alternated, load 5-7). The threshold is an estimate
#: (~2 ns per dense counter at that load, half of it saved by a second worker; the crossover
#: itself was not measured)
BLOCK_KEYS = 1 << 23
#: dense counters (``members x n_docs``, :func:`~simdask.kernels.member_counts.
#: count_member_candidates`) that cost what one pair key does
SLOTS_PER_KEY = 8


def count_blocks(work: int, n_members: int, n_docs: int, n_workers: int) -> int:
    """Blocks the members of a delta run are counted in: one, or one per worker (at most one
    per member) when the counting's work (``work`` keys, ``n_members * n_docs`` counters)
    exceeds :data:`BLOCK_KEYS` (see there)."""
    cost = max(int(work), n_members * n_docs // SLOTS_PER_KEY)
    return max(1, min(n_workers, n_members, -(-cost // BLOCK_KEYS)))


def _member_pairs(ctx, config, inp: DeltaInputs, delta_f, befores, tomb_f, members_f, changed_f):
    """The members' rows (no ``max_df``): per range a task adds the delta and emits the
    members' pair keys; they are counted in one block, or in one block per worker when
    the counting is large (:func:`count_blocks`). Returns the rows and the skipped-chunk
    change."""
    # the probed lists in the tasks' arguments, not scattered: a task retried after its
    # worker died still has them
    hold = uses_hold(config.similarity_mode, inp.cutoff)
    pair_f = [
        ctx.client.submit(
            delta_pairs_task,
            delta_f[s],
            befores[s],
            tomb_f,
            members_f,
            inp.n_docs,
            config.max_df,
            inp.cutoff,
            inp.tomb_old_f,
            hold,
            key=ctx.key("deltapairs", s=s),
        )
        for s in range(len(befores))
    ]
    heads = ctx.gather_shards("deltahead", delta_head, pair_f)
    work = int(sum(h[1] for h in heads))
    # much counting: one block per worker, in parallel
    n = count_blocks(work, len(inp.members), inp.n_docs, ctx.n_workers)
    cuts = np.linspace(0, len(inp.members), n + 1).astype(np.int64).tolist()
    blocks = [inp.members[lo:hi] for lo, hi in itertools.pairwise(cuts)]
    first = {int(b[0]): lo for b, lo in zip(blocks, cuts, strict=False) if len(b)}

    def emit_args(block):  # the keys of the members at positions lo..lo + len(block) - 1
        if n == 1:
            return ()
        lo = first[int(block[0])]
        return (lo, lo + len(block), inp.n_docs)

    if hold:  # the candidates' heavy overlap only (engine/heavy_candidates)
        steps = replace(
            HeavySteps.of(config, inp.n_docs, inp.n_chunks_f, changed_f, members_f, inp.bounded),
            light=delta_light,
            light_args=emit_args,
            overlap=delta_overlap,
            overlap_args=lambda block: emit_args(block)[:1],
        )  # the range tasks hold every block's light keys and hold: no emission per block
        p = BlockPass(submit_rows=heavy_rows_submitter(ctx, steps))
    else:
        p = member_pass(delta_keys, emit_args, "keys", inp.n_chunks_f, changed_f, members_f, config)
    out = run_blocks(ctx, pair_f, blocks, p)
    res = member_results(out, len(blocks), work)
    return res, int(sum(h[0] for h in heads))


def _crossing_pairs(
    ctx, store, catalog, texts, config, inp: DeltaInputs, delta_f, befores, probes, tomb_f
):
    """The rows of the members and of the documents holding a chunk whose count crossed
    ``max_df`` (found per range, :func:`delta_after_task`; their other chunks' posting lists
    read as the members' were). Returns the rows, the skipped-chunk change and the crossed
    documents that were not members."""
    after_f = [
        ctx.client.submit(
            delta_after_task,
            delta_f[s],
            befores[s],
            tomb_f,
            config.max_df,
            cross_counts(config.max_df),
            key=ctx.key("deltaafter", s=s),
        )
        for s in range(len(befores))
    ]
    heads = ctx.gather_shards("crossed", crossed_head, after_f)
    found = np.concatenate([np.zeros(0, np.uint32), *(h[1] for h in heads)])
    extra = np.setdiff1d(found, inp.members).astype(np.uint32)
    if len(extra):
        stored = stored_chunk_ids(catalog, texts, config, extra, inp.exclusions)
        more = [
            np.setdiff1d(stored[s], probes[s]).astype(config.chunk_dtype)
            for s in range(len(probes))
        ]
        ranges = [(b.lo, b.hi) for b in befores]
        more_before = _befores(store, inp.manifest, more, inp.tomb_old, ranges)
        ctx.traffic.sent(more_before)
        shards = [
            ctx.client.submit(extend_after_task, f, m, tomb_f, key=ctx.key("deltaextend", s=s))
            for s, (f, m) in enumerate(zip(after_f, more_before, strict=True))
        ]
    else:
        shards = ctx.map_shards("deltaafter2", crossed_after, after_f)
    members = np.union1d(inp.members, extra).astype(np.uint32)
    res = member_rows(
        ctx,
        shards,
        inp.n_chunks_f,
        inp.n_docs,
        config,
        members,
        inp.changed,
        inp.cutoff,
        inp.bounded,
    )
    return res, int(sum(h[0] for h in heads)), extra
