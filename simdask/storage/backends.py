"""Which shard store a root gets: the factory, apart from the backends it chooses between
(:class:`~simdask.storage.local_store.LocalShardStore`, an index directory;
:class:`~simdask.storage.remote.UrlShardStore`, an fsspec URL), which import only the
:class:`~simdask.storage.shards.ShardStore` contract."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import numpy.typing as npt

from simdask.storage.local_store import LocalShardStore
from simdask.storage.remote import UrlShardStore, is_url
from simdask.storage.shards import ShardStore

__all__ = ["index_shard_store", "open_shard_store"]


def open_shard_store(
    root: str | os.PathLike[str], key_dtype: npt.DTypeLike | None = None
) -> ShardStore:
    """The store for ``root``: an fsspec URL (``protocol://...``) or a local directory.
    ``key_dtype``: the chunk-ID dtype of the index (uint32 or uint64; ``IndexConfig.
    chunk_dtype``): shards read whose ``chunk_keys`` differ raise
    :class:`~simdask.errors.IndexFormatError`."""
    store: ShardStore = UrlShardStore(str(root)) if is_url(root) else LocalShardStore(root)
    store.key_dtype = None if key_dtype is None else np.dtype(key_dtype)
    return store


def index_shard_store(
    index_dir: Path, shard_store: str | None, key_dtype: npt.DTypeLike
) -> ShardStore:
    """The shard store of the index at ``index_dir``: ``shard_store`` (the URL recorded in its
    catalog's ``shard_store`` meta) or its ``shards`` folder."""
    return open_shard_store(shard_store or index_dir / "shards", key_dtype)
