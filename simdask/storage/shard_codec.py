"""How a shard's arrays are encoded as a zarr v3 group, apart from where the files live.

Two layouts: *raw* (each array one uncompressed little-endian chunk, so that its file is the
elements and can be memory-mapped: :mod:`simdask.storage.zarr_raw`) and *compressed* (delta +
zstd in chunks of 1 Mi elements, for URL stores where bytes moved cost more than CPU). Readers
take either layout; each array's ``zarr.json`` says which.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from simdask.errors import IndexFormatError
from simdask.kernels.postings import ShardData, find_keys
from simdask.storage.block_sums import BLOCK_ARRAYS, block_sums, sidecar_bytes, sidecar_name
from simdask.storage.zarr_raw import group_metadata, raw_array_metadata

if TYPE_CHECKING:
    from zarr.core.array_spec import ArrayConfigParams

__all__ = [
    "ARRAYS",
    "KEY_DTYPES",
    "KEY_SAMPLE",
    "KEY_SAMPLE_STEP",
    "check_keys",
    "encode_shard",
    "read_group",
    "search_chunked",
    "take",
    "write_group",
    "write_raw",
]

#: the arrays of a shard and their dtypes in memory; ``chunk_keys`` keeps its stored dtype,
#: one of :data:`KEY_DTYPES` (uint32 for ``hash_bits <= 32``, uint64 above; the index's
#: config decides, :func:`check_keys` checks)
ARRAYS = (("chunk_keys", np.uint32), ("offsets", np.uint64), ("doc_ids", np.uint32))
KEY_DTYPES = (np.dtype(np.uint32), np.dtype(np.uint64))
#: a raw shard also stores ``key_sample = chunk_keys[::KEY_SAMPLE_STEP]`` (same dtype; the
#: step in the group attribute ``key_sample_step``): a cold query reads this small array and
#: then one window of ``KEY_SAMPLE_STEP`` keys (4 KiB of uint64) per chunk ID it looks up,
#: instead of binary-searching (and paging in) the whole ``chunk_keys``
KEY_SAMPLE = "key_sample"
KEY_SAMPLE_STEP = 512
_CHUNK = 1 << 20  # elements per zarr chunk of a compressed array
#: sorted arrays are delta-encoded (smaller; bytes and times: scripts/bench_kernels.py); doc IDs
#: are nearly random within a shard and only zstd-compressed, at level 1
_DELTA = {"chunk_keys", "offsets"}
NOT_IN_SPEC = "Numcodecs codecs are not in the Zarr version 3 specification"
#: zarr's array config for the raw layout: an empty array's chunk file is written too (zarr
#: takes the keys given; its TypedDict names them all)
_ALWAYS_WRITE = cast("ArrayConfigParams", {"write_empty_chunks": True})


def check_keys(keys: Any, expected: np.dtype | None, where: str, hi: int | None = None) -> Any:
    """``keys`` (a shard's ``chunk_keys``, numpy or zarr) checked against the index's chunk-ID
    dtype ``expected`` (None: uint32 or uint64, and uint64 where the range ``[lo, hi)`` passes
    2**32); an empty array is given the expected dtype. Raises :class:`IndexFormatError`."""
    found = np.dtype(keys.dtype)
    if found.newbyteorder("<") not in KEY_DTYPES or found.byteorder == ">":
        raise IndexFormatError(
            f"{where}: chunk_keys must be little-endian uint32 or uint64, found {found}"
        )
    if expected is not None and found != expected:
        if keys.shape[0] == 0 and isinstance(keys, np.ndarray):
            return keys.astype(expected)
        if keys.shape[0]:
            raise IndexFormatError(
                f"{where}: chunk_keys are {found.name} on disk, but the index's hash_bits "
                f"expect {np.dtype(expected).name} chunk IDs"
            )
    if expected is None and hi is not None and hi > 2**32 and found != np.uint64 and len(keys):
        raise IndexFormatError(
            f"{where}: a range ending at {hi} needs uint64 chunk_keys, found {found.name}"
        )
    return keys


def read_group(group: Any) -> dict[str, np.ndarray]:
    """The three arrays of an open zarr group, decoded into memory (offsets as uint64;
    ``chunk_keys`` in their stored dtype, see :func:`check_keys`)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=NOT_IN_SPEC)
        return {
            name: np.asarray(group[name][:], dtype=_memory_dtype(name, group[name].dtype))
            for name, _ in ARRAYS
        }


def _memory_dtype(name: str, stored: npt.DTypeLike) -> np.dtype:
    """The in-memory dtype of a stored array: the stored one for ``chunk_keys``."""
    if name == "chunk_keys":
        return np.dtype(stored).newbyteorder("=")
    return np.dtype(dict(ARRAYS)[name])


def search_chunked(keys_arr: Any, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(present ids, their positions)`` in a compressed ``chunk_keys`` zarr array, decoded
    one zarr chunk at a time (``ids`` sorted and distinct)."""
    step = keys_arr.chunks[0]
    found_ids: list[np.ndarray] = []
    found_pos: list[np.ndarray] = []
    for start in range(0, keys_arr.shape[0] if len(ids) else 0, step):
        keys = np.asarray(keys_arr[start : start + step])
        a = np.searchsorted(ids, keys[0], side="left")
        b = np.searchsorted(ids, keys[-1], side="right")
        present, pos = find_keys(keys, ids[a:b])
        found_ids.append(present)
        found_pos.append(pos + start)
    if not found_ids:
        return np.zeros(0, ids.dtype), np.zeros(0, np.int64)
    return np.concatenate(found_ids), np.concatenate(found_pos)


def take(arr: Any, where: np.ndarray) -> np.ndarray:
    """``arr[where]`` for a numpy array or a ``zarr.Array``."""
    if isinstance(arr, np.ndarray):
        return arr[where]
    return arr.get_coordinate_selection(where)


def group_attributes(path: Path) -> dict[str, Any]:
    """The attributes of the zarr group at ``path``, read from its ``zarr.json``."""
    try:
        meta = json.loads((path / "zarr.json").read_text(encoding="utf-8"))
        return dict(meta["attributes"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise IndexFormatError(f"cannot read the shard metadata {path / 'zarr.json'}: {e}") from e


def disk_dtype(name: str, arr: np.ndarray) -> np.dtype:
    """The dtype an array is stored with: offsets as uint32 while they fit; chunk keys as
    they are (uint32, or uint64 for ``hash_bits > 32``)."""
    if name == "offsets" and (len(arr) == 0 or int(arr[-1]) < 2**32):
        return np.dtype(np.uint32)
    if name == "chunk_keys" and np.dtype(arr.dtype) == np.uint64:
        return np.dtype(np.uint64)
    return np.dtype(dict(ARRAYS)[name])


def write_group(store: Any, data: ShardData, compressed: bool) -> None:
    """Write ``data`` as a zarr group into ``store`` (a path or a zarr store): raw arrays in a
    single chunk each, or delta + zstd in chunks of 1 Mi elements (``compressed``)."""
    import zarr  # heavy (0.4 s): only compressed data needs it
    from zarr.codecs import BytesCodec, ZstdCodec  # heavy (0.4 s): only compressed data needs it
    from zarr.codecs.numcodecs import Delta  # heavy (0.4 s): only compressed data needs it

    group = zarr.open_group(store, mode="w", attributes={"lo": data.lo, "hi": data.hi})
    for name, _ in ARRAYS:
        src = getattr(data, name)
        dtype = disk_dtype(name, src)
        arr = np.ascontiguousarray(src, dtype=dtype)
        with warnings.catch_warnings():  # Delta is a numcodecs codec: zarr warns about it
            warnings.filterwarnings("ignore", message=NOT_IN_SPEC)
            serializer = BytesCodec(endian="little")
            if compressed:
                group.create_array(
                    name,
                    data=arr,
                    serializer=serializer,
                    chunks=(max(1, min(len(arr), _CHUNK)),),
                    filters=[Delta(dtype=dtype.str)] if name in _DELTA else None,
                    # a content checksum in every zstd frame: a damaged chunk fails to
                    # decode instead of decoding into other values (issue 30 item 9)
                    compressors=ZstdCodec(level=1, checksum=True),
                )
            else:
                group.create_array(
                    name,
                    data=arr,
                    serializer=serializer,
                    chunks=(max(1, len(arr)),),
                    filters=None,
                    compressors=None,
                    config=_ALWAYS_WRITE,  # the chunk file always exists
                )


def _raw_arrays(data: ShardData) -> Iterator[tuple[str, np.ndarray]]:
    """``(name, little-endian array)`` of a shard in the raw layout (as :func:`write_group`
    stores them uncompressed), then its :data:`KEY_SAMPLE`."""
    for name, _ in ARRAYS:
        src = getattr(data, name)
        arr = np.ascontiguousarray(src, dtype=disk_dtype(name, src).newbyteorder("<"))
        yield name, arr
        if name == "chunk_keys":
            sample = np.ascontiguousarray(arr[::KEY_SAMPLE_STEP])
    yield KEY_SAMPLE, sample


def _raw_attributes(data: ShardData) -> dict[str, Any]:
    """The group attributes of a raw shard: its range and the key sample's step."""
    return {"lo": data.lo, "hi": data.hi, "key_sample_step": KEY_SAMPLE_STEP}


def write_raw(tmp: Path, data: ShardData) -> None:
    """Write ``data`` in the raw layout into the new directory ``tmp`` directly (the zarr v3
    files :func:`write_group` would write, ~50x faster for small segments)."""
    tmp.mkdir(parents=True)
    (tmp / "zarr.json").write_bytes(group_metadata(_raw_attributes(data)))
    for name, arr in _raw_arrays(data):
        (tmp / name).mkdir()
        (tmp / name / "zarr.json").write_bytes(raw_array_metadata(arr.dtype, len(arr)))
        if len(arr):
            (tmp / name / "c").mkdir()
            raw = np.ascontiguousarray(arr).data
            (tmp / name / "c" / "0").write_bytes(raw)  # ENOSPC if full
            if name in BLOCK_ARRAYS:  # the block checksums readers verify (block_sums.py)
                side = sidecar_bytes(block_sums(raw), raw.nbytes)
                (tmp / sidecar_name(name)).write_bytes(side)


def encode_shard(data: ShardData, compressed: bool = True) -> dict[str, bytes]:
    """The files of a shard as :meth:`ShardStore.write` would write them (relative name ->
    bytes), made in memory: a worker without access to the store encodes the shard and the
    client only writes the files (:meth:`ShardStore.write_encoded`). ``compressed``: the
    layout of the target store (:attr:`ShardStore.compressed`)."""
    if not compressed:
        files = {"zarr.json": group_metadata(_raw_attributes(data))}
        for name, arr in _raw_arrays(data):
            files[f"{name}/zarr.json"] = raw_array_metadata(arr.dtype, len(arr))
            if len(arr):
                files[f"{name}/c/0"] = arr.tobytes()
            if len(arr) and name in BLOCK_ARRAYS:
                raw = files[f"{name}/c/0"]
                files[sidecar_name(name)] = sidecar_bytes(block_sums(raw), len(raw))
        return files
    import zarr  # heavy (0.4 s): only compressed data needs it

    buffers: dict[str, Any] = {}
    write_group(zarr.storage.MemoryStore(buffers), data, compressed)
    return {name: buf.to_bytes() for name, buf in buffers.items()}
