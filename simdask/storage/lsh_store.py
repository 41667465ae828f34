"""The MinHash LSH store of an index: signatures and band keys in range-owned files.

Layout under ``INDEX/lsh``::

    gen-RRRRRR/sig-PPPP.npy    signatures ('<u4', rows = doc IDs P*block .. P*block+n-1;
                               rows of free IDs and of documents without chunks are EMPTY)
    gen-RRRRRR/bkey-PPPP.npy   band keys of key range P ('<u8', sorted)
    gen-RRRRRR/bdoc-PPPP.npy   their doc IDs ('<u4', sorted within equal keys)

Like the main shards, each run writes only the parts it changes as a new generation, and the
:class:`LshManifest` naming each part's generation is committed in the same catalog transaction
as the rest of the run (catalog meta ``lsh``); a failed run leaves the previous manifest, and
its files, current. Files are written atomically (temp + replace) in little-endian order and
read memory-mapped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simdask.errors import IndexFormatError, damaged
from simdask.kernels.minhash import EMPTY
from simdask.storage.durable import publish

__all__ = ["LSH_DIR", "SIG_BLOCK", "LshManifest", "LshStore", "band_part_of", "lsh_root"]

#: the LSH store's folder inside an index folder
LSH_DIR = "lsh"

#: doc IDs per signature part
SIG_BLOCK = 65536
#: memory maps kept open for reuse (oldest dropped first)
_MAX_MAPS = 512
_MAPS: dict[tuple[Any, ...], np.ndarray] = {}
#: a generation folder's name (what garbage collection may remove)
_GENERATION = re.compile(r"gen-(\d{6,})")


def lsh_root(index_dir: str | os.PathLike[str]) -> Path:
    """The LSH store's folder of the index in ``index_dir``."""
    return Path(index_dir) / LSH_DIR


def _name(gen: int, file: str) -> str:
    return f"{LSH_DIR}/gen-{gen:06d}/{file}"


def band_part_of(keys: np.ndarray, parts: int) -> np.ndarray:
    """The part (equal ranges of the 64-bit key space) owning each band key."""
    return ((np.asarray(keys, np.uint64) >> np.uint64(32)) * np.uint64(parts)) >> np.uint64(32)


@dataclass
class LshManifest:
    """Which generation holds each part. ``params``: ``"BANDSxROWS"``; ``sig``/``band``:
    ``{part: generation}``; ``band_parts``: number of key ranges; ``prev``: generations the
    previous manifest used (kept one run longer for readers that opened them)."""

    params: str
    band_parts: int
    sig: dict[int, int] = field(default_factory=dict)
    band: dict[int, int] = field(default_factory=dict)
    prev: list[int] = field(default_factory=list)

    def to_json(self) -> str:
        """The manifest as JSON (for the catalog)."""
        return json.dumps(
            {
                "params": self.params,
                "band_parts": self.band_parts,
                "sig": {str(k): v for k, v in sorted(self.sig.items())},
                "band": {str(k): v for k, v in sorted(self.band.items())},
                "prev": sorted(set(self.prev)),
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str | None) -> LshManifest | None:
        """Parse :meth:`to_json`'s output; None or ``""``: no LSH data."""
        if not text:
            return None
        try:
            d = json.loads(text)
            return cls(
                d["params"],
                int(d["band_parts"]),
                {int(k): int(v) for k, v in d["sig"].items()},
                {int(k): int(v) for k, v in d["band"].items()},
                [int(g) for g in d.get("prev", [])],
            )
        except (ValueError, KeyError, TypeError) as e:
            raise damaged(f"damaged LSH manifest in the catalog (meta.lsh): {e}") from None

    def file_names(self) -> set[str]:
        """Names (relative to the index folder) of the files this manifest reads."""
        names = {_name(g, f"sig-{p:04d}.npy") for p, g in self.sig.items()}
        for p, g in self.band.items():
            names |= {_name(g, f"bkey-{p:04d}.npy"), _name(g, f"bdoc-{p:04d}.npy")}
        return names

    def generations(self) -> set[int]:
        """Generations this manifest reads."""
        return set(self.sig.values()) | set(self.band.values())


class LshStore:
    """Reads and writes the files of one index's LSH store (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str], verify: Callable[[str], None] | None = None):
        self.root = Path(root)
        #: called with a file's name relative to the index folder before it is mapped (e.g.
        #: :meth:`~simdask.read.segment_reads.SegmentReads.check_file`: its recorded checksum)
        self.verify = verify

    def _path(self, gen: int, name: str) -> Path:
        return self.root / f"gen-{gen:06d}" / name

    def _save(self, gen: int, name: str, arr: np.ndarray) -> None:
        path = self._path(gen, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{name}.{uuid.uuid4().hex[:8]}.tmp")
        with open(tmp, "wb") as f:
            np.save(f, arr)
        publish(tmp, path, self.root.parent)  # durable before the catalog names it

    def _load(self, gen: int, name: str) -> np.ndarray:
        """A file memory-mapped; maps are reused while the file is the same (inode, size and
        modification time), so repeated queries do not reopen it."""
        path = self._path(gen, name)
        try:
            st = path.stat()
        except FileNotFoundError as e:
            raise IndexFormatError(
                f"LSH file {path} named by the catalog is missing (index damaged?)"
            ) from e
        key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if self.verify is not None:
            self.verify(_name(gen, name))
        arr = _MAPS.get(key)
        if arr is None:
            try:
                arr = np.load(path, mmap_mode="r")
            except (ValueError, OSError, EOFError) as e:  # a header that does not parse
                raise damaged(f"LSH file {path} cannot be read ({e})") from None
            if len(_MAPS) >= _MAX_MAPS:
                _MAPS.pop(next(iter(_MAPS)))
            _MAPS[key] = arr
        return arr

    # --- signatures ----------------------------------------------------------------------
    def write_sig(self, gen: int, part: int, sigs: np.ndarray) -> None:
        """Write signature part ``part`` (rows for doc IDs ``part*SIG_BLOCK`` on)."""
        self._save(gen, f"sig-{part:04d}.npy", np.ascontiguousarray(sigs, dtype="<u4"))

    def read_sig(self, gen: int | None, part: int, perms: int) -> np.ndarray:
        """Signature part (memory-mapped; an empty ``(0, perms)`` array for ``gen`` None)."""
        if gen is None:
            return np.zeros((0, perms), dtype="<u4")
        return self._load(gen, f"sig-{part:04d}.npy")

    def signatures_of(self, man: LshManifest, doc_ids: np.ndarray, perms: int) -> np.ndarray:
        """Signatures of ``doc_ids`` (EMPTY rows for IDs without one), ``(n, perms)`` uint32."""
        doc_ids = np.asarray(doc_ids, dtype=np.int64)
        out = np.full((len(doc_ids), perms), EMPTY, dtype=np.uint32)
        part = doc_ids // SIG_BLOCK
        for p in np.unique(part).tolist():
            arr = self.read_sig(man.sig.get(p), p, perms)
            sel = np.flatnonzero(part == p)
            row = doc_ids[sel] - p * SIG_BLOCK
            ok = row < len(arr)
            out[sel[ok]] = arr[row[ok]]
        return out

    # --- band keys -----------------------------------------------------------------------
    def write_band(self, gen: int, part: int, keys: np.ndarray, docs: np.ndarray) -> None:
        """Write band part ``part``: keys and doc IDs, sorted by (key, doc)."""
        self._save(gen, f"bkey-{part:04d}.npy", np.ascontiguousarray(keys, dtype="<u8"))
        self._save(gen, f"bdoc-{part:04d}.npy", np.ascontiguousarray(docs, dtype="<u4"))

    def read_band(self, gen: int | None, part: int) -> tuple[np.ndarray, np.ndarray]:
        """Band part ``(keys, docs)`` (memory-mapped; empty for ``gen`` None)."""
        if gen is None:
            return np.zeros(0, "<u8"), np.zeros(0, "<u4")
        return self._load(gen, f"bkey-{part:04d}.npy"), self._load(gen, f"bdoc-{part:04d}.npy")

    def all_bands(self, man: LshManifest) -> tuple[np.ndarray, np.ndarray]:
        """Every band key of the index with its doc ID, part after part (each part sorted)."""
        parts = [self.read_band(man.band.get(p), p) for p in range(man.band_parts)]
        keys = np.concatenate([np.asarray(k) for k, _ in parts]) if parts else np.zeros(0)
        docs = np.concatenate([np.asarray(d) for _, d in parts]) if parts else np.zeros(0)
        return keys.astype(np.uint64), docs.astype(np.int64)

    def docs_with_keys(self, man: LshManifest, keys: np.ndarray) -> np.ndarray:
        """``(query row, doc ID)`` pairs: for each row of ``keys`` (``(n, bands)``), the
        indexed documents sharing one of its band keys (pairs may repeat across bands)."""
        keys = np.asarray(keys, np.uint64)
        flat = keys.ravel()
        row = np.repeat(np.arange(len(keys)), keys.shape[1] if len(keys) else 0)
        part = band_part_of(flat, man.band_parts)
        rows, docs = [], []
        for p in np.unique(part).tolist():
            bk, bd = self.read_band(man.band.get(p), p)
            sel = np.flatnonzero(part == p)
            lo = np.searchsorted(bk, flat[sel], side="left")
            hi = np.searchsorted(bk, flat[sel], side="right")
            cnt = hi - lo
            total = int(cnt.sum())
            if total:
                pos = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(total)
                rows.append(np.repeat(row[sel], cnt))
                docs.append(np.asarray(bd)[pos].astype(np.int64))
        if not rows:
            return np.zeros((0, 2), np.int64)
        return np.stack([np.concatenate(rows), np.concatenate(docs)], axis=1)

    # --- generations ---------------------------------------------------------------------
    def generations(self) -> list[int]:
        """Generations present on disk."""
        if not self.root.exists():
            return []
        found = (_GENERATION.fullmatch(p.name) for p in self.root.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def remove_generation(self, gen: int) -> None:
        """Delete one generation's files (a failed run's, or garbage)."""
        shutil.rmtree(self.root / f"gen-{gen:06d}", ignore_errors=True)

    def garbage(self, man: LshManifest | None) -> list[int]:
        """Generations on disk that neither ``man`` nor its predecessor reads."""
        live = set() if man is None else man.generations() | set(man.prev)
        return [g for g in self.generations() if g not in live]

    def collect(self, man: LshManifest | None) -> int:
        """Delete generations neither ``man`` nor its predecessor reads; returns how many."""
        gone = self.garbage(man)
        for g in gone:
            self.remove_generation(g)
        return len(gone)

    def files(self, gen: int) -> list[tuple[str, Path]]:
        """``(name, path)`` of the files of generation ``gen``, names relative to the index
        folder (``lsh/gen-RRRRRR/sig-PPPP.npy``; for :mod:`simdask.storage.checksums`)."""
        folder = self.root / f"gen-{gen:06d}"
        if not folder.is_dir():
            return []
        return [(_name(gen, p.name), p) for p in sorted(folder.glob("*.npy"))]

    def nbytes(self, man: LshManifest | None) -> int:
        """Bytes of the files ``man`` reads."""
        if man is None:
            return 0
        names = [(g, f"sig-{p:04d}.npy") for p, g in man.sig.items()]
        names += [(g, f"b{w}-{p:04d}.npy") for p, g in man.band.items() for w in ("key", "doc")]
        return sum(self._path(g, n).stat().st_size for g, n in names if self._path(g, n).exists())
