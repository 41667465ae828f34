"""`simdask compare` and `simdask query` as real subprocesses: output formats and exit codes."""

from __future__ import annotations

import csv
import io
import json

import pytest

from simdask import Index
from simdask.cli import compare as compare_cmd
from simdask.cli import query as query_cmd
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, rel, write_txt

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli-usecases")
    docs = make_docs(16, seed=8)
    keys = sorted(docs)
    a = {k: docs[k] for k in [*keys[:9], "tiny"]}
    b = {k: docs[k] for k in keys[7:] if k != "tiny"}
    write_txt(a, tmp / "A")
    write_txt(b, tmp / "B")
    return tmp, docs, a, b


def _compare(tmp, *extra, check=True):
    return run(
        "compare", tmp / "A", tmp / "B", "--hash-bits", 32, "--shards", 2, "--workers", 2,
        "--quiet", *extra, check=check,
    )  # fmt: skip


def test_compare_formats_agree(setup, tmp_path):
    tmp, _, a, b = setup
    p = _compare(tmp, "-o", "jsonl", "--keep-index", tmp_path / "kept")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and list(rows[0]) == list(compare_cmd.COLUMNS)
    assert all(r["a_key"][2:-4] in a and r["b_key"][2:-4] in b for r in rows)
    same = {rel(r["a_key"]) for r in rows if rel(r["a_key"]) == rel(r["b_key"])}
    assert same == {f"{k}.txt" for k in set(a) & set(b) if k != "tiny"}  # keys in both groups
    assert f"compared {len(a)} documents of A with {len(b)} of B" in p.stderr
    assert "note: group A: A/tiny.txt: too_short" in p.stderr
    # the kept index holds both groups under A/ and B/ and the same rows
    with Index.open(tmp_path / "kept") as idx:
        assert idx.stats()["documents"] == len(a) + len(b)
    csv_rows = list(csv.DictReader(io.StringIO(_compare(tmp, "--format", "csv").stdout)))
    assert [(r["a_key"], r["b_key"], int(r["shared"])) for r in csv_rows] == [
        (r["a_key"], r["b_key"], r["shared"]) for r in rows
    ]
    assert [float(r["a_in_b"]) for r in csv_rows] == pytest.approx([r["a_in_b"] for r in rows])
    table = _compare(tmp, "--min", 50).stdout.splitlines()
    assert table[0].split() == list(compare_cmd.TABLE_COLUMNS)
    strong = [r for r in rows if max(r["a_in_b"], r["b_in_a"]) >= 50]
    assert len(table) - 2 == len(strong) > 0
    assert table[2].split()[:2] == [strong[0]["a_key"], strong[0]["b_key"]]
    assert f"{strong[0]['b_key']} holds " in table[2]  # the pair in plain words


def test_compare_exit_codes(setup, tmp_path):
    tmp, _, _, _ = setup
    bad = tmp_path / "B"
    write_txt({"ok": "some words that are fine to read here"}, bad)
    (bad / "broken.txt").write_bytes(b"\xff\xfe broken utf-8 \xe9")
    p = run("compare", tmp / "A", bad, "--workers", 2, "--quiet", "-o", "jsonl", check=False)
    assert p.returncode == compare_cmd.EXIT_UNREADABLE == 3
    assert "error: group B: B/broken.txt: encoding: expected" in p.stderr
    assert "compared" in p.stderr  # the readable documents were still compared
    (tmp_path / "empty").mkdir()
    p = run("compare", tmp / "A", tmp_path / "empty", "--quiet", check=False)
    assert p.returncode == 1 and "group B holds no documents" in p.stderr
    p = run("compare", tmp / "A", tmp_path / "missing", "--quiet", check=False)
    assert p.returncode == 1 and "not found" in p.stderr


@pytest.fixture(scope="module")
def index(setup):
    tmp, docs, _, _ = setup
    src = write_txt(docs, tmp / "all")
    run("update", tmp / "idx", src, "--hash-bits", 32, "--shards", 3, "--workers", 2, "--quiet")
    return tmp / "idx"


def test_query_several_files_both_directions_and_formats(setup, index, tmp_path):
    _, docs, _, _ = setup
    q1 = tmp_path / "q1.txt"
    q1.write_text(docs["d004"], encoding="utf-8")
    q2 = tmp_path / "q2.md"
    q2.write_text(docs["short_inside"] + " and some words of its own", encoding="utf-8")
    p = run("query", index, q1, q2, "-o", "jsonl")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert list(rows[0]) == [*query_cmd.COLUMNS, "source_excluded"]
    assert not any(r["source_excluded"] for r in rows)  # q1.txt is no indexed document
    by = {(r["query"], r["key"]): r for r in rows}
    assert by[("q1.txt", "all/d004.txt")]["similarity"] == 100.0
    assert by[("q1.txt", "all/d004.txt")]["reverse_similarity"] == 100.0
    inside = by[("q2.md", "all/short_inside.txt")]
    assert inside["reverse_similarity"] == 100.0 and inside["similarity"] < 100.0
    assert {r["query"] for r in rows} == {"q1.txt", "q2.md"}
    # the same rows as the Python API
    with Index.open(index) as idx:
        api = [m.to_dict() for m in idx.query(docs["d004"], 1.0)]
    assert [
        {k: v for k, v in r.items() if k not in ("query", "source_excluded")}
        for r in rows
        if r["query"] == "q1.txt"
    ] == api
    csv_rows = list(csv.DictReader(io.StringIO(run("query", index, q1, "-o", "csv").stdout)))
    assert [r["key"] for r in csv_rows] == [m["key"] for m in api]
    table = run("query", index, q1, "--min", 50).stdout.splitlines()
    assert table[0].split() == list(query_cmd.TABLE_COLUMNS) and "all/d004.txt" in table[2]
    assert "all/d004.txt holds 100 % of q1.txt" in table[2]


def test_query_exit_codes(setup, index, tmp_path):
    _, docs, _, _ = setup
    good = tmp_path / "good.txt"
    good.write_text(docs["d007"], encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(bytes(range(256)) * 8)  # binary garbage, no text
    short = tmp_path / "short.txt"
    short.write_text("three words only", encoding="utf-8")
    p = run("query", index, bad, good, tmp_path / "missing.txt", short, "-o", "jsonl", check=False)
    assert p.returncode == query_cmd.EXIT_UNREADABLE == 3
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and {r["query"] for r in rows} == {"good.txt"}  # the others are still reported
    assert "cannot read bad.txt: expected text" in p.stderr
    assert "cannot read missing.txt: expected a document file" in p.stderr
    assert "note: short.txt: too few words to be compared (fewer than 5)" in p.stderr
    assert run("query", index, good, short, check=False).returncode == 0
    p = run("query", tmp_path / "no-index", good, check=False)
    assert p.returncode == 1 and "no simdask index" in p.stderr
