"""The local shard store: shards in an index directory, raw (memory-mappable), each written
into a temporary directory and renamed into place (a leaf backend: it imports only the
:class:`~simdask.storage.shards.ShardStore` contract; :mod:`simdask.storage.backends` chooses
it for a root that is not a URL)."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simdask import failpoints
from simdask.errors import IndexFormatError
from simdask.kernels.postings import ShardData
from simdask.storage.durable import publish
from simdask.storage.segment_writer import SegmentWriter
from simdask.storage.shard_codec import ARRAYS, KEY_SAMPLE, group_attributes, write_raw
from simdask.storage.shards import ShardStore
from simdask.storage.zarr_raw import RawArrayFile, array_shape, raw_array_file

if TYPE_CHECKING:
    import zarr

__all__ = ["LocalShardStore"]

#: the temporary directory a segment is written into before it is renamed into place
_TEMP = re.compile(r"\.tmp-shard-\d{4,}-[0-9a-f]{8}")


class LocalShardStore(ShardStore):
    """Shards in a local directory, raw (memory-mappable), each written into a temporary
    directory and renamed into place."""

    compressed = False

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)

    @property
    def location(self) -> str:
        return str(self.root)

    @property
    def local_root(self) -> Path:
        return self.root

    @property
    def can_mmap(self) -> bool:
        return True

    def remove_shard(self, generation: int, shard: int) -> None:
        path = self.path(generation, shard)
        shutil.rmtree(path, ignore_errors=True)
        parent = path.parent
        if parent.exists() and not any(parent.iterdir()):
            parent.rmdir()

    def remove_unpublished(self) -> int:
        temps = [p for p in self.root.glob("gen-*/.tmp-shard-*") if _TEMP.fullmatch(p.name)]
        for t in temps:
            shutil.rmtree(t, ignore_errors=True)
        return len(temps)

    def stored_ranges(self, generation: int) -> list[int]:
        folder = self.root / f"gen-{generation:06d}"
        names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
        return sorted(int(n[6:]) for n in names if n.startswith("shard-") and n[6:].isdigit())

    def path(self, generation: int, shard: int) -> Path:
        return self.root / f"gen-{generation:06d}" / f"shard-{shard:04d}"

    def exists(self, generation: int, shard: int) -> bool:
        return (self.path(generation, shard) / "zarr.json").exists()

    def write(self, generation: int, shard: int, data: ShardData) -> int:
        final, tmp = self._paths(generation, shard)
        write_raw(tmp, data)  # straight to disk, no copy in memory
        return self._publish(final, tmp)

    def writer(self, generation: int, shard: int, lo: int, hi: int) -> SegmentWriter:
        final, tmp = self._paths(generation, shard)
        return SegmentWriter(tmp, lo, hi, lambda t: self._publish(final, t))

    def _store_files(self, generation: int, shard: int, files: dict[str, bytes]) -> int:
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

    def _publish(self, final: Path, tmp: Path) -> int:
        """Put the finished segment ``tmp`` in place at ``final``, durably (its files and
        their names fsynced up to the index folder: :func:`~simdask.storage.durable.publish`);
        returns bytes stored."""
        failpoints.hit("shard_write")
        if final.exists():  # an earlier, interrupted attempt at the same work
            shutil.rmtree(final)
        publish(tmp, final, self.root.parent)
        return _du(final)

    def _open_group(self, generation: int, shard: int) -> zarr.Group:
        import zarr  # heavy (0.4 s to import): only a compressed shard needs it

        self._check(generation, shard)
        return zarr.open_group(str(self.path(generation, shard)), mode="r")

    def _raw_files(self, generation: int, shard: int) -> dict[str, Any] | None:
        self._check(generation, shard)
        path = self.path(generation, shard)
        maybe = {name: raw_array_file(path / name) for name, _ in ARRAYS}
        files = {name: f for name, f in maybe.items() if f is not None}
        if len(files) < len(maybe):
            return None  # an older, compressed shard: zarr reads it
        attrs = group_attributes(path)
        out: dict[str, Any] = {**files, "lo": int(attrs["lo"]), "hi": int(attrs["hi"])}
        sample = _raw_sample(path, attrs, files["chunk_keys"])
        if sample is not None:
            out["key_sample"] = sample
        return out

    def counts(self, generation: int, shard: int) -> tuple[int, int]:
        self._check(generation, shard)
        path = self.path(generation, shard)
        return array_shape(path / "chunk_keys")[0], array_shape(path / "doc_ids")[0]

    def generations(self) -> list[int]:
        if not self.root.exists():
            return []
        return sorted(int(p.name[4:]) for p in self.root.glob("gen-*") if p.name[4:].isdigit())

    def remove_generation(self, generation: int) -> None:
        shutil.rmtree(self.root / f"gen-{generation:06d}", ignore_errors=True)

    def _nbytes(self, relative: str) -> int:
        return _du(self.root / relative)


def _raw_sample(
    path: Path, attrs: dict[str, Any], keys: RawArrayFile
) -> tuple[int, RawArrayFile] | None:
    """``(step, file)`` of the shard's stored key sample (``chunk_keys[::step]``), None for a
    shard written without one; checked against the keys' dtype and number."""
    step = attrs.get("key_sample_step")
    if step is None or not (path / KEY_SAMPLE / "zarr.json").exists():
        return None
    raw = raw_array_file(path / KEY_SAMPLE)
    expected = -(-keys.length // int(step)) if int(step) > 0 else -1
    if raw is None or raw.dtype != keys.dtype or raw.length != expected:
        found = "another layout" if raw is None else f"{raw.length} x {raw.dtype.name}"
        raise IndexFormatError(
            f"{path / KEY_SAMPLE}: expected {expected} x {keys.dtype.name} "
            f"(chunk_keys[::{step}]), found {found}"
        )
    return int(step), raw


def _du(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
