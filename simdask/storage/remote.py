"""Shards under an fsspec URL (``file://``, ``s3://``, ``gs://``, ``memory://``, ...).

The catalog (SQLite) and the text packs stay in the local index directory; the shards, the
bulk of an index, may live anywhere fsspec reaches. Workers with access to the URL (and its
credentials, e.g. from the environment) read and write shards there directly; others get them
through Dask (:mod:`simdask.cluster.placement`).

Object stores have no atomic rename, so a shard's files are uploaded first and an empty
``.complete`` marker last; a shard without the marker counts as missing. A failed run leaves
at most an unmarked, uncommitted generation, which garbage collection removes.
"""

from __future__ import annotations

import json
import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import xxhash

from simdask import failpoints
from simdask.errors import ConfigError, damaged
from simdask.storage.checksums import BLOCK
from simdask.storage.shards import ShardStore

if TYPE_CHECKING:
    import zarr

__all__ = [
    "PROCESS_LOCAL",
    "RemoteStore",
    "UrlShardStore",
    "index_folder",
    "is_url",
    "require_lasting",
]

_MARKER = ".complete"


#: fsspec file systems that live in one process only: an index whose shards are there could be
#: read by no other command (refused when an index is created)
PROCESS_LOCAL = ("memory",)


def index_folder(path: str | os.PathLike[str]) -> Path:
    """The local folder of an index given as a path or as a ``file://`` URL (``file:///srv/idx``,
    ``file://localhost/srv/idx``); any other URL raises :class:`ConfigError`: the catalog is a
    local SQLite file (the shards may live at a URL: ``--shard-store``)."""
    if not is_url(path):
        return Path(path)
    parts = urlsplit(str(path))
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        return Path(unquote(parts.path))
    raise ConfigError(
        f"INDEX must be a local folder (a path, or file:///path); found the URL {str(path)!r}. "
        "The catalog is a local SQLite file; keep the shards at a URL with --shard-store"
    )


def require_lasting(url: str) -> str:
    """``url`` itself when a shard store there outlives the process; :class:`ConfigError`
    for one of :data:`PROCESS_LOCAL` (``memory://``: an index made from the command line
    would have lost its shards when the next command opens it)."""
    protocol = urlsplit(url).scheme.lower()
    if protocol in PROCESS_LOCAL:
        raise ConfigError(
            f"--shard-store {url!r}: a {protocol}:// store lives in one process only, so no "
            "later command could read the index; use a lasting URL (s3://bucket/prefix, "
            "file:///nfs/path) or leave --shard-store out (shards in INDEX/shards)"
        )
    return url


def is_url(root: str | os.PathLike[str]) -> bool:
    """True for ``protocol://...`` strings (an fsspec URL), False for local paths."""
    return isinstance(root, str) and "://" in root


class RemoteStore:
    """The file operations :class:`~simdask.storage.shards.ShardStore` needs, on an fsspec URL."""

    def __init__(self, url: str):
        self.url = url.rstrip("/")
        import fsspec  # optional: only a URL store needs it

        self.fs, self.base = fsspec.core.url_to_fs(self.url)

    def _dir(self, generation: int, shard: int) -> str:
        return f"{self.base}/gen-{generation:06d}/shard-{shard:04d}"

    def complete(self, generation: int, shard: int) -> bool:
        """True when the shard's completion marker exists."""
        return bool(self.fs.exists(f"{self._dir(generation, shard)}/{_MARKER}"))

    def write(self, generation: int, shard: int, files: dict[str, bytes]) -> int:
        """Upload a shard's files (replacing an earlier attempt), then its marker; returns
        the bytes written."""
        target = self._dir(generation, shard)
        if self.fs.exists(target):
            self.fs.rm(target, recursive=True)
        for name in files:
            self.fs.makedirs(posixpath.dirname(f"{target}/{name}"), exist_ok=True)
        self.fs.pipe({f"{target}/{name}": blob for name, blob in files.items()})
        failpoints.hit("shard_write")
        # the marker holds each file's size and xxh3 (recorded in the catalog at the commit;
        # `simdask check` hashes the files against them)
        sums = {name: [len(b), xxhash.xxh3_64_hexdigest(b)] for name, b in sorted(files.items())}
        self.fs.pipe_file(f"{target}/{_MARKER}", json.dumps(sums).encode())
        return sum(len(b) for b in files.values())

    def recorded(self, generation: int, shard: int) -> dict[str, tuple[int, str]]:
        """``{name: (size in bytes, xxh3)}`` of a complete shard's files as uploaded (empty
        for a shard uploaded before markers held them); a marker that does not parse is
        damage."""
        marker = f"{self._dir(generation, shard)}/{_MARKER}"
        raw = self.fs.cat_file(marker)
        if not raw:
            return {}
        try:
            return {str(n): (int(v[0]), str(v[1])) for n, v in json.loads(raw).items()}
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
            raise damaged(f"the completion marker {self.url}/{marker} is damaged ({e})") from None

    def digest(self, relative: str) -> tuple[int, str]:
        """``(size in bytes, xxh3)`` of the file ``relative`` (read in blocks)."""
        h = xxhash.xxh3_64()
        size = 0
        with self.fs.open(f"{self.base}/{relative}", "rb") as f:
            while block := f.read(BLOCK):
                h.update(block)
                size += len(block)
        return size, h.hexdigest()

    def generations(self) -> list[int]:
        """Generations that have a directory under the URL."""
        if not self.fs.exists(self.base):
            return []
        names = [posixpath.basename(p.rstrip("/")) for p in self.fs.ls(self.base, detail=False)]
        return sorted(int(n[4:]) for n in names if n.startswith("gen-") and n[4:].isdigit())

    def remove_generation(self, generation: int) -> None:
        """Delete a generation (missing is fine)."""
        path = f"{self.base}/gen-{generation:06d}"
        if self.fs.exists(path):
            self.fs.rm(path, recursive=True)

    def remove(self, relative: str) -> None:
        """Delete ``relative`` and what is under it (missing is fine)."""
        path = f"{self.base}/{relative}"
        if self.fs.exists(path):
            self.fs.rm(path, recursive=True)

    def names(self, relative: str) -> list[str]:
        """The names directly under ``relative`` (none if missing)."""
        path = f"{self.base}/{relative}"
        if not self.fs.exists(path):
            return []
        return [posixpath.basename(p.rstrip("/")) for p in self.fs.ls(path, detail=False)]

    def nbytes(self, relative: str) -> int:
        """Bytes stored under ``relative`` (0 if missing)."""
        path = f"{self.base}/{relative}"
        return int(self.fs.du(path)) if self.fs.exists(path) else 0


class UrlShardStore(ShardStore):
    """Shards under an fsspec URL, compressed; a shard's files are uploaded, then its
    completion marker (see the module docstring)."""

    compressed = True

    def __init__(self, url: str):
        self.files = RemoteStore(url)
        self.root = self.files.url

    @property
    def location(self) -> str:
        return self.root

    @property
    def url(self) -> str:
        return self.root

    def remove_shard(self, generation: int, shard: int) -> None:
        self.files.remove(f"gen-{generation:06d}/shard-{shard:04d}")

    def stored_ranges(self, generation: int) -> list[int]:
        names = self.files.names(f"gen-{generation:06d}")
        return sorted(int(n[6:]) for n in names if n.startswith("shard-") and n[6:].isdigit())

    def path(self, generation: int, shard: int) -> str:
        return f"{self.root}/gen-{generation:06d}/shard-{shard:04d}"

    def exists(self, generation: int, shard: int) -> bool:
        return self.files.complete(generation, shard)

    def _store_files(self, generation: int, shard: int, files: dict[str, bytes]) -> int:
        return self.files.write(generation, shard, files)

    def recorded_files(self, generation: int, shard: int) -> dict[str, tuple[int, str]]:
        return self.files.recorded(generation, shard)

    def file_digest(self, relative: str) -> tuple[int, str]:
        return self.files.digest(relative)

    def _open_group(self, generation: int, shard: int) -> zarr.Group:
        import zarr  # heavy (0.4 s to import): only a compressed shard needs it

        self._check(generation, shard)
        return zarr.open_group(self.path(generation, shard), mode="r")

    def generations(self) -> list[int]:
        return self.files.generations()

    def remove_generation(self, generation: int) -> None:
        self.files.remove_generation(generation)

    def _nbytes(self, relative: str) -> int:
        return self.files.nbytes(relative)
