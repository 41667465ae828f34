"""What a teacher sees (issue 18), on a folder of essays with planted cases
(tests/helpers/teacher.py), through the real command line."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.helpers.cli import run
from tests.helpers.teacher import write_essays

pytestmark = pytest.mark.system

TABLE = ["a_key", "b_key", "a_in_b", "b_in_a", "shared", "in_words"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("teacher")
    essays = write_essays(root)
    p = run("update", root / "idx", essays.essays, "--workers", 1, "--quiet", cwd=root)
    return root, essays, p


def _jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_similar_table_has_one_row_per_pair_with_both_ways_in_words(built):
    root, e, _ = built
    directed = _jsonl(run("similar", root / "idx", "-o", "jsonl").stdout)
    pairs = {frozenset((r["doc"], r["other"])) for r in directed}
    assert len(directed) == 2 * len(pairs)  # every planted pair is stored both ways
    lines = run("similar", root / "idx").stdout.splitlines()
    assert lines[0].split() == TABLE
    body = lines[2:]
    assert len(body) == len(pairs) == 3  # copy, reorder, template
    # sorted by the larger percentage; the copy case names who holds how much of whom
    copy = next(x for x in body if "brown.txt" in x)
    cells = copy.split()
    assert cells[:2] == [e.brown, e.bailey]
    by = {(r["doc"], r["other"]): r["similarity"] for r in directed}
    assert cells[2:4] == [f"{by[(e.brown, e.bailey)]:.2f}", f"{by[(e.bailey, e.brown)]:.2f}"]
    a, b = round(by[(e.brown, e.bailey)]), round(by[(e.bailey, e.brown)])
    assert f"{e.bailey} holds {a} % of {e.brown}; {e.brown} holds {b} % of {e.bailey}" in copy
    larger = [max(float(x.split()[2]), float(x.split()[3])) for x in body]
    assert larger == sorted(larger, reverse=True)


def test_pairs_option_gives_undirected_rows_in_jsonl_and_csv(built):
    root, e, _ = built
    directed = _jsonl(run("similar", root / "idx", "-o", "jsonl").stdout)
    by = {(r["doc"], r["other"]): r for r in directed}
    rows = _jsonl(run("similar", root / "idx", "--pairs", "-o", "jsonl").stdout)
    assert len(rows) == 3
    for r in rows:
        assert list(r) == ["a_key", "b_key", "a_in_b", "b_in_a", "shared", "a_chunks", "b_chunks"]
        fwd, rev = by[(r["a_key"], r["b_key"])], by[(r["b_key"], r["a_key"])]
        assert (r["a_in_b"], r["b_in_a"]) == (fwd["similarity"], rev["similarity"])
        assert (r["shared"], r["a_chunks"], r["b_chunks"]) == (
            fwd["shared"],
            fwd["doc_chunks"],
            fwd["other_chunks"],
        )
        assert r["a_in_b"] >= r["b_in_a"]
    out = run("similar", root / "idx", "--pairs", "-o", "csv").stdout
    assert [float(r["a_in_b"]) for r in csv.DictReader(io.StringIO(out))] == [
        r["a_in_b"] for r in rows
    ]
    # one document's pairs, seen from it
    lines = run("similar", root / "idx", e.bailey).stdout.splitlines()
    assert len(lines) == 3 and lines[2].split()[:2] == [e.bailey, e.brown]
