"""The LSH mode of an index on a real LocalCluster: incremental runs equal a full build, pairs
and queries equal brute force over the stored signatures, exact Jaccard equals Python sets,
a failed run leaves the LSH data as it was, the setting is changed only by a rebuild."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from simdask import Index, IndexConfig, RunOptions
from simdask.errors import ConfigError
from simdask.failpoints import FailpointError
from simdask.kernels.lsh_bands import LshParams, band_keys
from simdask.kernels.words import chunks
from simdask.read.lsh_search import text_pairs
from simdask.storage.lsh_store import LshManifest, LshStore
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration

LSH = "8x2"
CFG = dict(hash_bits=28, shards=4, lsh=LSH)
POOL = list(make_docs(30, seed=33).values())


def key(name: str) -> str:
    """The index key of ``name``.txt written by ``write_txt`` into the folder ``src``."""
    return f"src/{name}.txt"


def variant(text: str, n: int, seed: int) -> str:
    """``text`` with ``n`` words replaced at random positions (a near-duplicate)."""
    rng = random.Random(seed)
    w = text.split()
    for _ in range(n):
        w[rng.randrange(len(w))] = f"zz{rng.randrange(10**6)}"
    return " ".join(w)


def corpus(n: int) -> dict[str, str]:
    docs = {f"k{i:02d}": POOL[i] for i in range(n)}
    for i in range(0, n, 3):
        docs[f"v{i:02d}"] = variant(POOL[i], 1 + i % 4, i)
    return docs


def by_key(idx: Index):
    """``{key: signature}`` and the set of ``(band key, doc key)`` of the current LSH data."""
    man = LshManifest.from_json(idx.catalog.meta("lsh"))
    store = LshStore(idx.path / "lsh")
    docs = {d.key: d.doc_id for d in idx.catalog.documents() if d.n_chunks}
    perms = LshParams.parse(man.params).perms
    sigs = store.signatures_of(man, np.array(list(docs.values())), perms)
    keys, owners = store.all_bands(man)
    name = {v: k for k, v in docs.items()}
    bands = {(int(k), name[int(d)]) for k, d in zip(keys, owners, strict=True)}
    assert len(bands) == len(keys)  # no stale postings of dropped documents
    return {k: sigs[i].tolist() for i, k in enumerate(docs)}, bands


def pairs_of(idx: Index, **kw):
    return [(p.doc, p.other, p.jaccard) for p in idx.lsh_pairs(**kw)]


def full_build(tmp_path, folder, client) -> Index:
    path = tmp_path / "full"
    shutil.rmtree(path, ignore_errors=True)
    idx = Index.create(path, IndexConfig(**CFG))
    idx.update([folder], client=client)
    return idx


@pytest.mark.parametrize("transfer", ["shared", "dask"])
def test_incremental_lsh_equals_full_build(tmp_path, client, transfer):
    opts = RunOptions(transfer=transfer, batch_docs=5)
    folder = write_txt(corpus(12), tmp_path / "src")
    idx = Index.create(tmp_path / "inc", IndexConfig(**CFG))
    idx.update([folder], client=client, options=opts)
    (folder / "k12.txt").write_text(POOL[12])  # add
    (folder / "v12.txt").write_text(variant(POOL[12], 2, 99))  # add a near-duplicate of it
    (folder / "k02.txt").write_text(POOL[20])  # modify
    (folder / "k05.txt").unlink()  # delete
    (folder / "v03.txt").unlink()  # delete a near-duplicate
    s = idx.update([folder], client=client, delete_missing=True, options=opts)
    assert (s.added, s.modified, s.deleted) == (2, 1, 2)
    full = full_build(tmp_path, folder, client)
    assert by_key(idx) == by_key(full)
    assert pairs_of(idx) == pairs_of(full)
    assert (key("k12"), key("v12")) in {(a, b) for a, b, _ in pairs_of(idx)}
    idx.remove([key("k00")], client=client)
    (folder / "k00.txt").unlink()
    assert by_key(idx) == by_key(full_build(tmp_path, folder, client))
    # old generations are collected: only the current manifest's and its predecessor's stay
    man = LshManifest.from_json(idx.catalog.meta("lsh"))
    assert set(LshStore(idx.path / "lsh").generations()) <= man.generations() | set(man.prev)


def test_pairs_and_query_equal_brute_force(tmp_path, client):
    docs = corpus(15)
    docs["tiny"] = "three words only"
    folder = write_txt(docs, tmp_path / "src")
    idx = Index.create(tmp_path / "i", IndexConfig(**CFG))
    idx.update([folder], client=client)
    sigs, _ = by_key(idx)
    assert key("tiny") not in sigs  # no chunks, no signature
    params = LshParams.parse(LSH)
    names = sorted(sigs)
    mat = np.array([sigs[k] for k in names], dtype=np.uint32)
    keys = band_keys(mat, params)
    ref = {}
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if (keys[i] == keys[j]).any():
                ref[(names[i], names[j])] = float((mat[i] == mat[j]).mean())
    got = {(a, b): j for a, b, j in pairs_of(idx)}
    assert got == pytest.approx(ref)
    # the same pairs in memory, without an index (`lsh dedup`)
    texts = [docs[n[4:-4]] for n in names]
    mem = text_pairs(texts, params, IndexConfig(hash_bits=28))
    assert {(names[i], names[j]): e for i, j, e in mem} == pytest.approx(ref)
    assert all(i < j for i, j, _ in mem) and [e for *_, e in mem] == sorted(
        (e for *_, e in mem), reverse=True
    )
    assert len(got) >= 5  # the planted near-duplicates
    assert {k: v for k, v in got.items() if v >= 0.5} == {
        k: v for k, v in pairs_of_dict(idx, 0.5).items()
    }
    # exact Jaccard of the chunk sets: Python sets of the (sorted-word) chunk strings
    for p in idx.lsh_pairs(min_jaccard=0.3, exact=True):
        a, b = set(chunks(docs[p.doc[4:-4]])), set(chunks(docs[p.other[4:-4]]))
        assert p.exact == pytest.approx(len(a & b) / len(a | b), abs=1e-9)
    # a query of an indexed text finds it with Jaccard 1; every match shares a band key
    q = variant(docs["k06"], 1, 5)
    [matches] = idx.lsh_query([q])
    assert {m.key: m.jaccard for m in matches}[key("k06")] >= 0.5
    qi = {m.key: m.jaccard for m in idx.lsh_query([docs["k06"], "a b"])[0]}
    assert qi[key("k06")] == 1.0
    assert idx.lsh_query(["a b"]) == [[]]
    for m in matches:
        assert (keys[names.index(m.key)] == band_keys(np.array([sigs[m.key]]), params)[0]).any()


def pairs_of_dict(idx, m):
    return {(p.doc, p.other): p.jaccard for p in idx.lsh_pairs(min_jaccard=m)}


def test_failed_run_leaves_lsh_data(tmp_path, client, monkeypatch):
    folder = write_txt(corpus(9), tmp_path / "src")
    idx = Index.create(tmp_path / "i", IndexConfig(**CFG))
    idx.update([folder], client=client)
    before_meta, before = idx.catalog.meta("lsh"), by_key(idx)
    (folder / "k01.txt").write_text(POOL[25])
    monkeypatch.setenv("SIMDASK_FAILPOINTS", "before_commit:raise")
    with pytest.raises(FailpointError):
        idx.update([folder], client=client)
    monkeypatch.delenv("SIMDASK_FAILPOINTS")
    assert idx.catalog.meta("lsh") == before_meta and by_key(idx) == before
    assert not (Path(idx.path) / "lsh" / f"gen-{idx.catalog.generation + 1:06d}").exists()
    idx.update([folder], client=client)
    assert by_key(idx) == by_key(full_build(tmp_path, folder, client))


def test_setting_changes_only_with_rebuild(tmp_path, client):
    folder = write_txt(corpus(6), tmp_path / "src")
    idx = Index.create(tmp_path / "i", IndexConfig(hash_bits=28, shards=4))
    idx.update([folder], client=client)
    with pytest.raises(ConfigError, match="no LSH data"):
        idx.lsh_pairs()
    with pytest.raises(ConfigError, match="rebuild"):
        idx.update([folder], client=client, config=idx.config.replace(lsh="4x3"))
    idx.update([folder], client=client, config=idx.config.replace(lsh="4x3"), rebuild=True)
    assert LshManifest.from_json(idx.catalog.meta("lsh")).params == "4x3"
    assert len(next(iter(by_key(idx)[0].values()))) == 12
    idx.close()
    with Index.open(tmp_path / "i") as again:  # the setting is stored in the index
        assert again.config.lsh == "4x3"
        again.update([folder], client=client, config=again.config.replace(lsh=None), rebuild=True)
        assert again.catalog.meta("lsh") == ""
        with pytest.raises(ConfigError, match="no LSH data"):
            again.lsh_pairs()


def test_lsh_files_are_checksummed_and_checked(tmp_path, client):
    """The LSH files a run writes get checksums in its commit (rows of files the manifest no
    longer reads are dropped), and ``simdask check`` finds a damaged one."""
    from simdask.storage import checksums
    from simdask.storage.verify import check_index

    folder = write_txt(corpus(6), tmp_path / "src")
    idx = Index.create(tmp_path / "i", IndexConfig(**CFG))
    idx.update([folder], client=client)
    (folder / "k01.txt").write_text(POOL[25])
    idx.update([folder], client=client)
    man = LshManifest.from_json(idx.catalog.meta("lsh"))
    recorded = {n for n in checksums.recorded(idx.catalog) if n.startswith("lsh/")}
    assert recorded == man.file_names() and len(recorded) == 2 * 4 + 1  # 4 band parts, 1 sig
    assert check_index(idx.path).ok
    name = sorted(recorded)[0]
    data = bytearray((idx.path / name).read_bytes())
    data[-1] ^= 1
    (idx.path / name).write_bytes(bytes(data))
    assert [(d.kind, d.name) for d in check_index(idx.path).damage] == [("checksum", name)]
    idx.close()
