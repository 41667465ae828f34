"""Shard storage: one zarr v3 group per (generation, shard range) holding the CSR postings.

A shard of range ``[lo, hi)`` holds three 1-d arrays (little-endian on disk, zstd):

* ``chunk_keys`` (uint32): the distinct chunk IDs of the range that some document holds;
* ``offsets`` (uint64, ``len(chunk_keys) + 1``): where each chunk's postings start in ``doc_ids``;
* ``doc_ids`` (uint32): the documents holding each chunk, ascending within a chunk.

DESIGN §2 describes a dense ``offsets`` over the whole range; the sparse form (keys present +
offsets) is the "sparse keys" encoding the design allows: at ``hash_bits=32`` a dense offsets
array would need 2**32 entries, and see docs/benchmarks.md for the 28-bit comparison.
A shard is written into a temporary directory and renamed into place, so a reader never sees a
half-written shard.
"""

from __future__ import annotations

import os
import shutil
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import zarr
from dask.sizeof import sizeof
from zarr.codecs import BytesCodec, ZstdCodec
from zarr.codecs.numcodecs import Delta

from .errors import IndexFormatError
from .remote_store import RemoteStore, is_url

__all__ = ["ShardData", "ShardStore", "encode_shard", "shard_ranges"]

_ARRAYS = (("chunk_keys", np.uint32), ("offsets", np.uint64), ("doc_ids", np.uint32))
_CHUNK = 1 << 20  # elements per zarr chunk
#: sorted arrays are delta-encoded (4x smaller, as fast; see docs/benchmarks.md); doc IDs are
#: nearly random within a shard and only zstd-compressed, at level 1 (fastest, same size)
_DELTA = {"chunk_keys", "offsets"}
_NOT_IN_SPEC = "Numcodecs codecs are not in the Zarr version 3 specification"


def shard_ranges(hash_bits: int, n_shards: int) -> list[tuple[int, int]]:
    """The ``[lo, hi)`` chunk-ID range of every shard: equal, contiguous, covering 2**hash_bits."""
    space = 2**hash_bits
    width = -(-space // n_shards)
    return [(i * width, min((i + 1) * width, space)) for i in range(n_shards)]


@dataclass(frozen=True)
class ShardData:
    """The postings of one shard range ``[lo, hi)``; see the module docstring for the arrays."""

    lo: int
    hi: int
    chunk_keys: np.ndarray
    offsets: np.ndarray
    doc_ids: np.ndarray
    generation: int = 0

    @classmethod
    def empty(cls, lo: int, hi: int) -> ShardData:
        """A shard holding no postings."""
        return cls(lo, hi, np.zeros(0, np.uint32), np.zeros(1, np.uint64), np.zeros(0, np.uint32))

    @property
    def n_postings(self) -> int:
        """Number of (chunk, document) postings."""
        return len(self.doc_ids)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays in memory."""
        return self.chunk_keys.nbytes + self.offsets.nbytes + self.doc_ids.nbytes


class ShardStore:
    """Shards of every generation under ``root`` (``root/gen-NNNNNN/shard-NNNN``).

    ``root`` is a local directory, or an fsspec URL (``file://``, ``s3://``, ``memory://``,
    ...; :mod:`simdask.remote_store`). Locally a shard is written into a temporary directory
    and renamed into place; under a URL its files are uploaded and a completion marker is
    written last (object stores have no rename). Either way only committed generations are
    read, so a half-written shard is never used.
    """

    def __init__(self, root: str | os.PathLike):
        self.remote = RemoteStore(str(root)) if is_url(root) else None
        self.root: Path | str = str(root) if self.remote else Path(root)

    @property
    def location(self) -> str:
        """The root as a string (path or URL)."""
        return str(self.root)

    def path(self, generation: int, shard: int) -> Path | str:
        """Directory (path or URL) of one shard of one generation."""
        name = f"gen-{generation:06d}/shard-{shard:04d}"
        return f"{self.root}/{name}" if self.remote else self.root / name

    def exists(self, generation: int, shard: int) -> bool:
        """True when that shard was completely written."""
        if self.remote:
            return self.remote.complete(generation, shard)
        return (self.path(generation, shard) / "zarr.json").exists()

    def write(self, generation: int, shard: int, data: ShardData) -> int:
        """Write a shard atomically (temp dir + rename); returns bytes on disk."""
        if self.remote:
            return self.remote.write(generation, shard, encode_shard(data))
        final, tmp = self._paths(generation, shard)
        _write_group(str(tmp), data)
        return self._publish(final, tmp)

    def write_encoded(self, generation: int, shard: int, files: dict[str, bytes]) -> int:
        """Write a shard encoded by :func:`encode_shard` (e.g. on a worker without access to
        this store) atomically; returns bytes on disk."""
        for name in files:
            if ".." in Path(name).parts or Path(name).is_absolute():
                raise IndexFormatError(f"shard file name {name!r} leaves the shard directory")
        if self.remote:
            return self.remote.write(generation, shard, files)
        final, tmp = self._paths(generation, shard)
        for name, blob in files.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blob)
        return self._publish(final, tmp)

    def _paths(self, generation: int, shard: int) -> tuple[Path, Path]:
        final = self.path(generation, shard)
        final.parent.mkdir(parents=True, exist_ok=True)
        return final, final.parent / f".tmp-{final.name}-{uuid.uuid4().hex[:8]}"

    @staticmethod
    def _publish(final: Path, tmp: Path) -> int:
        from . import failpoints

        failpoints.hit("shard_write")
        if final.exists():  # an earlier, interrupted attempt at the same work
            shutil.rmtree(final)
        os.replace(tmp, final)
        return _du(final)

    def _group(self, generation: int, shard: int):
        path = self.path(generation, shard)
        if not self.exists(generation, shard):
            raise IndexFormatError(
                f"shard {shard} of generation {generation} is missing: "
                f"expected a zarr group at {path}"
            )
        return zarr.open_group(str(path), mode="r")

    def read(self, generation: int, shard: int) -> ShardData:
        """Load one shard into memory."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NOT_IN_SPEC)
            group = self._group(generation, shard)
            arrays = {name: np.asarray(group[name][:], dtype=dtype) for name, dtype in _ARRAYS}
        attrs = group.attrs
        return ShardData(int(attrs["lo"]), int(attrs["hi"]), **arrays, generation=generation)

    def open_arrays(self, generation: int, shard: int) -> dict:
        """The zarr arrays of one stored shard (``{name: zarr.Array}`` plus ``"lo"``/``"hi"``)
        opened for reading, without reading their data; see :meth:`read_subset`."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NOT_IN_SPEC)
            group = self._group(generation, shard)
            arrays = {name: group[name] for name, _ in _ARRAYS}
        return {**arrays, "lo": int(group.attrs["lo"]), "hi": int(group.attrs["hi"])}

    def read_subset(self, arrays: dict, chunk_ids: np.ndarray, generation: int = 0) -> ShardData:
        """The postings of the given chunk IDs only (sorted, distinct, in the shard's range), as
        a :class:`ShardData` holding just those chunks that are present.

        ``arrays`` comes from :meth:`open_arrays`. The shard is streamed one zarr chunk
        (1 Mi elements) at a time: ``chunk_keys`` is searched chunk by chunk, ``offsets`` and
        ``doc_ids`` are read at the positions needed. Decoded buffers are not kept, so a
        query touches ~8 MB of fresh memory instead of the shard's (first touches of fresh
        memory dominate a full read on VMs, ~2.5 s/GiB here).
        """
        keys_arr, off_arr, doc_arr = arrays["chunk_keys"], arrays["offsets"], arrays["doc_ids"]
        ids = np.asarray(chunk_ids, dtype=np.uint32)
        n_keys = keys_arr.shape[0]
        step = keys_arr.chunks[0]
        found_ids, found_pos = [], []
        for start in range(0, n_keys if len(ids) else 0, step):
            keys = np.asarray(keys_arr[start : start + step], dtype=np.uint32)
            a = np.searchsorted(ids, keys[0], side="left")
            b = np.searchsorted(ids, keys[-1], side="right")
            part = ids[a:b]
            pos = np.searchsorted(keys, part)
            hit = keys[pos] == part
            found_ids.append(part[hit])
            found_pos.append(pos[hit].astype(np.int64) + start)
        present = np.concatenate(found_ids) if found_ids else np.zeros(0, np.uint32)
        pos = np.concatenate(found_pos) if found_pos else np.zeros(0, np.int64)
        if len(pos) == 0:
            return ShardData(
                arrays["lo"],
                arrays["hi"],
                present,
                np.zeros(1, np.uint64),
                np.zeros(0, np.uint32),
                generation,
            )
        bounds = np.asarray(
            off_arr.get_coordinate_selection(np.concatenate([pos, pos + 1])), np.int64
        ).reshape(2, -1)
        df = bounds[1] - bounds[0]
        offsets = np.zeros(len(pos) + 1, dtype=np.uint64)
        np.cumsum(df, out=offsets[1:])
        first = offsets[:-1].astype(np.int64)
        where = np.arange(int(offsets[-1]), dtype=np.int64) + np.repeat(bounds[0] - first, df)
        doc_ids = np.asarray(doc_arr.get_coordinate_selection(where), dtype=np.uint32)
        return ShardData(arrays["lo"], arrays["hi"], present, offsets, doc_ids, generation)

    def counts(self, generation: int, shard: int) -> tuple[int, int]:
        """``(distinct chunks, postings)`` of a stored shard, from its metadata only."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NOT_IN_SPEC)
            group = self._group(generation, shard)
            return group["chunk_keys"].shape[0], group["doc_ids"].shape[0]

    def generations(self) -> list[int]:
        """Generations that have a directory under the root."""
        if self.remote:
            return self.remote.generations()
        if not self.root.exists():
            return []
        return sorted(int(p.name[4:]) for p in self.root.glob("gen-*") if p.name[4:].isdigit())

    def remove_generation(self, generation: int) -> None:
        """Delete a whole generation's directory."""
        if self.remote:
            return self.remote.remove_generation(generation)
        shutil.rmtree(self.root / f"gen-{generation:06d}", ignore_errors=True)

    def nbytes(self, generation: int) -> int:
        """Bytes on disk of one generation."""
        if self.remote:
            return self.remote.nbytes(f"gen-{generation:06d}")
        return _du(self.root / f"gen-{generation:06d}")

    def shard_nbytes(self, generation: int, shard: int) -> int:
        """Bytes on disk of one shard."""
        if self.remote:
            return self.remote.nbytes(f"gen-{generation:06d}/shard-{shard:04d}")
        return _du(self.path(generation, shard))


def _write_group(store, data: ShardData) -> None:
    """Write ``data`` as a zarr group into ``store`` (a path or a zarr store)."""
    group = zarr.open_group(store, mode="w", attributes={"lo": data.lo, "hi": data.hi})
    for name, dtype in _ARRAYS:
        arr = np.ascontiguousarray(getattr(data, name), dtype=dtype)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NOT_IN_SPEC)
            group.create_array(
                name,
                data=arr,
                chunks=(max(1, min(len(arr), _CHUNK)),),
                filters=[Delta(dtype=np.dtype(dtype).str)] if name in _DELTA else None,
                serializer=BytesCodec(endian="little"),
                compressors=ZstdCodec(level=1),
            )


def encode_shard(data: ShardData) -> dict[str, bytes]:
    """The files of a shard as :meth:`ShardStore.write` would write them (relative name ->
    compressed bytes), made in memory: a worker without access to the store compresses the
    shard and the client only writes the files (:meth:`ShardStore.write_encoded`)."""
    files: dict = {}
    _write_group(zarr.storage.MemoryStore(files), data)
    return {name: buf.to_bytes() for name, buf in files.items()}


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@sizeof.register(ShardData)
def _sizeof_shard(data: ShardData) -> int:
    """Dask's size estimate of a shard (for its memory accounting and spilling): its arrays."""
    return data.nbytes + 200
