"""The similarity stage on the cluster (DESIGN §3.4): the merged shards stay on the workers
that hold them; per block of documents, each shard's pair keys are emitted where the shard is,
then counted and thresholded by one task; at most ``blocks_in_flight`` blocks at a time.
Chunks above the heavy cutoff are handled apart (:mod:`simdask.kernels.heavy`): their
per-document bitsets are broadcast, candidate pairs come from the light chunks, and in the
``exact`` mode documents whose heavy chunks alone could give rows are searched densely."""

from __future__ import annotations

import time

import numpy as np
from distributed import as_completed

from simdask.engine.tasks import block_rows_task, member_keys, member_rows_task
from simdask.kernels.heavy import (
    HeavySets,
    choose_cutoff,
    df_histogram,
    heavy_only_rows,
    heavy_postings,
    light_work,
    merge_histograms,
    merge_rows,
    search_docs,
    still_open,
)
from simdask.kernels.similarity import (
    block_pair_keys,
    max_block_docs,
    member_work,
    pair_work,
    plan_blocks,
    top_k_rows,
)

__all__ = ["EMPTY_ROWS", "SimilarityStage", "stored_cutoff"]

#: No similarity rows: ``(doc, other, shared, similarity)`` columns of length 0.
EMPTY_ROWS = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))


class SimilarityStage:
    """Similarity blocks on the cluster, at most ``blocks_in_flight`` at a time."""

    def __init__(self, client, shard_f, n_chunks_f, n_docs, config, options, tag, cb):
        self.client, self.shard_f, self.n_chunks_f = client, shard_f, n_chunks_f
        self.n_docs = n_docs
        self.config, self.options, self.tag, self.cb = config, options, tag, cb
        self.n_blocks = 0
        self.work = 0
        #: heavy cutoff (chunks with df above it are heavy; None: none), set by all_pairs or
        #: by the caller (the one the index was built with) before members
        self.cutoff: int | None = None
        self.heavy: dict = {}

    def _work(self, fn, *args) -> np.ndarray:
        futs = [
            self.client.submit(fn, f, *args, key=f"simdask-work-{self.tag}-s{s:04d}")
            for s, f in enumerate(self.shard_f)
        ]
        work = np.sum(self.client.gather(futs), axis=0)
        self.work = int(work.sum())
        return work

    def _budget(self, work: np.ndarray) -> int:
        """Pairs per block: ``block_pairs`` at most, and small enough for two blocks per
        worker, so that the reductions run in parallel."""
        n_workers = max(1, len(self.client.scheduler_info().get("workers", {})))
        return max(1, min(self.options.block_pairs, int(work.sum()) // (2 * n_workers) + 1))

    def _run_blocks(self, blocks: list, submit_block) -> list:
        self.n_blocks = len(blocks)
        self.cb.stage("similarity", len(blocks))
        pending, running, out = list(enumerate(blocks)), as_completed(), []
        for _ in range(min(self.options.blocks_in_flight, len(pending))):
            running.add(submit_block(*pending.pop(0)))
        for fut in running:
            out.append(fut.result())
            fut.release()
            self.cb.advance(1)
            if pending:
                running.add(submit_block(*pending.pop(0)))
        self.cb.end_stage()
        return out

    def _parts(self, fn, b: int, *args) -> list:
        return [
            self.client.submit(fn, f, *args, key=f"simdask-pairs-{self.tag}-b{b:06d}-s{s:04d}")
            for s, f in enumerate(self.shard_f)
        ]

    def _per_shard(self, fn, name: str, *args) -> list:
        futs = [
            self.client.submit(fn, f, *args, key=f"simdask-{name}-{self.tag}-s{s:04d}")
            for s, f in enumerate(self.shard_f)
        ]
        return self.client.gather(futs)

    def _heavy_bits(self, n_docs: int):
        """Choose the cutoff; broadcast the heavy bitsets (None when no chunk is heavy)."""
        cfg = self.config
        values, counts = merge_histograms(self._per_shard(df_histogram, "dfhist", cfg.max_df))
        postings = int((values * counts).sum())
        self.cutoff = choose_cutoff(
            values, counts, postings, fixed=cfg.heavy_df, max_heavy=cfg.max_heavy
        )
        is_heavy = np.zeros(len(values), bool) if self.cutoff is None else values > self.cutoff
        heavy_chunks = int(counts[is_heavy].sum())
        self.heavy = {
            "mode": cfg.similarity_mode,
            "cutoff": self.cutoff,
            "heavy_chunks": heavy_chunks,
            "heavy_postings": int((values * counts)[is_heavy].sum()),
            "pair_work_all": light_work(values, counts, None),
            "pair_work_light": light_work(values, counts, self.cutoff),
        }
        self.heavy["heavy_work_share"] = round(
            1 - self.heavy["pair_work_light"] / max(1, self.heavy["pair_work_all"]), 6
        )
        if heavy_chunks == 0:
            return None
        parts = self._per_shard(heavy_postings, "heavy", self.cutoff, cfg.max_df)
        bits = HeavySets.build(parts, n_docs).bits()
        self.heavy["heavy_docs"] = len(bits.docs)
        [bits_f] = self.client.scatter([bits], broadcast=True, hash=False)
        return bits_f

    def _heavy_only(self, bits_f, rows):
        """Documents whose heavy chunks alone could give rows: searched (``exact``) or
        counted as skipped (``informative``)."""
        cfg = self.config
        sizes = self.client.submit(_sizes, bits_f, key=f"simdask-hsizes-{self.tag}")
        queries = self.client.submit(
            search_docs, sizes, self.n_chunks_f, cfg.threshold, key=f"simdask-hq-{self.tag}"
        ).result()
        self.heavy["heavy_only_docs"] = len(queries)
        self.heavy["heavy_only_searched"] = cfg.similarity_mode == "exact"
        if cfg.similarity_mode != "exact" or len(queries) == 0:
            return rows
        sizes, n_chunks = self.client.gather([sizes, self.n_chunks_f])
        queries = still_open(queries, rows, sizes, n_chunks, cfg.top_k)
        self.heavy["heavy_only_docs_searched"] = len(queries)
        n_rows = self.heavy["heavy_docs"]
        step = max(1, (1 << 27) // max(1, n_rows))  # about a second of popcounts per task
        futs = [
            self.client.submit(
                heavy_only_rows,
                bits_f,
                queries[lo : lo + step],
                self.n_chunks_f,
                cfg.threshold,
                cfg.top_k,
                key=f"simdask-heavyonly-{self.tag}-q{lo:08d}",
            )
            for lo in range(0, len(queries), step)
        ]
        found = self.client.gather(futs)
        extra = tuple(np.concatenate([f[i] for f in found]) for i in range(4))
        return merge_rows(rows, extra, cfg.top_k)

    def all_pairs(self, n_docs: int):
        """Every document against every other (a first build, or all documents changed)."""
        cfg = self.config
        t = time.perf_counter()
        bits_f = self._heavy_bits(n_docs)
        seconds = {"heavy_sets": time.perf_counter() - t}
        t = time.perf_counter()
        light = self.cutoff
        if cfg.max_df is not None:
            light = cfg.max_df if light is None else min(light, cfg.max_df)
        work = self._work(pair_work, n_docs, light)
        blocks = plan_blocks(work, self._budget(work), max_block_docs(n_docs))

        def submit(b, block):
            parts = self._parts(block_pair_keys, b, *block, n_docs, light)
            return self.client.submit(
                block_rows_task,
                parts,
                block[0],
                self.n_chunks_f,
                cfg.threshold,
                cfg.top_k,
                bits_f,
                key=f"simdask-rows-{self.tag}-b{b:06d}",
            )

        out = self._run_blocks(blocks, submit)
        rows = EMPTY_ROWS
        if out:
            cols = [np.concatenate([o[i] for o in out]) for i in range(4)]
            rows = top_k_rows(*cols, cfg.top_k)
        seconds["light_pairs"] = time.perf_counter() - t
        t = time.perf_counter()
        if bits_f is not None:
            rows = self._heavy_only(bits_f, rows)
        seconds["heavy_only"] = time.perf_counter() - t
        self.heavy["seconds"] = {k: round(v, 3) for k, v in seconds.items()}
        return rows

    def members(self, members: np.ndarray, changed: np.ndarray):
        """Rows of ``members`` against everything, plus reverse rows to ``changed``.

        Returns the rows and the documents whose lists gained reverse rows (to be trimmed).
        """
        cfg = self.config
        work = self._work(member_work, members, cfg.max_df) if len(members) else np.zeros(0)
        cuts = plan_blocks(work, self._budget(work), max_block_docs(self.n_docs))
        blocks = [members[lo:hi] for lo, hi in cuts]
        [changed_f, members_f] = self.client.scatter([changed, members], broadcast=True, hash=False)

        def submit(b, block):
            parts = self._parts(member_keys, b, block, self.n_docs, cfg.max_df, self.cutoff)
            return self.client.submit(
                member_rows_task,
                parts,
                block,
                self.n_chunks_f,
                changed_f,
                members_f,
                cfg.threshold,
                cfg.top_k,
                cfg.similarity_mode,
                key=f"simdask-rows-{self.tag}-b{b:06d}",
            )

        out = self._run_blocks(blocks, submit)
        if not out:
            return EMPTY_ROWS, np.zeros(0, np.int64)
        cols = [np.concatenate([o[0][i] for o in out] + [o[1][i] for o in out]) for i in range(4)]
        trim = np.unique(np.concatenate([o[1][0] for o in out]))
        return tuple(cols), trim


def _sizes(bits) -> np.ndarray:
    return bits.sizes


def stored_cutoff(last_summary: dict | None, config) -> int | None:
    """The heavy cutoff an incremental run keeps: the index's ``heavy_df``, else the one the
    last run recorded (``extra.heavy.cutoff`` of its summary; None: no chunk is heavy)."""
    if config.heavy_df is not None:
        return config.heavy_df
    extra = (last_summary or {}).get("extra") or {}
    return (extra.get("heavy") or {}).get("cutoff")
