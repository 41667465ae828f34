"""``simdask update --lsh``, ``lsh pairs|query|tune`` and ``compare --lsh`` as real
subprocesses: output formats agree with the Python API, the setting is kept by later runs."""

from __future__ import annotations

import csv
import io
import json

import pytest

from simdask import Index
from simdask.kernels.lsh_bands import s_curve, tune
from tests.helpers.cli import run
from tests.helpers.corpus import write_txt
from tests.test_lsh_index import POOL, corpus, variant

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lshcli")
    docs = corpus(12)
    src = write_txt(docs, tmp / "docs")
    run("update", tmp / "idx", src, "--lsh", "8x2", "--shards", 3, "--workers", 2, "--quiet")
    return tmp, docs, src


def test_pairs_in_three_formats_agree_with_the_api(built):
    tmp, _, _ = built
    with Index.open(tmp / "idx") as idx:
        api = [p.to_dict() for p in idx.lsh_pairs(0.2)]
        assert idx.config.lsh == "8x2"
    assert len(api) >= 4
    rows = [
        json.loads(x)
        for x in run("lsh", "pairs", tmp / "idx", "--min", 0.2, "-o", "jsonl").stdout.splitlines()
    ]
    assert rows == api and list(rows[0]) == ["doc", "other", "jaccard"]
    assert all(0.2 <= r["jaccard"] <= 1.0 and r["doc"] < r["other"] for r in rows)
    text = run("lsh", "pairs", tmp / "idx", "--min", 0.2, "-o", "csv").stdout
    got = list(csv.DictReader(io.StringIO(text)))
    assert [(r["doc"], r["other"], float(r["jaccard"])) for r in got] == [
        (r["doc"], r["other"], r["jaccard"]) for r in api
    ]
    table = run("lsh", "pairs", tmp / "idx", "--min", 0.2).stdout.splitlines()
    assert table[0].split() == ["doc", "other", "jaccard"] and len(table) == len(api) + 2
    ex = [
        json.loads(x)
        for x in run(
            "lsh", "pairs", tmp / "idx", "--min", 0.2, "--exact", "-o", "jsonl"
        ).stdout.splitlines()
    ]
    assert list(ex[0]) == ["doc", "other", "jaccard", "exact_jaccard"]
    assert all(0.0 < r["exact_jaccard"] <= 1.0 for r in ex)


def test_dedup_of_files_equals_the_index_pairs(built):
    """`lsh dedup` (in memory, no index) finds the pairs `lsh pairs` finds in an index of the
    same files, with the same estimates (same chunk IDs, same signatures)."""
    tmp, _, src = built
    p = run("lsh", "dedup", src, "--lsh", "8x2", "--min", 0.2, "-o", "jsonl")
    got = {
        (*sorted((r["doc"], r["other"])), r["jaccard"])
        for r in map(json.loads, p.stdout.splitlines())
    }
    with Index.open(tmp / "idx") as idx:
        api = {(x.doc, x.other, x.jaccard) for x in idx.lsh_pairs(0.2)}
    assert got == api and len(got) >= 4
    assert f"{len(got)} pairs" in p.stderr
    one = run("lsh", "dedup", src, "--lsh", "8x2", "--min", 0.2, "-o", "jsonl", "--threads", 1)
    assert one.stdout == p.stdout  # one thread or one per CPU: the same output
    zero = run("lsh", "dedup", src, "--threads", 0, check=False)
    assert zero.returncode == 2 and "expected a whole number >= 1, got 0" in zero.stderr
    bad = run("lsh", "dedup", src, tmp / "missing.txt", "--lsh", "8x2", check=False)
    assert bad.returncode == 3 and "cannot read" in bad.stderr


def test_later_runs_keep_the_setting_and_query_is_read_only(built):
    tmp, _, src = built
    (src / "new.txt").write_text(variant(POOL[3], 1, 7))
    run("update", tmp / "idx", src, "--workers", 2, "--quiet")  # no --lsh: setting kept
    with Index.open(tmp / "idx") as idx:
        assert idx.config.lsh == "8x2"
        gen = idx.catalog.generation
        assert ("docs/k03.txt", "docs/new.txt") in {(p.doc, p.other) for p in idx.lsh_pairs(0.3)}
    q = tmp / "q.txt"
    q.write_text(variant(POOL[3], 2, 8))
    rows = [
        json.loads(x)
        for x in run("lsh", "query", tmp / "idx", q, "-o", "jsonl").stdout.splitlines()
    ]
    assert {"docs/k03.txt", "docs/new.txt"} <= {r["key"] for r in rows}
    assert all(r["query"] == str(q.name) or r["query"].endswith("q.txt") for r in rows)
    p = run("lsh", "query", tmp / "idx", q, tmp / "missing.txt", check=False)
    assert p.returncode == 3 and "missing" in p.stderr
    with Index.open(tmp / "idx") as idx:
        assert idx.catalog.generation == gen
    p = run("update", tmp / "idx", src, "--lsh", "4x4", "--workers", 1, check=False)
    assert p.returncode == 1 and "--rebuild" in p.stderr


def test_tune_prints_the_choice_and_plots(tmp_path):
    out = run("lsh", "tune", "--threshold", 0.8, "--perms", 128, "--plot", tmp_path / "s.png")
    params, fp, fn = tune(0.8, 128)
    assert f"--lsh {params}" in out.stdout
    assert f"{fp:.4f}" in out.stdout and f"{fn:.4f}" in out.stdout
    line = next(x for x in out.stdout.splitlines() if x.split()[:1] == ["0.800"])
    assert float(line.split()[1]) == pytest.approx(
        float(s_curve(0.8, params.bands, params.rows)), abs=1e-4
    )
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    p = run(
        "lsh",
        "tune",
        "--threshold",
        0.7,
        "--perms",
        8,
        "--max-fp",
        0.001,
        "--max-fn",
        0.001,
        check=False,
    )
    assert p.returncode == 1 and "no bands x rows within 8 permutations" in p.stderr


def test_compare_two_groups_with_lsh(tmp_path):
    a = write_txt({"x": POOL[1], "y": POOL[2]}, tmp_path / "a")
    b = write_txt({"x2": variant(POOL[1], 1, 3), "z": POOL[9]}, tmp_path / "b")
    rows = [
        json.loads(x)
        for x in run(
            "compare", a, b, "--lsh", "8x2", "--min", 0.3, "-o", "jsonl"
        ).stdout.splitlines()
    ]
    assert [(r["a_key"], r["b_key"]) for r in rows] == [("a/x.txt", "b/x2.txt")]
    assert 0.3 <= rows[0]["jaccard"] <= 1.0
