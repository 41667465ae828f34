"""The command line, run as a real subprocess: update, similar, query, stats, exit codes."""

from __future__ import annotations

import csv
import io
import json

import pytest

from simdask.kernels.words import chunks
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, reference_similarity, stem, write_txt

pytestmark = pytest.mark.system


#: the fields of `simdask similar --format jsonl`, in order (issue 2's contract)
PAIR_FIELDS = [
    "doc",
    "other",
    "similarity",
    "aligned",
    "total",
    "source_excluded",  # the teacher left this source out of doc's total (issue 31 item 12)
    "decision",  # the teacher's decision on the pair (simdask mark; null: none), item 12
    "note",  # the decision's note
    "shared",
    "doc_chunks",
    "other_chunks",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    docs = make_docs(25, seed=11)
    src = write_txt(docs, tmp / "docs")
    p = run("update", tmp / "idx", src, "--hash-bits", 32, "--shards", 3, "--workers", 2, "--quiet")
    return tmp, docs, p


def test_update_prints_summary_and_similar_jsonl_matches_reference(built):
    tmp, docs, p = built
    assert "committed generation 1" in p.stderr and "1 failed" not in p.stderr
    out = run("similar", tmp / "idx", "--format", "jsonl").stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows and list(rows[0]) == PAIR_FIELDS
    ref = reference_similarity(docs)
    got = {(stem(r["doc"]), stem(r["other"])): r for r in rows}
    assert set(got) == {p for p, v in ref.items() if v[1] >= 1.0}
    for pair, r in got.items():
        assert r["shared"] == ref[pair][0]
        assert r["similarity"] == ref[pair][1]  # exact: 32-bit IDs, JSON keeps every digit
    sims = [r["similarity"] for r in rows]
    assert sims == sorted(sims, reverse=True)


def test_similar_for_one_key_csv_and_table(built):
    tmp, _, _ = built
    out = run("similar", tmp / "idx", "docs/short_inside.txt", "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0]["doc"] == "docs/short_inside.txt" and float(rows[0]["similarity"]) == 100.0
    # the table: one row per pair, seen from the document asked for, both ways, in words
    table = run("similar", tmp / "idx", "docs/short_inside.txt", "--min", 50).stdout
    lines = table.splitlines()
    assert lines[0].split() == ["a_key", "b_key", "a_in_b", "b_in_a", "shared", "in_words"]
    assert lines[2].split()[0] == "docs/short_inside.txt" and lines[2].split()[2] == "100.00"
    assert f"{rows[0]['other']} holds 100 % of docs/short_inside.txt" in lines[2]


def test_query_and_stats(built):
    tmp, docs, _ = built
    qfile = tmp / "q.txt"
    qfile.write_text(docs["d004"], encoding="utf-8")
    rows = [
        json.loads(x)
        for x in run("query", tmp / "idx", qfile, "--format", "jsonl").stdout.splitlines()
    ]
    assert rows[0]["key"] == "docs/d004.txt" and rows[0]["similarity"] == 100.0
    st = json.loads(run("stats", tmp / "idx", "--format", "json").stdout)
    assert st["documents"] == len(docs) and st["shards"] == 3 and st["config"]["hash_bits"] == 32
    # 32-bit chunk IDs, no collision here: one posting per distinct chunk of each document
    assert st["postings"] == sum(len(set(chunks(t, 5))) for t in docs.values())
    assert st["bytes_on_disk"] > 0


def test_exit_codes_and_messages(tmp_path, built):
    p = run("similar", tmp_path / "missing", check=False)
    assert p.returncode == 1 and "no simdask index" in p.stderr
    p = run("update", tmp_path / "x", tmp_path / "nope", "--workers", 1, "--quiet", check=False)
    assert p.returncode == 1 and "not found" in p.stderr
    p = run("update", tmp_path / "y", tmp_path, "--hash-bits", 65, check=False)
    assert p.returncode == 2 and "hash_bits must be in 16..64, got 65" in p.stderr
    assert run("bogus", check=False).returncode == 2
    tmp, _, _ = built
    p = run("similar", tmp / "idx", "no-such-key", check=False)
    assert p.returncode == 1 and "no document with key 'no-such-key'" in p.stderr
    help_text = run("update", "--help").stdout
    assert "--max-df" in help_text and "--scheduler" in help_text
