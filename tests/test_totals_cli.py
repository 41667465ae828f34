"""``simdask totals`` and the aligned coverage in ``similar`` and ``query`` (issue 29 item 2),
as real subprocesses, against the Python API and the brute-force reference."""

from __future__ import annotations

import json

import pytest

from simdask import Index
from simdask.alignment import align, aligned_coverage
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.totals import reference_totals

pytestmark = pytest.mark.system

DOCS = make_docs(24, seed=5)


def _jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("totals_cli")
    write_txt(DOCS, tmp / "src")
    run("update", tmp / "idx", tmp / "src", "--quiet")
    return tmp


def test_totals_compute_prints_every_total_as_the_reference(built):
    idx = built / "idx"
    before = run("totals", idx)
    assert "0 of 27 documents have a total" in before.stderr
    out = run("totals", idx, "--compute", "--workers", 1, "-o", "jsonl")
    rows = _jsonl(out.stdout)
    assert "26 aligned now" in out.stderr or "aligned now" in out.stderr
    assert [r["total"] for r in rows] == sorted((r["total"] for r in rows), reverse=True)
    with Index.open(idx) as index:
        want = reference_totals(index)
    assert {r["doc"] for r in rows} == set(want)
    for r in rows:
        assert list(r) == ["doc", "total", "words", "sources", "excluded_sources"]
        assert r["excluded_sources"] == []  # none left out by the teacher (simdask mark)
        assert r["total"] == pytest.approx(want[r["doc"]][0], abs=1e-9)
        assert {s["key"]: s["share"] for s in r["sources"]} == pytest.approx(want[r["doc"]][1])
    high = _jsonl(run("totals", idx, "--min-total", 50, "-o", "jsonl").stdout)
    assert high and all(r["total"] >= 50 for r in high)
    assert len(high) < len(rows)
    table = run("totals", idx).stdout.splitlines()
    assert table[0].split() == ["doc", "total", "words", "sources"]
    assert "src/d002.txt 100.0%" in table[2]  # short_inside: wholly taken from d002


def test_similar_jsonl_rows_carry_aligned_beside_similarity(built):
    idx = built / "idx"
    run("totals", idx, "--compute", "--workers", 1)
    rows = _jsonl(run("similar", idx, "-o", "jsonl").stdout)
    assert list(rows[0])[:5] == ["doc", "other", "similarity", "aligned", "total"]
    with Index.open(idx) as index:
        want = reference_totals(index)
    for r in rows:  # every stored pair is among the candidates of these small lists
        assert r["aligned"] == pytest.approx(want[r["doc"]][1].get(r["other"], 0.0), abs=1e-9)
        assert r["total"] == pytest.approx(want[r["doc"]][0], abs=1e-9)
    by_aligned = _jsonl(run("similar", idx, "-o", "jsonl", "--sort", "aligned").stdout)
    values = [r["aligned"] for r in by_aligned]
    assert values == sorted(values, reverse=True) and values != [r["aligned"] for r in rows]
    high = _jsonl(run("similar", idx, "-o", "jsonl", "--min-total", 90).stdout)
    assert high and {r["doc"] for r in high} == {
        d for d, (t, _) in want.items() if t >= 90 and any(r["doc"] == d for r in rows)
    }


def test_query_totals_align_the_query_with_its_candidates(built, tmp_path):
    idx = built / "idx"
    q = tmp_path / "q.txt"
    q.write_text(DOCS["d003"][:1200] + " " + DOCS["d010"][:800])
    rows = _jsonl(run("query", idx, q, "--totals", "-o", "jsonl").stdout)
    with Index.open(idx) as index:
        want = index.query_total(q.read_text(), "q.txt")
    assert want.total > 80 and {s.key for s in want.sources} >= {"src/d003.txt", "src/d010.txt"}
    assert rows and all(r["total"] == pytest.approx(want.total) for r in rows)
    shares = {s.key: s.share for s in want.sources}
    with Index.open(idx) as index:  # a source's share: the aligner's coverage of the query
        other = index.text("src/d003.txt")
    cover = aligned_coverage(align(q.read_text(), other), q.read_text(), other)[0]
    assert shares["src/d003.txt"] == pytest.approx(100.0 * cover)
    for r in rows:
        assert r["aligned"] == pytest.approx(shares.get(r["key"], 0.0))
    plain = _jsonl(run("query", idx, q, "-o", "jsonl").stdout)
    assert "total" not in plain[0]  # only when asked: the aligner costs time
