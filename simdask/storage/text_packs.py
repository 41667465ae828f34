"""Extracted texts, compressed, in pack files written by the chunking tasks (DESIGN §2, Texts).

A pack holds the zstd-compressed (level 1; against zlib-6: scripts/bench_kernels.py) UTF-8
texts of one batch of one run, one after another; the
catalog records for each document its pack, offset and length. Packs are written atomically
and never changed; packs no committed document points to are deleted by garbage collection.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from simdask.errors import IndexDamagedError
from simdask.storage.durable import publish

__all__ = ["PACK_NAME", "TEMP_NAME", "TextStore"]

#: the names simdask gives its packs: ``r<run>-b<batch>.pack`` (the chunking task names them)
PACK_NAME = re.compile(r"r\d{6,}-b\d{6,}\.pack")
#: the temporary file a pack is written to before its rename (left by a killed run)
TEMP_NAME = re.compile(r"\.r\d{6,}-b\d{6,}\.pack\.[0-9a-f]{8}\.tmp")


class TextStore:
    """Pack files under ``root``."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)

    @staticmethod
    def encode_pack(texts: list[str]) -> tuple[bytes, list[tuple[int, int]]]:
        """The bytes of a pack holding ``texts`` and each text's ``(offset, length)`` in bytes."""
        from numcodecs import Zstd  # heavy: only compressed data needs it

        codec = Zstd(level=1)
        blobs = [codec.encode(t.encode("utf-8")) for t in texts]
        spans, pos = [], 0
        for b in blobs:
            spans.append((pos, len(b)))
            pos += len(b)
        return b"".join(blobs), spans

    def write_pack_bytes(self, name: str, data: bytes) -> None:
        """Write a pack encoded by :meth:`encode_pack` atomically and durably (temp file,
        fsync, rename, fsync of the folders up to the index folder:
        :func:`~simdask.storage.durable.publish`)."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        publish(tmp, self.root / name, self.root.parent)

    def write_pack(self, name: str, texts: list[str]) -> list[tuple[int, int]]:
        """Write ``texts`` as pack ``name``; returns ``(offset, length)`` in bytes of each."""
        data, spans = self.encode_pack(texts)
        self.write_pack_bytes(name, data)
        return spans

    def read(self, pack: str, offset: int, length: int) -> str:
        """One document's text."""
        from numcodecs import Zstd  # heavy: only compressed data needs it

        path = self.root / pack
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                blob = f.read(length)
            return bytes(Zstd().decode(blob)).decode("utf-8")
        except (OSError, RuntimeError, ValueError) as e:
            raise IndexDamagedError(
                f"text pack {path} at offset {offset}: expected {length} compressed bytes, {e}; "
                "run `simdask check INDEX`, then restore the index folder from a backup or "
                "rebuild it with `simdask update INDEX SOURCE... --rebuild`"
            ) from e

    def packs(self) -> list[str]:
        """Names of all complete packs (only names simdask gives its packs, see
        :data:`PACK_NAME`)."""
        if not self.root.exists():
            return []
        return sorted(p.name for p in self.root.iterdir() if PACK_NAME.fullmatch(p.name))

    def temp_files(self) -> list[str]:
        """Names of packs' temporary files (:data:`TEMP_NAME`): none outside a run; a run
        killed while writing a pack leaves one (garbage collection removes it)."""
        if not self.root.exists():
            return []
        return sorted(p.name for p in self.root.iterdir() if TEMP_NAME.fullmatch(p.name))

    def remove(self, name: str) -> None:
        """Delete a pack (missing is fine)."""
        (self.root / name).unlink(missing_ok=True)

    def nbytes(self) -> int:
        """Bytes of all packs."""
        return sum((self.root / n).stat().st_size for n in self.packs())
