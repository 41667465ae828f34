"""End-to-end runs on a real LocalCluster against brute-force references."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from distributed import Client, LocalCluster

from simdask import Index, IndexConfig, RunOptions
from simdask.errors import ConfigError, IndexExistsError, IndexFormatError, IndexNotFoundError
from simdask.kernels.hashing import chunk_id
from simdask.kernels.words import chunks
from tests.helpers.corpus import make_docs, reference_similarity, rel, stem, write_jsonl, write_txt

pytestmark = pytest.mark.integration


def _table(idx: Index) -> set[tuple[str, str, int, float]]:
    return {(rel(r.doc), rel(r.other), r.shared, round(r.similarity, 9)) for r in idx.pairs()}


def _build(tmp_path, name, docs, client, options=None, **cfg) -> Index:
    src = write_txt(docs, tmp_path / f"{name}-docs")
    idx = Index.create(tmp_path / name, IndexConfig(**cfg))
    idx.update([src], client=client, options=options)
    return idx


@pytest.fixture(scope="module")
def docs():
    return make_docs(40, seed=3)


def test_similarity_matches_brute_force(tmp_path, docs, client):
    idx = _build(tmp_path, "i", docs, client, hash_bits=32, shards=4, top_k=1000)
    ref = reference_similarity(docs)
    got = {(stem(r.doc), stem(r.other)): r for r in idx.pairs()}
    strong = {p: v for p, v in ref.items() if v[1] >= 2.0}
    assert len(strong) >= 16, "the generated corpus should plant reuse"
    for pair, (_shared, pct) in strong.items():
        assert pair in got, f"pair {pair} ({pct:.1f} %) missing"
    # 32-bit chunk IDs on a small corpus: no collision, so the stored values are exact
    assert {p: (r.shared, r.similarity) for p, r in got.items()} == {
        p: v for p, v in ref.items() if v[1] >= 1.0
    }
    # planted cases come out as planted
    key2 = sorted(docs)[2]
    assert got[("short_inside", key2)].similarity == pytest.approx(100.0)
    assert idx.similar("i-docs/short_inside.txt")[0].other == f"i-docs/{key2}.txt"
    st = idx.stats()
    assert st["documents"] == len(docs) and st["too_short"] == 1


def test_shards_equal_brute_force_inverted_index(tmp_path, docs, client):
    bits, n_shards = 32, 3
    idx = _build(tmp_path, "i", docs, client, hash_bits=bits, shards=n_shards)
    key_to_id = {stem(d.key): d.doc_id for d in idx.catalog.documents()}
    inverted = defaultdict(set)
    for key, text in docs.items():
        for c in chunks(text):
            inverted[chunk_id(c, bits)].add(key_to_id[key])
    width = IndexConfig(hash_bits=bits, shards=n_shards).shard_width
    for s in range(n_shards):
        sh = idx.shard(s)
        assert (sh.lo, sh.hi) == (s * width, min((s + 1) * width, 2**bits))
        ref_keys = sorted(c for c in inverted if sh.lo <= c < sh.hi)
        np.testing.assert_array_equal(sh.chunk_keys, ref_keys)
        ref_lists = [sorted(inverted[c]) for c in ref_keys]
        np.testing.assert_array_equal(sh.offsets, np.cumsum([0] + [len(x) for x in ref_lists]))
        np.testing.assert_array_equal(sh.doc_ids, [d for x in ref_lists for d in x])
        assert sh.chunk_keys.dtype == np.uint32 and sh.doc_ids.dtype == np.uint32


def test_same_table_for_workers_shards_and_blocks(tmp_path, docs, client):
    """Identical similarity tables for 1, 2 and 4 workers, 3, 4, 16 and 64 shards, and tiny
    similarity blocks."""
    tables = {
        (2, shards): _table(
            _build(tmp_path, f"w2-s{shards}", docs, client, hash_bits=28, shards=shards)
        )
        for shards in (4, 16, 64)
    }
    assert tables[(2, 16)]
    tables["3 shards, 28 bits"] = _table(
        _build(tmp_path, "b", docs, client, hash_bits=28, shards=3)
    )
    tables["tiny blocks"] = _table(
        _build(
            tmp_path,
            "c",
            docs,
            client,
            RunOptions(block_pairs=50, batch_docs=7),
            hash_bits=28,
            shards=5,
        )
    )
    for n_workers, shard_counts in ((1, (16,)), (4, (4, 64))):
        with (
            LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as lc,
            Client(lc) as other,
        ):
            for shards in shard_counts:
                name = f"w{n_workers}-s{shards}"
                tables[(n_workers, shards)] = _table(
                    _build(tmp_path, name, docs, other, hash_bits=28, shards=shards)
                )
    first = tables.pop((2, 16))
    for name, table in tables.items():
        assert table == first, name


def test_max_df_skips_common_chunks_and_reports_them(tmp_path, client):
    docs = {
        f"t{i}": "the same template sentence is here. " + f"unique words of text {i} " * 2
        for i in range(6)
    }
    idx = Index.create(tmp_path / "i", IndexConfig(hash_bits=32, shards=2, max_df=3))
    summary = idx.update([write_txt(docs, tmp_path / "d")], client=client)
    template_chunks = {c for c in chunks(next(iter(docs.values())))} & set(chunks(docs["t5"]))
    assert summary.skipped_chunks == len(template_chunks) > 0
    assert idx.stats()["skipped_chunks"] == summary.skipped_chunks
    assert idx.pairs() == []  # only the template is shared, and it is skipped
    idx2 = Index.create(tmp_path / "j", IndexConfig(hash_bits=32, shards=2))
    idx2.update([write_txt(docs, tmp_path / "d")], client=client)
    assert len(idx2.pairs()) == 6 * 5


@pytest.mark.parametrize("bits", [32, 64])
def test_large_text_evidence_leaves_out_what_max_df_leaves_out(tmp_path, client, bits):
    """The numpy path for large texts applies the index's max_df as the word-tuple path does:
    the template held by every document is not shared, the private passage is (ASCII text:
    the numpy path's character offsets are exact only there)."""
    import unicodedata

    from simdask.errors import ConfigError
    from simdask.evidence.passages import compare_texts
    from simdask.read.doc_freq import common_filter
    from tests.helpers.documents import prose

    def ascii_prose(n: int, seed: int) -> str:
        return unicodedata.normalize("NFKD", prose(n, seed)).encode("ascii", "ignore").decode()

    template, private = ascii_prose(60, 900), ascii_prose(80, 300)
    docs = {
        "t1": f"{template} {private} {ascii_prose(200, 301)}",
        "t2": f"{template} {ascii_prose(200, 302)} {private}",
        "t3": f"{template} {ascii_prose(200, 303)}",
    }
    idx = Index.create(tmp_path / "i", IndexConfig(hash_bits=bits, shards=2, max_df=2, seed=7))
    idx.update([write_txt(docs, tmp_path / "d")], client=client)
    drop = common_filter(idx)
    a, b = docs["t1"], docs["t2"]
    exact = compare_texts(a, b, drop_shared=drop)
    large = compare_texts(a, b, large=True, drop_shared=drop)
    unfiltered = compare_texts(a, b, large=True)
    assert len(set(chunks(private))) <= exact.shared < unfiltered.shared
    assert (large.shared, large.similarity, large.reverse_similarity) == (
        exact.shared,
        exact.similarity,
        exact.reverse_similarity,
    )
    assert large.passages == exact.passages
    [passage] = large.passages
    assert a[passage.doc_start : passage.doc_end] == private.rstrip(".")
    [row] = [r for r in idx.pairs() if (r.doc, r.other) == ("d/t1.txt", "d/t2.txt")]
    assert (row.shared, row.similarity) == (large.shared, large.similarity)
    with pytest.raises(ConfigError, match="common_ids"):
        compare_texts(a, b, large=True, drop_shared=lambda shared: set())


def test_top_k_keeps_the_best(tmp_path, docs, client):
    full = _build(tmp_path, "a", docs, client, hash_bits=32, shards=2, top_k=1000)
    top2 = _build(tmp_path, "b", docs, client, hash_bits=32, shards=2, top_k=2)
    by_doc = defaultdict(list)
    for r in full.pairs():
        by_doc[r.doc].append(r)
    expected = set()
    for rows in by_doc.values():
        rows.sort(key=lambda r: (-r.similarity, full.catalog.document(r.other).doc_id))
        expected |= {(rel(r.doc), rel(r.other)) for r in rows[:2]}
    assert {(rel(r.doc), rel(r.other)) for r in top2.pairs()} == expected


def test_query_equals_brute_force(tmp_path, docs, client):
    idx = _build(tmp_path, "i", docs, client, hash_bits=32, shards=4)
    keys = sorted(docs)
    q = docs[keys[5]][:600] + " " + docs[keys[8]][200:900] + " brand new words here now"
    qset = set(chunks(q))
    got = {stem(m.key): m for m in idx.query(q)}
    for key, text in docs.items():
        s = set(chunks(text))
        shared = len(qset & s)
        if shared == 0:
            assert key not in got
            continue
        m = got[key]
        assert m.shared == shared
        assert m.similarity == pytest.approx(100 * shared / len(qset))
        assert m.reverse_similarity == pytest.approx(100 * shared / len(s))


def test_jsonl_source_and_per_file_errors(tmp_path, client):
    docs = make_docs(8, seed=5)
    path = write_jsonl(docs, tmp_path / "docs.jsonl")
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"id": "d000", "text": "a duplicate key is reported not indexed twice ok"}\n')
        f.write("{not json\n")
        f.write('{"text": "no id here"}\n')
    bad = tmp_path / "bad"
    bad.mkdir()
    czech = "Příliš žluťoučký kůň úpěl ďábelské ódy."
    (bad / "cp1250.txt").write_bytes(czech.encode("cp1250"))  # decoded, not an error
    idx = Index.create(tmp_path / "i", IndexConfig(hash_bits=32, shards=2))
    summary = idx.update([path, bad], client=client)
    kinds = sorted(kind for _, kind, _ in summary.errors)
    assert kinds == ["duplicate_key", "jsonl", "jsonl", "too_short"]
    assert summary.failed == 3 and summary.documents == len(docs) + 1
    assert {d.key for d in idx.catalog.documents()} == set(docs) | {"bad/cp1250.txt"}
    assert idx.text("bad/cp1250.txt") == czech
    assert idx.catalog.errors_of_run(summary.run_id) == summary.errors
    ref = reference_similarity(docs)
    got = {(r.doc, r.other): r.shared for r in idx.pairs()}
    assert got == {p: v[0] for p, v in ref.items() if v[1] >= 1.0}


def test_open_checks_existence_format_and_rebuild(tmp_path, docs, client):
    with pytest.raises(IndexNotFoundError, match="no simdask index"):
        Index.open(tmp_path / "nothing")
    idx = _build(tmp_path, "i", docs, client, hash_bits=32, shards=2)
    with pytest.raises(IndexExistsError, match="already exists"):
        Index.create(tmp_path / "i")
    with pytest.raises(ConfigError, match="rebuild"):
        idx.update([tmp_path / "i-docs"], client=client, config=IndexConfig(hash_bits=30))
    first_gen = idx.catalog.generation
    table = _table(idx)
    idx.update([tmp_path / "i-docs"], client=client, rebuild=True)
    assert idx.catalog.generation > first_gen and _table(idx) == table
    idx.update([tmp_path / "i-docs"], client=client, rebuild=True)
    # generations older than the one before the last commit are collected
    assert idx.store.generations() == [first_gen + 1, first_gen + 2]
    idx.catalog.conn.execute("UPDATE meta SET value = '999' WHERE name = 'format_version'")
    with pytest.raises(IndexFormatError, match="version '999'"):
        Index.open(tmp_path / "i")


def test_progress_reported_per_stage(tmp_path, docs, client):
    from simdask.progress import RecordingCallback

    cb = RecordingCallback()
    src = write_txt(docs, tmp_path / "d")
    idx = Index.create(tmp_path / "i", IndexConfig(hash_bits=32, shards=3))
    idx.update([src], client=client, callback=cb, options=RunOptions(batch_docs=10))
    stages = [v for e, v in cb.events if e == "stage"]
    assert [name for name, _ in stages] == ["scan", "chunk", "merge", "similarity", "commit"]
    totals = dict(stages)
    assert totals["chunk"] == -(-len(docs) // 10) and totals["merge"] == 3
    advances = sum(v for e, v in cb.events if e == "advance")
    assert advances == totals["chunk"] + totals["merge"] + totals["similarity"]
    assert any(e == "message" and "dashboard" in v.lower() for e, v in cb.events)
