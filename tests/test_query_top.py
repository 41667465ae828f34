"""A query's matches cut to the ``top`` documents of the largest similarity either way
(``Index.query_top``, ``simdask query --top``): the kernel against a sort, the cut against the
full list, a document held wholly in the query kept however little of the query it is, and
the CLI's default (the index's ``top_k``), ``--top 0`` and its note."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig
from simdask.errors import ConfigError
from simdask.kernels.similarity import top_either_way
from simdask.queries import query_documents
from tests.helpers.cli import run

pytestmark = pytest.mark.unit

_VALUES = st.sampled_from([0.0, 1.0, 2.5, 50.0, 100.0])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_VALUES, _VALUES), max_size=30), st.integers(1, 35))
def test_top_either_way_keeps_the_best_and_the_ties_at_the_cut(pairs, top):
    fwd = np.array([f for f, _ in pairs], np.float64)
    rev = np.array([r for _, r in pairs], np.float64)
    got = top_either_way(fwd, rev, top)
    rank = [(-max(f, r), -f, -r) for f, r in pairs]
    if top >= len(pairs):
        assert got.tolist() == list(range(len(pairs)))
        return
    cut = sorted(rank)[top - 1]  # the top-th best: everything at least as good is kept
    assert got.tolist() == [i for i, t in enumerate(rank) if t <= cut]


def _words(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"w{int(x)}" for x in rng.integers(0, 50_000, n)]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """Twelve documents sharing a passage with the query (some tied), a short one held
    wholly in the query, and one sharing nothing."""
    tmp = tmp_path_factory.mktemp("query-top")
    shared = _words(1, 120)
    docs = {}
    for i in range(12):
        own = _words(100 + i, 400)
        take = shared[: 20 + 10 * (i // 2)]  # pairs of documents tie
        docs[f"d{i:02d}"] = " ".join(own[:200] + take + own[200:])
    docs["short"] = " ".join(shared[60:75])  # wholly in the query, a few % of it
    docs["none"] = " ".join(_words(999, 300))
    src = tmp / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in docs.items()))
    idx = Index.create(tmp / "idx", IndexConfig(top_k=5, shards=2))
    idx.update([src])
    idx.close()
    query = " ".join(_words(7, 300) + shared + _words(8, 300))
    return tmp / "idx", query


@pytest.mark.integration  # the index fixture builds with a LocalCluster (threads)
def test_cut_equals_the_full_list_sorted_either_way(index):
    path, query = index
    with Index.open(path) as idx:
        full = idx.query(query, 1.0)
        assert len(full) == 13 and "none" not in {m.key for m in full}
        for top in (1, 2, 3, 5, 12, 13, 40):
            [(got, passed)] = idx.query_top([query], 1.0, top)
            assert passed == 13
            best = sorted(
                full,
                key=lambda m: (
                    -max(m.similarity, m.reverse_similarity),
                    -m.similarity,
                    -m.reverse_similarity,
                    m.key,
                ),
            )[:top]
            want = sorted(best, key=lambda m: (-m.similarity, -m.reverse_similarity, m.key))
            assert got == want
        # the short document, 100 % in the query and a few % of it, survives a cut of 1
        [(one, _)] = idx.query_top([query], 1.0, 1)
        assert [m.key for m in one] == ["short"] and one[0].reverse_similarity == 100.0
        assert min(m.similarity for m in full) == pytest.approx(one[0].similarity)
        with pytest.raises(ConfigError, match="top >= 1"):
            idx.query_top([query], 1.0, 0)


@pytest.mark.integration  # the index fixture builds with a LocalCluster (threads)
def test_query_documents_defaults_to_the_index_top_k(index):
    path, query = index
    with Index.open(path) as idx:
        [default] = query_documents(idx, [("q", query)], 1.0).results
        [every] = query_documents(idx, [("q", query)], 1.0, top=0).results
        assert len(default.matches) == 5 and default.passed == 13
        assert len(every.matches) == 13 and every.passed == 13
        with pytest.raises(ConfigError, match="top >= 0"):
            query_documents(idx, [("q", query)], 1.0, top=-1)


@pytest.mark.system
def test_cli_top_and_its_note(index, tmp_path):
    path, query = index
    q = tmp_path / "q.txt"
    q.write_text(query)
    default = run("query", path, q, "-o", "jsonl")
    assert len(default.stdout.splitlines()) == 5
    assert "listed the 5 most similar of the 13 documents" in default.stderr
    two = run("query", path, q, "-o", "jsonl", "--top", "2")
    keys = [json.loads(line)["key"] for line in two.stdout.splitlines()]
    assert len(keys) == 2 and "short" in keys
    every = run("query", path, q, "-o", "jsonl", "--top", "0")
    assert len(every.stdout.splitlines()) == 13 and "listed the" not in every.stderr
