"""End-to-end runs with the default (64-bit) chunk IDs on a real LocalCluster: the stored
similarities are exactly those of the true string chunks, queries too, and a 28-bit index
(the seed's setting, uint32 on disk) is built and read as before."""

from __future__ import annotations

import json

import numpy as np
import pytest

from simdask import Index, IndexConfig
from simdask.kernels.words import chunks
from tests.helpers.compare import assert_same_index
from tests.helpers.corpus import make_docs, reference_similarity, stem, write_txt

pytestmark = pytest.mark.integration


def _stored(idx: Index) -> dict[tuple[str, str], tuple[int, float]]:
    return {(stem(r.doc), stem(r.other)): (r.shared, r.similarity) for r in idx.pairs()}


def _key_dtypes(idx: Index) -> set[str]:
    found = set()
    for meta in idx.path.glob("shards/gen-*/shard-*/chunk_keys/zarr.json"):
        found.add(json.loads(meta.read_text())["data_type"])
    return found


def test_default_width_stores_exact_similarities(tmp_path, client):
    docs = make_docs(40, seed=5)
    src = write_txt(docs, tmp_path / "docs")
    idx = Index.create(tmp_path / "wide", IndexConfig(shards=5, top_k=1000))
    assert idx.config.hash_bits == 64
    idx.update([src], client=client)
    ref = reference_similarity(docs)
    expect = {p: v for p, v in ref.items() if v[1] >= 1.0}
    assert len(expect) >= 16
    assert _stored(idx) == expect
    assert _key_dtypes(idx) == {"uint64"}
    st = idx.stats()
    assert st["postings"] == sum(len(set(chunks(t, 5))) for t in docs.values())
    # a query equals the brute force over true chunks too
    text = docs[sorted(docs)[3]]
    mine = set(chunks(text, 5))
    got = {stem(m.key): m.shared for m in idx.query(text)}
    want = {k: len(mine & set(chunks(t, 5))) for k, t in docs.items()}
    assert got == {k: n for k, n in want.items() if n}
    # incremental: change two documents, the table equals the brute force again
    first, second = sorted(docs)[:2]
    docs[first] = docs[second][: len(docs[second]) // 2]
    docs[second] = docs[second] + " " + docs[sorted(docs)[5]]
    write_txt(docs, tmp_path / "docs")
    idx.update([src], client=client)
    expect = {p: v for p, v in reference_similarity(docs).items() if v[1] >= 1.0}
    assert _stored(idx) == expect
    # base + delta segments compacted into one: uint64 keys merged, same answers, and the
    # index equals one full build of the final documents
    assert idx.compact(client=client, force=True)
    assert _stored(idx) == expect and _key_dtypes(idx) == {"uint64"}
    full = Index.create(tmp_path / "full", IndexConfig(shards=5, top_k=1000))
    full.update([src], client=client)
    assert_same_index(idx, full)


def test_seed_width_stays_uint32_and_readable(tmp_path, client):
    docs = make_docs(20, seed=6)
    src = write_txt(docs, tmp_path / "docs")
    idx = Index.create(tmp_path / "narrow", IndexConfig(hash_bits=28, shards=3, top_k=1000))
    idx.update([src], client=client)
    assert _key_dtypes(idx) == {"uint32"}
    again = Index.open(tmp_path / "narrow")
    assert again.config.hash_bits == 28
    data = again.shard(0)
    assert data.chunk_keys.dtype == np.uint32
    assert _stored(again) == _stored(idx)
