"""Delta runs keep the committed segments memory-mapped in the worker processes between runs
(:class:`simdask.storage.kept_maps.KeptMaps`, used by ``RangeProbe.read``): kept maps are
reused only while the segment's files are the same ones, bounded in bytes, and later runs, a
compaction, and an index removed and created again at the same path (whose generation
numbers start over) still give exactly what a full build gives."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from simdask import Index, IndexConfig
from simdask.kernels.postings import build_postings, pack_pairs, sort_pairs
from simdask.storage.backends import open_shard_store
from simdask.storage.kept_maps import KeptMaps
from simdask.storage.segments import remove_segment
from simdask.storage.shards import ShardData
from tests.helpers.compare import assert_same_index
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration

CFG = dict(hash_bits=24, shards=4, top_k=3)


def _shard(pairs: list[tuple[int, int]], generation: int = 1) -> ShardData:
    chunks = np.array([c for c, _ in pairs], np.uint32)
    docs = np.array([d for _, d in pairs], np.uint32)
    keys = sort_pairs(pack_pairs(chunks, docs))
    return ShardData(0, 1 << 24, *build_postings(keys), generation=generation)


def _lists(store, arrays, ids) -> dict[int, list[int]]:
    """{chunk: doc IDs} of ``ids`` read through ``arrays`` (ShardStore.read_subset)."""
    got = store.read_subset(arrays, np.array(ids, np.uint32), 1)
    return {
        int(c): got.doc_ids[got.offsets[i] : got.offsets[i + 1]].tolist()
        for i, c in enumerate(got.chunk_keys)
    }


def test_kept_while_the_files_are_the_same_reopened_when_replaced(tmp_path):
    store = open_shard_store(tmp_path, np.uint32)
    store.write(1, 0, _shard([(5, 1), (5, 2), (9, 3)]))
    maps = KeptMaps()
    a = maps.open_arrays(store, 1, 0)
    assert maps.open_arrays(store, 1, 0) is a  # kept
    assert _lists(store, a, [5, 9]) == {5: [1, 2], 9: [3]}
    # the segment removed and written again (an index created again at the same path, a
    # backup restored): same generation and range, other postings, the same array sizes
    remove_segment(store, 1, 0)
    store.write(1, 0, _shard([(5, 7), (6, 8), (9, 9)]))
    b = maps.open_arrays(store, 1, 0)
    assert b is not a
    assert _lists(store, b, [5, 6, 9]) == {5: [7], 6: [8], 9: [9]}
    assert len(maps) == 1


def test_kept_maps_are_bounded_in_bytes(tmp_path):
    store = open_shard_store(tmp_path, np.uint32)
    for s in range(3):
        store.write(1, s, _shard([(c, d) for c in range(50) for d in range(s + 1)]))
    one = KeptMaps()
    one.open_arrays(store, 1, 0)
    size = one.nbytes
    assert size > 0
    maps = KeptMaps(budget=2 * size + 1)  # range 0 is the smallest
    first = maps.open_arrays(store, 1, 0)
    maps.open_arrays(store, 1, 1)
    assert len(maps) == 1 and maps.nbytes <= maps.budget  # range 0 dropped for range 1
    assert maps.open_arrays(store, 1, 0) is not first
    assert maps.nbytes <= maps.budget
    maps.clear()
    assert (len(maps), maps.nbytes) == (0, 0)
    assert KeptMaps(budget=1).open_arrays(store, 1, 2) is not None  # too large: not kept


def _full(tmp_path, folder, client) -> Index:
    path = tmp_path / "full"
    shutil.rmtree(path, ignore_errors=True)
    idx = Index.create(path, IndexConfig(**CFG))
    idx.update([folder], client=client)
    return idx


def _kept(client, root) -> dict[str, list[str]]:
    """Per worker: the segment directories under ``root`` its kept maps hold."""

    def held():  # nested: sent by value, the workers need not import the tests
        from simdask.storage.kept_maps import kept_maps

        return sorted(k[0] for k in kept_maps()._kept if k[0].startswith(root))

    return client.run(held)


def _delta_run(idx, folder, docs, client):
    write_txt(docs, folder)
    s = idx.update([folder], client=client)
    assert s.added == len(docs)


def test_recreated_index_at_the_same_path_is_not_read_from_old_maps(tmp_path, client):
    """The second index reuses the path and the generation numbers of the first; maps kept
    by path alone would give the first index's postings."""
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
        assert any(_kept(client, str(path)).values()), "the delta runs kept no segment mapped"
        idx.close()


def test_compaction_then_delta_runs_equal_a_full_build(tmp_path, client):
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
    idx.close()


def test_a_segment_used_again_gets_a_key_sample_and_reads_the_same(tmp_path, monkeypatch):
    from simdask.storage import kept_maps as km

    monkeypatch.setattr(km, "SAMPLE_MIN_KEYS", 8)
    store = open_shard_store(tmp_path, np.uint32)
    pairs = [(c * 7, d) for c in range(600) for d in range(1 + c % 3)]
    store.write(1, 0, _shard(pairs))
    maps = KeptMaps()
    first = maps.open_arrays(store, 1, 0)
    assert "key_sample" not in first  # the first use reads no more than it needs
    ids = list(range(0, 4300, 5))
    plain = _lists(store, first, ids)
    again = maps.open_arrays(store, 1, 0)
    step, sample = again["key_sample"]
    assert sample.tolist() == np.asarray(again["chunk_keys"])[::step].tolist()
    assert _lists(store, again, ids) == plain
    want = {c * 7: list(range(1 + c % 3)) for c in range(600) if (c * 7) % 5 == 0}
    assert plain == want
