"""Zarr v3 arrays stored uncompressed in a single chunk, read straight from their files.

The zarr v3 specification fixes the bytes of such an array exactly: with the ``bytes`` codec
(``endian: little``) as its only codec, one regular chunk as large as the array and the
``default`` chunk key encoding with separator ``/``, the array's data is the file
``<array>/c/0``: the elements, little-endian, nothing else. Such a file can be memory-mapped,
so a reader that needs a few thousand scattered elements (a query) touches only the pages
holding them, and a whole-array read is one ``read`` without decoding.

:func:`raw_array_file` checks an array's ``zarr.json`` for exactly that layout (anything else,
e.g. a compressed array, gives None and the caller reads it through zarr); :func:`map_array`
and :func:`load_array` read it. No zarr import is needed here, which keeps a query process
light.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simdask.errors import IndexFormatError

__all__ = [
    "RawArrayFile",
    "array_shape",
    "group_metadata",
    "load_array",
    "map_array",
    "raw_array_file",
    "raw_array_metadata",
]

_DTYPES = {"uint32": "<u4", "uint64": "<u8"}
_RAW_CODECS = [{"name": "bytes", "configuration": {"endian": "little"}}]


@dataclass(frozen=True)
class RawArrayFile:
    """Where the elements of a raw, single-chunk 1-d zarr array are: ``path`` (None when the
    chunk was never written, i.e. every element is ``fill``), their ``dtype`` (explicitly
    little-endian) and their number ``length``."""

    path: Path | None
    dtype: np.dtype
    length: int
    fill: int


def _metadata(array_dir: Path) -> dict[str, Any]:
    meta_path = array_dir / "zarr.json"
    try:
        return json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IndexFormatError(
            f"expected zarr array metadata at {meta_path}, found no such file"
        ) from None
    except (OSError, ValueError) as e:
        raise IndexFormatError(f"cannot read zarr array metadata {meta_path}: {e}") from e


def array_shape(array_dir: str | os.PathLike[str]) -> tuple[int, ...]:
    """The shape of the zarr v3 array at ``array_dir``, from its metadata only."""
    meta = _metadata(Path(array_dir))
    return tuple(int(n) for n in meta.get("shape", ()))


def raw_array_file(array_dir: str | os.PathLike[str]) -> RawArrayFile | None:
    """The data file of the zarr v3 array at ``array_dir`` if it is 1-d, uint32 or uint64,
    uncompressed, little-endian and in a single chunk (see the module docstring); None for any
    other layout (read that array through zarr)."""
    array_dir = Path(array_dir)
    meta = _metadata(array_dir)
    shape = meta.get("shape")
    grid = meta.get("chunk_grid", {})
    keys = meta.get("chunk_key_encoding", {})
    if (
        meta.get("zarr_format") != 3
        or meta.get("node_type") != "array"
        or not isinstance(shape, list)
        or len(shape) != 1
        or meta.get("data_type") not in _DTYPES
        or meta.get("codecs") != _RAW_CODECS
        or meta.get("storage_transformers") not in (None, [])
        or grid.get("name") != "regular"
        or grid.get("configuration", {}).get("chunk_shape", [0])[0] < shape[0]
        or keys.get("name") != "default"
        or keys.get("configuration", {}).get("separator", "/") != "/"
    ):
        return None
    dtype = np.dtype(_DTYPES[meta["data_type"]])
    length = int(shape[0])
    path = array_dir / "c" / "0"
    if length == 0 or not path.exists():
        return RawArrayFile(None, dtype, length, int(meta.get("fill_value") or 0))
    found = path.stat().st_size
    if found != length * dtype.itemsize:
        raise IndexFormatError(
            f"zarr chunk {path}: expected {length * dtype.itemsize} bytes "
            f"({length} x {dtype.name}), found {found}"
        )
    return RawArrayFile(path, dtype, length, int(meta.get("fill_value") or 0))


def map_array(raw: RawArrayFile) -> np.ndarray:
    """The array memory-mapped read-only (pages are read when touched); an unwritten chunk
    gives an in-memory array of its fill value."""
    if raw.path is None:
        return np.full(raw.length, raw.fill, dtype=raw.dtype)
    return np.memmap(raw.path, dtype=raw.dtype, mode="r", shape=(raw.length,))


def load_array(raw: RawArrayFile) -> np.ndarray:
    """The whole array read into memory (one sequential read, no decoding)."""
    if raw.path is None:
        return np.full(raw.length, raw.fill, dtype=raw.dtype)
    return np.fromfile(raw.path, dtype=raw.dtype, count=raw.length)


def raw_array_metadata(dtype: np.dtype, length: int) -> bytes:
    """The ``zarr.json`` of a raw, single-chunk 1-d array (the layout :func:`raw_array_file`
    reads; what zarr itself writes for it), for writing such an array without zarr: its
    elements go, little-endian, into ``<array>/c/0`` (no file when ``length`` is 0)."""
    name = {np.dtype("<u4"): "uint32", np.dtype("<u8"): "uint64"}.get(
        np.dtype(dtype).newbyteorder("<")
    )
    if name is None:
        raise IndexFormatError(f"raw arrays are uint32 or uint64; got {np.dtype(dtype)}")
    meta = {
        "shape": [int(length)],
        "data_type": name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [max(1, int(length))]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": _RAW_CODECS,
        "attributes": {},
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }
    return json.dumps(meta, indent=2).encode("utf-8")


def group_metadata(attributes: dict[str, Any]) -> bytes:
    """The ``zarr.json`` of a zarr v3 group with these attributes."""
    meta = {"attributes": attributes, "zarr_format": 3, "node_type": "group"}
    return json.dumps(meta, indent=2).encode("utf-8")
