"""``simdask candidates INDEX DOC --among PREFIX --top N`` (issue 29): each document's
candidates ranked among one folder, as a real subprocess, against the brute-force ranking of
tests/helpers/candidates.py; the stored lists without ``--among``; exit statuses."""

from __future__ import annotations

import csv
import io
import json

import pytest

from simdask import Index
from simdask.storage.candidate_store import stored_candidate_config
from tests.helpers.candidates import brute_lists, feature_sets, stored_candidates
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.paraphrase import PARAGRAPHS, disguise

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Sources in ``src/``: 16 essays, the source (every paragraph of PARAGRAPHS) and one
    essay per paragraph holding it (partial sources); four disguised copies of the source in
    ``susp/`` (each other's closest partners in the stored lists)."""
    tmp = tmp_path_factory.mktemp("candidates_cli")
    docs = make_docs(16, seed=7)
    docs["source"] = " ".join(PARAGRAPHS)
    for i, para in enumerate(PARAGRAPHS):
        docs[f"part{i}"] = f"{docs[f'd{i:03d}'][:400]} {para}"
    write_txt(docs, tmp / "src")
    write_txt({f"copy{i}": disguise(docs["source"], seed=i) for i in range(4)}, tmp / "susp")
    args = ("--candidates", "--hash-bits", 24, "--shards", 4, "--quiet")
    run("update", tmp / "idx", tmp / "src", tmp / "susp", *args, "--workers", 1)
    return tmp


def _brute(idx_path, prefix: str, depth: int) -> dict[str, list[tuple[str, int]]]:
    """key -> ``[(other key, score)]`` of the ``susp/`` documents, ranked by brute force over
    the whole index, the documents outside ``prefix`` left out."""
    with Index.open(idx_path) as idx:
        keys = {d.doc_id: d.key for d in idx.catalog.documents()}
        cfg = stored_candidate_config(idx.catalog)
        asked = sorted(d for d, k in keys.items() if k.startswith("susp/"))
        full = brute_lists(feature_sets(idx, cfg), asked, cfg.max_df, 10**6, cfg.normalise)
    return {
        keys[d]: [(keys[o], s) for o, s in full[d] if keys[o].startswith(prefix)][:depth]
        for d in asked
    }


def test_among_a_folder_equals_the_brute_force_ranking(built):
    idx = built / "idx"
    asked = [f"susp/copy{i}.txt" for i in range(4)]
    out = run("candidates", idx, *asked, "--among", "src/", "--top", 5, "-o", "jsonl")
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    want = _brute(idx, "src/", 5)
    assert all(len(want[k]) == 5 for k in asked)
    for k in asked:
        got = [r for r in rows if r["doc"] == k]
        assert [(r["other"], r["score"]) for r in got] == want[k]
        assert [r["rank"] for r in got] == [1, 2, 3, 4, 5]
        assert got[0]["other"] == "src/source.txt"  # the disguised copy finds its source
    assert [r["doc"] for r in rows] == [k for k in asked for _ in range(5)]  # asked order
    assert list(rows[0]) == ["doc", "rank", "other", "score"]


def test_without_among_the_stored_lists_in_table_and_csv(built):
    idx = built / "idx"
    with Index.open(idx) as index:
        ids = {d.key: d.doc_id for d in index.catalog.documents()}
        names = {v: k for k, v in ids.items()}
        stored = stored_candidates(index)[ids["susp/copy1.txt"]]
    assert names[stored[0][0]].startswith("susp/")  # among every document: a classmate leads
    out = run("candidates", idx, "copy1.txt", "--top", 10, "-o", "csv")  # a unique key end
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["other"], int(r["score"])) for r in rows] == [(names[o], s) for o, s in stored[:10]]
    table = run("candidates", idx, "susp/copy1.txt", "--top", 1).stdout.splitlines()
    assert table[0].split() == ["doc", "rank", "other", "score"]
    assert table[2].split()[:3] == ["susp/copy1.txt", "1", names[stored[0][0]]]
    assert len(table) == 3


def test_exit_statuses(built, tmp_path):
    idx = built / "idx"
    unknown = run("candidates", idx, "nope.txt", check=False)
    assert unknown.returncode == 1 and "nope.txt" in unknown.stderr
    bad = run("candidates", idx, "susp/copy1.txt", "--top", 0, check=False)
    assert bad.returncode == 2 and "--top" in bad.stderr
    write_txt(make_docs(6, seed=1), tmp_path / "plain")
    run("update", tmp_path / "plain-idx", tmp_path / "plain", "--quiet", "--workers", 1)
    none = run("candidates", tmp_path / "plain-idx", "d000.txt", "--among", "plain/", check=False)
    assert none.returncode == 1 and "expected an index with candidates" in none.stderr
    assert "--among PREFIX" in run("candidates", "--help").stdout
