"""What an incremental run reads is what it touches: known documents looked up by the run's
keys (JSONL ids included), the index's bytes from the sizes recorded at commit, the |A| array
in place; the results stay those of a full build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import simdask.engine.run as run_module
from simdask import Index, IndexConfig
from simdask.storage.catalog import Catalog
from tests.helpers.compare import assert_same_index
from tests.helpers.corpus import make_docs, write_jsonl, write_txt

pytestmark = pytest.mark.integration

CFG = dict(hash_bits=24, shards=4, top_k=3)
POOL = list(make_docs(24, seed=5).values())


def _walked_bytes(idx: Index) -> int:
    """Bytes of the current segments, catalog and texts, by walking the files."""
    total = 0
    for s, segs in idx.catalog.segments().items():
        for g, _, _ in segs:
            seg = Path(idx.store.root) / f"gen-{g:06d}" / f"shard-{s:04d}"
            total += sum(p.stat().st_size for p in seg.rglob("*") if p.is_file())
    total += sum(p.stat().st_size for p in idx.path.glob("catalog.sqlite*"))
    return total + sum(p.stat().st_size for p in (idx.path / "texts").iterdir())


@pytest.mark.parametrize("whole", [0, 4], ids=["by-key", "whole-catalog"])
def test_jsonl_runs_look_up_only_their_keys(tmp_path, client, monkeypatch, whole):
    """A JSONL source run again: unchanged lines are unchanged (their known hashes reached the
    tasks by id), a changed line is modified, a new id added, a line without an id fails, a
    line gone is deleted with --delete-missing; the result equals a full build. Known
    documents looked up by the run's keys, or read whole (a run large next to the index)."""
    monkeypatch.setattr(run_module, "WHOLE_CATALOG", whole)
    looked_up = []
    real = Catalog.known_for
    monkeypatch.setattr(
        Catalog, "known_for", lambda self, *a: looked_up.append(a) or real(self, *a)
    )
    first = {f"d{i}": POOL[i] for i in range(8)}
    other = write_txt({f"o{i}": POOL[10 + i] for i in range(3)}, tmp_path / "other")
    src = write_jsonl(first, tmp_path / "a.jsonl")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([src, other], client=client)
    second = dict(first)
    second["d2"] = POOL[2][: len(POOL[2]) // 2] + " " + POOL[20]
    second["new"] = POOL[21]
    del second["d5"]
    write_jsonl(second, src)
    with open(src, "a", encoding="utf-8") as f:
        f.write(json.dumps({"text": "no id here at all"}) + "\n")
    s = idx.update([src], client=client, delete_missing=True)
    assert (s.added, s.modified, s.deleted, s.unchanged, s.failed) == (1, 1, 1, 6, 1)
    again = idx.update([src], client=client)
    assert (again.added, again.modified, again.unchanged) == (0, 0, 8)
    # by key: the ids of the lines (none for the line without one) and no other document
    if whole == 0:
        assert sorted(looked_up[-2][0]) == sorted(second)
    # after the tasks: only keys the index does not hold are looked up (the bad line's label)
    assert looked_up[-1][0] and not idx.catalog.known_for(looked_up[-1][0])
    write_jsonl(second, tmp_path / "a-full.jsonl")
    full = Index.create(tmp_path / "full", IndexConfig(**CFG))
    full.update([tmp_path / "a-full.jsonl", other], client=client)
    assert_same_index(idx, full)


def test_disk_bytes_are_the_files_on_disk(tmp_path, client):
    """After a build, delta runs and a deletion, the bytes summed from the recorded sizes are
    those of the files themselves; so are they when nothing was recorded (an older index)."""
    folder = write_txt({f"k{i:02d}": POOL[i] for i in range(10)}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([folder], client=client)
    for i in range(10, 13):
        (folder / f"k{i:02d}.txt").write_text(POOL[i], encoding="utf-8")
        s = idx.update([folder], client=client)
        assert s.index_bytes == idx.disk_bytes() == _walked_bytes(idx)
    (folder / "k03.txt").unlink()
    s = idx.update([folder], client=client, delete_missing=True)
    assert s.deleted == 1 and idx.disk_bytes() == _walked_bytes(idx)
    idx.catalog.conn.execute("DELETE FROM files")
    idx.drop_caches()
    assert idx.disk_bytes() == _walked_bytes(idx)
