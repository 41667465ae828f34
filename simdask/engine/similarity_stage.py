"""The similarity stage on the cluster (DESIGN §3.4): the merged shards stay on the workers
that hold them; per block of documents, each shard's pair keys are emitted where the shard is,
then counted and thresholded by one task; at most ``blocks_in_flight`` blocks at a time."""

from __future__ import annotations

import numpy as np
from distributed import as_completed

from simdask.engine.tasks import block_rows_task, member_rows_task
from simdask.kernels.similarity import (
    block_pair_keys,
    max_block_docs,
    member_pair_keys,
    member_work,
    pair_work,
    plan_blocks,
    top_k_rows,
)

__all__ = ["EMPTY_ROWS", "SimilarityStage"]

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
            self.client.submit(
                fn,
                f,
                *args,
                self.n_docs,
                self.config.max_df,
                key=f"simdask-pairs-{self.tag}-b{b:06d}-s{s:04d}",
            )
            for s, f in enumerate(self.shard_f)
        ]

    def all_pairs(self, n_docs: int):
        """Every document against every other (a first build, or all documents changed)."""
        cfg = self.config
        work = self._work(pair_work, n_docs, cfg.max_df)
        blocks = plan_blocks(work, self._budget(work), max_block_docs(n_docs))

        def submit(b, block):
            parts = self._parts(block_pair_keys, b, *block)
            return self.client.submit(
                block_rows_task,
                parts,
                block[0],
                self.n_chunks_f,
                cfg.threshold,
                cfg.top_k,
                key=f"simdask-rows-{self.tag}-b{b:06d}",
            )

        out = self._run_blocks(blocks, submit)
        if not out:
            return EMPTY_ROWS
        return top_k_rows(*[np.concatenate([o[i] for o in out]) for i in range(4)], cfg.top_k)

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
            parts = self._parts(member_pair_keys, b, block)
            return self.client.submit(
                member_rows_task,
                parts,
                block,
                self.n_chunks_f,
                changed_f,
                members_f,
                cfg.threshold,
                cfg.top_k,
                key=f"simdask-rows-{self.tag}-b{b:06d}",
            )

        out = self._run_blocks(blocks, submit)
        if not out:
            return EMPTY_ROWS, np.zeros(0, np.int64)
        cols = [np.concatenate([o[0][i] for o in out] + [o[1][i] for o in out]) for i in range(4)]
        trim = np.unique(np.concatenate([o[1][0] for o in out]))
        return tuple(cols), trim
