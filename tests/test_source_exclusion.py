"""A source left out of one document by the teacher (issue 31, item 12:
``simdask mark INDEX DOC SOURCE --exclude-source``): stored in the catalog; the document's
total and sources leave it out in every view (``totals``, ``similar`` and its batch overview,
``report``, the site's and ``serve``'s document pages), which say so; exported with the results
(``similar`` jsonl/csv, ``mark --list``); kept across incremental runs; the stored
similarities never change; ``--include-source`` takes it back."""

from __future__ import annotations

import csv
import io
import json

import pytest

from simdask.errors import ConfigError
from simdask.storage.decisions import excluded_by_doc, set_source_exclusion
from tests.helpers.cli import run
from tests.helpers.documents import prose
from tests.helpers.server import serving

pytestmark = pytest.mark.system

OPTS = ("--workers", 1, "--quiet")
THESIS_PART = prose(200, seed=71)
BOOK_PART = prose(120, seed=72)


def _totals(idx) -> dict[str, dict]:
    out = run("totals", idx, "--format", "jsonl").stdout.splitlines()
    return {r["doc"]: r for r in map(json.loads, out)}


def _similar(idx, fmt="jsonl") -> list[dict]:
    out = run("similar", idx, "--format", fmt).stdout
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(out)))
    return [json.loads(x) for x in out.splitlines()]


def _stored(rows: list[dict]) -> list[dict]:
    """The stored part of ``similar``'s rows (not the total, not the teacher's flag)."""
    return [{k: v for k, v in r.items() if k not in ("total", "source_excluded")} for r in rows]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("srcx")
    src = root / "class"
    src.mkdir()
    essay = "\n\n".join([prose(150, seed=70), THESIS_PART, prose(100, seed=73), BOOK_PART])
    (src / "essay.txt").write_text(essay, encoding="utf-8")
    thesis = "\n\n".join([prose(500, seed=74), THESIS_PART, prose(300, seed=75)])
    (src / "thesis.txt").write_text(thesis, encoding="utf-8")
    (src / "book.txt").write_text(prose(200, seed=76) + "\n\n" + BOOK_PART, encoding="utf-8")
    (src / "alone.txt").write_text(prose(200, seed=77), encoding="utf-8")
    idx = root / "idx"
    run("update", idx, src, "--align", *OPTS)
    return root, idx


def test_excluded_source_leaves_every_view_of_the_document(index):
    root, idx = index
    essay, thesis, book = "class/essay.txt", "class/thesis.txt", "class/book.txt"
    before_totals = _totals(idx)
    mine = before_totals[essay]
    shares = {s["key"]: s["share"] for s in mine["sources"]}
    assert set(shares) == {thesis, book} and mine["total"] > shares[book] > 5
    before = _similar(idx)

    run("mark", idx, "essay.txt", "thesis.txt", "--exclude-source", "--note", "cited with care")
    after = _totals(idx)
    mine = after[essay]
    # the total is the union of the sources left: the book's share alone, as stored
    assert mine["total"] == pytest.approx(shares[book], abs=1e-9)
    assert [s["key"] for s in mine["sources"]] == [book]
    assert mine["excluded_sources"] == [thesis]
    # only that document: the thesis's own total still counts the essay
    assert after[thesis] == before_totals[thesis]
    table = run("totals", idx).stdout
    assert f"(excluded by the teacher: {thesis})" in table

    # similar jsonl/csv: the stored similarities unchanged, the row carries the decision
    rows = _similar(idx)
    flag = {(r["doc"], r["other"]): r["source_excluded"] for r in rows}
    assert flag[(essay, thesis)] is True and not any(
        v for k, v in flag.items() if k != (essay, thesis)
    )
    assert _stored(rows) == _stored(before)
    csv_rows = {(r["doc"], r["other"]): r for r in _similar(idx, "csv")}
    assert csv_rows[(essay, thesis)]["source_excluded"] == "True"
    details = run("similar", idx, "--details", "--format", "jsonl").stdout.splitlines()
    said = {(r["a_key"], r["b_key"]): r["source_excluded"] for r in map(json.loads, details)}
    assert f"{thesis} left out of {essay}" in said.values()
    listed = list(csv.DictReader(io.StringIO(run("mark", idx, "--list", "-o", "csv").stdout)))
    assert [(r["a_key"], r["b_key"], r["status"], r["note"]) for r in listed] == [
        (essay, thesis, "source_excluded", "cited with care")
    ]

    # the batch overview: the essay's best source is the book now
    batch = run("similar", idx, "--batch", "--run", 1, "--format", "jsonl").stdout
    row = next(r for r in map(json.loads, batch.splitlines()) if r["doc"] == essay)
    assert row["best_source"] == book and row["total"] == pytest.approx(mine["total"])

    # the pair view says so (text and JSON), and still shows the passages
    report = run("report", idx, essay, thesis).stdout
    assert f"excluded by the teacher: {thesis} left out of {essay}" in report
    rep = json.loads(run("report", idx, essay, thesis, "--format", "json").stdout)
    assert rep["review"]["source_excluded"] == f"{thesis} left out of {essay}"
    assert rep["passages"]

    # the site's document page: the sources table leaves it out, the page names it
    run("export-html", idx, root / "site", "--quiet")
    page = next(
        t
        for p in (root / "site" / "docs").glob("*.html")
        if f"<h1>{essay}</h1>" in (t := p.read_text(encoding="utf-8"))
    )
    sources = page.split("<table id=sources", 1)[1].split("</table>", 1)[0]
    assert book in sources and thesis not in sources
    assert "id=excluded-sources" in page and thesis in page.split("id=excluded-sources")[1]

    # serve's document page: the same
    import requests

    with serving(idx, log=root / "serve.log") as (url, _):
        got = requests.get(url + "/document", params={"key": essay}, timeout=60).text
    sources = got.split("<table id=sources", 1)[1].split("</table>", 1)[0]
    assert book in sources and thesis not in sources
    assert "id=excluded-sources" in got


def test_kept_across_an_incremental_run_and_taken_back(index):
    root, idx = index
    essay, thesis = "class/essay.txt", "class/thesis.txt"
    run("mark", idx, "essay.txt", "thesis.txt", "--exclude-source")
    (root / "class" / "late.txt").write_text(prose(150, seed=78) + THESIS_PART, encoding="utf-8")
    run("update", idx, root / "class", *OPTS)
    t = _totals(idx)[essay]
    assert t["excluded_sources"] == [thesis] and thesis not in [s["key"] for s in t["sources"]]
    run("mark", idx, "essay.txt", "thesis.txt", "--include-source")
    t = _totals(idx)[essay]
    assert t["excluded_sources"] == [] and thesis in [s["key"] for s in t["sources"]]
    bad = run("mark", idx, "essay.txt", "nobody.txt", "--exclude-source", check=False)
    assert bad.returncode == 1 and "nobody.txt" in bad.stderr


def test_a_document_is_not_its_own_source(tmp_path):
    import sqlite3

    db = sqlite3.connect(tmp_path / "c.sqlite", isolation_level=None)
    assert excluded_by_doc(db) == {}  # no table yet: none
    with pytest.raises(ConfigError, match="a source other than the document"):
        set_source_exclusion(db, "a", "a", True, "", 0.0)
    set_source_exclusion(db, "a", "b", True, "n", 1.0)
    set_source_exclusion(db, "a", "c", True, "", 2.0)
    set_source_exclusion(db, "a", "c", False, "", 3.0)
    assert excluded_by_doc(db) == {"a": frozenset({"b"})}
