"""Sources: files, folders (recursively) and JSONL files, listed as items and read in tasks.

Listing happens on the driver and touches only names and (for JSONL) line offsets; the text
itself is read by the chunking tasks, so the driver never holds the corpus.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xxhash

from .errors import ExtractionError, SourceError

__all__ = [
    "TEXT_SUFFIXES",
    "KnownHashes",
    "SourceItem",
    "content_hash",
    "fetch_item",
    "list_items",
    "parse_item",
    "read_document",
    "read_item",
    "read_queries",
]

#: File name suffixes read as plain text when a folder is walked.
TEXT_SUFFIXES = (".txt", ".md")
_BLOCK = 1 << 26  # bytes read at a time when scanning a JSONL file for line breaks


@dataclass(frozen=True)
class SourceItem:
    """One document to read: a whole file, or the byte range of one JSONL line.

    ``key`` is known for files (path relative to the folder given, or the file name for a file
    given directly) and ``None`` for JSONL lines, whose key is their ``id`` field.
    ``prefix`` is put before the key when the item is read (e.g. ``"A/"`` for the first group
    of :func:`simdask.compare_groups`, so equal keys of two groups stay apart).
    """

    source: str
    path: str
    key: str | None
    start: int = 0
    end: int = -1
    prefix: str = ""


def content_hash(data: bytes) -> str:
    """Content hash of a document's bytes (xxh3-128, hex)."""
    return xxhash.xxh3_128_hexdigest(data)


class KnownHashes:
    """Content hashes of indexed documents by key, as numpy arrays (cheap to ship to workers).

    Keys are looked up by their 64-bit xxh3 hash; a document counts as unchanged only if both
    the key hash and the 128-bit content hash match, so a key-hash collision can at worst
    cause a needless recomputation, never a missed change.
    """

    def __init__(self, hashes: dict[str, str]):
        keys = np.array([xxhash.xxh3_64_intdigest(k.encode()) for k in hashes], dtype=np.uint64)
        digests = [int(h, 16) for h in hashes.values()]
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        self.hi = np.array([d >> 64 for d in digests], dtype=np.uint64)[order]
        self.lo = np.array([d & (2**64 - 1) for d in digests], dtype=np.uint64)[order]

    def unchanged(self, key: str, digest: str) -> bool:
        """True when ``key`` is indexed with content hash ``digest``."""
        k = np.uint64(xxhash.xxh3_64_intdigest(key.encode()))
        d = int(digest, 16)
        i = int(np.searchsorted(self.keys, k))
        while i < len(self.keys) and self.keys[i] == k:
            if int(self.hi[i]) == d >> 64 and int(self.lo[i]) == d & (2**64 - 1):
                return True
            i += 1
        return False


def _jsonl_items(path: Path, source: str, prefix: str = "") -> list[SourceItem]:
    size = path.stat().st_size
    breaks = []
    with open(path, "rb") as f:
        pos = 0
        while pos < size:
            block = f.read(_BLOCK)
            if not block:
                break
            breaks.append(np.flatnonzero(np.frombuffer(block, np.uint8) == 10) + pos)
            pos += len(block)
    ends = np.concatenate([*breaks, np.array([size], dtype=np.int64)]).astype(np.int64)
    starts = np.concatenate([[0], ends[:-1] + 1])
    keep = ends - starts > 1  # skip empty lines
    return [
        SourceItem(source, str(path), None, int(s), int(e), prefix)
        for s, e in zip(starts[keep], ends[keep], strict=True)
    ]


def list_items(sources: Iterable[str | os.PathLike], prefix: str = "") -> list[SourceItem]:
    """All documents of the sources, in a deterministic order.

    A source is a text file, a folder (walked recursively for :data:`TEXT_SUFFIXES`) or a
    ``.jsonl`` file of ``{"id": ..., "text": ...}`` objects. A missing source raises
    :class:`SourceError`. ``prefix`` is put before every key (see :class:`SourceItem`).
    """
    items: list[SourceItem] = []
    for src in sources:
        path = Path(src)
        name = str(Path(src).resolve())
        if path.is_dir():
            files = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES
            )
            items.extend(
                SourceItem(name, str(p), p.relative_to(path).as_posix(), prefix=prefix)
                for p in files
            )
        elif path.is_file():
            if path.suffix.lower() == ".jsonl":
                items.extend(_jsonl_items(path, name, prefix))
            else:
                items.append(SourceItem(name, str(path), path.name, prefix=prefix))
        else:
            raise SourceError(f"source {name!r} not found: expected a file, folder or .jsonl file")
    return items


def fetch_item(item: SourceItem) -> bytes:
    """The raw bytes of one item (a whole file, or one JSONL line).

    Raises :class:`ExtractionError` of kind ``unreadable`` when the file is gone or cannot be
    read. Used by the chunking tasks, or by the client when workers do not share its
    filesystem (:mod:`simdask.placement`).
    """
    label = item.prefix + (item.key or f"{item.path}@{item.start}")
    try:
        with open(item.path, "rb") as f:
            if item.end >= 0:
                f.seek(item.start)
                return f.read(item.end - item.start)
            return f.read()
    except OSError as e:
        raise ExtractionError(
            label, "unreadable", f"cannot read {item.path}: {e.strerror or e}"
        ) from e


def parse_item(item: SourceItem, data: bytes) -> tuple[str, str, str]:
    """Turn an item's raw bytes into ``(key, text, content_hash)``.

    Raises :class:`ExtractionError` (with the key, or the path where no key is known) whose
    ``kind`` is ``encoding`` or ``jsonl``.
    """
    label = item.prefix + (item.key or f"{item.path}@{item.start}")
    if item.key is not None:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise ExtractionError(
                label, "encoding", f"expected UTF-8 text, found invalid byte at offset {e.start}"
            ) from e
        return item.prefix + item.key, text, content_hash(data)
    try:
        obj = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ExtractionError(label, "jsonl", f"expected a JSON object on this line: {e}") from e
    if not isinstance(obj, dict) or "id" not in obj or not isinstance(obj.get("text"), str):
        raise ExtractionError(label, "jsonl", 'expected an object with "id" and a string "text"')
    text = obj["text"]
    return item.prefix + str(obj["id"]), text, content_hash(text.encode("utf-8"))


def read_document(path: str | os.PathLike) -> tuple[str, str]:
    """Read one document file: ``(key, text)``, the key being the file name.

    The single function through which ``simdask query`` (and :func:`read_queries`) reads a
    document file; today a UTF-8 text file (.txt, .md or any other name). Raises
    :class:`ExtractionError` (``kind``: ``missing``, ``unreadable``, ``encoding``).
    """
    p = Path(path)
    if not p.is_file():
        found = "a folder" if p.is_dir() else "nothing"
        raise ExtractionError(p.name, "missing", f"expected a document file at {p}, found {found}")
    key, text, _ = read_item(SourceItem(str(p.resolve()), str(p), p.name))
    return key, text


def read_queries(
    paths: Iterable[str | os.PathLike],
) -> list[tuple[str, str | ExtractionError]]:
    """Query documents of files, folders and JSONL files: ``[(key, text or error)]`` in order.

    A file is one document read by :func:`read_document`; a folder gives its
    :data:`TEXT_SUFFIXES` files (keys relative to it); a ``.jsonl`` file gives one document per
    line. A document that cannot be read (or a path that does not exist) gives its
    :class:`ExtractionError` in place of the text, so that the others are still queried.
    """
    out: list[tuple[str, str | ExtractionError]] = []
    for src in paths:
        path = Path(src)
        if path.is_file() and path.suffix.lower() == ".jsonl":
            for item in _jsonl_items(path, str(path.resolve())):
                try:
                    key, text, _ = read_item(item)
                except ExtractionError as e:
                    out.append((e.key, e))
                else:
                    out.append((key, text))
            continue
        files = [path]
        if path.is_dir():
            files = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES
            )
        for f in files:
            try:
                key, text = read_document(f)
            except ExtractionError as e:
                out.append((e.key, e))
                continue
            out.append((f.relative_to(path).as_posix() if path.is_dir() else key, text))
    return out


def read_item(item: SourceItem) -> tuple[str, str, str]:
    """Read one item: ``parse_item(item, fetch_item(item))``."""
    return parse_item(item, fetch_item(item))
