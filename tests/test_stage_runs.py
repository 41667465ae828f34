"""Compaction, ``repeats`` and the heavy block pass on the stage contract (engine/stage.py,
issue 27): a compaction is a run of the writer with its own run context — its tasks named by
``task_key`` with the run's tag (``run_tag``, as an update's), progress one unit a range —
the passes of ``repeats`` are stages driven by ``drive``, each task named by ``task_key``,
progress one unit a task, and the candidates' heavy overlap runs on the one block driver
(engine/block_driver.py) as every other block pass: ``task_key`` names, a heap trim after
each block, progress one unit a block."""

from __future__ import annotations

import re

import pytest
from distributed import Client, get_task_stream

from simdask import Index, IndexConfig, RunOptions
from simdask.cluster.heap import trim_grown
from simdask.engine.context import run_tag, task_key
from simdask.engine.repeats_run import RepeatsConfig, find_repeats
from simdask.kernels.merge_policy import MergePolicy
from simdask.progress import RecordingCallback
from tests.helpers.corpus import make_docs, write_txt
from tests.test_heavy import template_texts

pytestmark = pytest.mark.integration

NEVER = RunOptions(merge_policy=MergePolicy(enabled=False))
POOL = list(make_docs(16, seed=41).values())


def _stages(events: list) -> list[tuple[str, int | None, int]]:
    """``(name, total, units advanced)`` of every stage a callback saw, in order."""
    out: list = []
    for what, value in events:
        if what == "stage":
            out.append([*value, 0])
        elif what == "advance" and out:
            out[-1][2] += value
    return [tuple(s) for s in out]


def test_compaction_runs_as_a_stage_of_its_own_run(tmp_path, client):
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(8)}, tmp_path / "src")
    idx = Index.create(tmp_path / "idx", IndexConfig(hash_bits=24, shards=4, top_k=3))
    idx.update([folder], client=client, options=NEVER)
    for i in range(8, 11):  # three incremental runs: a delta segment in each range touched
        (folder / f"k{i:02d}.txt").write_text(POOL[i])
        (folder / f"k{i - 8:02d}.txt").write_text(POOL[i + 5])
        idx.update([folder], client=client, options=NEVER)
    cb = RecordingCallback()
    with get_task_stream(client) as ts:
        out = idx.compact(client=client, force=True, callback=cb)
    assert out["ranges"] >= 1 and out["segments_merged"] > out["ranges"]
    keys = [str(t["key"]) for t in ts.data]
    tag = run_tag(idx.store, out["run_id"])
    compact = sorted(k for k in keys if k.startswith("simdask-compact-"))
    assert len(compact) == out["ranges"]
    assert all(re.fullmatch(rf"simdask-compact-{re.escape(tag)}-s\d{{4}}", k) for k in compact)
    heads = sorted(k for k in keys if k.startswith("simdask-chead-"))
    assert heads == [task_key("chead", tag, s=int(k[-4:])) for k in compact]
    assert ("compact", out["ranges"], out["ranges"]) in _stages(cb.events)
    assert {len(v) for v in idx.catalog.segments().values()} == {1}
    assert idx.catalog.run_status(out["run_id"]) == "committed"


def test_repeats_passes_are_stages_with_task_keys(tmp_path, client):
    docs = {f"d{i:02d}": POOL[i % 6] + " " + POOL[i] for i in range(12)}
    folder = write_txt(docs, tmp_path / "docs")
    cfg = RepeatsConfig(n=5, min_count=2, batch_bytes=6000, range_bytes=6000)
    cb = RecordingCallback()
    with get_task_stream(client) as ts:
        res = find_repeats([folder], tmp_path / "out.jsonl", cfg, client=client, callback=cb)
    assert res.rows > 0
    stages = _stages(cb.events)
    assert [name for name, _, _ in stages] == ["pass1", "select", "pass2", "group"]
    assert all(total == done and total >= 1 for _, total, done in stages)
    batches, ranges = stages[0][1], stages[1][1]
    assert stages[2][1] == batches and stages[3][1] == ranges and batches > 1 and ranges > 1
    keys = [str(t["key"]) for t in ts.data]
    names = [k for k in keys if re.match(r"simdask-r(pass1|select|pass2|group)-", k)]
    assert len(names) == 2 * batches + 2 * ranges
    tags = {k.split("-")[2] for k in names}
    assert len(tags) == 1  # one run, one tag
    [tag] = tags
    assert task_key("rpass1", tag, b=batches - 1) in names
    assert task_key("rgroup", tag, s=ranges - 1) in names


@pytest.mark.parametrize("fuse_members", [1000, 0], ids=["delta", "member-blocks"])
def test_heavy_overlap_blocks_run_on_the_one_block_driver(
    tmp_path, client, monkeypatch, fuse_members
):
    """An incremental run in the ``informative`` mode with heavy chunks takes the candidates'
    heavy overlap per block (engine/heavy_candidates.py), through a delta run's range tasks or
    merged ranges: every step named by ``task_key`` with the run's tag, block by block and
    range by range; one heap trim (``trim_grown`` on the workers) after each block; progress
    one unit a block, as the other block passes."""
    texts = template_texts(40, seed=8)
    keys = sorted(texts)
    cfg = IndexConfig(
        hash_bits=32, shards=3, top_k=5, threshold=2.0, similarity_mode="informative", heavy_df=3
    )
    opts = RunOptions(fuse_members=fuse_members, block_pairs=20, merge_policy=NEVER.merge_policy)
    idx = Index.create(tmp_path / "i", cfg)
    src = write_txt({k: texts[k] for k in keys[:28]}, tmp_path / "docs")
    idx.update([src], client=client, options=opts)
    write_txt(texts, src)  # 12 added: their rows through the heavy pass
    trims: list = []
    run = Client.run

    def counted(self, fn, *args, **kwargs):
        trims.extend([fn] if fn is trim_grown else [])
        return run(self, fn, *args, **kwargs)

    monkeypatch.setattr(Client, "run", counted)
    cb = RecordingCallback()
    with get_task_stream(client) as ts:
        s = idx.update([src], client=client, options=opts, callback=cb)
    monkeypatch.undo()
    assert s.added == 12 and s.extra["heavy"] == {"mode": "informative", "cutoff": 3}
    tag = run_tag(idx.store, s.run_id)
    keys_run = {str(t["key"]) for t in ts.data}
    step = {
        n: sorted(k for k in keys_run if k.startswith(f"simdask-{n}-"))
        for n in ("hlight", "hcand", "hover", "rows")
    }
    blocks = len(step["hcand"])
    assert blocks >= (2 if fuse_members == 0 else 1)
    assert step["hcand"] == [task_key("hcand", tag, b=b) for b in range(blocks)]
    assert step["rows"] == [task_key("rows", tag, b=b) for b in range(blocks)]
    ranges = len(step["hlight"]) // blocks
    for n in ("hlight", "hover"):
        want = [task_key(n, tag, b=b, s=r) for b in range(blocks) for r in range(ranges)]
        assert step[n] == want
    assert len(trims) == blocks  # the driver's trim after each block
    assert ("similarity", blocks, blocks) in _stages(cb.events)
