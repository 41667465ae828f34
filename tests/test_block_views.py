"""The all-pairs stage on the blocks' compact views (simdask.kernels.doc_postings): rows equal
brute force over every chunk, and the merged shards are released once the views are built, so
that a worker does not hold both through the blocks (docs/scale.md, "Worker memory in the
similarity stage")."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest
from distributed.diagnostics.plugin import SchedulerPlugin

from simdask.cluster.transfer import Traffic
from simdask.config import IndexConfig
from simdask.engine.context import RunContext, RunOptions
from simdask.engine.similarity_stage import all_pairs
from simdask.engine.sizing import MAX_VIEW_WINDOWS
from simdask.engine.view_windows import window_starts
from simdask.kernels.similarity import containment
from simdask.progress import Callback
from tests.test_doc_postings import brute_pairs, make_shards

pytestmark = pytest.mark.integration


def brute_rows(docs: dict[int, set[int]], n: int, threshold: float) -> set:
    """Directed rows ``(d, o, shared, similarity)`` over every chunk (no top-k cut)."""
    sizes = np.array([len(docs.get(d, ())) for d in range(n)])
    rows = set()
    for (a, b), s in brute_pairs(docs, None).items():
        for d, o in ((a, b), (b, a)):
            sim = float(containment(np.array([s]), sizes[[d]])[0])
            if sim >= threshold:
                rows.add((d, o, s, sim))
    return rows


def shard_keys_held(client, keys: list[str]) -> list[str]:
    """The keys the scheduler still knows, after waiting up to 10 s for releases to land."""

    def held(dask_scheduler, keys=keys):
        return [k for k in keys if k in dask_scheduler.tasks]

    deadline = time.monotonic() + 10
    while (found := client.run_on_scheduler(held)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


class ViewsHeld(SchedulerPlugin):
    """Records the most ``bydoc`` (view) keys in memory at once and every such key."""

    def __init__(self):
        self.now: set[str] = set()
        self.most = 0
        self.seen: set[str] = set()

    def transition(self, key, start, finish, *args, **kwargs):
        if "-bydoc-" not in str(key):
            return
        self.seen.add(str(key))
        if finish == "memory":
            self.now.add(str(key))
        elif start == "memory":
            self.now.discard(str(key))
        self.most = max(self.most, len(self.now))


def views_held(dask_scheduler, name):
    p = dask_scheduler.plugins.pop(name)
    return p.most, sorted(p.seen)


@pytest.mark.parametrize(
    ("heavy_df", "view_bytes"),
    [(None, None), (3, None), (None, 1), (3, 1)],
    ids=["no-heavy", "heavy", "no-heavy-windows", "heavy-windows"],
)
def test_all_pairs_on_views_equals_brute_force_and_drops_the_shards(client, heavy_df, view_bytes):
    """Rows equal brute force, also with the views built in document windows (``view_bytes``
    1: the most windows), where at most one window's views (one per range) are held at a
    time."""
    rng = np.random.default_rng(5)
    n = 60
    # a few common chunks (boilerplate: up to 40 holders) and many rare ones
    docs = {
        d: set(rng.choice(12, rng.integers(0, 6), replace=False).tolist())
        | set(rng.integers(12, 256, rng.integers(1, 25)).tolist())
        for d in range(n - 1)  # doc n - 1 holds nothing
    }
    shards = make_shards(docs, 4)
    futs = client.scatter(shards, hash=False)
    keys = [f.key for f in futs]
    sizes = np.array([len(docs.get(d, ())) for d in range(n)], np.int64)
    [n_chunks_f] = client.scatter([sizes], broadcast=True, hash=False)
    opts = RunOptions(block_pairs=40)  # many blocks
    if view_bytes is not None:
        opts = RunOptions(block_pairs=40, view_bytes=view_bytes)
    tag = f"t-views-{heavy_df}-{view_bytes}"
    client.register_plugin(ViewsHeld(), name=f"views-held-{tag}")
    ctx = RunContext(client, 1, tag, Callback(), Traffic(client), "dask", 2, 4, opts)
    cfg = IndexConfig(threshold=1.0, top_k=n, heavy_df=heavy_df, similarity_mode="exact")
    res = all_pairs(ctx, futs, n_chunks_f, n, cfg)
    assert res.blocks > 1
    if heavy_df is not None:
        assert res.heavy.heavy_chunks > 0
    got = set(zip(*(c.tolist() for c in res.rows), strict=True))
    assert got == brute_rows(docs, n, 1.0) and len(got) == len(res.rows[0])
    assert Counter(d for d, *_ in got)  # not trivially empty
    assert shard_keys_held(client, keys) == []  # the caller's futures no longer hold them
    most, seen = client.run_on_scheduler(views_held, name=f"views-held-{tag}")
    windows = res.heavy.view_windows
    assert windows == 1 if view_bytes is None else 1 < windows <= MAX_VIEW_WINDOWS
    assert len(seen) == 4 * windows  # 4 ranges a window
    assert 0 < most <= 4


def test_window_starts_cut_the_blocks_at_about_equal_document_counts():
    """Blocks of 10 documents over 100: 4 windows start at blocks 0, 3 (doc 30 >= 25), 5, 8
    (doc 80 >= 75); never more windows than blocks, never an empty window."""
    blocks = [(i, i + 10) for i in range(0, 100, 10)]
    assert window_starts(blocks, 4) == [0, 3, 5, 8]
    assert window_starts(blocks, 1) == [0]
    assert window_starts(blocks[:2], 4) == [0, 1]
    assert window_starts([], 3) == [0]
