"""``find_repeats`` on a real LocalCluster against a brute-force Counter of n-grams."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from simdask.config import IndexConfig
from simdask.engine.repeats_run import RepeatsConfig, find_repeats
from simdask.errors import ConfigError
from simdask.index import Index
from simdask.kernels.words import words
from tests.helpers.components import need_module
from tests.helpers.corpus import make_docs, write_jsonl, write_txt

pytestmark = pytest.mark.integration

#: small batches and ranges, so that a run has several of each
SMALL = {"batch_bytes": 8000, "range_bytes": 8000}
TEMPLATE = "This thesis is submitted in partial fulfilment of the requirements, of the degree."


def brute_force(docs: dict[str, str], n: int, m: int) -> list[dict]:
    """The rows ``repeats`` must write, from a Counter of n-grams (Python only), sorted."""
    locs: dict[str, list[list]] = defaultdict(list)
    for key in sorted(docs):
        ws = words(docs[key])
        for i in range(len(ws) - n + 1):
            locs[" ".join(ws[i : i + n])].append([key, i])
    rows = [
        {"ngram": g, "count": len(v), "documents": len({k for k, _ in v}), "locations": v}
        for g, v in locs.items()
        if len(v) >= m
    ]
    return sorted(rows, key=lambda r: r["ngram"])


def read_rows(path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    return sorted(rows, key=lambda r: r["ngram"])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    docs = make_docs(30, seed=5, vocab=300)
    for key in sorted(docs)[::4]:  # a template in a quarter of the documents
        docs[key] = f"{docs[key][:50]} {TEMPLATE} {docs[key][50:]}"
    folder = write_txt(docs, tmp_path_factory.mktemp("repeats") / "docs")
    return {f"docs/{k}.txt": t for k, t in docs.items()}, folder  # <folder name>/<path>


@pytest.mark.parametrize(("n", "m"), [(1, 5), (3, 2), (5, 3), (8, 2)])
@pytest.mark.parametrize("method", ["two-pass", "one-pass"])
def test_repeats_equal_brute_force(tmp_path, corpus, client, n, m, method):
    docs, folder = corpus
    cfg = RepeatsConfig(n=n, min_count=m, method=method, **SMALL)
    res = find_repeats([folder], tmp_path / "out.jsonl", cfg, client=client, tmp=tmp_path)
    want = brute_force(docs, n, m)
    assert len(want) >= 5
    assert read_rows(tmp_path / "out.jsonl") == want
    assert res.rows == len(want)
    assert res.documents == len(docs)
    assert list(tmp_path.glob("simdask-repeats-*")) == []  # temporary folder removed


@pytest.mark.parametrize("bits", [1, 4, 9])
@pytest.mark.parametrize("method", ["two-pass", "one-pass"])
def test_forced_hash_collisions_stay_exact(tmp_path, corpus, client, bits, method):
    docs, folder = corpus
    cfg = RepeatsConfig(n=4, min_count=2, method=method, **SMALL)
    res = find_repeats([folder], tmp_path / "out.jsonl", cfg, client=client, test_hash_bits=bits)
    want = brute_force(docs, 4, 2)
    assert read_rows(tmp_path / "out.jsonl") == want
    if method == "two-pass":
        true_occurrences = sum(r["count"] for r in want)
        assert res.candidates > true_occurrences  # collisions did pass pass 1


def test_methods_agree_on_jsonl_source_and_two_pass_uses_less_temp(tmp_path, client):
    docs = make_docs(40, seed=8, vocab=2000)
    src = write_jsonl(docs, tmp_path / "docs.jsonl")
    outs, results = {}, {}
    for method in ("two-pass", "one-pass"):
        cfg = RepeatsConfig(n=6, min_count=2, method=method, **SMALL)
        results[method] = find_repeats([src], tmp_path / f"{method}.jsonl", cfg, client=client)
        outs[method] = (tmp_path / f"{method}.jsonl").read_text("utf-8")
    assert outs["two-pass"] == outs["one-pass"]  # same rows, same order
    assert read_rows(tmp_path / "two-pass.jsonl") == brute_force(docs, 6, 2)
    written = {m: sum(r.temp_written.values()) for m, r in results.items()}
    assert written["two-pass"] < written["one-pass"]


def test_index_as_source(tmp_path, corpus, client):
    docs, folder = corpus
    idx = Index.create(tmp_path / "idx", IndexConfig(hash_bits=32, shards=2))
    idx.update([folder], client=client)
    idx.close()
    cfg = RepeatsConfig(n=5, min_count=2, **SMALL)
    find_repeats([tmp_path / "idx"], tmp_path / "out.jsonl", cfg, client=client)
    assert read_rows(tmp_path / "out.jsonl") == brute_force(docs, 5, 2)


def test_parquet_output(tmp_path, corpus, client):
    pa = need_module("pyarrow.parquet", "the parquet extra, in the test extra")
    docs, folder = corpus
    cfg = RepeatsConfig(n=3, min_count=3, **SMALL)
    find_repeats([folder], tmp_path / "out.parquet", cfg, client=client)
    rows = pa.read_table(tmp_path / "out.parquet").to_pylist()
    for r in rows:
        r["locations"] = [[loc["key"], loc["offset"]] for loc in r["locations"]]
    assert sorted(rows, key=lambda r: r["ngram"]) == brute_force(docs, 3, 3)


def test_config_refuses_narrow_hash_and_bad_output(tmp_path, client):
    with pytest.raises(ConfigError, match=r"hash_bits must be in 56\.\.64"):
        RepeatsConfig(hash_bits=40)
    with pytest.raises(ConfigError, match="min_count must be at least 2"):
        RepeatsConfig(min_count=1)
    with pytest.raises(ConfigError, match=r"\.jsonl or \.parquet"):
        find_repeats([tmp_path], tmp_path / "out.csv", RepeatsConfig(), client=client)
