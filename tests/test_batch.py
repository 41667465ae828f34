"""The batch overview (issue 31 item 9): groups of documents that share text are the connected
components of the pairs at or above a level (checked against a brute-force reference), rows are
sorted by their total with the documents whose total was never computed last (never as 0 %),
and a run, a folder and a date range select the documents they should."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.read.batch import (
    batch_rows,
    date_bounds,
    folder_of,
    select_keys,
    share_groups,
)
from simdask.read.total_reads import DocTotal, TotalSource

pytestmark = pytest.mark.unit

KEYS = [f"k{i}" for i in range(9)]


def _brute_groups(edges, level, members=None):
    """Reference: two keys are in one group iff a path of edges >= level joins them
    (reachability by repeated relaxation over every pair of keys)."""
    nodes = sorted({x for a, b, s in edges if s >= level and a != b for x in (a, b)})
    linked = {(a, b) for a, b, s in edges if s >= level and a != b}
    linked |= {(b, a) for a, b in linked}
    reach = {n: {n} for n in nodes}
    changed = True
    while changed:
        changed = False
        for a, b in itertools.product(nodes, nodes):
            if (a, b) in linked and not reach[b] <= reach[a]:
                reach[a] |= reach[b]
                changed = True
    groups = {tuple(sorted(r)) for r in reach.values() if len(r) > 1}
    if members is not None:
        groups = {g for g in groups if set(g) & set(members)}
    return sorted(groups, key=lambda g: (-len(g), g))


edge = st.tuples(st.sampled_from(KEYS), st.sampled_from(KEYS), st.floats(0, 100))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(edge, max_size=25),
    st.floats(0, 100),
    st.none() | st.lists(st.sampled_from(KEYS), max_size=4),
)
def test_share_groups_are_the_connected_components(edges, level, members):
    assert share_groups(edges, level, members) == _brute_groups(edges, level, members)


def test_share_groups_chain_and_level():
    edges = [("a", "b", 30.0), ("b", "c", 12.0), ("d", "e", 9.9), ("f", "f", 100.0)]
    assert share_groups(edges, 10.0) == [("a", "b", "c")]
    assert share_groups(edges, 20.0) == [("a", "b")]
    assert share_groups(edges, 9.9) == [("a", "b", "c"), ("d", "e")]
    assert share_groups(edges, 10.0, ["e"]) == []


def _total(doc, total, *sources):
    return DocTotal(doc, total, 100, tuple(TotalSource(k, s) for k, s in sources))


def test_batch_rows_sorted_by_total_missing_last():
    totals = {
        "b/late.txt": _total("b/late.txt", 71.0, ("old/x.txt", 30.0), ("old/y.txt", 25.0)),
        "b/ok.txt": _total("b/ok.txt", 0.0),
        "b/some.txt": _total("b/some.txt", 12.5, ("2025/sub/z.txt", 12.5)),
    }
    dates = {k: (1_000.0 + i, 2_000.0) for i, k in enumerate(["b/late.txt", "b/ok.txt"])}
    dates |= {"b/some.txt": (5.0, 5.0), "b/new.txt": (7.0, 7.0)}
    dates |= {"old/x.txt": (86_400.0 * 365, 0.0), "2025/sub/z.txt": (0.0, 0.0)}
    rows = batch_rows(["b/ok.txt", "b/new.txt", "b/some.txt", "b/late.txt"], totals, dates)
    assert [r.doc for r in rows] == ["b/late.txt", "b/some.txt", "b/ok.txt", "b/new.txt"]
    late = rows[0].to_dict()
    assert late["best_source"] == "old/x.txt" and late["best_share"] == 30.0
    assert late["source_folder"] == "old" and late["source_date"] == "1971-01-01"
    assert late["sources"] == 2
    assert rows[1].to_dict()["source_folder"] == "2025/sub"
    assert rows[2].to_dict()["best_source"] is None and rows[2].total == 0.0
    missing = rows[3]
    assert missing.total is None and missing.to_dict()["total"] is None
    assert missing.table_row()["total"] == "not computed"


def test_folder_dates_and_selection():
    assert folder_of("2026/submissions/smith.docx") == "2026/submissions"
    assert folder_of("smith.docx") == ""
    low, high = date_bounds("2026-09-01", "2026-09-30")
    assert high - low == 30 * 86_400
    dates = {
        "2026/sub/a.txt": (low, 0.0),
        "2026/sub/b.txt": (high - 1, 0.0),
        "2026/sub/c.txt": (high, 0.0),
        "2026/subx/d.txt": (low, 0.0),
        "2025/sub/e.txt": (low - 1, 0.0),
    }
    assert select_keys(dates, "2026/sub", low, high) == ["2026/sub/a.txt", "2026/sub/b.txt"]
    assert select_keys(dates, "2026/sub/") == ["2026/sub/a.txt", "2026/sub/b.txt", "2026/sub/c.txt"]
    assert select_keys(dates, None, None, low) == ["2025/sub/e.txt"]
    with pytest.raises(ConfigError, match="YYYY-MM-DD"):
        date_bounds("28.11.2026", None)
    with pytest.raises(ConfigError, match="empty"):
        date_bounds("2026-10-02", "2026-10-01")


@pytest.mark.system
def test_similar_batch_through_the_cli(tmp_path):
    """``similar --batch``: the last run's documents by total (a new essay copying an old one
    first, with its source, folder and date), a folder, the groups; a bad date is an error."""
    import json

    from tests.helpers.cli import run
    from tests.helpers.documents import prose

    old, new = tmp_path / "2025" / "sub", tmp_path / "2026" / "sub"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    a, b = prose(300, seed=31), prose(300, seed=32)
    (old / "smith.txt").write_text(a, encoding="utf-8")
    (old / "jones.txt").write_text(b, encoding="utf-8")
    idx = tmp_path / "idx"
    run("update", idx, tmp_path / "2025", "--workers", 1, "--quiet")
    (new / "smith.txt").write_text(prose(100, seed=33) + " " + a, encoding="utf-8")
    (new / "alone.txt").write_text(prose(300, seed=34), encoding="utf-8")
    run("update", idx, tmp_path / "2026", "--workers", 1, "--quiet")
    out = run("similar", idx, "--batch", "-o", "jsonl").stdout
    rows = [json.loads(x) for x in out.splitlines()]
    assert [r["doc"] for r in rows] == ["2026/sub/smith.txt", "2026/sub/alone.txt"]
    top = rows[0]
    assert top["best_source"] == "2025/sub/smith.txt" and top["source_folder"] == "2025/sub"
    assert 70 < top["total"] <= 100 and top["best_share"] == top["total"]
    assert top["date"] == top["source_date"]  # both indexed today
    assert rows[1]["total"] == 0.0 and rows[1]["best_source"] is None
    table = run("similar", idx, "--batch", "--folder", "2025")
    lines = table.stdout.splitlines()[2:]
    # built before any total was computed: listed, never as 0 %, by key
    assert [x.split()[0] for x in lines] == ["2025/sub/jones.txt", "2025/sub/smith.txt"]
    assert all("not computed" in x for x in lines)
    assert "group 1 (2 documents): 2025/sub/smith.txt, 2026/sub/smith.txt" in table.stderr
    groups = run("similar", idx, "--groups", "-o", "jsonl").stdout.splitlines()
    assert [json.loads(g)["documents"] for g in groups] == [
        "2025/sub/smith.txt, 2026/sub/smith.txt"
    ]
    bad = run("similar", idx, "--batch", "--since", "28.11.2026", check=False)
    assert bad.returncode != 0 and "YYYY-MM-DD" in bad.stderr
