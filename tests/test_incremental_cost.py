"""What an incremental run reads is what it touches: known documents looked up by the run's
keys (JSONL ids included), the index's bytes from the sizes recorded at commit, the |A| array
in place; the results stay those of a full build."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from pathlib import Path
from typing import ClassVar

import pytest

import simdask.engine.run as run_module
from simdask import Index, IndexConfig
from simdask.storage.catalog import Catalog
from simdask.storage.checksums import DIGEST_META
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
    idx.catalog.conn.execute("DELETE FROM files")  # an index written before checksums
    idx.catalog.conn.execute("DELETE FROM meta WHERE name = ?", (DIGEST_META,))
    idx.drop_caches()
    assert idx.disk_bytes() == _walked_bytes(idx)


#: the tables holding a row per document (or several): a statement scanning one reads the
#: whole index
PER_DOCUMENT = ("documents", "similarity", "reserve", "floors")


_ALIAS = re.compile(r"\b(?:FROM|JOIN)\s+(\w+)\s+(?:AS\s+)?(\w+)", re.IGNORECASE)
_NOT_ALIAS = {"WHERE", "ON", "JOIN", "CROSS", "LEFT", "INNER", "GROUP", "ORDER", "LIMIT", "UNION"}


class _PlannedConnection(sqlite3.Connection):
    """A connection recording each statement whose query plan scans a table of
    :data:`PER_DOCUMENT`, by name or alias (``scans``: statement -> those plan lines)."""

    scans: ClassVar[dict[str, list[str]]] = {}

    def execute(self, sql, *args):
        words = sql.split()
        if words and words[0].upper() in ("SELECT", "INSERT", "DELETE", "UPDATE", "WITH"):
            names = {a: t for t, a in _ALIAS.findall(sql) if a.upper() not in _NOT_ALIAS}
            plan = [r[3].split() for r in super().execute("EXPLAIN QUERY PLAN " + sql, *args)]
            hits = [
                " ".join(p)
                for p in plan
                if len(p) > 1 and p[0] == "SCAN" and names.get(p[1], p[1]) in PER_DOCUMENT
            ]
            if hits:
                self.scans[" ".join(words)] = hits
        return super().execute(sql, *args)


def test_incremental_statements_scan_no_per_document_table(tmp_path, client, monkeypatch):
    """The SQL of incremental runs (adds gaining reverse rows in full lists, a modification,
    deletions) reads the rows of the documents it touches: no statement's plan scans the
    documents, similarity, reserve or floors table (a read bounded by LIMIT and the run
    summary's count of the documents aside), so its cost does not grow with the index."""
    rng = random.Random(3)
    paras = [t[:600] for t in POOL[:8]]

    def doc() -> str:
        return " ".join(rng.sample(paras, rng.randint(2, 4)))

    folder = write_txt({f"k{i:02d}": doc() for i in range(14)}, tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([folder], client=client)
    idx.close()
    monkeypatch.setattr(run_module, "WHOLE_CATALOG", 0)  # known documents read by key
    connect = sqlite3.connect
    monkeypatch.setattr(_PlannedConnection, "scans", {})
    monkeypatch.setattr(
        sqlite3, "connect", lambda *a, **k: connect(*a, **{**k, "factory": _PlannedConnection})
    )
    with Index.open(tmp_path / "inc") as idx:
        for i in range(14, 17):
            (folder / f"k{i:02d}.txt").write_text(doc(), encoding="utf-8")
        s = idx.update([folder], client=client)
        assert s.added == 3 and s.extra["shards_rewritten"] == 0
        with connect(tmp_path / "inc" / "catalog.sqlite") as c:  # full lists gained rows
            assert c.execute("SELECT COUNT(*) FROM floors").fetchone()[0] > 0
        (folder / "k02.txt").write_text(doc(), encoding="utf-8")
        (folder / "k05.txt").unlink()
        s = idx.update([folder], client=client, delete_missing=True)
        assert (s.modified, s.deleted) == (1, 1)
        idx.remove(["src/k07.txt"], client=client)
    allowed = {"SELECT COUNT(*) FROM documents"}  # the summary's number of documents
    scans = {q: p for q, p in _PlannedConnection.scans.items() if q not in allowed}
    assert not {q: p for q, p in scans.items() if " LIMIT " not in q}
