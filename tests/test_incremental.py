"""Incremental runs: adds, modifications, deletions, ID recycling, top-k refill, the lock."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.errors import DocumentNotFoundError, IndexLockedError
from tests.helpers.compare import assert_same_index, table_by_doc
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration


CFG = dict(hash_bits=24, shards=4, top_k=3)
POOL = list(make_docs(30, seed=21).values())


def full_build(tmp_path, folder, client, config=None) -> Index:
    """One run over the final document set, with the same settings."""
    path = tmp_path / "full"
    shutil.rmtree(path, ignore_errors=True)
    idx = Index.create(path, config or IndexConfig(**CFG))
    idx.update([folder], client=client)
    return idx


@pytest.mark.parametrize("fuse", [0, 1000], ids=["staged", "fused"])
def test_add_modify_delete_equal_full_build(tmp_path, client, fuse):
    """Both ways of running an incremental similarity stage: after the merge, or inside it."""
    opts = RunOptions(fuse_members=fuse)
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(12)}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    s = idx.update([folder], client=client)
    assert (s.added, s.modified, s.deleted, s.unchanged) == (12, 0, 0, 0)

    (folder / "k12.txt").write_text(POOL[12] + " " + POOL[3][:400])  # add, sharing text
    (folder / "k02.txt").write_text(POOL[20])  # modify
    (folder / "k05.txt").unlink()  # delete (missing from the source)
    s = idx.update([folder], client=client, delete_missing=True, options=opts)
    assert (s.added, s.modified, s.deleted, s.unchanged, s.failed) == (1, 1, 1, 10, 0)
    assert ("merge+similarity" in s.seconds) == (fuse > 0)
    assert_same_index(idx, full_build(tmp_path, folder, client))

    s = idx.remove(["k07.txt"], client=client, options=opts)
    (folder / "k07.txt").unlink()
    assert s.deleted == 1
    assert_same_index(idx, full_build(tmp_path, folder, client))
    with pytest.raises(DocumentNotFoundError, match="k07"):
        idx.remove(["k07.txt"], client=client)


def test_unchanged_run_changes_nothing(tmp_path, client):
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(8)}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([folder], client=client)
    gens, table = idx.catalog.shard_generations(), table_by_doc(idx)
    s = idx.update([folder], client=client)
    assert (s.added, s.modified, s.deleted, s.unchanged) == (0, 0, 0, 8)
    assert "merge" not in s.seconds  # no shard was touched
    assert idx.catalog.shard_generations() == gens and table_by_doc(idx) == table


def test_only_changed_ranges_get_a_segment(tmp_path, client):
    docs = {f"k{i:02d}": POOL[i] for i in range(6)}
    docs["tiny"] = "one two three four five six"  # two chunks: at most two shards
    folder = write_txt(docs, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(hash_bits=24, shards=64))
    idx.update([folder], client=client)
    before = idx.catalog.shard_generations()
    (folder / "tiny.txt").write_text("one two three four five seven")
    s = idx.update([folder], client=client)
    after = idx.catalog.shard_generations()
    touched = [sh for sh in after if after[sh] != before[sh]]
    # a delta segment for each range holding a new chunk; no range's base is rewritten
    assert s.modified == 1 and 1 <= len(touched) <= 2 == s.extra["segments_written"] + 2 - len(
        touched
    )
    assert s.extra["shards_rewritten"] == 0
    assert all(len(idx.catalog.segments()[sh]) == 2 for sh in touched)


def test_doc_ids_are_recycled(tmp_path, client):
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(10)}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([folder], client=client)
    ids = {d.key: d.doc_id for d in idx.catalog.documents()}
    idx.remove(["k03.txt", "k06.txt"], client=client)
    for i in (3, 6):
        (folder / f"k{i:02d}.txt").unlink()
    (folder / "new1.txt").write_text(POOL[15])
    (folder / "new2.txt").write_text(POOL[16])
    (folder / "new3.txt").write_text(POOL[17])
    idx.update([folder], client=client)
    new_ids = sorted(d.doc_id for d in idx.catalog.documents() if d.key.startswith("new"))
    assert new_ids == [*sorted([ids["k03.txt"], ids["k06.txt"]]), 10]
    assert max(d.doc_id for d in idx.catalog.documents()) == 10


@pytest.mark.parametrize("fuse", [0, 1000], ids=["staged", "fused"])
def test_top_k_list_is_refilled_when_a_match_is_deleted(tmp_path, client, fuse):
    base = POOL[0]
    words = base.split()
    docs = {"x": base}
    for name, share in (("a", 0.9), ("b", 0.7), ("c", 0.5), ("d", 0.3)):
        docs[name] = " ".join(words[: int(len(words) * share)]) + " " + POOL[ord(name) - 90]
    folder = write_txt(docs, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(hash_bits=28, shards=2, top_k=2))
    idx.update([folder], client=client)
    assert [r.other for r in idx.similar("x.txt")] == ["a.txt", "b.txt"]
    (folder / "a.txt").unlink()
    s = idx.update(
        [folder], client=client, delete_missing=True, options=RunOptions(fuse_members=fuse)
    )
    assert [r.other for r in idx.similar("x.txt")] == ["b.txt", "c.txt"]
    assert s.extra["refilled"] >= 1
    assert_same_index(idx, full_build(tmp_path, folder, client, idx.config))


@pytest.mark.system
def test_second_writer_fails_or_waits(tmp_path, client):
    """Another process holds the writer lock: update fails at once, or waits with ``wait``."""
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(4)}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    hold = (
        "import sys, time; from simdask.storage.lock import WriterLock\n"
        "WriterLock(sys.argv[1]).__enter__(); print('held', flush=True)\n"
        "time.sleep(float(sys.argv[2]))"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(idx.path), "3"], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(IndexLockedError, match="another update is running"):
        idx.update([folder], client=client)
    assert idx.pairs() == [] and idx.stats()["documents"] == 0  # readers are not blocked
    s = idx.update([folder], client=client, wait=60)  # waits until the holder exits
    holder.wait()
    assert s.added == 4


@settings(
    max_examples=int(os.environ.get("SIMDASK_PROPERTY_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    runs=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["add", "modify", "delete", "remove"]),
                st.integers(0, 7),
                st.integers(0, len(POOL) - 1),
            ),
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_random_run_sequences_equal_full_build(tmp_path_factory, client, runs):
    tmp = tmp_path_factory.mktemp("prop")
    folder = tmp / "src"
    folder.mkdir()
    idx = Index.create(tmp / "inc", IndexConfig(**CFG))
    rng = random.Random(len(runs))
    for ops in runs:
        removed = []
        for op, k, p in ops:
            f = folder / f"k{k}.txt"
            if op in ("add", "modify"):  # add re-adds a deleted key; modify may add too
                text = POOL[p] if op == "add" else POOL[p][: rng.randint(20, 2000)]
                f.write_text(text)
            elif op == "delete":
                f.unlink(missing_ok=True)
            elif f.exists() and f.name not in removed:
                removed.append(f.name)
                f.unlink()
        known = idx.catalog.known_documents()
        idx.update(
            [folder], client=client, delete_missing=True, remove=[r for r in removed if r in known]
        )
    assert_same_index(idx, full_build(tmp, folder, client))
