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

    before = run("similar", idx, "--format", "jsonl").stdout
    run("mark", idx, "smith.txt", "jones.txt", "confirmed", "--note", "hearing on 3 Dec")
    assert details(idx)[pair]["decision"] == "confirmed"
    assert details(idx)[pair]["note"] == "hearing on 3 Dec"
    assert run("similar", idx, "--format", "jsonl").stdout == before  # similarities unchanged
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
