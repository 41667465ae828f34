"""Delta runs keep each index's segments memory-mapped in the worker processes between runs
(:func:`simdask.engine.segment_tasks.probe_reader`): later runs, a compaction, and an index
removed and created again at the same path (whose generation numbers start over) still give
exactly what a full build gives."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from simdask import Index, IndexConfig
from simdask.engine import segment_tasks
from simdask.engine.segment_tasks import probe_reader
from simdask.storage.segments import RangeReader
from tests.helpers.compare import assert_same_index
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration

CFG = dict(hash_bits=24, shards=4, top_k=3)


def _full(tmp_path, folder, client) -> Index:
    path = tmp_path / "full"
    shutil.rmtree(path, ignore_errors=True)
    idx = Index.create(path, IndexConfig(**CFG))
    idx.update([folder], client=client)
    return idx


def _opened(client, index_id: str) -> dict[str, list[list[tuple[int, int]]]]:
    """Per worker: the (generation, range) segments its readers of ``index_id`` hold open."""

    def held():  # nested: sent by value, the workers need not import the tests
        from simdask.engine import segment_tasks as t

        return [sorted(r._open) for (_, iid, _), r in t._probe_readers.items() if iid == index_id]

    return client.run(held)


def _delta_run(idx, folder, docs, client):
    write_txt(docs, folder)
    s = idx.update([folder], client=client)
    assert s.added == len(docs)


def test_recreated_index_at_the_same_path_is_not_read_from_old_mappings(tmp_path, client):
    """The second index reuses the path and the generation numbers of the first; a reader
    keyed by path alone would look its lookups up in the first index's mapped segments."""
    path = tmp_path / "idx"
    for seed in (31, 32):  # two unrelated corpora, the same path
        shutil.rmtree(path, ignore_errors=True)
        src = tmp_path / f"src{seed}"
        docs = make_docs(24, seed=seed)
        keys = sorted(docs)
        write_txt({k: docs[k] for k in keys[:16]}, src)
        idx = Index.create(path, IndexConfig(**CFG))
        idx.update([src], client=client)
        _delta_run(idx, src, {k: docs[k] for k in keys[16:20]}, client)
        _delta_run(idx, src, {k: docs[k] for k in keys[20:]}, client)
        assert_same_index(idx, _full(tmp_path, src, client))
        held = _opened(client, idx.catalog.index_id)
        assert any(held.values()), "the delta runs' readers kept no segment open"
        idx.close()


def test_compaction_then_delta_runs_forget_merged_segments(tmp_path, client):
    """After a compaction the next run's readers drop the merged-away segments and read the
    new one; the index equals a full build."""
    src = tmp_path / "src"
    docs = make_docs(30, seed=41)
    keys = sorted(docs)
    write_txt({k: docs[k] for k in keys[:12]}, src)
    idx = Index.create(tmp_path / "idx", IndexConfig(**CFG))
    idx.update([src], client=client)
    for lo in (12, 16, 20):
        _delta_run(idx, src, {k: docs[k] for k in keys[lo : lo + 4]}, client)
    idx.compact(client=client, force=True)
    _delta_run(idx, src, {k: docs[k] for k in keys[24:]}, client)
    assert_same_index(idx, _full(tmp_path, src, client))
    live = {(g, s) for s, segs in idx.catalog.segments().items() for g, _, _ in segs}
    for held in _opened(client, idx.catalog.index_id).values():
        for segs in held:
            # what the last run opened is committed; nothing merged away is still open
            # (the last run's own delta segments are newer than what it read)
            assert set(segs) <= live
    idx.close()


def test_keep_range_forgets_only_that_ranges_other_segments():
    reader = RangeReader(store=None)
    for key in [(1, 0), (2, 0), (3, 0), (1, 1), (2, 1)]:
        reader._open[key] = {"marker": np.zeros(1)}
    reader.keep_range(0, [3])
    assert sorted(reader._open) == [(1, 1), (2, 1), (3, 0)]
    reader.keep_range(1, [])
    assert sorted(reader._open) == [(3, 0)]


def test_probe_reader_is_kept_per_index_and_bounded(tmp_path):
    root = str(tmp_path)
    a = probe_reader(root, "id-a", "<u8")
    assert probe_reader(root, "id-a", "<u8") is a
    assert probe_reader(root, "id-b", "<u8") is not a  # same path, another index
    for i in range(segment_tasks.PROBE_READERS_KEPT):
        probe_reader(root, f"other-{i}", "<u8")
    assert probe_reader(root, "id-a", "<u8") is not a  # the least recently used went
