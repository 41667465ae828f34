"""What a teacher sees (issue 18), on a folder of essays with planted cases
(tests/helpers/teacher.py), through the real command line."""

from __future__ import annotations

import csv
import io
import json

import pytest

from simdask.kernels.words import WORD_PATTERN
from simdask.read.undirected_pairs import pct
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


def _errors(index) -> dict[str, dict]:
    return {r["key"]: r for r in _jsonl(run("errors", index, "-o", "jsonl").stdout)}


def test_unsupported_files_of_a_folder_are_reported_with_a_hint(built):
    root, e, p = built
    for key in e.unsupported:
        assert f"unsupported: {key}: expected a document simdask reads" in p.stderr
    errors = _errors(root / "idx")
    assert sorted(errors) == sorted(e.unsupported)
    assert all(r["kind"] == "unsupported" and r["kept"] is False for r in errors.values())
    assert "a WordPerfect file: save it as .docx" in errors["essays/old.wpd"]["message"]
    assert "an Apple Pages file" in errors["essays/notes.pages"]["message"]
    assert "OCR is not done" in errors["essays/scan.png"]["message"]
    st = json.loads(run("stats", root / "idx", "--format", "json").stdout)
    assert (st["failed"], st["documents"]) == (3, 8)


def test_rtf_given_directly_is_read_as_rtf_not_indexed_as_markup(built, tmp_path):
    root, e, _ = built
    rtf = tmp_path / "essay.txt"  # an RTF whatever its name says (issue 31, item 17)
    rtf.write_bytes(rb"{\rtf1\ansi {\fonttbl\f0 Times;} " + b"words of an essay " * 20 + b"}")
    run("update", tmp_path / "idx", rtf, e.essays / "brown.txt", "--workers", 1, "--quiet")
    assert "essay.txt" not in _errors(tmp_path / "idx")
    text = run("text", tmp_path / "idx", "essay.txt").stdout
    assert text.split() == ["words", "of", "an", "essay"] * 20  # no control words, no font table
    p = run("query", root / "idx", rtf, check=False)
    assert p.returncode == 0 and "RTF" not in p.stderr


def test_errors_lists_what_is_currently_not_indexed(built, tmp_path):
    _, e, _ = built
    import shutil

    essays = shutil.copytree(e.essays, tmp_path / "essays")
    idx = tmp_path / "idx"
    run("update", idx, essays, "--workers", 1, "--quiet")
    # a run over another source leaves these errors current
    run("update", idx, e.last_year, "--workers", 1, "--quiet")
    assert sorted(_errors(idx)) == sorted(e.unsupported)
    # the .wpd removed, the .pages replaced by its text: neither is failing any more
    (essays / "old.wpd").unlink()
    (essays / "notes.pages").unlink()
    (essays / "notes.txt").write_text("notes of the class " * 30, encoding="utf-8")
    (essays / "tiny.txt").write_text("three words only", encoding="utf-8")
    p = run("update", idx, essays, "--workers", 1, "--quiet")
    errors = _errors(idx)
    assert sorted(errors) == ["essays/scan.png", "essays/tiny.txt"]
    assert errors["essays/tiny.txt"]["kind"] == "too_short"
    assert "added (2): essays/notes.txt, essays/tiny.txt" in p.stderr
    assert json.loads(run("stats", idx, "--format", "json").stdout)["failed"] == 1
    assert set(_errors(idx)) == {"essays/scan.png", "essays/tiny.txt"}
    last = _jsonl(run("errors", idx, "--last-run", "-o", "jsonl").stdout)
    assert {r["key"] for r in last} == {"essays/scan.png", "essays/tiny.txt"}


def test_scanned_pdf_in_query_and_compare_is_a_note(built, tmp_path):
    from tests.helpers.documents import image_pdf

    root, e, _ = built
    (tmp_path / "scan.pdf").write_bytes(image_pdf())
    p = run("query", root / "idx", tmp_path / "scan.pdf", e.essays / "brown.txt", check=False)
    assert p.returncode == 0, p.stderr
    assert "simdask: note: not compared: scan.pdf" in p.stderr and "error:" not in p.stderr
    group = tmp_path / "group"
    group.mkdir()
    (group / "scan.pdf").write_bytes(image_pdf())
    (group / "brown.txt").write_text((e.essays / "brown.txt").read_text(), encoding="utf-8")
    p = run("compare", group, e.last_year, "--workers", 1, "--quiet", check=False)
    assert p.returncode == 0, p.stderr
    assert "simdask: note: group A: group/scan.pdf: image_only" in p.stderr


def test_run_summary_names_the_changes_and_remove_warns(built, tmp_path):
    _, e, first = built
    # the first build: 8 added, the first 5 named and a count
    assert "added (8): essays/alone.txt, essays/bailey.txt, essays/brown.txt," in first.stderr
    assert "and 3 more" in first.stderr
    import shutil

    essays = shutil.copytree(e.essays, tmp_path / "essays")
    idx = tmp_path / "idx"
    p = run("-v", "update", idx, essays, "--workers", 1, "--quiet")
    added = "added (8): " + ", ".join(
        f"essays/{n}.txt"
        for n in ("alone", "bailey", "brown", "carter", "evans", "reorder", "tpl1", "tpl2")
    )
    assert added in p.stderr  # all of them with -v
    (essays / "carter.txt").write_text("a new version " * 50, encoding="utf-8")
    (essays / "evans.txt").unlink()
    (essays / "new.txt").write_text("a new essay of a new student " * 20, encoding="utf-8")
    p = run("update", idx, essays, "--delete-missing", "--workers", 1, "--quiet")
    assert "added (1): essays/new.txt" in p.stderr
    assert "modified (1): essays/carter.txt" in p.stderr
    assert "deleted (1): essays/evans.txt" in p.stderr
    assert "failed or too short (3):" in p.stderr
    p = run("remove", idx, "alone.txt", "--workers", 1, "--quiet")
    assert "deleted (1): essays/alone.txt" in p.stderr
    assert "the next `simdask update` of" in p.stderr and "adds essays/alone.txt back" in p.stderr


def test_report_is_a_human_summary_by_default_and_takes_files(built, tmp_path):
    root, e, _ = built
    p = run("report", root / "idx", "brown.txt", "bailey", check=False)
    assert p.returncode == 1 and "did you mean 'essays/bailey.txt'" in p.stderr
    out = run("report", root / "idx", "brown.txt", "bailey.txt").stdout.splitlines()
    rep = json.loads(run("report", root / "idx", e.brown, e.bailey, "--format", "json").stdout)
    assert out[0] == f"{e.brown} and {e.bailey}"
    a, b = round(rep["similarity"]), round(rep["reverse_similarity"])
    assert (
        out[1].strip()
        == f"{e.bailey} holds {a} % of {e.brown}; {e.brown} holds {b} % of {e.bailey}"
    )
    n = len(rep["passages"])
    cov = rep["aligned_coverage"]  # the aligned passages: the share of each text, in words
    assert out[2].strip() == (
        f"{pct(cov['doc'])} of {e.brown} lies in passages taken from {e.bailey}; "
        f"they make up {pct(cov['other'])} of {e.bailey}"
    )
    assert f"{rep['shared']} shared chunks" in out[3] and f"{n} matching passage" in out[3]
    first = rep["passages"][0]
    n_brown = len(WORD_PATTERN.findall((e.essays / "brown.txt").read_text()))
    n_bailey = len(WORD_PATTERN.findall((e.essays / "bailey.txt").read_text()))
    assert n == 1 and cov["doc"] == pytest.approx(100 * first["words"] / n_brown)
    assert cov["other"] == pytest.approx(100 * first["other_words"] / n_bailey)
    assert out[4].startswith(f"  1. {first['words']} words, at 0-75 % of {e.brown}")
    assert out[4].endswith(f" ({first['kind']}):") and first["kind"] == "verbatim"
    brown_words = (e.essays / "brown.txt").read_text().split()
    assert out[5].strip().startswith('"' + " ".join(w.strip(".") for w in brown_words[:3]))
    # a file that is not in the index, as either side; a path as given on the command line
    last = e.last_year / "evans.txt"
    for args in ((last, "essays/evans.txt"), ("evans.txt", last)):
        got = json.loads(run("report", root / "idx", *args, "--format", "json").stdout)
        assert got["similarity"] == got["reverse_similarity"] == 100.0
    # a file on disk named like the end of a key is that file, not the indexed document
    (tmp_path / "bailey.txt").write_text((e.essays / "carter.txt").read_text(), encoding="utf-8")
    got = json.loads(
        run(
            "report", root / "idx", "bailey.txt", "carter.txt", "--format", "json", cwd=tmp_path
        ).stdout
    )
    assert (got["doc"], got["other"], got["similarity"]) == (
        "bailey.txt",
        "essays/carter.txt",
        100.0,
    )
    text = run("text", root / "idx", e.essays / "brown.txt", cwd=root).stdout
    assert text == (e.essays / "brown.txt").read_text()


def test_keys_are_found_by_suffix_and_listed(built):
    root, e, _ = built
    assert run("list", root / "idx").stdout.split() == sorted(
        f"essays/{n}.txt"
        for n in ("alone", "bailey", "brown", "carter", "evans", "reorder", "tpl1", "tpl2")
    )
    assert run("list", root / "idx", "essays/tpl*").stdout.split() == [
        "essays/tpl1.txt",
        "essays/tpl2.txt",
    ]
    assert run("list", root / "idx", "BAIL").stdout.split() == [e.bailey]
    p = run("similar", root / "idx", "tpl", check=False)
    assert p.returncode == 1 and "'essays/tpl1.txt'" in p.stderr
    p = run("similar", root / "idx", "alone.txt")
    assert "no similar documents for essays/alone.txt" in p.stderr
    p = run("update", root / "other", e.essays / "brown.txt", "--hash-bits", 20, "--quiet")
    p = run("update", root / "other", e.essays / "brown.txt", "--hash-bits", 24, check=False)
    assert p.returncode == 1 and "hash-bits: 20 in the index, 24 asked" in p.stderr
    assert "IndexConfig(" not in p.stderr


def test_query_and_compare_write_html_results(built, tmp_path):
    root, e, _ = built
    page = tmp_path / "q.html"
    p = run("query", root / "idx", e.essays / "brown.txt", "--html", page, check=False)
    assert p.returncode == 0, p.stderr
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<table id=results " in html
    assert f"{e.bailey} holds 74 % of brown.txt; brown.txt holds 27 % of {e.bailey}" in html
    first = " ".join(w.strip(".") for w in (e.essays / "brown.txt").read_text().split()[:3])
    assert "1 matching passage</summary>" in html and f"“{first}" in html
    page = tmp_path / "c.html"
    p = run(
        "compare", e.essays, e.last_year, "--workers", 1, "--quiet", "--html", page, check=False
    )
    assert p.returncode == 3  # the unsupported files of the folder are reported
    html = page.read_text(encoding="utf-8")
    assert "essays/evans.txt</td><td>last-year/evans.txt</td>" in html
    assert html.count("<li class=error>") == 3 and "essays/old.wpd: unsupported" in html


@pytest.mark.parametrize("bits", [32, 64])  # 64: the default, chunk IDs above 2**63 included
def test_report_and_site_leave_out_what_max_df_leaves_out(tmp_path, bits):
    from tests.helpers.documents import prose
    from tests.helpers.teacher import TEMPLATE

    folder = tmp_path / "class"
    folder.mkdir()
    private = prose(80, seed=300)  # shared by tpl1 and tpl2 only
    (folder / "tpl1.txt").write_text(f"{TEMPLATE} {private} {prose(200, 301)}", encoding="utf-8")
    (folder / "tpl2.txt").write_text(f"{TEMPLATE} {prose(200, 302)} {private}", encoding="utf-8")
    (folder / "tpl3.txt").write_text(f"{TEMPLATE} {prose(200, 303)}", encoding="utf-8")
    idx = tmp_path / "idx"
    run("update", idx, folder, "--max-df", 2, "--hash-bits", bits, "--workers", 1, "--quiet")
    stored = {(r["doc"], r["other"]): r for r in _jsonl(run("similar", idx, "-o", "jsonl").stdout)}
    assert set(stored) == {
        ("class/tpl1.txt", "class/tpl2.txt"),
        ("class/tpl2.txt", "class/tpl1.txt"),
    }
    rep = json.loads(run("report", idx, "tpl1.txt", "tpl2.txt", "--format", "json").stdout)
    row = stored[("class/tpl1.txt", "class/tpl2.txt")]
    assert (rep["shared"], rep["similarity"]) == (row["shared"], row["similarity"])
    assert rep["hashed_similarity"] == row["similarity"]
    text = (folder / "tpl1.txt").read_text(encoding="utf-8")
    [passage] = rep["passages"]  # the private passage; the template is not shown
    assert text[passage["doc_start"] : passage["doc_end"]] == private.rstrip(".")
    run("export-html", idx, tmp_path / "site", "--quiet")
    page = next(
        p.read_text(encoding="utf-8")
        for p in (tmp_path / "site" / "docs").glob("*.html")
        if "<h1>class/tpl1.txt</h1>" in p.read_text(encoding="utf-8")
    )
    import re

    marks = re.findall(r"<mark [^>]*>([^<]*)</mark>", page)
    assert marks == [private.rstrip(".")]
