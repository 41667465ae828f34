"""Shard storage: one zarr v3 group per (generation, shard range) holding the CSR postings.

A shard of range ``[lo, hi)`` holds three 1-d arrays (little-endian on disk):

* ``chunk_keys`` (uint32): the distinct chunk IDs of the range that some document holds;
* ``offsets`` (``len(chunk_keys) + 1``; uint32 on disk while the shard has fewer than 2**32
  postings, else uint64; uint64 in memory): where each chunk's postings start in ``doc_ids``;
* ``doc_ids`` (uint32): the documents holding each chunk, ascending within a chunk.

In a local directory the arrays are stored uncompressed, each in one zarr chunk, so that a
query memory-maps them and reads only the pages it needs (:mod:`simdask.storage.zarr_raw`; about 3x
the bytes of the compressed form, see docs/benchmarks.md). Under an fsspec URL
(object stores, where bytes moved cost more than CPU and nothing can be mapped) they are
delta-encoded and zstd-compressed in chunks of 1 Mi elements. Readers take either layout
(each array's ``zarr.json`` says which), so indexes written before keep working.

DESIGN §2 describes a dense ``offsets`` over the whole range; the sparse form (keys present +
offsets) is the "sparse keys" encoding the design allows: at ``hash_bits=32`` a dense offsets
array would need 2**32 entries, and see docs/benchmarks.md for the 28-bit comparison.
A shard is written into a temporary directory and renamed into place, so a reader never sees a
half-written shard.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simdask.errors import IndexFormatError
from simdask.kernels.postings import find_keys
from simdask.storage.remote import RemoteStore, is_url
from simdask.storage.zarr_raw import (
    array_shape,
    group_metadata,
    load_array,
    map_array,
    raw_array_file,
    raw_array_metadata,
)

__all__ = ["ShardData", "ShardStore", "encode_shard", "shard_ranges"]

_ARRAYS = (("chunk_keys", np.uint32), ("offsets", np.uint64), ("doc_ids", np.uint32))
_CHUNK = 1 << 20  # elements per zarr chunk of a compressed array
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
    ...; :mod:`simdask.storage.remote`). Locally a shard is written into a temporary directory
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

    @property
    def compressed(self) -> bool:
        """True when shards are written compressed (under a URL), False when raw (local)."""
        return self.remote is not None

    def write(self, generation: int, shard: int, data: ShardData) -> int:
        """Write a shard atomically (temp dir + rename); returns bytes on disk."""
        if self.remote:
            return self.remote.write(generation, shard, encode_shard(data, compressed=True))
        final, tmp = self._paths(generation, shard)
        _write_raw(tmp, data)
        return self._publish(final, tmp)

    def write_encoded(self, generation: int, shard: int, files: dict[str, bytes]) -> int:
        """Write a shard encoded by :func:`encode_shard` (e.g. on a worker without access to
        this store; with ``compressed=self.compressed``) atomically; returns bytes on disk."""
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
        from simdask import failpoints

        failpoints.hit("shard_write")
        if final.exists():  # an earlier, interrupted attempt at the same work
            shutil.rmtree(final)
        os.replace(tmp, final)
        return _du(final)

    def _check(self, generation: int, shard: int) -> None:
        if not self.exists(generation, shard):
            raise IndexFormatError(
                f"shard {shard} of generation {generation} is missing: "
                f"expected a zarr group at {self.path(generation, shard)}"
            )

    def _group(self, generation: int, shard: int):
        import zarr

        self._check(generation, shard)
        return zarr.open_group(str(self.path(generation, shard)), mode="r")

    def _raw_files(self, generation: int, shard: int) -> dict | None:
        """``{name: RawArrayFile}`` when every array of a local shard is stored raw (see
        :mod:`simdask.storage.zarr_raw`), plus ``"lo"``/``"hi"``; None for a compressed shard."""
        if self.remote:
            return None
        self._check(generation, shard)
        path = self.path(generation, shard)
        files = {name: raw_array_file(path / name) for name, _ in _ARRAYS}
        if any(f is None for f in files.values()):
            return None
        attrs = _group_attributes(path)
        return {**files, "lo": int(attrs["lo"]), "hi": int(attrs["hi"])}

    def read(self, generation: int, shard: int) -> ShardData:
        """Load one shard into memory (offsets as uint64)."""
        raw = self._raw_files(generation, shard)
        if raw is not None:
            arrays = {
                name: load_array(raw[name]).astype(dtype, copy=False) for name, dtype in _ARRAYS
            }
            return ShardData(raw["lo"], raw["hi"], **arrays, generation=generation)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NOT_IN_SPEC)
            group = self._group(generation, shard)
            arrays = {name: np.asarray(group[name][:], dtype=dtype) for name, dtype in _ARRAYS}
        attrs = group.attrs
        return ShardData(int(attrs["lo"]), int(attrs["hi"]), **arrays, generation=generation)

    def open_arrays(self, generation: int, shard: int) -> dict:
        """One stored shard opened for :meth:`read_subset`, without reading its data:
        ``{name: array}`` plus ``"lo"``/``"hi"``. The arrays of a raw (local) shard are
        read-only memory maps (numpy); those of a compressed shard are ``zarr.Array``s."""
        raw = self._raw_files(generation, shard)
        if raw is not None:
            return {
                **{name: map_array(raw[name]) for name, _ in _ARRAYS},
                "lo": raw["lo"],
                "hi": raw["hi"],
            }
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NOT_IN_SPEC)
            group = self._group(generation, shard)
            arrays = {name: group[name] for name, _ in _ARRAYS}
        return {**arrays, "lo": int(group.attrs["lo"]), "hi": int(group.attrs["hi"])}

    def read_subset(self, arrays: dict, chunk_ids: np.ndarray, generation: int = 0) -> ShardData:
        """The postings of the given chunk IDs only (sorted, distinct, in the shard's range), as
        a :class:`ShardData` holding just those chunks that are present.

        ``arrays`` comes from :meth:`open_arrays`. Memory-mapped (raw) arrays are searched
        and gathered directly: only the pages holding the needed keys, offsets and doc IDs
        are read. Compressed arrays are streamed one zarr chunk (1 Mi elements) at a time:
        ``chunk_keys`` is searched chunk by chunk, ``offsets`` and ``doc_ids`` are read at
        the positions needed, and decoded buffers are not kept.
        """
        keys_arr, off_arr, doc_arr = arrays["chunk_keys"], arrays["offsets"], arrays["doc_ids"]
        ids = np.asarray(chunk_ids, dtype=np.uint32)
        if isinstance(keys_arr, np.ndarray):
            present, pos = find_keys(keys_arr, ids)
        else:
            present, pos = _search_chunked(keys_arr, ids)
        if len(pos) == 0:
            return ShardData(
                arrays["lo"],
                arrays["hi"],
                present,
                np.zeros(1, np.uint64),
                np.zeros(0, np.uint32),
                generation,
            )
        bounds = np.asarray(_take(off_arr, np.concatenate([pos, pos + 1])), np.int64).reshape(2, -1)
        df = bounds[1] - bounds[0]
        offsets = np.zeros(len(pos) + 1, dtype=np.uint64)
        np.cumsum(df, out=offsets[1:])
        first = offsets[:-1].astype(np.int64)
        where = np.arange(int(offsets[-1]), dtype=np.int64) + np.repeat(bounds[0] - first, df)
        doc_ids = np.asarray(_take(doc_arr, where), dtype=np.uint32)
        return ShardData(arrays["lo"], arrays["hi"], present, offsets, doc_ids, generation)

    def counts(self, generation: int, shard: int) -> tuple[int, int]:
        """``(distinct chunks, postings)`` of a stored shard, from its metadata only."""
        if not self.remote:
            self._check(generation, shard)
            path = self.path(generation, shard)
            return array_shape(path / "chunk_keys")[0], array_shape(path / "doc_ids")[0]
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


def _search_chunked(keys_arr, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(present ids, their positions)`` in a compressed ``chunk_keys`` zarr array, decoded
    one zarr chunk at a time (``ids`` sorted and distinct)."""
    step = keys_arr.chunks[0]
    found_ids, found_pos = [], []
    for start in range(0, keys_arr.shape[0] if len(ids) else 0, step):
        keys = np.asarray(keys_arr[start : start + step], dtype=np.uint32)
        a = np.searchsorted(ids, keys[0], side="left")
        b = np.searchsorted(ids, keys[-1], side="right")
        present, pos = find_keys(keys, ids[a:b])
        found_ids.append(present)
        found_pos.append(pos + start)
    if not found_ids:
        return np.zeros(0, np.uint32), np.zeros(0, np.int64)
    return np.concatenate(found_ids), np.concatenate(found_pos)


def _take(arr, where: np.ndarray) -> np.ndarray:
    """``arr[where]`` for a numpy array or a ``zarr.Array``."""
    if isinstance(arr, np.ndarray):
        return arr[where]
    return arr.get_coordinate_selection(where)


def _group_attributes(path: Path) -> dict:
    """The attributes of the zarr group at ``path``, read from its ``zarr.json``."""
    try:
        meta = json.loads((path / "zarr.json").read_text(encoding="utf-8"))
        return dict(meta["attributes"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise IndexFormatError(f"cannot read the shard metadata {path / 'zarr.json'}: {e}") from e


def _disk_dtype(name: str, arr: np.ndarray) -> np.dtype:
    """The dtype an array is stored with: offsets as uint32 while they fit."""
    if name == "offsets" and (len(arr) == 0 or int(arr[-1]) < 2**32):
        return np.dtype(np.uint32)
    return np.dtype(dict(_ARRAYS)[name])


def _write_group(store, data: ShardData, compressed: bool) -> None:
    """Write ``data`` as a zarr group into ``store`` (a path or a zarr store): raw arrays in a
    single chunk each, or delta + zstd in chunks of 1 Mi elements (``compressed``)."""
    import zarr
    from zarr.codecs import BytesCodec, ZstdCodec
    from zarr.codecs.numcodecs import Delta

    group = zarr.open_group(store, mode="w", attributes={"lo": data.lo, "hi": data.hi})
    for name, _ in _ARRAYS:
        src = getattr(data, name)
        dtype = _disk_dtype(name, src)
        arr = np.ascontiguousarray(src, dtype=dtype)
        with warnings.catch_warnings():  # Delta is a numcodecs codec: zarr warns about it
            warnings.filterwarnings("ignore", message=_NOT_IN_SPEC)
            if compressed:
                layout = {
                    "chunks": (max(1, min(len(arr), _CHUNK)),),
                    "filters": [Delta(dtype=dtype.str)] if name in _DELTA else None,
                    "compressors": ZstdCodec(level=1),
                }
            else:
                layout = {
                    "chunks": (max(1, len(arr)),),
                    "filters": None,
                    "compressors": None,
                    "config": {"write_empty_chunks": True},  # the chunk file always exists
                }
            group.create_array(name, data=arr, serializer=BytesCodec(endian="little"), **layout)


def _raw_arrays(data: ShardData):
    """``(name, little-endian array)`` of a shard in the raw layout (as :func:`_write_group`
    stores them uncompressed)."""
    for name, _ in _ARRAYS:
        src = getattr(data, name)
        yield name, np.ascontiguousarray(src, dtype=_disk_dtype(name, src).newbyteorder("<"))


def _write_raw(tmp: Path, data: ShardData) -> None:
    """Write ``data`` in the raw layout into the directory ``tmp`` directly (the zarr v3
    files :func:`_write_group` would write, ~50x faster for small segments)."""
    tmp.mkdir(parents=True)
    (tmp / "zarr.json").write_bytes(group_metadata({"lo": data.lo, "hi": data.hi}))
    for name, arr in _raw_arrays(data):
        (tmp / name).mkdir()
        (tmp / name / "zarr.json").write_bytes(raw_array_metadata(arr.dtype, len(arr)))
        if len(arr):
            (tmp / name / "c").mkdir()
            arr.tofile(tmp / name / "c" / "0")


def encode_shard(data: ShardData, compressed: bool = True) -> dict[str, bytes]:
    """The files of a shard as :meth:`ShardStore.write` would write them (relative name ->
    bytes), made in memory: a worker without access to the store encodes the shard and the
    client only writes the files (:meth:`ShardStore.write_encoded`). ``compressed``: the
    layout of the target store (:attr:`ShardStore.compressed`)."""
    if not compressed:
        files = {"zarr.json": group_metadata({"lo": data.lo, "hi": data.hi})}
        for name, arr in _raw_arrays(data):
            files[f"{name}/zarr.json"] = raw_array_metadata(arr.dtype, len(arr))
            if len(arr):
                files[f"{name}/c/0"] = arr.tobytes()
        return files
    import zarr

    files: dict = {}
    _write_group(zarr.storage.MemoryStore(files), data, compressed)
    return {name: buf.to_bytes() for name, buf in files.items()}


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
