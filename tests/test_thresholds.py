"""Every user-facing threshold at exactly its value (issue 34 item 1): a document at exactly
the least similarity is kept, one a hair above is not, for ``Index.query`` (``query(q, 50.0)``
with a document at exactly 50 %), ``simdask query --min``, ``simdask similar --min`` (and
``--pairs``), ``simdask compare --min``, the web page's least similarity (``min`` of
``/api/query``) and ``simdask report --min-match`` (a passage of exactly that many words).

The documents are built so the percentages are exact: all words distinct, ``k = 5``, so a
text of ``w`` words has ``w - 4`` chunks. D1 is ``2m + 4`` words (``2m`` chunks); D2 is D1's
first ``m + 4`` words and ``m`` fresh ones (``2m`` chunks, ``m`` of them D1's): 50 % each way.
The query is D1's first ``m + 4`` words and ``m`` other fresh ones: 50 % either way against
D1 and D2. The commands run in this process (``simdask.cli.main.main``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from simdask import Index, IndexConfig
from simdask.cli.main import main
from simdask.evidence.pair_view import ViewOptions, texts_report
from simdask.evidence.passages import compare_texts
from tests.helpers.paraphrase import paraphrased_pair

pytestmark = pytest.mark.integration

M = 20
ABOVE_50 = float(np.nextafter(50.0, 100.0))


def _words(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}x" for i in range(n)]


W = _words("w", 2 * M + 4)
D1 = " ".join(W)
D2 = " ".join(W[: M + 4] + _words("f", M))
QUERY = " ".join(W[: M + 4] + _words("q", M))
D3 = " ".join(_words("z", 60))  # shares nothing


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("thresholds")
    docs = {"d1": D1, "d2": D2, "d3": D3}
    src = tmp / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in docs.items()))
    for name, text in docs.items():
        (tmp / f"{name}.txt").write_text(text, encoding="utf-8")
    (tmp / "q.txt").write_text(QUERY, encoding="utf-8")
    with Index.create(tmp / "idx", IndexConfig(k=5, hash_bits=32, shards=2)) as idx:
        idx.update([src])
    return tmp


def _cli_jsonl(capsys, *args) -> list[dict]:
    capsys.readouterr()
    status = main([str(a) for a in args])
    out = capsys.readouterr().out
    assert status == 0, out
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_api_query_keeps_a_document_at_exactly_the_least_similarity(index):
    with Index.open(index / "idx") as idx:
        every = idx.query(QUERY, 0.0)
        assert {(m.key, m.similarity, m.reverse_similarity) for m in every} == {
            ("d1", 50.0, 50.0),
            ("d2", 50.0, 50.0),
        }
        assert {m.key for m in idx.query(QUERY, 50.0)} == {"d1", "d2"}
        assert idx.query(QUERY, ABOVE_50) == []


def test_cli_query_min_at_its_value(index, capsys):
    rows = _cli_jsonl(capsys, "query", index / "idx", index / "q.txt", "--min", "50", "-o", "jsonl")
    assert sorted((r["key"], r["similarity"]) for r in rows) == [("d1", 50.0), ("d2", 50.0)]
    above = _cli_jsonl(
        capsys, "query", index / "idx", index / "q.txt", "--min", repr(ABOVE_50), "-o", "jsonl"
    )
    assert above == []


def test_similar_min_at_its_value(index, capsys):
    with Index.open(index / "idx") as idx:
        assert [(r.other, r.similarity) for r in idx.similar("d1", 50.0)] == [("d2", 50.0)]
        assert idx.similar("d1", ABOVE_50) == []
        assert sorted((r.doc, r.other) for r in idx.pairs(50.0)) == [("d1", "d2"), ("d2", "d1")]
        assert idx.pairs(ABOVE_50) == []
        assert [(p.a_key, p.b_key) for p in idx.pair_list(50.0)] == [("d1", "d2")]
        assert idx.pair_list(ABOVE_50) == []
    rows = _cli_jsonl(capsys, "similar", index / "idx", "d1", "--min", "50", "-o", "jsonl")
    assert [(r["doc"], r["other"], r["similarity"]) for r in rows] == [("d1", "d2", 50.0)]
    assert (
        _cli_jsonl(capsys, "similar", index / "idx", "--min", repr(ABOVE_50), "-o", "jsonl") == []
    )
    pairs = _cli_jsonl(capsys, "similar", index / "idx", "--pairs", "--min", "50", "-o", "jsonl")
    assert len(pairs) == 1 and {pairs[0]["a_key"], pairs[0]["b_key"]} == {"d1", "d2"}
    assert (
        _cli_jsonl(
            capsys, "similar", index / "idx", "--pairs", "--min", repr(ABOVE_50), "-o", "jsonl"
        )
        == []
    )


def test_compare_min_at_its_value(index, capsys):
    a, b = index / "d1.txt", index / "d2.txt"
    args = ("compare", a, b, "--hash-bits", "32", "--shards", "2", "--quiet", "-o", "jsonl")
    rows = _cli_jsonl(capsys, *args, "--min", "50")
    assert [(r["a_in_b"], r["b_in_a"]) for r in rows] == [(50.0, 50.0)]
    assert _cli_jsonl(capsys, *args, "--min", repr(ABOVE_50)) == []


def test_report_min_match_keeps_a_passage_of_exactly_that_many_words(index, capsys):
    """``report --min-match N`` keeps a passage of exactly N words, in the exact evidence
    (``--exact-only``: the constructed pair's shared run is too short for the aligner)."""

    def passages(min_match: int) -> list[dict]:
        capsys.readouterr()
        args = ["report", str(index / "idx"), "d1", "d2", "--format", "json", "--exact-only"]
        assert main([*args, "--min-match", str(min_match)]) == 0
        return json.loads(capsys.readouterr().out)["passages"]

    shared_words = M + 4  # D1's first m + 4 words are D2's
    kept = passages(shared_words)
    assert len(kept) == 1
    assert passages(shared_words + 1) == []


def test_aligned_passages_keep_a_passage_of_exactly_min_words():
    """The aligned view's ``min_words`` (``report --min-match``) keeps a passage of exactly
    that many words and drops it one word above."""
    p = paraphrased_pair()
    base = texts_report("essay", p.essay, "source", p.source)
    sizes = sorted(x["words"] for x in base["passages"])
    assert len(sizes) == 2 and sizes[0] < sizes[1]

    def kept(min_words: int) -> list[int]:
        rep = texts_report(
            "essay", p.essay, "source", p.source, options=ViewOptions(min_words=min_words)
        )
        return sorted(x["words"] for x in rep["passages"])

    assert kept(sizes[0]) == sizes
    assert kept(sizes[0] + 1) == sizes[1:]


@pytest.mark.parametrize("large", [False, True])
def test_passage_filter_at_exactly_min_words_either_path(large):
    """The word-tuple path and the numpy path for large texts keep a passage of exactly
    ``min_words`` words."""
    at = compare_texts(D1, D2, 5, 2, M + 4, large=large)
    assert [p.words for p in at.passages] == [M + 4]
    assert compare_texts(D1, D2, 5, 2, M + 5, large=large).passages == []


def test_web_least_similarity_at_its_value(index):
    from tests.helpers.server import need_web

    need_web()
    from starlette.testclient import TestClient

    from simdask.web.app import Settings, create_app

    app = create_app(Settings(index=index / "idx", preload=False))
    with TestClient(app, base_url="http://127.0.0.1") as client:

        def keys(least: str) -> list[str]:
            r = client.post("/api/query", data={"text": QUERY, "min": least})
            assert r.status_code == 200, r.text
            return sorted(row["key"] for row in r.json()["results"])

        assert keys("50") == ["d1", "d2"]
        assert keys(repr(ABOVE_50)) == []
