"""``shared_passages`` (simdask boilerplate) on an index with planted templates."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from simdask.config import IndexConfig
from simdask.index import Index
from simdask.kernels.words import words
from simdask.read.boilerplate_passages import segments, shared_passages
from tests.helpers.corpus import write_txt

pytestmark = pytest.mark.integration

TEMPLATE = (
    "I declare that I have written this thesis independently and that I have cited all the "
    "sources of information I used, in accordance with the methodological instructions."
)
LICENCE = "Permission is hereby granted free of charge to any person obtaining a copy"


def holders(docs: dict[str, str], passage: str) -> int:
    """Documents whose words contain ``passage``'s words consecutively (brute force)."""
    p = passage.split()
    return sum(
        any(ws[i : i + len(p)] == p for i in range(len(ws) - len(p) + 1))
        for ws in (words(t) for t in docs.values())
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory, client):
    rng = random.Random(4)
    vocab = [f"v{i}" for i in range(5000)]
    docs = {f"d{i:02d}": " ".join(rng.choices(vocab, k=200)) for i in range(30)}
    for i in range(12):  # the template in 12 documents
        docs[f"d{i:02d}"] += " " + TEMPLATE + " " + " ".join(rng.choices(vocab, k=20))
    for i in range(10, 17):  # the licence in 7
        docs[f"d{i:02d}"] = LICENCE + ". " + docs[f"d{i:02d}"]
    tmp = tmp_path_factory.mktemp("boilerplate")
    idx = Index.create(tmp / "idx", IndexConfig(hash_bits=32, shards=3))
    idx.update([write_txt(docs, tmp / "docs")], client=client)
    yield docs, idx
    idx.close()


def test_planted_passages_first_with_exact_counts(index):
    docs, idx = index
    got = shared_passages(idx, top=5)
    assert [(p.passage, p.documents) for p in got[:2]] == [
        (" ".join(words(TEMPLATE)), 12),
        (" ".join(words(LICENCE)), 7),
    ]
    for p in got:
        assert p.documents == holders(docs, p.passage)
        assert p.words == len(p.passage.split())
    assert [p.documents for p in got] == sorted((p.documents for p in got), reverse=True)


def test_top_and_min_documents(index):
    _, idx = index
    assert [p.documents for p in shared_passages(idx, top=1)] == [12]
    assert [p.documents for p in shared_passages(idx, top=5, min_documents=8)] == [12]


def test_segments_cut_where_holders_drop():
    post = {
        1: np.array([0, 1, 2]),
        2: np.array([0, 1, 2]),
        3: np.array([0, 5]),
        4: np.array([5, 6]),
    }
    ids = np.array([9, 1, 2, 3, 9, 4, 3])
    assert segments(ids, post, 2) == [(1, 2, 3), (3, 3, 2), (5, 5, 2), (6, 6, 2)]
    assert segments(ids, post, 3) == [(1, 2, 3), (3, 3, 2), (5, 5, 2), (6, 6, 2)]


def test_cli_boilerplate_jsonl(index, capsys):
    from simdask.cli.main import main

    _, idx = index
    assert main(["boilerplate", str(idx.path), "--top", "2", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [
        {"documents": 12, "words": len(words(TEMPLATE)), "passage": " ".join(words(TEMPLATE))},
        {"documents": 7, "words": len(words(LICENCE)), "passage": " ".join(words(LICENCE))},
    ]
