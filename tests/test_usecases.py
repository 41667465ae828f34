"""The use cases beyond a collection: compare two groups, query documents against an index.

References are full indexes built over the union (compare) or over the index plus the query
(query), on the session's real LocalCluster, and the brute-force ``reference_similarity``.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdask import ConfigError, Index, IndexConfig, IndexExistsError, compare_groups
from simdask.errors import ExtractionError
from simdask.ingest.sources import read_document, read_queries
from simdask.kernels.hashing import chunk_batch
from simdask.kernels.words import words
from simdask.progress import RecordingCallback
from tests.helpers.corpus import make_docs, reference_similarity, rel, write_jsonl, write_txt
from tests.helpers.documents import prose, text_pdf

pytestmark = pytest.mark.integration


CFG = {"hash_bits": 32, "shards": 3}


def _full_index(path: Path, sources, client, **cfg) -> Index:
    idx = Index.create(path, IndexConfig(**{**CFG, "top_k": 10_000, **cfg}))
    idx.update(sources, client=client)
    return idx


@pytest.fixture(scope="module")
def groups(tmp_path_factory):
    """Two groups sharing text; ``d003.txt`` is in both with different texts, ``d010.txt``
    in both with the same text; the union is also written as ``union/A``, ``union/B``."""
    tmp = tmp_path_factory.mktemp("groups")
    docs = make_docs(24, seed=21)
    keys = sorted(docs)
    a = {k: docs[k] for k in keys[:14]}
    b = {k: docs[k] for k in keys[11:]}
    b["d003"] = docs["d003"][:600] + " " + docs["d020"]  # same key as A's d003, other text
    b["d010"] = a["d010"]
    for name, group in (("A", a), ("B", b)):
        write_txt(group, tmp / name)
        write_txt(group, tmp / "union" / name)
    return tmp, a, b


def _cross_rows(full: Index) -> dict[tuple[str, str], tuple[int, float, float]]:
    """Cross-group pairs of a union index (keys ``union/A/..``, ``union/B/..``), from its
    stored rows, keyed as compare keys them (``A/..``: the group folder's name)."""
    stored = {(rel(r.doc), rel(r.other)): r for r in full.pairs()}
    out = {}
    for (d, o), r in stored.items():
        if d[0] == o[0]:
            continue
        a, b = (d, o) if d.startswith("A/") else (o, d)
        ab, ba = stored.get((a, b)), stored.get((b, a))
        na = r.doc_chunks if d == a else r.other_chunks
        nb = r.other_chunks if d == a else r.doc_chunks
        out[(a, b)] = (
            r.shared,
            ab.similarity if ab else 100.0 * r.shared / na,
            ba.similarity if ba else 100.0 * r.shared / nb,
        )
    return out


def test_compare_equals_cross_group_rows_of_full_index(groups, client, tmp_path):
    tmp, a, b = groups
    cb = RecordingCallback()
    res = compare_groups(
        [tmp / "A"], [tmp / "B"], config=IndexConfig(**CFG), client=client, callback=cb
    )
    full = _full_index(tmp_path / "full", [tmp / "union"], client)
    expected = _cross_rows(full)
    got = {(p.a_key, p.b_key): (p.shared, p.a_in_b, p.b_in_a) for p in res.pairs}
    assert got == expected  # identical shared counts and similarities (exact floats)
    # no within-group pair, and the key occurring in both groups names two documents
    assert ("A/d003.txt", "B/d003.txt") in got and ("A/d010.txt", "B/d010.txt") in got
    assert got[("A/d010.txt", "B/d010.txt")][1:] == (100.0, 100.0)
    assert got[("A/d003.txt", "B/d003.txt")][2] < 100.0  # B's d003 has more text
    assert all(k[2:-4] in a and v[2:-4] in b for k, v in got)
    # the brute-force reference on true chunks agrees, both directions
    union = {f"A/{k}": t for k, t in a.items()} | {f"B/{k}": t for k, t in b.items()}
    ref = reference_similarity(union)
    for p in res.pairs:
        ka, kb = p.a_key[:-4], p.b_key[:-4]
        assert ref[(ka, kb)][0] == p.shared
        assert p.a_in_b == pytest.approx(ref[(ka, kb)][1])
        assert p.b_in_a == pytest.approx(ref[(kb, ka)][1])
    must = {
        (f"{x}.txt", f"{y}.txt")
        for (x, y), (_, sim) in ref.items()
        if x[0] == "A" and y[0] == "B" and max(sim, ref[(y, x)][1]) >= 1.0
    }
    assert must == set(got)  # every cross pair >= 1 % either way, nothing else
    assert res.documents == {"A": len(a), "B": len(b)}
    assert [e[:3] for e in res.errors] == [("B", "B/tiny.txt", "too_short")]
    assert not res.unreadable
    stages = [e[1][0] for e in cb.events if e[0] == "stage"]
    assert "scan" in stages and "commit" in stages
    sims = [max(p.a_in_b, p.b_in_a) for p in res.pairs]
    assert sims == sorted(sims, reverse=True)


def test_compare_min_similarity_threshold_and_keep_index(groups, client, tmp_path, monkeypatch):
    tmp, _, _ = groups
    made = []
    real = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **kw: made.append(real(**kw)) or made[-1])
    cfg = IndexConfig(**CFG)
    all_pairs = compare_groups([tmp / "A"], [tmp / "B"], config=cfg, client=client)
    assert made and not Path(made[0]).exists()  # the temporary index is removed
    assert all_pairs.index_path is None
    strong = compare_groups(
        [tmp / "A"], [tmp / "B"], config=cfg, client=client, min_similarity=40.0
    )
    assert strong.pairs == [p for p in all_pairs.pairs if max(p.a_in_b, p.b_in_a) >= 40.0]
    assert 0 < len(strong.pairs) < len(all_pairs.pairs)
    high = compare_groups([tmp / "A"], [tmp / "B"], config=cfg, client=client, threshold=30.0)
    assert high.pairs == [p for p in all_pairs.pairs if max(p.a_in_b, p.b_in_a) >= 30.0]
    kept = compare_groups(
        [tmp / "A"], [tmp / "B"], config=cfg, client=client, keep_index=tmp_path / "kept"
    )
    assert kept.index_path == tmp_path / "kept" and kept.pairs == all_pairs.pairs
    with Index.open(tmp_path / "kept") as idx:
        assert (
            idx.catalog.document("A/A/d003.txt").source
            != idx.catalog.document("B/B/d003.txt").source
        )
    with pytest.raises(IndexExistsError, match="new or empty directory"):
        compare_groups([tmp / "A"], [tmp / "B"], client=client, keep_index=tmp_path / "kept")
    with pytest.raises(ConfigError, match="group B holds no documents"):
        (tmp_path / "empty").mkdir()
        compare_groups([tmp / "A"], [tmp_path / "empty"], client=client)


def test_compare_jsonl_groups_with_same_ids_and_a_bad_line(client, tmp_path):
    docs = make_docs(8, seed=4)
    write_jsonl(docs, tmp_path / "a.jsonl")
    with open(write_jsonl(docs, tmp_path / "b.jsonl"), "a", encoding="utf-8") as f:
        f.write("not json\n")
    res = compare_groups(
        [tmp_path / "a.jsonl"], [tmp_path / "b.jsonl"], config=IndexConfig(**CFG), client=client
    )
    same = {(p.a_key, p.b_key) for p in res.pairs if p.a_key == p.b_key}
    assert same == {(k, k) for k in docs if k != "tiny"}  # each document vs its own copy
    assert [(g, kind) for g, _, kind, _ in res.unreadable] == [("B", "jsonl")]


def _query_doc(docs: dict[str, str], rng: random.Random) -> str:
    """New words with passages copied from two indexed documents."""
    keys = sorted(docs)
    a, b = docs[keys[rng.randrange(len(keys))]], docs[keys[rng.randrange(len(keys))]]
    new = " ".join(f"fresh{rng.randrange(10**6)}" for _ in range(rng.randint(0, 80)))
    i, j = rng.randrange(len(a) // 2), rng.randrange(len(b) // 2)
    return f"{a[i : i + rng.randint(50, 900)]} {new} {b[j : j + rng.randint(50, 900)]}"


@pytest.fixture(scope="module")
def base(tmp_path_factory, client):
    tmp = tmp_path_factory.mktemp("base")
    docs = make_docs(30, seed=33)
    src = write_txt(docs, tmp / "docs")
    _full_index(tmp / "idx", [src], client).close()
    return tmp, docs, src


def _check_query_vs_full(idx: Index, q: str, src: Path, client, where: Path, preload: bool):
    """Query results for ``q`` equal the rows of ``q`` in a full index over index + query."""
    (where / "q").mkdir(parents=True)
    (where / "q" / "query.txt").write_text(q, encoding="utf-8")
    full = _full_index(where / "full", [src, where / "q"], client)
    if preload:
        idx.preload()
    got = {m.key: m for m in idx.query(q, min_similarity=1.0)}
    fwd = {r.other: r for r in full.similar("q/query.txt")}
    rev = {r.doc: r for r in full.pairs() if r.other == "q/query.txt"}
    assert set(got) == set(fwd) | set(rev)
    for key, m in got.items():
        shared = (fwd.get(key) or rev.get(key)).shared
        assert m.shared == shared
        n_q = m.query_chunks
        assert m.similarity == (fwd[key].similarity if key in fwd else 100.0 * shared / n_q)
        assert m.reverse_similarity == (
            rev[key].similarity if key in rev else 100.0 * shared / m.doc_chunks
        )
        assert m.query_chunks == full.catalog.document("q/query.txt").n_chunks
    full.close()
    return got


@pytest.mark.parametrize("preload", [False, True])
def test_query_equals_full_index_rows(base, client, tmp_path, preload):
    tmp, docs, src = base
    q = _query_doc(docs, random.Random(5)) + " " + docs["short_inside"]
    with Index.open(tmp / "idx") as idx:
        got = _check_query_vs_full(idx, q, src, client, tmp_path, preload)
        assert got["docs/short_inside.txt"].reverse_similarity == 100.0  # wholly inside the query
        assert idx.reads.preloaded is preload
        # several texts at once give the same as one by one
        many = idx.query_many([q, docs["d007"], "too short"], 1.0)
        assert {m.key: m for m in many[0]} == got and many[2] == []  # got: checked above
        assert many[1][0].key == "docs/d007.txt" and many[1][0].similarity == 100.0


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 10**6))
def test_query_vs_full_index_property(base, client, seed):
    tmp, docs, src = base
    q = _query_doc(docs, random.Random(seed))
    with tempfile.TemporaryDirectory() as where, Index.open(tmp / "idx") as idx:
        _check_query_vs_full(idx, q, src, client, Path(where), preload=False)


def test_read_subset_equals_full_shard(base):
    tmp, docs, _ = base
    with Index.open(tmp / "idx") as idx:
        cfg = idx.config
        ids = chunk_batch([docs["d001"] + " unseen words only here now"], cfg.k, 32, 0).chunk_ids
        for s, g in idx.catalog.shard_generations().items():
            full = idx.shard(s)
            lo, hi = full.lo, full.hi
            mine = np.unique(ids[(ids >= lo) & (ids < hi)])
            sub = idx.store.read_subset(idx.store.open_arrays(g, s), mine)
            pos = np.searchsorted(full.chunk_keys, mine[np.isin(mine, full.chunk_keys)])
            assert 0 < len(pos) < len(mine)
            assert np.array_equal(sub.chunk_keys, full.chunk_keys[pos])
            lists = [full.doc_ids[full.offsets[p] : full.offsets[p + 1]] for p in pos]
            assert np.array_equal(sub.doc_ids, np.concatenate(lists) if lists else [])
            assert len(sub.offsets) == len(pos) + 1


def test_read_document_and_read_queries(tmp_path):
    (tmp_path / "a.txt").write_text("one two three four five six", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(bytes(range(256)) * 8)  # binary, not text
    (tmp_path / "cz.txt").write_bytes("Příliš žluťoučký kůň úpěl ďábelské ódy".encode("cp1250"))
    (tmp_path / "paper.pdf").write_bytes(text_pdf(prose(300, seed=4)))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.md").write_text("seven eight", encoding="utf-8")
    write_jsonl({"j1": "jsonl text", "j2": "more"}, tmp_path / "q.jsonl")
    assert read_document(tmp_path / "a.txt") == ("a.txt", "one two three four five six")
    with pytest.raises(ExtractionError) as e:
        read_document(tmp_path / "bad.txt")
    assert e.value.kind == "binary"
    # any format the indexer reads: legacy Czech encoding, PDF
    assert read_document(tmp_path / "cz.txt")[1] == "Příliš žluťoučký kůň úpěl ďábelské ódy"
    assert words(read_document(tmp_path / "paper.pdf")[1]) == words(prose(300, seed=4))
    with pytest.raises(ExtractionError, match="expected a document file") as e:
        read_document(tmp_path / "nope.txt")
    assert e.value.kind == "missing"
    got = read_queries(
        [tmp_path / "a.txt", tmp_path / "bad.txt", tmp_path / "sub", tmp_path / "q.jsonl"]
    )
    assert [k for k, _ in got] == ["a.txt", "bad.txt", "sub/c.md", "j1", "j2"]
    assert isinstance(got[1][1], ExtractionError) and got[2][1] == "seven eight"
