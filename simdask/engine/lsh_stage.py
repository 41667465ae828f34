"""The LSH part of a run: new signatures and band keys (computed in the chunking tasks, see
:func:`simdask.engine.chunk_stage.chunk_task`) merged into a new generation of the LSH store.

Runs on the client after the documents got their final IDs; it touches only the signature
parts holding changed doc IDs and the band-key parts whose keys changed. The returned manifest
is committed with the run (catalog meta ``lsh``, its own step of the commit:
:mod:`simdask.storage.commit`).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from simdask.config import IndexConfig
from simdask.engine.chunk_stage import PROVISIONAL_BASE, BatchResult
from simdask.errors import ConfigError
from simdask.kernels.changes import ResolvedChanges
from simdask.kernels.lsh_bands import is_empty
from simdask.kernels.minhash import EMPTY
from simdask.storage.catalog import Catalog
from simdask.storage.lsh_store import SIG_BLOCK, LshManifest, LshStore, band_part_of, lsh_root

__all__ = ["apply_run", "lsh_meta", "new_rows"]


def lsh_meta(
    catalog: Catalog,
    index_dir: Path,
    config: IndexConfig,
    results: list[BatchResult],
    resolved: ResolvedChanges,
    run_id: int,
    replace_all: bool,
    seconds: dict[str, float] | None = None,
) -> dict[str, str]:
    """The MinHash LSH part of a run: writes this run's LSH generation (when the index has an
    LSH setting or LSH data) and returns the catalog metadata to commit with the run
    (``{"lsh": manifest JSON}``, ``""`` when the setting was dropped by a rebuild; ``{}``
    without LSH). ``seconds``: the run's stage timings, given ``"lsh"`` (seconds)."""
    t = time.perf_counter()
    old = catalog.meta("lsh")
    if config.lsh is None and not old:
        return {}
    final = resolved.doc_ids.astype(np.int64)
    man = apply_run(
        LshStore(lsh_root(index_dir)),
        LshManifest.from_json(old),
        config,
        results,
        {
            "prov": resolved.items.astype(np.int64) + PROVISIONAL_BASE,
            "final": final,
            "dropped": resolved.dropped,
        },
        run_id,
        replace_all,
    )
    if seconds is not None:
        seconds["lsh"] = time.perf_counter() - t
    return {"lsh": man.to_json() if man is not None else ""}


def new_rows(results, prov: np.ndarray, final: np.ndarray, perms: int, bands: int):
    """``(doc IDs, signatures, band keys)`` of this run's recomputed documents that have
    chunks, from the chunking tasks' results (``prov -> final`` maps provisional to final IDs;
    documents left out of the map, e.g. a duplicate key, are dropped)."""
    ids, sigs, keys = [], [], []
    for res in results:
        if res.lsh is None or not res.prov_ids:
            continue
        ids.append(np.asarray(res.prov_ids, dtype=np.int64))
        sigs.append(res.lsh[0])
        keys.append(res.lsh[1])
    if not ids:
        return np.zeros(0, np.int64), np.zeros((0, perms), np.uint32), np.zeros((0, bands))
    p = np.concatenate(ids)
    s = np.concatenate(sigs)
    k = np.concatenate(keys)
    order = np.argsort(prov, kind="stable")
    sp, sf = np.asarray(prov, np.int64)[order], np.asarray(final, np.int64)[order]
    at = np.clip(np.searchsorted(sp, p), 0, max(len(sp) - 1, 0))
    mapped = (sp[at] == p) if len(sp) else np.zeros(len(p), bool)
    keep = mapped & ~is_empty(s)
    return sf[at[keep]], s[keep], k[keep].astype(np.uint64)


def apply_run(
    store: LshStore,
    old: LshManifest | None,
    config: IndexConfig,
    results,
    resolved: dict,
    run_id: int,
    replace_all: bool,
) -> LshManifest | None:
    """Write this run's LSH generation ``run_id``; returns the manifest to commit (None when
    the index has no LSH setting). ``resolved``: the driver's ``prov``/``final``/``dropped``
    arrays (dropped: modified and deleted doc IDs)."""
    params = config.lsh_params
    if params is None:
        return None
    if replace_all:
        old = None
    if old is not None and old.params != str(params):
        raise ConfigError(
            f"the index's LSH data is {old.params}, the setting is {params}: "
            "rebuild the index (--rebuild) to change it"
        )
    parts = config.ranges
    man = LshManifest(str(params), parts)
    if old is not None:
        man.sig, man.band, man.prev = dict(old.sig), dict(old.band), sorted(old.generations())
        parts = man.band_parts = old.band_parts
    ids, sigs, keys = new_rows(
        results, resolved["prov"], resolved["final"], params.perms, params.bands
    )
    dropped = np.asarray(resolved["dropped"], np.int64)
    _update_sigs(store, man, ids, sigs, dropped, params.perms, run_id)
    _update_bands(store, man, ids, keys, dropped, run_id)
    return man


def _update_sigs(store, man, ids, sigs, dropped, perms, run_id) -> None:
    """Rewrite the signature parts holding ``ids`` or ``dropped``."""
    touched = np.union1d(ids // SIG_BLOCK, dropped // SIG_BLOCK).astype(np.int64)
    for p in touched.tolist():
        lo = p * SIG_BLOCK
        old = np.asarray(store.read_sig(man.sig.get(p), p, perms))
        mine = (ids >= lo) & (ids < lo + SIG_BLOCK)
        n = max(len(old), int(ids[mine].max()) - lo + 1 if mine.any() else 0)
        arr = np.full((n, perms), EMPTY, dtype=np.uint32)
        arr[: len(old)] = old
        gone = dropped[(dropped >= lo) & (dropped < lo + n)] - lo
        arr[gone] = EMPTY
        arr[ids[mine] - lo] = sigs[mine]
        store.write_sig(run_id, p, arr)
        man.sig[p] = run_id


def _update_bands(store, man, ids, keys, dropped, run_id) -> None:
    """Rewrite the band-key parts that lose postings of ``dropped`` or gain ``keys``."""
    flat = keys.ravel().astype(np.uint64)
    docs = np.repeat(ids, keys.shape[1] if len(keys) else 0)
    part = band_part_of(flat, man.band_parts).astype(np.int64)
    for p in range(man.band_parts):
        bk, bd = store.read_band(man.band.get(p), p)
        bk, bd = np.asarray(bk), np.asarray(bd).astype(np.int64)
        sel = part == p
        gone = np.isin(bd, dropped) if len(dropped) and len(bd) else np.zeros(len(bd), bool)
        if not sel.any() and not gone.any():
            continue
        k = np.concatenate([bk[~gone], flat[sel]])
        d = np.concatenate([bd[~gone], docs[sel]])
        order = np.lexsort((d, k))
        store.write_band(run_id, p, k[order], d[order])
        man.band[p] = run_id
