"""Every read sees one committed state (issue 30 item 1): a reader held between its snapshot
and its key resolution while two commits delete a matched document and recycle its doc ID
still names the document it matched, never the newcomer holding the ID."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from simdask import Index, IndexConfig
from simdask.errors import IndexDamagedError
from simdask.read.snapshots import read_consistent
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration


def _hold(monkeypatch, tmp_path: Path, point: str) -> tuple[Path, Path]:
    """Hold the next reader reaching failpoint ``point`` until the release file exists."""
    release = tmp_path / f"release-{point}"
    monkeypatch.setenv("SIMDASK_FAILPOINTS", f"{point}:wait:{release}")
    return release, Path(str(release) + ".reached")


def _wait_for(path: Path, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"the reader never reached {path.name}"
        time.sleep(0.02)


@pytest.fixture
def racing(tmp_path, client):
    """An index of ``src``; ``victim`` (the query's exact copy) is the document with the
    lowest doc ID, so that the next new document recycles its ID."""
    docs = make_docs(12, seed=30)
    src = write_txt(docs, tmp_path / "src")
    idx = Index.create(tmp_path / "idx", IndexConfig(hash_bits=32, shards=2))
    idx.update([src], client=client)
    victim = min(idx.catalog.documents(), key=lambda d: d.doc_id)
    yield idx, src, victim
    idx.close()


def test_a_query_held_across_a_delete_and_an_id_recycling_names_what_it_matched(
    racing, tmp_path, client, monkeypatch
):
    idx, src, victim = racing
    query = idx.text(victim.key)
    got: list = []

    def read() -> None:
        with Index.open(idx.path) as reader:
            got.append(reader.query(query, min_similarity=99.0))

    release, reached = _hold(monkeypatch, tmp_path, "query.keys")
    t = threading.Thread(target=read)
    t.start()
    try:
        _wait_for(reached)
        monkeypatch.delenv("SIMDASK_FAILPOINTS")  # the writers are not held
        idx.remove([victim.key], client=client)
        (src.parent / victim.key).unlink()
        (src / "newcomer.txt").write_text(make_docs(6, seed=99)["d001"], encoding="utf-8")
        idx.update([src], client=client)
        assert idx.catalog.document("src/newcomer.txt").doc_id == victim.doc_id  # recycled
    finally:
        release.touch()
        t.join(60)
    [matches] = got
    # the state the query started in: the victim matched at 100 %, under its own key
    assert [(m.key, m.similarity) for m in matches if m.similarity == 100.0][:1] == [
        (victim.key, 100.0)
    ]
    assert "src/newcomer.txt" not in {m.key for m in matches}


def test_a_long_running_reader_follows_a_rebuild_with_other_settings(racing, client):
    idx, src, victim = racing
    query = idx.text(victim.key)
    with Index.open(idx.path) as reader:  # as `serve` holds it
        before = [(m.key, m.similarity) for m in reader.query(query, 50.0)]
        assert before[0] == (victim.key, 100.0)
        idx.update([src], rebuild=True, config=IndexConfig(k=3, hash_bits=64, shards=3))
        got = [(m.key, m.similarity, m.shared) for m in reader.query(query, 1.0)]
        assert reader.config.k == 3 and reader.config.hash_bits == 64
        with Index.open(idx.path) as fresh:
            want = [(m.key, m.similarity, m.shared) for m in fresh.query(query, 1.0)]
            stats = reader.stats()
            assert stats["config"] == fresh.stats()["config"]
            assert stats["generation"] == fresh.catalog.generation
    assert got == want and got[0][:2] == (victim.key, 100.0)


def test_read_consistent_reads_again_only_when_the_generation_moved(racing, client):
    idx, _, victim = racing
    calls: list[int] = []

    def flaky(index, moved: bool):
        calls.append(index.catalog.generation)
        if len(calls) == 1:
            if moved:  # a commit lands while this read holds its snapshot
                idx.remove([victim.key], client=client)
            raise IndexDamagedError("a file of the snapshot is missing")
        return index.catalog.n_documents()

    with Index.open(idx.path) as reader:
        n = reader.catalog.n_documents()
        assert read_consistent(reader, flaky, True) == n - 1
        assert calls[1] == calls[0] + 1  # read again in the newer state
        calls.clear()
        with pytest.raises(IndexDamagedError):  # no commit meanwhile: damage, raised
            read_consistent(reader, flaky, False)
        assert len(calls) == 1
