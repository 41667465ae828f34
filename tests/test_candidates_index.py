"""Candidate partners through the index: a disguised copy added by an incremental run finds
its source (and becomes the source's candidate), equal to the brute force; an index from
before the candidates gets every document's list at its next run."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from simdask import Index, IndexConfig
from simdask.engine.context import RunOptions
from simdask.errors import ConfigError
from simdask.read.candidates import ranked_among
from simdask.storage.candidate_store import (
    CANDIDATE_META,
    SEGMENTS_META,
    candidate_partners,
    candidate_store,
    stored_candidate_config,
    stored_segments,
)
from tests.helpers.candidates import assert_contract_candidates, brute_lists, feature_sets
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.paraphrase import PARAGRAPHS, disguise

pytestmark = pytest.mark.integration

CFG = dict(hash_bits=24, shards=4, top_k=3, candidates=True)


def test_a_disguised_copy_added_later_finds_its_source(tmp_path, client):
    docs = make_docs(20, seed=4)
    docs["source"] = " ".join(PARAGRAPHS)
    folder = write_txt(docs, tmp_path / "src")
    idx = Index.create(tmp_path / "idx", IndexConfig(**CFG))
    idx.update([folder], client=client)
    (folder / "copy.txt").write_text(disguise(docs["source"], seed=1))
    s = idx.update([folder], client=client)
    assert s.added == 1 and "candidates" in s.seconds
    ids = {d.key: d.doc_id for d in idx.catalog.documents()}
    partners = candidate_partners(idx.catalog, [ids["src/copy.txt"], ids["src/source.txt"]], 1)
    assert partners[ids["src/copy.txt"]] == [ids["src/source.txt"]]
    assert partners[ids["src/source.txt"]] == [ids["src/copy.txt"]]
    assert_contract_candidates(idx)


def test_an_index_from_before_the_candidates_gets_them_all(tmp_path, client):
    folder = write_txt(make_docs(12, seed=5), tmp_path / "src")
    idx = Index.create(tmp_path / "idx", IndexConfig(**CFG))
    idx.update([folder], client=client)
    conn = idx.catalog.conn
    conn.execute("DROP TABLE candidates")
    conn.execute("DELETE FROM meta WHERE name = ?", (CANDIDATE_META,))
    (folder / "new.txt").write_text("one more text about rivers and valleys")
    idx.update([folder], client=client)
    assert_contract_candidates(idx)
    # the earlier layout (per-document blobs, no segments): every list again, the table gone
    conn.execute("CREATE TABLE candidate_features (doc_id INTEGER PRIMARY KEY, ids BLOB)")
    conn.execute("DELETE FROM meta WHERE name = ?", (SEGMENTS_META,))
    conn.execute("DELETE FROM candidates")
    (folder / "new2.txt").write_text("yet another text about rivers, valleys and hills")
    idx.update([folder], client=client)
    assert_contract_candidates(idx)
    gone = "SELECT count(*) FROM sqlite_master WHERE name = 'candidate_features'"
    assert conn.execute(gone).fetchone()[0] == 0
    segs = stored_segments(idx.catalog)
    store = candidate_store(idx.path)
    assert segs and all(store.exists(g, r) for r, g in segs.items())
    # a run removes the segments no commit names but the last one before it
    (folder / "new3.txt").write_text("rivers flow through green valleys below old stone hills")
    before = {(g, r) for r, g in segs.items()}
    (store.root / "gen-000099" / "shard-0000").mkdir(parents=True)  # an interrupted run's
    idx.update([folder], client=client)
    live = {(g, r) for r, g in stored_segments(idx.catalog).items()}
    on_disk = {(g, r) for g in store.generations() for r in store.stored_ranges(g)}
    assert live <= on_disk <= live | before and live != before
    assert not (store.root / "gen-000099").exists()
    assert_contract_candidates(idx)


def test_candidates_are_kept_only_when_the_index_asks_for_them(tmp_path, client):
    """Off by default (none stored, the totals' partners are the similarity rows); turned on
    with --rebuild every document gets its list; turned off again they are all dropped."""
    docs = make_docs(12, seed=6)
    docs["source"] = " ".join(PARAGRAPHS)
    docs["copy"] = disguise(docs["source"], seed=2)
    folder = write_txt(docs, tmp_path / "src")
    off = IndexConfig(hash_bits=24, shards=4, top_k=3)
    assert not IndexConfig().candidates
    idx = Index.create(tmp_path / "idx", off)
    s = idx.update([folder], client=client)
    assert "candidates" not in s.seconds
    assert (
        idx.catalog.conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'candidates'"
        ).fetchone()[0]
        == 0
    )
    assert_contract_candidates(idx)
    idx.update([folder], client=client, config=off.replace(candidates=True), rebuild=True)
    ids = {d.key: d.doc_id for d in idx.catalog.documents()}
    assert candidate_partners(idx.catalog, [ids["src/copy.txt"]], 1) == {
        ids["src/copy.txt"]: [ids["src/source.txt"]]
    }
    assert_contract_candidates(idx)
    idx.update([folder], client=client, config=off, rebuild=True)
    assert idx.catalog.conn.execute("SELECT count(*) FROM candidates").fetchone()[0] == 0
    assert_contract_candidates(idx)


def test_without_a_shared_filesystem_the_lists_are_the_same(tmp_path, client):
    """transfer dask (the client reads and writes the segments, the tasks get them through
    Dask): add, modify and delete runs keep every list equal to the brute force."""
    docs = make_docs(14, seed=7)
    docs["source"] = " ".join(PARAGRAPHS)
    folder = write_txt(docs, tmp_path / "src")
    dask = RunOptions(transfer="dask")
    idx = Index.create(tmp_path / "idx", IndexConfig(**CFG))
    idx.update([folder], client=client, options=dask)
    assert_contract_candidates(idx)
    (folder / "copy.txt").write_text(disguise(docs["source"], seed=3))
    (folder / "d000.txt").unlink()
    (folder / "d001.txt").write_text(docs["d002"] + " rivers and valleys")
    s = idx.update([folder], client=client, options=dask, delete_missing=True)
    assert s.added == 1 and s.deleted == 1 and s.modified == 1
    assert_contract_candidates(idx)
    segs = stored_segments(idx.catalog)
    assert segs and all(candidate_store(idx.path).exists(g, r) for r, g in segs.items())


def test_ranked_among_a_folder_equals_the_brute_force(tmp_path, client):
    """Partners ranked among one folder (read/candidates.ranked_among): the brute force's
    lists over the whole index (weights and masses count every document) with the other
    folders' documents left out, normalised or not, uncut by the stored depth."""
    docs = make_docs(16, seed=7)
    docs["source"] = " ".join(PARAGRAPHS)
    src = write_txt(docs, tmp_path / "src")
    copies = {f"copy{i}": disguise(docs["source"], seed=i) for i in range(4)}
    susp = write_txt(copies, tmp_path / "susp")
    idx = Index.create(tmp_path / "idx", IndexConfig(**CFG))
    idx.update([src, susp], client=client)
    keys = {d.doc_id: d.key for d in idx.catalog.documents()}
    asked = sorted(d for d, k in keys.items() if k.startswith("susp/"))
    cfg = stored_candidate_config(idx.catalog)
    sets = feature_sets(idx, cfg)
    for normalise in (True, False):
        full = brute_lists(sets, asked, cfg.max_df, 10**6, normalise)
        want = {d: [p for p in full[d] if keys[p[0]].startswith("src/")][:3] for d in asked}
        assert ranked_among(idx, asked, "src/", 3, normalise) == want
        assert all(keys[want[d][0][0]] == "src/source.txt" for d in asked)
    with pytest.raises(ConfigError, match="depth"):
        ranked_among(idx, asked, "src/", 0)


def test_the_candidate_buckets_are_gone_once_the_ranges_are_merged(tmp_path, client, monkeypatch):
    """A run held after its candidate stage (before the commit) has written its candidate
    segments and no longer holds their bucket files: they are deleted once every range is
    merged, not at the end of the run."""
    docs = make_docs(20, seed=5)
    folder = write_txt(docs, tmp_path / "src")
    release = tmp_path / "release"
    monkeypatch.setenv("SIMDASK_FAILPOINTS", f"after_similarity:wait:{release}")

    def build():  # in the thread that opens the catalog (SQLite objects stay in their thread)
        Index.create(tmp_path / "idx", IndexConfig(**CFG)).update([folder], client=client)

    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(build)
        reached = Path(f"{release}.reached")
        deadline = time.monotonic() + 300
        while not reached.exists() and not run.done() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not reached.exists():
            run.result(timeout=1)  # its error, if it failed
        assert reached.exists(), "the run did not reach the end of its candidate stage"
        work = tmp_path / "idx" / "work"
        held = sorted(p.name for p in work.glob("run-*/*"))
        release.touch()
        run.result(timeout=300)
    assert held and "cbuckets" not in held
    assert_contract_candidates(Index.open(tmp_path / "idx"))
