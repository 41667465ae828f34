"""Shard storage: one zarr v3 group per (generation, shard range) holding the CSR postings.

A shard of range ``[lo, hi)`` holds three 1-d arrays (little-endian on disk):

* ``chunk_keys`` (uint32; uint64 when the index's ``hash_bits`` exceed 32): the distinct chunk
  IDs of the range that some document holds (a store opened with ``key_dtype`` refuses a
  shard of the other width);
* ``offsets`` (``len(chunk_keys) + 1``; uint32 on disk while the shard has fewer than 2**32
  postings, else uint64; uint64 in memory): where each chunk's postings start in ``doc_ids``;
* ``doc_ids`` (uint32): the documents holding each chunk, ascending within a chunk.

:class:`ShardStore` is the small interface every backend implements;
:func:`~simdask.storage.backends.open_shard_store` picks one for a root (the backends import
only this contract). :class:`~simdask.storage.local_store.LocalShardStore` (an index
directory, :mod:`simdask.storage.local_store`) writes the raw layout that queries
memory-map, into a temporary directory renamed into place; :class:`UrlShardStore`
(an fsspec URL, :mod:`simdask.storage.remote`) writes the compressed layout, uploads the files
and a completion marker last (object stores have no rename). Either way only completely
written shards are read. How the arrays are encoded is :mod:`simdask.storage.shard_codec`'s
business. Callers ask the store what it can do (:attr:`ShardStore.local_root`,
:attr:`~ShardStore.can_mmap`, :attr:`~ShardStore.url`, :meth:`~ShardStore.remove_shard`,
:meth:`~ShardStore.stored_ranges`) rather than which backend it is. The sparse form (keys
present + offsets) is the "sparse keys" encoding of docs/design.md §2.
"""

from __future__ import annotations

import threading
import warnings
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simdask.errors import IndexFormatError
from simdask.kernels.arrays import expand_ranges
from simdask.kernels.key_lookup import find_keys_sampled
from simdask.kernels.postings import ShardData, find_keys, shard_ranges
from simdask.storage.checksums import digest
from simdask.storage.direct_reads import read_subset_direct, stored_sample
from simdask.storage.segment_writer import SegmentWriter
from simdask.storage.shard_codec import (
    ARRAYS,
    NOT_IN_SPEC,
    check_keys,
    encode_shard,
    read_group,
    search_chunked,
    take,
)
from simdask.storage.verified import verify_mapped
from simdask.storage.zarr_raw import (
    RawArrayFile,
    load_array,
    map_array,
)

#: ShardData and shard_ranges live in :mod:`simdask.kernels.postings` (the kernels compute on
#: them); they are re-exported here, where earlier versions defined them
__all__ = [
    "ShardData",
    "ShardStore",
    "encode_shard",
    "shard_ranges",
]


if TYPE_CHECKING:
    import zarr

#: held around ``warnings.catch_warnings`` blocks, which threads must not interleave
_WARNINGS = threading.Lock()


class ShardStore(ABC):
    """Shards of every generation under one root (``<root>/gen-NNNNNN/shard-NNNN``).

    Backends implement where files go (:meth:`exists`, :meth:`_store_files`,
    :meth:`generations`, :meth:`remove_generation`, :meth:`_nbytes`, :meth:`_open_group`);
    reading, subsets and counts are shared. ``compressed``: the layout this backend writes
    (what :func:`encode_shard` must produce for :meth:`write_encoded`). What a caller may do
    with the store is asked of it: :attr:`local_root`, :attr:`url`, :attr:`can_mmap`.
    """

    compressed: bool = False
    key_dtype: np.dtype | None = None

    @property
    def local_root(self) -> Path | None:
        """The store's directory on this machine (its files may be read, hashed and measured
        there; workers sharing the filesystem open it by this path); None when the shards
        are not local files (a URL store)."""
        return None

    @property
    def url(self) -> str | None:
        """The URL workers with their own access open the store at (an fsspec URL); None for
        a local directory (reached by path, or through Dask)."""
        return None

    @property
    def can_mmap(self) -> bool:
        """True when shards written by this store can be memory-mapped (the raw layout on a
        local filesystem)."""
        return False

    @abstractmethod
    def remove_shard(self, generation: int, shard: int) -> None:
        """Delete one shard (missing is fine); its generation's directory goes when empty."""

    @abstractmethod
    def stored_ranges(self, generation: int) -> list[int]:
        """The shard ranges with a directory in ``generation`` (complete or not)."""

    def remove_unpublished(self) -> int:
        """Delete the temporary directories of segment writes never put in place (a worker
        killed while writing, an attempt of a task that lost to another attempt of it);
        returns how many. Only with the writer lock held (no write in progress). A store
        whose writes publish in place (a URL store) has none."""
        return 0

    @property
    @abstractmethod
    def location(self) -> str:
        """The root as a string (path or URL)."""

    @abstractmethod
    def path(self, generation: int, shard: int) -> Path | str:
        """Directory (path or URL) of one shard of one generation."""

    @abstractmethod
    def exists(self, generation: int, shard: int) -> bool:
        """True when that shard was completely written."""

    @abstractmethod
    def _store_files(self, generation: int, shard: int, files: dict[str, bytes]) -> int:
        """Put an encoded shard's files in place atomically; returns bytes stored."""

    @abstractmethod
    def generations(self) -> list[int]:
        """Generations that have a directory under the root."""

    @abstractmethod
    def remove_generation(self, generation: int) -> None:
        """Delete a whole generation (missing is fine)."""

    @abstractmethod
    def _nbytes(self, relative: str) -> int:
        """Bytes stored under ``relative`` (0 if missing)."""

    @abstractmethod
    def _open_group(self, generation: int, shard: int) -> zarr.Group:
        """The shard's zarr group, opened for reading."""

    def _raw_files(self, generation: int, shard: int) -> dict[str, Any] | None:
        """``{name: RawArrayFile, "lo", "hi"}`` when the shard can be memory-mapped, else None."""
        return None

    def write(self, generation: int, shard: int, data: ShardData) -> int:
        """Write a shard atomically in this store's layout; returns bytes stored."""
        return self._store_files(generation, shard, encode_shard(data, self.compressed))

    def writer(self, generation: int, shard: int, lo: int, hi: int) -> SegmentWriter | None:
        """A :class:`~simdask.storage.segment_writer.SegmentWriter` that writes a shard of
        range ``[lo, hi)`` piece by piece, in the raw layout, atomically; None when this store
        does not write the raw layout (collect the pieces and :meth:`write` them)."""
        return None

    def write_encoded(self, generation: int, shard: int, files: dict[str, bytes]) -> int:
        """Write a shard encoded by :func:`encode_shard` (e.g. on a worker without access to
        this store; with ``compressed=self.compressed``) atomically; returns bytes stored."""
        for name in files:
            if ".." in Path(name).parts or Path(name).is_absolute():
                raise IndexFormatError(f"shard file name {name!r} leaves the shard directory")
        return self._store_files(generation, shard, files)

    def _check(self, generation: int, shard: int) -> None:
        if not self.exists(generation, shard):
            raise IndexFormatError(
                f"shard {shard} of generation {generation} is missing: "
                f"expected a zarr group at {self.path(generation, shard)}"
            )

    def read(self, generation: int, shard: int) -> ShardData:
        """Load one shard into memory (offsets as uint64)."""
        raw = self._raw_files(generation, shard)
        if raw is not None:
            arrays = {
                name: load_array(raw[name]).astype(dtype, copy=False)
                for name, dtype in ARRAYS
                if name != "chunk_keys"
            }
            lo, hi = raw["lo"], raw["hi"]
            arrays["chunk_keys"] = load_array(raw["chunk_keys"])
        else:
            group = self._open_group(generation, shard)
            lo, hi, arrays = _attr_int(group, "lo"), _attr_int(group, "hi"), read_group(group)
        arrays["chunk_keys"] = self._keys(arrays["chunk_keys"], generation, shard, hi)
        return ShardData(lo, hi, **arrays, generation=generation)

    def map(self, generation: int, shard: int, wide_offsets: bool = True) -> ShardData | None:
        """One raw shard memory-mapped read-only (its pages are read when touched and stay
        page cache, not process memory; offsets as uint64, copied when stored as uint32,
        unless not ``wide_offsets``: then mapped as stored, for readers of either dtype);
        None when the shard is not raw (compressed or remote: :meth:`read` it)."""
        raw = self._raw_files(generation, shard)
        if raw is None:
            return None
        maps = {name: map_array(raw[name]) for name, _ in ARRAYS}
        if wide_offsets:
            maps["offsets"] = maps["offsets"].astype(np.uint64, copy=False)
        maps["chunk_keys"] = self._keys(maps["chunk_keys"], generation, shard, raw["hi"])
        return ShardData(raw["lo"], raw["hi"], **maps, generation=generation)

    def _keys(self, keys: Any, generation: int, shard: int, hi: int) -> Any:
        """``chunk_keys`` checked against :attr:`key_dtype` (see
        :func:`~simdask.storage.shard_codec.check_keys`)."""
        where = f"shard {shard} of generation {generation} at {self.path(generation, shard)}"
        return check_keys(keys, self.key_dtype, where, hi)

    def open_arrays(self, generation: int, shard: int) -> dict[str, Any]:
        """One stored shard opened for :meth:`read_subset`, without reading its data:
        ``{name: array}`` plus ``"lo"``/``"hi"``. The arrays of a raw (local) shard are
        read-only memory maps (numpy), with their files under ``"files"`` (and
        ``"key_sample"``: ``(step, file)`` when the shard stores one) for reads without
        mapping (:mod:`simdask.storage.direct_reads`); those of a compressed shard are
        ``zarr.Array``s."""
        raw = self._raw_files(generation, shard)
        if raw is not None:
            maps = {name: map_array(raw[name]) for name, _ in ARRAYS}
            maps["chunk_keys"] = self._keys(maps["chunk_keys"], generation, shard, raw["hi"])
            files = {name: raw[name] for name, _ in ARRAYS}
            if "key_sample" in raw:
                files["key_sample"] = raw["key_sample"]
            return {**maps, "lo": raw["lo"], "hi": raw["hi"], "files": files}
        # compressed arrays use a numcodecs filter; the lock: queries open segments in threads,
        # and catch_warnings saves and restores process-wide state
        with _WARNINGS, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=NOT_IN_SPEC)
            group = self._open_group(generation, shard)
            arrays = {name: group[name] for name, _ in ARRAYS}
        hi = _attr_int(group, "hi")
        arrays["chunk_keys"] = self._keys(arrays["chunk_keys"], generation, shard, hi)
        return {**arrays, "lo": _attr_int(group, "lo"), "hi": hi}

    def read_subset(
        self,
        arrays: dict[str, Any],
        chunk_ids: np.ndarray,
        generation: int = 0,
        direct: bool = False,
    ) -> ShardData:
        """The postings of the given chunk IDs only (sorted, distinct, in the shard's range), as
        a :class:`ShardData` holding just those chunks that are present.

        ``arrays`` comes from :meth:`open_arrays`. A raw shard with a stored key sample is
        read with ``pread`` when ``direct`` (a query of an index not preloaded; unless a kept
        map holds its keys in memory): the sample, one window of keys per chunk ID, the
        offsets and postings of the chunks found, nothing mapped
        (:mod:`simdask.storage.direct_reads`); without ``direct`` (the writer's lookups of
        many IDs, a preloaded index whose pages are mapped) it searches the maps:
        memory-mapped (raw) arrays are searched and gathered directly: only the pages
        holding the needed keys, offsets and doc IDs are read (through a sparse sample of
        the keys, ``arrays["key_sample"]``, when a
        :class:`~simdask.storage.kept_maps.KeptMaps` added one). Compressed arrays are
        streamed one zarr chunk (1 Mi elements) at a time:
        ``chunk_keys`` is searched chunk by chunk, ``offsets`` and ``doc_ids`` are read at
        the positions needed, and decoded buffers are not kept.
        """
        keys_arr, off_arr, doc_arr = arrays["chunk_keys"], arrays["offsets"], arrays["doc_ids"]
        ids = np.asarray(chunk_ids)
        ids = ids.astype(np.result_type(ids.dtype, np.dtype(keys_arr.dtype)), copy=False)
        sample = arrays.get("key_sample")  # (step, keys[::step]) of a kept map
        if direct and sample is None and stored_sample(arrays) is not None:
            found = read_subset_direct(arrays, ids)
            return ShardData(arrays["lo"], arrays["hi"], *found, generation)
        for raw in (arrays.get("files") or {}).values():  # mapped: a lazy check did not hash
            if isinstance(raw, RawArrayFile) and raw.path is not None:
                verify_mapped(raw.path)
        if isinstance(keys_arr, np.ndarray) and sample is not None:
            present, pos = find_keys_sampled(keys_arr, sample[1], sample[0], ids)
        elif isinstance(keys_arr, np.ndarray):
            present, pos = find_keys(keys_arr, ids)
        else:
            present, pos = search_chunked(keys_arr, ids)
        lo, hi = arrays["lo"], arrays["hi"]
        if len(pos) == 0:
            empty = (np.zeros(1, np.uint64), np.zeros(0, np.uint32))
            return ShardData(lo, hi, present, *empty, generation)
        bounds = np.asarray(take(off_arr, np.concatenate([pos, pos + 1])), np.int64).reshape(2, -1)
        df = bounds[1] - bounds[0]
        offsets = np.zeros(len(pos) + 1, dtype=np.uint64)
        np.cumsum(df, out=offsets[1:])
        doc_ids = np.asarray(take(doc_arr, expand_ranges(bounds[0], df)), dtype=np.uint32)
        return ShardData(lo, hi, present, offsets, doc_ids, generation)

    def key_sample(self, generation: int, shard: int) -> tuple[int, np.ndarray] | None:
        """``(step, stored chunk_keys[::step])`` of a raw shard written with a key sample (for
        ``simdask check``), else None."""
        raw = self._raw_files(generation, shard)
        if raw is None or "key_sample" not in raw:
            return None
        step, sample = raw["key_sample"]
        return step, load_array(sample)

    def counts(self, generation: int, shard: int) -> tuple[int, int]:
        """``(distinct chunks, postings)`` of a stored shard, from its metadata only."""
        with _WARNINGS, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=NOT_IN_SPEC)
            group = self._open_group(generation, shard)
            keys, docs = group["chunk_keys"], group["doc_ids"]
        return _length(keys), _length(docs)

    def recorded_files(self, generation: int, shard: int) -> dict[str, tuple[int, str]]:
        """``{name inside the shard: (size, xxh3)}`` as the store recorded them when the shard
        was written (a URL store, in its completion marker); empty: none recorded (a local
        store's files are hashed before the commit instead)."""
        return {}

    def file_digest(self, relative: str) -> tuple[int, str]:
        """``(size in bytes, xxh3)`` of the file ``relative`` to the store's root."""
        return digest(Path(self.location) / relative)

    def nbytes(self, generation: int) -> int:
        """Bytes stored for one generation."""
        return self._nbytes(f"gen-{generation:06d}")

    def shard_nbytes(self, generation: int, shard: int) -> int:
        """Bytes stored for one shard."""
        return self._nbytes(f"gen-{generation:06d}/shard-{shard:04d}")


def _attr_int(group: zarr.Group, name: str) -> int:
    """The integer attribute ``name`` of a shard's zarr group."""
    value = group.attrs.get(name)
    if not isinstance(value, int):
        raise IndexFormatError(f"{group.store_path}: expected an integer {name!r}, found {value!r}")
    return value


def _length(array: zarr.Array[Any] | zarr.Group) -> int:
    """The length of a shard's 1-d array (a group where an array belongs: damage)."""
    shape = getattr(array, "shape", None)
    if not shape:
        raise IndexFormatError(f"{array.store_path}: expected a 1-d array, found {shape!r}")
    return int(shape[0])
