"""Delta segments, tombstones and compaction on a real cluster: random run sequences with
compactions equal one full build; queries, stats and garbage collection see base + deltas."""

from __future__ import annotations

import random
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.kernels.merge_policy import MergePolicy
from simdask.storage.vacuum import free_pages
from tests.helpers.compare import assert_same_index, postings_by_key
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.properties import examples

pytestmark = pytest.mark.integration

CFG = dict(hash_bits=24, shards=4, top_k=3)
POOL = list(make_docs(30, seed=33).values())
NEVER = RunOptions(merge_policy=MergePolicy(enabled=False))
EAGER = RunOptions(merge_policy=MergePolicy(min_segments=2, floor_postings=2**40))


def full_build(tmp, folder, client) -> Index:
    path = tmp / "full"
    shutil.rmtree(path, ignore_errors=True)
    idx = Index.create(path, IndexConfig(**CFG))
    idx.update([folder], client=client)
    return idx


def test_deltas_then_compaction_keep_answers_and_free_old_segments(tmp_path, client):
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(10)}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([folder], client=client, options=NEVER)
    base_gen = idx.catalog.generation
    probe = POOL[3][:1500] + " " + POOL[12][:800]
    for i in range(10, 14):  # four runs: an add, a modify, a delete each
        (folder / f"k{i:02d}.txt").write_text(POOL[i] + " " + POOL[i - 9][:300])
        (folder / f"k{i - 8:02d}.txt").write_text(POOL[i + 10])
        (folder / f"k{i - 10:02d}.txt").unlink(missing_ok=True)
        s = idx.update([folder], client=client, delete_missing=True, options=NEVER)
        assert s.extra["shards_rewritten"] == 0 and s.extra["segments_written"] >= 1
        assert "compaction" not in s.extra
    segs = idx.catalog.segments()
    assert {len(v) for v in segs.values()} == {5}  # the base and four deltas in every range
    ref = full_build(tmp_path, folder, client)
    assert_same_index(idx, ref)
    assert idx.query(probe) == ref.query(probe)
    stats = idx.stats()
    assert (stats["distinct_chunks"], stats["postings"]) == (
        ref.stats()["distinct_chunks"],
        ref.stats()["postings"],
    )
    assert stats["segments"] == 20 and stats["tombstones"] > 0

    out = idx.compact(client=client, force=True)
    assert out["ranges"] == 4 and out["segments_merged"] == 20
    assert out["postings_written"] == ref.stats()["postings"] < out["postings_read"]
    assert {len(v) for v in idx.catalog.segments().values()} == {1}
    assert idx.stats()["tombstones"] == 0  # older than every segment: dropped at the commit
    assert_same_index(idx, ref)
    assert idx.query(probe) == ref.query(probe)
    # segments of before the commit are kept one more run (for readers that opened them) ...
    assert base_gen in idx.store.generations()
    assert idx.compact(client=client) == {}  # nothing due
    # ... and deleted once no committed manifest lists them
    assert idx.store.generations() == [out["run_id"]]
    assert idx.catalog.last_run()["summary"].get("compaction") is None


def test_recycled_id_survives_an_older_tombstone(tmp_path, client):
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(6)}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([folder], client=client, options=NEVER)
    old_id = idx.catalog.document("src/k02.txt").doc_id
    idx.remove(["src/k02.txt"], client=client, options=NEVER)
    (folder / "k02.txt").unlink()
    (folder / "new.txt").write_text(POOL[20])
    idx.update([folder], client=client, options=NEVER)
    assert idx.catalog.document("src/new.txt").doc_id == old_id  # recycled
    assert [m.key for m in idx.query(POOL[20])][:1] == ["src/new.txt"]
    assert_same_index(idx, full_build(tmp_path, folder, client))


def test_policy_compacts_at_the_end_of_a_run(tmp_path, client):
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(6)}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([folder], client=client, options=EAGER)
    (folder / "k10.txt").write_text(POOL[10])
    s = idx.update([folder], client=client, options=EAGER)
    c = s.extra["compaction"]  # base + one delta: two segments on the lowest level, merged
    assert c["ranges"] >= 1 and c["segments_merged"] == 2 * c["ranges"]
    assert s.seconds["compaction"] > 0
    assert all(len(v) == 1 for v in idx.catalog.segments().values())
    assert idx.catalog.last_run()["run_id"] == s.run_id  # the update, not the compaction
    assert_same_index(idx, full_build(tmp_path, folder, client))


@pytest.mark.slow  # 60-90 s under CI's 50 examples: out of the fast tiers, run by CI
@settings(
    max_examples=examples(default=25, ci=50),  # CI: derandomised (tests/conftest.py)
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    runs=st.lists(
        st.tuples(
            st.lists(
                st.tuples(
                    st.sampled_from(["add", "modify", "delete", "remove"]),
                    st.integers(0, 7),
                    st.integers(0, len(POOL) - 1),
                ),
                max_size=4,
            ),
            st.sampled_from(["none", "eager", "force"]),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_random_runs_and_compactions_equal_full_build(tmp_path_factory, client, runs):
    """Adds, modifications, deletions, re-adds (a deleted key written again, often with a
    recycled doc ID), compactions by the policy after a run or forced, in any order."""
    tmp = tmp_path_factory.mktemp("seg")
    folder = tmp / "src"
    folder.mkdir()
    idx = Index.create(tmp / "inc", IndexConfig(**CFG))
    rng = random.Random(len(runs))
    for ops, compaction in runs:
        removed = []
        for op, k, p in ops:
            f = folder / f"k{k}.txt"
            if op in ("add", "modify"):
                f.write_text(POOL[p] if op == "add" else POOL[p][: rng.randint(20, 2000)])
            elif op == "delete":
                f.unlink(missing_ok=True)
            elif f.exists() and f.name not in removed:
                removed.append(f.name)
                f.unlink()
        known = idx.catalog.known_documents()
        opts = EAGER if compaction == "eager" else NEVER
        idx.update(
            [folder],
            client=client,
            delete_missing=True,
            remove=[r for r in removed if r in known],
            options=opts,
        )
        if compaction == "force":
            idx.compact(client=client, force=True)
    ref = full_build(tmp, folder, client)
    assert_same_index(idx, ref)
    assert postings_by_key(idx) == postings_by_key(ref)
    for text in (POOL[1], POOL[7][:900]):
        assert idx.query(text) == ref.query(text)


def test_index_of_format_1_is_migrated(tmp_path, client):
    """An index written before segments (one shard per range in the ``shards`` table) opens
    with one segment per range, gives the same answers, and takes delta runs."""
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(6)}, tmp_path / "src")
    idx = Index.create(tmp_path / "old", IndexConfig(**CFG))
    idx.update([folder], client=client)
    before = (postings_by_key(idx), idx.query(POOL[2]))
    with idx.catalog.transaction() as c:  # as simdask of format 1 left it
        c.execute("INSERT INTO shards SELECT shard, generation FROM segments")
        c.execute("DROP TABLE segments")
        c.execute("DROP TABLE tombstones")
        c.execute("DROP TABLE ranges")
        c.execute("UPDATE meta SET value = '1' WHERE name = 'format_version'")
    idx.close()
    idx = Index.open(tmp_path / "old")
    assert idx.catalog.meta("format_version") == "3"  # through 2 (segments) to 3
    assert {len(v) for v in idx.catalog.segments().values()} == {1}
    assert (postings_by_key(idx), idx.query(POOL[2])) == before
    (folder / "k09.txt").write_text(POOL[9])
    s = idx.update([folder], client=client, options=NEVER)
    assert s.added == 1 and s.extra["segments_written"] >= 1
    assert_same_index(idx, full_build(tmp_path, folder, client))


def test_compaction_head_gathers_counts_not_keys(tmp_path):
    """What the driver gathers per compacted range is two counts: it neither reads the
    written segment (a store that is not there) nor returns its chunk keys (at a million
    documents every range's keys together held ~10 GB in the driver)."""
    from simdask.engine.segment_ref import SegmentRef
    from simdask.engine.segment_tasks import segment_head

    ref = SegmentRef(str(tmp_path / "no-store"), 3, 7, 0, 1 << 20, 1234, 5678)
    assert segment_head(ref) == (1234, 5678)


def test_compact_gives_the_catalogs_free_pages_back_and_stats_count_waiting_segments(
    tmp_path, client
):
    """Issue 32 item 4: deleted documents and replaced lists leave free pages in the catalog;
    ``compact`` gives every one of them back (the file shrinks by their bytes), and ``stats``
    counts the segments waiting for collection in its bytes on disk."""
    # enough documents that their rows fill more pages than the second run's own record
    # (its summary, profile and sizing) takes back from the free list
    docs = make_docs(300, seed=34)
    folder = write_txt({f"k{i:03d}": t for i, t in enumerate(docs.values())}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([folder], client=client, options=NEVER)
    for i in range(2, 300):  # most documents gone: their rows' pages are free
        (folder / f"k{i:03d}.txt").unlink()
    idx.update([folder], client=client, delete_missing=True, options=NEVER)
    size, _, free = free_pages(idx.catalog)
    assert free > 0  # far below the 8 MiB from which garbage collection alone vacuums
    out = idx.compact(client=client, force=True)
    assert out["catalog_bytes_freed"] > 0
    size, pages, free = free_pages(idx.catalog)
    assert free == 0 and idx.catalog.path.stat().st_size == pages * size  # no slack left
    # the segments before the compaction are kept one run longer for readers, and counted
    waiting = sum(
        idx.store.shard_nbytes(g, s)
        for g in idx.store.generations()
        if g != out["run_id"]
        for s in idx.store.stored_ranges(g)
    )
    assert waiting > 0
    on_disk = idx.stats()["bytes_on_disk"]
    idx.collect_garbage()
    assert idx.store.generations() == [out["run_id"]]
    assert idx.stats()["bytes_on_disk"] == on_disk - waiting
    assert idx.compact(client=client) == {}  # nothing due, nothing free
