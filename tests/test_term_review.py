"""A teacher's review kept in the index (issue 31, items 12 and 13), through the real CLI:
when each document was first indexed and its file modified, on both sides of a pair ("who was
first"); decisions on pairs (``simdask mark``) shown by ``report`` and ``similar --details``,
kept across incremental runs, re-chunks and rebuilds, exported with ``mark --list``, never
changing the similarities."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest

from simdask.errors import ConfigError
from simdask.read.review import iso_time
from simdask.storage.decisions import set_decision
from tests.helpers.cli import run
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

OPTS = ("--workers", 1, "--quiet", "--shards", 2)
OLD, NEW = 1_700_000_000, 1_780_000_000  # the files' modification times (2023, 2026)


def details(index) -> dict[tuple[str, str], dict]:
    out = run("similar", index, "--details", "--format", "jsonl").stdout.splitlines()
    return {(r["a_key"], r["b_key"]): r for r in map(json.loads, out)}


def similar_jsonl(index) -> list[dict]:
    return [json.loads(x) for x in run("similar", index, "--format", "jsonl").stdout.splitlines()]


def stored(rows: list[dict]) -> list[dict]:
    """The rows without what the teacher decided (the stored similarities and counts)."""
    return [{k: v for k, v in r.items() if k not in ("decision", "note")} for r in rows]


def both(d: dict, a: str) -> tuple[dict, dict]:
    """The row's fields of ``a`` and of the other key, whichever side ``a`` is."""
    mine, other = ("a", "b") if d["a_key"] == a else ("b", "a")
    pick = lambda s: {f: d[f"{s}_{f}"] for f in ("key", "first_indexed", "modified")}  # noqa: E731
    return pick(mine), pick(other)


def test_who_was_first_and_decisions_kept(tmp_path):
    text = prose(300, seed=5)
    y25, y26 = tmp_path / "2025", tmp_path / "2026"
    y25.mkdir()
    y26.mkdir()
    (y25 / "smith.txt").write_text(text)
    os.utime(y25 / "smith.txt", (OLD, OLD))
    idx = tmp_path / "idx"
    run("update", idx, y25, *OPTS)
    (y26 / "jones.txt").write_text(text + " " + prose(80, seed=6))
    os.utime(y26 / "jones.txt", (NEW, NEW))
    run("update", idx, y26, *OPTS)

    [(pair, row)] = details(idx).items()
    smith, jones = both(row, "2025/smith.txt")
    assert smith["modified"] == iso_time(OLD) and jones["modified"] == iso_time(NEW)
    assert smith["first_indexed"] <= jones["first_indexed"]  # indexed in that order
    assert row["decision"] is None and row["note"] is None
    report = run("report", idx, "2026/jones.txt", "2025/smith.txt").stdout
    assert (
        f"2025/smith.txt: first indexed {smith['first_indexed']}, file modified {iso_time(OLD)}"
        in report
    )

    before = similar_jsonl(idx)
    assert {(r["decision"], r["note"]) for r in before} == {(None, None)}
    run("mark", idx, "smith.txt", "jones.txt", "confirmed", "--note", "hearing on 3 Dec")
    assert details(idx)[pair]["decision"] == "confirmed"
    assert details(idx)[pair]["note"] == "hearing on 3 Dec"
    after = similar_jsonl(idx)
    assert {(r["decision"], r["note"]) for r in after} == {("confirmed", "hearing on 3 Dec")}
    assert stored(after) == stored(before)  # similarities unchanged
    report = run("report", idx, "2026/jones.txt", "2025/smith.txt", "--format", "json").stdout
    assert json.loads(report)["review"]["decision"] == "confirmed"

    # kept across an edit of one file, a change of the exclusions and a rebuild; dates too
    (y26 / "jones.txt").write_text(text + " " + prose(90, seed=7))
    os.utime(y26 / "jones.txt", (NEW + 60, NEW + 60))
    run("update", idx, y26, *OPTS)
    run("update", idx, "--exclude-quotes", *OPTS)
    run("update", idx, y25, y26, "--rebuild", *OPTS)
    row = details(idx)[pair]
    assert (row["decision"], row["note"]) == ("confirmed", "hearing on 3 Dec")
    smith2, jones2 = both(row, "2025/smith.txt")
    assert smith2["first_indexed"] == smith["first_indexed"]
    assert jones2["first_indexed"] == jones["first_indexed"]
    assert jones2["modified"] == iso_time(NEW + 60)

    listed = run("mark", idx, "--list", "--format", "csv").stdout
    [exported] = list(csv.DictReader(io.StringIO(listed)))
    assert (exported["status"], exported["note"]) == ("confirmed", "hearing on 3 Dec")
    assert {exported["a_key"], exported["b_key"]} == {"2025/smith.txt", "2026/jones.txt"}

    run("mark", idx, "2025/smith.txt", "2026/jones.txt", "clear")
    assert details(idx)[pair]["decision"] is None
    bad = run("mark", idx, "2025/smith.txt", "nobody.txt", "reviewed", check=False)
    assert bad.returncode == 1 and "nobody.txt" in bad.stderr


@pytest.mark.unit
def test_a_decision_needs_a_known_status_and_two_documents(tmp_path):
    import sqlite3

    db = sqlite3.connect(tmp_path / "c.sqlite", isolation_level=None)
    with pytest.raises(ConfigError, match="reviewed, dismissed, confirmed or clear"):
        set_decision(db, "a", "b", "suspicious", "", 0.0)
    with pytest.raises(ConfigError, match="two different documents"):
        set_decision(db, "a", "a", "reviewed", "", 0.0)
    assert iso_time(0) == "1970-01-01T00:00:00Z" and iso_time(None) is None


def _listed(index) -> tuple[dict[frozenset, tuple[str, str]], set[tuple[str, str]]]:
    """``mark --list`` (the stored decisions): the decided pairs' ``(status, note)`` by pair,
    and the ``(doc, source)`` left out of a total."""
    out = run("mark", index, "--list", "--format", "jsonl").stdout.splitlines()
    rows = [json.loads(x) for x in out]
    decided = {
        frozenset((r["a_key"], r["b_key"])): (r["status"], r["note"])
        for r in rows
        if r["status"] != "source_excluded"
    }
    left_out = {(r["a_key"], r["b_key"]) for r in rows if r["status"] == "source_excluded"}
    return decided, left_out


def _expected(row: dict, decided: dict, left_out: set) -> tuple:
    status, note = decided.get(frozenset((row["doc"], row["other"])), (None, None))
    return status, note or None, (row["doc"], row["other"]) in left_out


def test_decisions_are_exported_with_the_results(tmp_path):
    """Item 12: every exported pair row (``similar`` JSONL, CSV and table, ``export``'s
    Parquet) carries the pair's decision and note beside ``source_excluded``, as ``mark
    --list`` gives them; the stored values beside them do not change."""
    pq = pytest.importorskip("pyarrow.parquet")
    shared, more = prose(200, seed=21), prose(150, seed=22)
    src = tmp_path / "class"
    src.mkdir()
    (src / "ann.txt").write_text(shared + " " + prose(100, seed=23))
    (src / "bob.txt").write_text(prose(90, seed=24) + " " + shared + " " + more)
    (src / "cy.txt").write_text(more + " " + prose(120, seed=25))
    (src / "dee.txt").write_text(shared + " " + prose(60, seed=26))
    idx = tmp_path / "idx"
    run("update", idx, src, *OPTS)
    before = similar_jsonl(idx)
    assert len({frozenset((r["doc"], r["other"])) for r in before}) >= 4

    run("mark", idx, "ann.txt", "bob.txt", "confirmed", "--note", "same wording, 3 Dec")
    run("mark", idx, "cy.txt", "bob.txt", "dismissed")
    run("mark", idx, "dee.txt", "ann.txt", "reviewed", "--note", "quoted; fine")
    run("mark", idx, "dee.txt", "ann.txt", "--exclude-source", "--note", "her own draft")
    decided, left_out = _listed(idx)
    assert len(decided) == 3 and len(left_out) == 1

    rows = similar_jsonl(idx)
    mine = ("decision", "note", "source_excluded", "total")
    assert [{k: v for k, v in r.items() if k not in mine} for r in rows] == [
        {k: v for k, v in r.items() if k not in mine} for r in before
    ]  # the stored similarities and counts unchanged
    assert list(rows[0])[5:8] == ["source_excluded", "decision", "note"]
    got = [(r["decision"], r["note"], r["source_excluded"]) for r in rows]
    assert got == [_expected(r, decided, left_out) for r in rows]
    assert {g[0] for g in got} == {"confirmed", "dismissed", "reviewed", None}

    csv_out = run("similar", idx, "--format", "csv").stdout
    as_csv = list(csv.DictReader(io.StringIO(csv_out)))
    assert [(r["decision"], r["note"]) for r in as_csv] == [(g[0] or "", g[1] or "") for g in got]
    table = run("similar", idx, "--sort", "total").stdout
    assert "decision" in table.splitlines()[0] and "same wording, 3 Dec" in table
    pairs = run("similar", idx).stdout.splitlines()  # one row per pair: the decision shown
    assert pairs[0].split()[-1] == "decision"
    for status in ("confirmed", "dismissed", "reviewed"):
        [line] = [x for x in pairs if x.endswith(status)]
        a, b = line.split()[:2]
        assert decided[frozenset((a, b))][0] == status

    run("export", idx, tmp_path / "pairs.parquet")
    exported = pq.read_table(tmp_path / "pairs.parquet").to_pylist()
    assert exported == rows  # the same rows, decisions and notes as similar's JSONL
