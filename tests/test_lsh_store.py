"""The LSH store's files and manifest, and the run-side merge (engine/lsh_stage) without a
cluster: incremental add/modify/delete equals writing everything at once."""

from __future__ import annotations

import numpy as np
import pytest

from simdask.config import IndexConfig
from simdask.engine.lsh_stage import apply_run
from simdask.errors import ConfigError, IndexFormatError
from simdask.kernels import minhash
from simdask.kernels.lsh_bands import LshParams, band_keys
from simdask.kernels.minhash import EMPTY
from simdask.storage import lsh_store
from simdask.storage.lsh_store import LshManifest, LshStore, band_part_of

pytestmark = pytest.mark.unit

PARAMS = LshParams(4, 3)
CFG = IndexConfig(shards=3, lsh=str(PARAMS))


class FakeBatch:
    """What apply_run reads of a chunking task's result."""

    def __init__(self, prov_ids, sigs):
        self.prov_ids = list(prov_ids)
        self.lsh = (sigs, band_keys(sigs, PARAMS))


def sigs_for(seeds) -> np.ndarray:
    """One signature per seed: a small random chunk set per document; seed -1: no chunks."""
    rows = []
    for s in seeds:
        vals = np.random.default_rng(max(s, 0)).integers(0, 2**28, 0 if s < 0 else 30)
        rows.append(minhash.signatures_csr(vals, np.array([0, len(vals)]), PARAMS.perms, 0)[0])
    return np.array(rows, dtype=np.uint32).reshape(len(seeds), PARAMS.perms)


def run(store, old, run_id, docs: dict[int, int], dropped=(), replace_all=False):
    """A run writing doc ID -> content seed for ``docs`` and dropping ``dropped``."""
    ids = sorted(docs)
    prov = np.arange(len(ids)) + 2**31
    res = [FakeBatch(prov, sigs_for([docs[d] for d in ids]))]
    resolved = {"prov": prov, "final": np.array(ids), "dropped": np.array(sorted(dropped))}
    return apply_run(store, old, CFG, res, resolved, run_id, replace_all)


def content(store: LshStore, man: LshManifest):
    keys, docs = store.all_bands(man)
    sig = store.signatures_of(man, np.arange(80), PARAMS.perms)
    return sorted(zip(keys.tolist(), docs.tolist(), strict=True)), sig


def test_incremental_runs_equal_one_full_run(tmp_path, monkeypatch):
    monkeypatch.setattr(lsh_store, "SIG_BLOCK", 16)  # several signature parts
    monkeypatch.setattr("simdask.engine.lsh_stage.SIG_BLOCK", 16)
    store = LshStore(tmp_path / "lsh")
    m1 = run(store, None, 1, {d: d for d in range(40)})
    m2 = run(store, m1, 2, {5: 105, 41: 41, 70: 70, 7: -1}, dropped=[5, 7, 12, 33])
    m3 = run(store, m2, 3, {}, dropped=[41])
    final = {d: d for d in range(40) if d not in (5, 7, 12, 33)} | {5: 105, 70: 70, 7: -1}
    full = run(LshStore(tmp_path / "full"), None, 9, final)
    assert content(store, m3)[0] == content(LshStore(tmp_path / "full"), full)[0]
    assert np.array_equal(content(store, m3)[1], content(LshStore(tmp_path / "full"), full)[1])
    sig = content(store, m3)[1]
    assert (sig[[7, 12, 33, 41, 60]] == EMPTY).all()  # dropped, chunkless, free, never used
    # run 3 dropped doc 41 only: signature part 2 (IDs 32..47) rewritten, parts 0, 1 kept
    assert m3.sig[2] == 3 and m3.sig[0] == m2.sig[0] and m3.sig[1] == m2.sig[1] == 1
    assert sorted(m3.prev) == sorted(m2.generations())
    # collect keeps what the manifest and its predecessor read; an uncommitted run's goes
    run(store, m3, 4, {1: 200})
    assert store.collect(m3) == 1 and set(store.generations()) == {1, 2, 3}


def test_files_are_little_endian_and_keys_sorted_by_range(tmp_path):
    store = LshStore(tmp_path)
    man = run(store, None, 1, {d: d for d in range(30)})
    for p, g in man.band.items():
        raw_k = np.load(tmp_path / f"gen-{g:06d}" / f"bkey-{p:04d}.npy")
        raw_d = np.load(tmp_path / f"gen-{g:06d}" / f"bdoc-{p:04d}.npy")
        assert raw_k.dtype.str == "<u8" and raw_d.dtype.str == "<u4"
        assert np.all(raw_k[1:] >= raw_k[:-1]) and (band_part_of(raw_k, 3) == p).all()
    assert np.load(tmp_path / "gen-000001" / "sig-0000.npy").dtype.str == "<u4"
    found = store.docs_with_keys(man, band_keys(sigs_for([4]), PARAMS))
    assert sorted(set(found[:, 1].tolist())) == [4] and (found[:, 0] == 0).all()


def test_manifest_round_trip_and_damage(tmp_path):
    man = LshManifest("4x3", 3, {0: 1}, {0: 1, 2: 5}, [1])
    assert LshManifest.from_json(man.to_json()) == man
    assert LshManifest.from_json("") is None
    with pytest.raises(IndexFormatError, match="damaged LSH manifest"):
        LshManifest.from_json('{"params": "4x3"}')
    with pytest.raises(IndexFormatError, match="missing"):
        LshStore(tmp_path).read_band(7, 0)
    with pytest.raises(ConfigError, match="rebuild"):
        apply_run(LshStore(tmp_path), LshManifest("5x5", 3), CFG, [], {}, 2, False)
