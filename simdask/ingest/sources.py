"""Sources: files, folders (recursively) and JSONL files, listed as items and read in tasks.

Listing happens on the driver and touches only names and (for JSONL) line offsets; the text
itself is read by the chunking tasks, so the driver never holds the corpus. Reading is two
steps of plain arguments: :func:`fetch_item` gets the raw bytes (where the file is), and
:func:`parse_item` hashes them and, only for a changed document, extracts its text
(:mod:`simdask.ingest.extract`).
"""

from __future__ import annotations

import json
import mmap
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xxhash

from simdask.errors import ConfigError, ExtractionError, SourceError
from simdask.ingest.extract import SUFFIXES, extract_text
from simdask.ingest.extract.extract_limits import ExtractLimits
from simdask.ingest.listing import (
    FOLDER_SUFFIX,
    folder_key,
    jsonl_lines,
    safe_text,
    source_id,
    walk_folder,
)
from simdask.ingest.unsupported import unsupported_message

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "TEXT_SUFFIXES",
    "KnownHashes",
    "SourceItem",
    "content_hash",
    "fetch_item",
    "format_size",
    "item_keys",
    "list_items",
    "parse_item",
    "parse_size",
    "read_document",
    "read_item",
    "read_queries",
    "require_sources",
    "safe_text",
    "source_id",
]

#: File name suffixes (lower case) read when a folder is walked: .txt .md .html .htm .pdf
#: .docx .odt .rtf .doc. Hidden files and Office lock files (``~$x.docx``) are left out.
TEXT_SUFFIXES = tuple(SUFFIXES)
#: Files larger than this are not read (kind ``too_large``); a run option, not in the index.
DEFAULT_MAX_FILE_BYTES = 100_000_000
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(i?)(b?)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class SourceItem:
    """One document to read: a whole file, or the byte range of one JSONL line.

    ``source`` is the source's identity (:func:`source_id`: its resolved path). ``key`` is
    known for files (``<folder name>/<path inside it>`` for a folder's documents, the file
    name for a file given directly; see :mod:`simdask.ingest.listing`) and ``None`` for
    JSONL lines, whose key is their ``id`` field; ``line`` is a JSONL line's number (from 1).
    ``prefix`` is put before the key when the item is read (e.g. ``"A/"`` for the first group
    of ``simdask compare``), so that equal keys of two groups stay two documents. ``error``:
    the reason a folder could not be listed; such an item stands for the folder (its key
    ends with ``/``) and reading it raises an ``unreadable`` error, so that the folder is
    reported and its indexed documents are kept; or why a file of a folder is not read
    (``error_kind`` ``unsupported``: a .doc, an image), raised when it is read.
    """

    source: str
    path: str
    key: str | None
    start: int = 0
    end: int = -1
    prefix: str = ""
    line: int = 0
    error: str = ""
    error_kind: str = "unreadable"


def parse_size(text: str | int) -> int:
    """Bytes in a human size: ``50MB`` = 50,000,000, ``1.5GiB`` = 1.5 * 2**30, ``4096`` =
    4096 bytes; units k, M, G, T (powers of 1000, or of 1024 with ``i``), case-insensitive,
    ``B`` optional. Raises :class:`ConfigError` for anything else."""
    if isinstance(text, int):
        return text
    m = _SIZE.fullmatch(text)
    if not m or (m.group(3) and not m.group(2)):
        raise ConfigError(f"expected a size such as 50MB, 2GiB or 4096, found {text!r}")
    number, prefix, binary = float(m.group(1)), m.group(2).lower(), bool(m.group(3))
    return int(number * (1024 if binary else 1000) ** "_kmgt".index(prefix or "_"))


def format_size(n: int) -> str:
    """A byte count for messages: ``120.3 MB``."""
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


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
        if len(self.keys) == 0:  # a first build: nothing to look up
            return False
        k = np.uint64(xxhash.xxh3_64_intdigest(key.encode()))
        d = int(digest, 16)
        i = int(np.searchsorted(self.keys, k))
        while i < len(self.keys) and self.keys[i] == k:
            if int(self.hi[i]) == d >> 64 and int(self.lo[i]) == d & (2**64 - 1):
                return True
            i += 1
        return False


def _jsonl_items(path: Path, source: str, prefix: str = "") -> list[SourceItem]:
    return [
        SourceItem(source, str(path), None, s, e, prefix, line=n) for s, e, n in jsonl_lines(path)
    ]


def _folder_items(path: Path, source: str, prefix: str) -> list[SourceItem]:
    top = folder_key(path)
    skipped: list[tuple[str, str]] = []
    odd: list[tuple[str, str, str]] = []
    indexes: list[tuple[str, str]] = []
    items: list[SourceItem] = []
    files, failed = walk_folder(path, SUFFIXES, skipped, odd, indexes)
    for f, rel in indexes:  # an index inside its sources: said, its files never read
        msg = (
            f"the folder {safe_text(f)} holds a simdask index (catalog.sqlite): its files are "
            "not documents and are not read; keep an index outside the folders it indexes"
        )
        key = (top + safe_text(rel) + FOLDER_SUFFIX) if rel else top or FOLDER_SUFFIX
        items.append(SourceItem(source, f, key, prefix=prefix, error=msg, error_kind="unsupported"))
    items += [SourceItem(source, f, top + safe_text(rel), prefix=prefix) for f, rel in files]
    for f, rel in skipped:  # reported, never dropped silently
        msg = unsupported_message(rel, TEXT_SUFFIXES)
        key = top + safe_text(rel)
        items.append(SourceItem(source, f, key, prefix=prefix, error=msg, error_kind="unsupported"))
    for f, rel, what in odd:  # FIFOs, devices, dangling symlinks: reported, never read
        msg = f"expected a regular file, found {what}: not read"
        key = top + safe_text(rel)
        items.append(SourceItem(source, f, key, prefix=prefix, error=msg, error_kind="unreadable"))
    for rel, reason in failed:
        where = os.path.join(path, rel) if rel else str(path)
        items.append(
            SourceItem(
                source,
                where,
                (top + safe_text(rel)) or FOLDER_SUFFIX,
                prefix=prefix,
                error=f"cannot list the folder {safe_text(where)}: expected a readable folder, "
                f"found: {reason}; its indexed documents are kept",
            )
        )
    return items


def list_items(sources: Iterable[str | os.PathLike], prefix: str = "") -> list[SourceItem]:
    """All documents of the sources, in a deterministic order.

    A source is a document file (any name: its format is recognised by content or suffix), a
    folder (walked recursively for :data:`TEXT_SUFFIXES`, case-insensitive, without hidden
    files and Office lock files) or a ``.jsonl`` file of ``{"id": ..., "text": ...}``
    objects. Keys: see :class:`SourceItem`. A folder that cannot be listed gives an item
    standing for it (``error`` set). A missing source raises :class:`SourceError`.
    ``prefix`` is put before every key (see :class:`SourceItem`).
    """
    items: list[SourceItem] = []
    for src in sources:
        # absolute: a worker in another working directory reads the same file (issue 32)
        path = Path(os.path.abspath(src))
        name = source_id(path)
        if path.is_dir():
            items.extend(_folder_items(path, name, prefix))
        elif path.is_file():
            if path.suffix.lower() == ".jsonl":
                items.extend(_jsonl_items(path, name, prefix))
            else:
                items.append(SourceItem(name, str(path), safe_text(path.name), prefix=prefix))
        else:
            raise SourceError(f"source {name!r} not found: expected a file, folder or .jsonl file")
    return items


def item_keys(items: Sequence[SourceItem]) -> list[str | None]:
    """The key each item will be indexed under, as far as it can be told before the item is
    read by a chunking task: files have theirs; a JSONL line's is its ``id`` (each JSONL
    file is read once, sequentially, its lines parsed; costs what the items cost). None
    where it cannot be told (a line that is not a JSON object with an ``id``: its task
    reports it)."""
    out: list[str | None] = [None] * len(items)
    lines: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        if item.key is not None:
            out[i] = item.prefix + item.key
        elif not item.error and item.end >= 0:
            lines.setdefault(item.path, []).append(i)
    for path, idx in lines.items():
        try:
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                for i in idx:
                    out[i] = _line_key(items[i], m)
        except (OSError, ValueError):  # vanished, unreadable or empty: the tasks report it
            continue
    return out


def _line_key(item: SourceItem, data) -> str | None:
    """The key of one JSONL line in ``data`` (None if it has none)."""
    try:
        obj = json.loads(data[item.start : item.end])
        return item.prefix + _jsonl_id(obj["id"], _label(item))
    except (ValueError, TypeError, KeyError, IndexError, ExtractionError):
        return None


def require_sources(sources: Iterable[str | os.PathLike]) -> None:
    """Raise :class:`SourceError` for the first source that is neither a file nor a folder
    (checked before an index is created, so that a mistyped SOURCE leaves nothing behind)."""
    for src in sources:
        path = Path(src)
        if not (path.is_dir() or path.is_file()):
            raise SourceError(
                f"source {str(path.resolve())!r} not found: expected a file, folder or .jsonl file"
            )


def _label(item: SourceItem) -> str:
    """How errors name an item: its key, or ``file.jsonl:LINE`` for a JSONL line."""
    return item.prefix + (item.key or f"{safe_text(item.path)}:{item.line}")


def _too_large(item: SourceItem, size: int, limit: int) -> ExtractionError:
    return ExtractionError(
        _label(item),
        "too_large",
        f"expected at most {format_size(limit)} (the run's --max-file-size / max_file_bytes), "
        f"found {format_size(size)}",
    )


def _unreadable(item: SourceItem, e: OSError) -> ExtractionError:
    return ExtractionError(
        _label(item),
        "unreadable",
        f"cannot read {safe_text(item.path)}: expected a readable file (it was listed), "
        f"found: {e.strerror or e}",
    )


def _read_span(f, item: SourceItem, limit: int) -> bytes:
    """The bytes of a JSONL line item from the open file ``f`` (``limit`` < 0: no limit)."""
    size = item.end - item.start
    if 0 <= limit < size:
        raise _too_large(item, size, limit)
    f.seek(item.start)
    return f.read(size)


def fetch_items(
    items: Sequence[SourceItem], max_bytes: int | None = DEFAULT_MAX_FILE_BYTES
) -> list[bytes | ExtractionError]:
    """:func:`fetch_item` of every item, in order: its bytes or its :class:`ExtractionError`
    (the same errors, a line's named ``file.jsonl:LINE``). Consecutive lines of one JSONL
    file are read through one open."""
    limit = max_bytes if max_bytes is not None else -1
    out: list[bytes | ExtractionError] = []
    i = 0
    while i < len(items):
        j = i + 1
        if _is_line(items[i]):
            while j < len(items) and _is_line(items[j]) and items[j].path == items[i].path:
                j += 1
        if j == i + 1:
            try:
                out.append(fetch_item(items[i], max_bytes))
            except ExtractionError as e:
                out.append(e)
        else:
            run: list[bytes | ExtractionError] = []
            try:
                with open(items[i].path, "rb") as f:
                    for x in items[i:j]:
                        try:
                            run.append(_read_span(f, x, limit))
                        except ExtractionError as e:
                            run.append(e)
            except OSError as e:  # the file (or a read) failed: every line left gets it
                run += [_unreadable(x, e) for x in items[i + len(run) : j]]
            out += run
        i = j
    return out


def _is_line(item: SourceItem) -> bool:
    return item.end >= 0 and not item.error


def fetch_item(item: SourceItem, max_bytes: int | None = DEFAULT_MAX_FILE_BYTES) -> bytes:
    """The raw bytes of one item (a whole file, or one JSONL line), read where the file is.

    The size is checked before reading (by ``stat`` for files). Raises
    :class:`ExtractionError` of kind ``unreadable`` (the file vanished, is not a regular
    file or cannot be read) or ``too_large`` (over ``max_bytes``; None: no limit). Used by
    the chunking tasks, or by the client when workers do not share its filesystem
    (:mod:`simdask.cluster.placement`).
    """
    label = _label(item)
    if item.error:
        raise ExtractionError(label, item.error_kind, item.error)
    limit = max_bytes if max_bytes is not None else -1
    try:
        with open(item.path, "rb") as f:
            if item.end >= 0:
                return _read_span(f, item, limit)
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ExtractionError(
                    label,
                    "unreadable",
                    f"expected a regular file at {safe_text(item.path)}, found none",
                )
            if 0 <= limit < st.st_size:
                raise _too_large(item, st.st_size, limit)
            data = f.read(limit + 1 if limit >= 0 else -1)
    except OSError as e:
        raise _unreadable(item, e) from e
    if 0 <= limit < len(data):  # it grew after the stat
        raise _too_large(item, len(data), limit)
    return data


def parse_item(
    item: SourceItem,
    data: bytes,
    known: KnownHashes | None = None,
    max_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
    notes: list | None = None,
) -> tuple[str, str | None, str]:
    """Key, text and content hash of one item from its raw bytes (see :func:`fetch_item`).

    The hash (of the raw file bytes; of the text for a JSONL line) comes first: a document
    that ``known`` holds with this key and hash is not extracted, and its text is None.
    ``max_bytes`` (the run's --max-file-size; None or 0: none) also bounds what a container
    format inflates to (:func:`~simdask.ingest.extract.extract_text`), which appends its
    notes (warnings about a document still extracted) to ``notes``.
    Raises :class:`ExtractionError` (kinds in :data:`simdask.ingest.extract.KINDS`).
    """
    if item.key is not None:
        key = item.prefix + item.key
        digest = content_hash(data)
        if known is not None and known.unchanged(key, digest):
            return key, None, digest
        limit = 0 if max_bytes is None else max_bytes
        return key, extract_text(data, key, limit, notes), digest
    label = _label(item)
    try:
        obj = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ExtractionError(label, "jsonl", f"expected a JSON object on this line: {e}") from e
    if not isinstance(obj, dict) or "id" not in obj or not isinstance(obj.get("text"), str):
        raise ExtractionError(label, "jsonl", 'expected an object with "id" and a string "text"')
    key, text = item.prefix + _jsonl_id(obj["id"], label), obj["text"]
    try:
        digest = content_hash(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise ExtractionError(
            key, "jsonl", f"expected valid Unicode text, found a lone surrogate at {e.start}"
        ) from e
    if known is not None and known.unchanged(key, digest):
        return key, None, digest
    most = ExtractLimits.for_file_size(max_bytes).text_chars
    if len(text) > most:
        raise ExtractionError(
            key,
            "too_large",
            f"expected at most {most:,} characters of text from one document (indexing costs "
            f"about 20 bytes per character), found {len(text):,} on this JSONL line",
        )
    return key, text, digest


def _jsonl_id(value: object, label: str) -> str:
    """The key of a JSONL line's ``id``: a string as given; an integer as its decimal digits
    (``17`` and ``"17"`` are the same key, so both in one run is a ``duplicate_key``); any
    other value, or a string that is not valid Unicode, a ``jsonl`` error."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ExtractionError(
                label,
                "jsonl",
                f'expected an "id" of valid Unicode, found a lone surrogate at {e.start} '
                f"({safe_text(value)!r})",
            ) from e
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    found = json.dumps(value)
    found = found if len(found) <= 40 else found[:37] + "..."
    raise ExtractionError(
        label, "jsonl", f'expected an "id" that is a string or an integer, found {found}'
    )


def read_item(
    item: SourceItem, max_bytes: int | None = DEFAULT_MAX_FILE_BYTES
) -> tuple[str, str, str]:
    """Read one item: ``(key, text, content_hash)``; :func:`fetch_item` then
    :func:`parse_item`."""
    key, text, digest = parse_item(item, fetch_item(item, max_bytes), max_bytes=max_bytes)
    return key, text or "", digest  # text is None only for a document ``known`` holds


def read_document(path: str | os.PathLike) -> tuple[str, str]:
    """Read one document file: ``(key, text)``, the key being the file name.

    The single function through which ``simdask query`` (and :func:`read_queries`) reads a
    document file, of any format :mod:`simdask.ingest.extract` reads (txt, md, html, pdf, docx, odt;
    recognised by content or suffix). Raises :class:`ExtractionError` (``kind``:
    ``missing``, or one of :data:`simdask.ingest.extract.KINDS`).
    """
    p = Path(path)
    if not p.is_file():
        found = "a folder" if p.is_dir() else "nothing"
        raise ExtractionError(
            safe_text(p.name),
            "missing",
            f"expected a document file at {safe_text(str(p))}, found {found}",
        )
    key, text, _ = read_item(SourceItem(source_id(p), str(p), safe_text(p.name)))
    return key, text


def read_queries(
    paths: Iterable[str | os.PathLike],
) -> list[tuple[str, str | ExtractionError]]:
    """Query documents of files, folders and JSONL files: ``[(key, text or error)]`` in order.

    Keys as :func:`list_items` gives them. A file is one document read by
    :func:`read_document`; a folder gives its :data:`TEXT_SUFFIXES` files (an unreadable
    subfolder gives its error); a ``.jsonl`` file gives one document per line. A document
    that cannot be read (or a path that does not exist) gives its :class:`ExtractionError`
    in place of the text, so that the others are still queried.
    """
    out: list[tuple[str, str | ExtractionError]] = []
    for src in paths:
        path = Path(src)
        if not (path.is_file() or path.is_dir()):
            try:
                read_document(path)
            except ExtractionError as e:
                out.append((e.key, e))
            continue
        items = list_items([path])
        for item, data in zip(items, fetch_items(items), strict=True):
            try:
                if isinstance(data, ExtractionError):
                    raise data
                key, text, _ = parse_item(item, data)
            except ExtractionError as e:
                out.append((e.key, e))
            else:
                out.append((key, text or ""))
    return out
