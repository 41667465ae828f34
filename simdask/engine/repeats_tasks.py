"""The functions Dask runs for ``simdask repeats`` (paper 004's location-based two-pass method).

Plain functions of plain arguments; :mod:`simdask.engine.repeats_run` submits them. Files between
stages live in one temporary folder and are named by stage, range and task
(``p1/r0003/b000012.npy``: pass-1 records of hash range 3 from batch 12), written atomically
and removed by the stage that reads them, so the temporary disk holds at most two stages.

Two-pass: ``pass1_task`` (per batch: hash every n-gram, records by hash range) ->
``select_task`` (per range: keep hashes seen ``min_count`` times, their locations by batch) ->
``pass2_task`` (per batch: texts of those locations only) -> ``group_task`` (per range: exact
groups, rows). One-pass: ``onepass_task`` (per batch: every n-gram with its text) ->
``group_task``.
"""

from __future__ import annotations

import io
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simdask.errors import ExtractionError, IndexFormatError
from simdask.ingest.sources import SourceItem, read_item
from simdask.kernels.ngrams import (
    RECORD,
    group_exact,
    jsonl_rows,
    ngram_records,
    ngram_texts,
    range_of,
    repeated_by_hash,
    split_by_range,
    tokenize,
)
from simdask.storage.text_packs import TextStore

__all__ = [
    "IndexText",
    "Plan",
    "group_task",
    "onepass_task",
    "pass1_task",
    "pass2_task",
    "read_batch",
    "select_task",
]


@dataclass(frozen=True)
class IndexText:
    """A document stored in an index: its key and where its compressed text is."""

    key: str
    texts_root: str
    pack: str
    offset: int
    length: int


@dataclass(frozen=True)
class Plan:
    """What every task of one run shares: ``n`` words per n-gram, ``min_count``, the hash
    width ``bits``, ``range_bits`` (``2**range_bits`` hash ranges), ``seed`` and the folder."""

    n: int
    min_count: int
    bits: int
    range_bits: int
    seed: int
    tmp: str

    @property
    def n_ranges(self) -> int:
        """Number of hash ranges."""
        return 2 ** min(self.range_bits, self.bits)


def _save(path: Path, arrays: dict[str, np.ndarray]) -> int:
    """Write ``arrays`` as an uncompressed ``.npz`` atomically; returns the bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, path)
    return len(buf.getvalue())


def _load_all(folder: Path) -> tuple[list[dict[str, np.ndarray]], list[Path]]:
    """Every ``.npz`` in ``folder`` (sorted by name), loaded, and their paths (the caller
    removes them once its own output is written, so a retried task finds its input)."""
    paths = sorted(folder.glob("*.npz")) if folder.is_dir() else []
    out = []
    for p in paths:
        with np.load(p) as z:
            out.append({k: z[k] for k in z.files})
    return out, paths


def _remove(paths: list[Path]) -> None:
    for p in paths:
        p.unlink(missing_ok=True)


def read_batch(refs: list) -> tuple[list[str], list[str], list[tuple[str, str, str]]]:
    """Keys, texts and read errors ``(key or path, kind, message)`` of a batch of documents
    (:class:`SourceItem` or :class:`IndexText`); unreadable documents are left out."""

    keys, texts, errors = [], [], []
    for ref in refs:
        try:
            if isinstance(ref, IndexText):
                store = TextStore(ref.texts_root)
                key, text = ref.key, store.read(ref.pack, ref.offset, ref.length)
            else:
                key, text, _ = read_item(ref)
        except (ExtractionError, IndexFormatError, OSError) as e:
            label = ref.key if ref.key is not None else f"{ref.path}@{ref.start}"
            errors.append((label, getattr(e, "kind", type(e).__name__), str(e)))
            continue
        keys.append(key)
        texts.append(text)
    return keys, texts, errors


def pass1_task(b: int, refs: list[SourceItem | IndexText], doc_base: int, plan: Plan) -> dict:
    """Pass 1 of a batch: (hash, location) of every n-gram into ``p1/rRRRR/bBBBBBB.npz``.

    Documents are numbered from ``doc_base``. Returns keys, errors, records and bytes written.
    """
    keys, texts, errors = read_batch(refs)
    tok = tokenize(texts, plan.seed)
    rec = ngram_records(tok, plan.n, plan.bits, plan.seed, doc_base)
    parts = split_by_range(rec, range_of(rec["h"], plan.bits, plan.range_bits), plan.n_ranges)
    written = 0
    for r, part in enumerate(parts):
        if len(part):
            written += _save(Path(plan.tmp, "p1", f"r{r:04d}", f"b{b:06d}.npz"), {"rec": part})
    return {"keys": keys, "errors": errors, "records": len(rec), "bytes": written}


def select_task(r: int, batch_bases: list[int], plan: Plan) -> dict:
    """Per hash range: the locations whose hash was seen ``min_count`` times, in document
    order, split by batch into ``loc/bBBBBBB/rRRRR.npz``; the range's pass-1 files removed.

    ``batch_bases``: first document ordinal of every batch, then the total.
    """
    parts, inputs = _load_all(Path(plan.tmp, "p1", f"r{r:04d}"))
    rec = np.concatenate([p["rec"] for p in parts]) if parts else np.zeros(0, RECORD)
    sel = repeated_by_hash(rec, plan.min_count)
    cut = np.searchsorted(sel["doc"], np.asarray(batch_bases, dtype=np.int64))
    written = 0
    for b in range(len(batch_bases) - 1):
        if cut[b + 1] > cut[b]:
            path = Path(plan.tmp, "loc", f"b{b:06d}", f"r{r:04d}.npz")
            written += _save(path, {"rec": sel[cut[b] : cut[b + 1]]})
    _remove(inputs)
    return {"records": len(rec), "selected": len(sel), "bytes": written}


def _texts_by_range(b: int, tok, rec: np.ndarray, doc_base: int, plan: Plan, stage: str) -> int:
    """Write ``rec`` with the texts of its n-grams, split by hash range, to ``stage/``."""
    parts = split_by_range(rec, range_of(rec["h"], plan.bits, plan.range_bits), plan.n_ranges)
    written = 0
    for r, part in enumerate(parts):
        if len(part):
            local = part["doc"].astype(np.int64) - doc_base
            lengths, blob = ngram_texts(tok, local, part["off"], plan.n)
            path = Path(plan.tmp, stage, f"r{r:04d}", f"b{b:06d}.npz")
            written += _save(path, {"rec": part, "lengths": lengths, "blob": blob})
    return written


def _check_keys(b: int, keys: list[str], expected: list[str]) -> None:
    if keys != expected:
        raise IndexFormatError(
            f"batch {b}: expected the same {len(expected)} documents as in pass 1, "
            f"read {len(keys)} (a source changed during the run)"
        )


def pass2_task(
    b: int, refs: list[SourceItem | IndexText], doc_base: int, keys: list[str], plan: Plan
) -> dict:
    """Pass 2 of a batch: the true n-gram texts at the locations :func:`select_task` kept for
    it, into ``p2/rRRRR/bBBBBBB.npz``; the batch's location files removed."""
    parts, inputs = _load_all(Path(plan.tmp, "loc", f"b{b:06d}"))
    if not parts:
        return {"records": 0, "bytes": 0}
    got, texts, _ = read_batch(refs)
    _check_keys(b, got, keys)
    tok = tokenize(texts, plan.seed)
    rec = np.concatenate([p["rec"] for p in parts])
    written = _texts_by_range(b, tok, rec, doc_base, plan, "p2")
    _remove(inputs)
    return {"records": len(rec), "bytes": written}


def onepass_task(b: int, refs: list[SourceItem | IndexText], doc_base: int, plan: Plan) -> dict:
    """The one-pass baseline for a batch: every n-gram with its text into ``op/``."""
    keys, texts, errors = read_batch(refs)
    tok = tokenize(texts, plan.seed)
    rec = ngram_records(tok, plan.n, plan.bits, plan.seed, doc_base)
    written = _texts_by_range(b, tok, rec, doc_base, plan, "op")
    return {"keys": keys, "errors": errors, "records": len(rec), "bytes": written}


def group_task(r: int, stage: str, plan: Plan) -> dict:
    """Per hash range: exact groups of the range's n-gram texts seen ``min_count`` times,
    as JSONL rows in ``rows/rRRRR.jsonl`` (locations as ``[key, offset]``, keys from the
    driver's ``keys.json``); the range's input files removed."""
    parts, inputs = _load_all(Path(plan.tmp, stage, f"r{r:04d}"))
    if not parts:
        return {"rows": 0, "bytes": 0}
    rec = np.concatenate([p["rec"] for p in parts])
    lengths = np.concatenate([p["lengths"] for p in parts])
    blob = np.concatenate([p["blob"] for p in parts])
    del parts
    groups = group_exact(rec, lengths, blob, plan.min_count)
    del lengths, blob
    keys = json.loads(Path(plan.tmp, "keys.json").read_text("utf-8"))
    path = Path(plan.tmp, "rows", f"r{r:04d}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        for piece in jsonl_rows(groups, rec["doc"], rec["off"], keys):
            f.write(piece)
    os.replace(tmp, path)
    _remove(inputs)
    return {"rows": len(groups), "bytes": path.stat().st_size}
