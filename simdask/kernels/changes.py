"""Which documents a run adds, modifies, keeps, deletes and fails, and their doc IDs.

:func:`resolve_changes` is pure: it takes what the chunking tasks report per item of the run
(a new version, unchanged, or an error) and what the catalog knows, and decides per key
(DESIGN §3.2). The rows it returns are :class:`DocumentRow`, the catalog's record of a
document (defined here, where it is computed; :mod:`simdask.storage.catalog` re-exports it).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from simdask.errors import ConfigError
from simdask.kernels.keys import FOLDER_SUFFIX

__all__ = [
    "DocumentCounts",
    "DocumentRow",
    "KnownDocument",
    "NewVersion",
    "ResolvedChanges",
    "resolve_changes",
]


@dataclass(frozen=True)
class DocumentRow:
    """One indexed document as the catalog knows it.

    ``n_chunks``: its number of distinct chunks (``|A|``); ``status``: ``indexed``, or
    ``too_short`` (fewer than ``k`` words, no chunks); ``text_pack`` / ``text_offset`` /
    ``text_length``: where its extracted text is stored (bytes in the pack).
    """

    doc_id: int
    key: str
    source: str
    content_hash: str
    n_chunks: int
    n_words: int
    status: str
    text_pack: str | None = None
    text_offset: int | None = None
    text_length: int | None = None

    def columns(self) -> tuple[object, ...]:
        """The fields in the order of the catalog's ``documents`` columns."""
        return (
            self.doc_id,
            self.key,
            self.source,
            self.content_hash,
            self.n_chunks,
            self.n_words,
            self.status,
            self.text_pack,
            self.text_offset,
            self.text_length,
        )


class KnownDocument(NamedTuple):
    """What a run needs to know of an indexed document (by key)."""

    doc_id: int
    content_hash: str
    source: str


@dataclass(frozen=True)
class NewVersion:
    """A document whose content a chunking task read and chunked: item ``item`` of the run.

    ``text_offset`` / ``text_length``: its extracted text in ``text_pack`` (bytes).
    """

    item: int
    key: str
    source: str
    content_hash: str
    n_chunks: int
    n_words: int
    text_pack: str | None
    text_offset: int
    text_length: int


@dataclass
class DocumentCounts:
    """Documents per outcome of one run. ``failed`` includes duplicate keys; ``too_short``
    documents are also counted as added or modified (they are indexed, without chunks)."""

    added: int = 0
    modified: int = 0
    unchanged: int = 0
    deleted: int = 0
    failed: int = 0
    too_short: int = 0


@dataclass
class ResolvedChanges:
    """The decisions of :func:`resolve_changes`.

    ``upserted``: the new and modified documents with their final doc IDs, in item order;
    ``items``: the run's item index of each (int64); ``deleted``: doc IDs removed (ascending);
    ``errors``: ``(key, kind, message)``; ``dropped``: doc IDs whose old postings go
    (modified or deleted; sorted uint32).
    """

    upserted: list[DocumentRow]
    items: np.ndarray
    deleted: list[int]
    errors: list[tuple[str, str, str]]
    counts: DocumentCounts
    dropped: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))

    @cached_property
    def doc_ids(self) -> np.ndarray:
        """Final doc ID of each upserted document (uint32, aligned with ``items``)."""
        return np.array([d.doc_id for d in self.upserted], dtype=np.uint32)

    @cached_property
    def touched(self) -> np.ndarray:
        """Doc IDs upserted or deleted (int64, ascending): their similarity rows are replaced."""
        return np.array(sorted({d.doc_id for d in self.upserted} | set(self.deleted)), np.int64)

    @cached_property
    def chunked(self) -> np.ndarray:
        """Upserted doc IDs that have chunks (uint32, ascending)."""
        return np.array(sorted(d.doc_id for d in self.upserted if d.n_chunks > 0), dtype=np.uint32)

    @cached_property
    def words(self) -> int:
        """Words of the upserted documents."""
        return int(sum(d.n_words for d in self.upserted))


def _collision(
    key: str,
    source: str,
    seen: Mapping[str, str],
    known: Mapping[str, KnownDocument],
    remove_keys: Collection[str],
) -> str | None:
    """Why ``key`` read from ``source`` may not be indexed: it was read earlier in this run
    (``seen``: key -> source), or another source's document holds it in the index (and it
    is not being removed); None if it may."""
    if key in seen:
        return f"key {key!r} given twice in this run, by {seen[key]} and by {source}; first kept"
    if source and key in known and known[key].source != source and key not in remove_keys:
        return (
            f"key {key!r} is held by a document from {known[key].source}; this one from "
            f"{source} is not indexed (keys are unique across sources: remove the other one "
            "first, or rename the file)"
        )
    return None


@dataclass
class _Claims:
    """What walking a run's items in order decided (see :func:`_first_claims`)."""

    recomputed: list[NewVersion]
    seen: dict[str, str]
    errors: list[tuple[str, str, str]]
    kept_folders: list[str]


def _first_claims(
    versions: Iterable[NewVersion],
    unchanged: Iterable[tuple[int, str]],
    failed: Iterable[tuple[int, str, str, str]],
    counts: DocumentCounts,
    known: Mapping[str, KnownDocument],
    remove_keys: Collection[str],
    source_of: Callable[[int], str],
) -> _Claims:
    """Walk the items in order: an error is reported and claims its key (a known document
    that failed to read keeps its old version; a folder that could not be listed keeps the
    documents under it); otherwise the first item of a key claims it, and a later one, or one
    whose key another source's document holds, is a ``duplicate_key`` error."""
    events: list[tuple[int, tuple[str, str, str] | str | NewVersion]] = [
        (i, (k, kind, m)) for i, k, kind, m in failed
    ]
    events += [(i, key) for i, key in unchanged]
    events += [(v.item, v) for v in versions]
    events.sort(key=lambda e: e[0])
    out = _Claims([], {}, [], [])
    for item, data in events:
        if isinstance(data, tuple):  # an error
            key, kind, _ = data
            out.errors.append(data)
            counts.failed += 1
            out.seen.setdefault(key, source_of(item))
            if kind == "unreadable" and key.endswith(FOLDER_SUFFIX):
                out.kept_folders.append(key)
            continue
        key = data if isinstance(data, str) else data.key
        source = source_of(item)
        why = _collision(key, source, out.seen, known, remove_keys)
        if why is not None:
            out.errors.append((key, "duplicate_key", why))
            counts.failed += 1
            continue
        out.seen[key] = source
        if isinstance(data, str):
            counts.unchanged += 1
        else:
            out.recomputed.append(data)
    return out


def _rows(
    recomputed: list[NewVersion],
    known: Mapping[str, KnownDocument],
    final_of: Mapping[int, int],
    counts: DocumentCounts,
    errors: list[tuple[str, str, str]],
) -> list[DocumentRow]:
    """The catalog rows of the recomputed documents (known keys keep their doc IDs, new ones
    take ``final_of[item]``); counts added / modified / too_short and reports too_short."""
    upserted: list[DocumentRow] = []
    for v in recomputed:
        old = known.get(v.key)
        if old is None:
            counts.added += 1
        else:
            counts.modified += 1
        status = "indexed" if v.n_chunks > 0 else "too_short"
        if status == "too_short":
            counts.too_short += 1
            message = f"{v.n_words} words: too few to be compared (fewer than one chunk)"
            errors.append((v.key, "too_short", message))
        upserted.append(
            DocumentRow(
                final_of[v.item] if old is None else old.doc_id,
                v.key,
                v.source,
                v.content_hash,
                v.n_chunks,
                v.n_words,
                status,
                v.text_pack,
                v.text_offset,
                v.text_length,
            )
        )
    return upserted


def resolve_changes(
    versions: Sequence[NewVersion],
    unchanged: Iterable[tuple[int, str]],
    failed: Iterable[tuple[int, str, str, str]],
    known: Mapping[str, KnownDocument],
    allocate: Callable[[int], list[int]],
    *,
    remove_keys: Collection[str] = frozenset(),
    delete_missing_from: Collection[str] = frozenset(),
    id_limit: int = 2**32,
    sources: Sequence[str] | None = None,
    warnings: Iterable[tuple[int, str, str, str]] = (),
) -> ResolvedChanges:
    """Decide per document of a run: added, modified, unchanged, deleted or failed.

    ``versions``: the documents chunked (new content); ``unchanged``: ``(item, key)`` of
    items whose content the catalog holds; ``failed``: ``(item, key, kind, message)``. Every
    item of the run appears once in these three. ``known``: the indexed documents by key.
    ``allocate(n)``: ``n`` fresh doc IDs for new keys (ascending; they must stay below
    ``id_limit``). Known keys not claimed by an item are deleted when in ``remove_keys`` or
    when their source is in ``delete_missing_from``; a key given to remove but present in
    this run is indexed, not deleted. A document without chunks gets status ``too_short``
    (and an error of that kind). ``sources``: the source of each item of the run (by item
    index; None: versions carry theirs, others count as unknown): a key read from two
    sources, in this run or held in the index by another source, is a ``duplicate_key``
    error, never a replacement; documents under a folder that could not be listed (an
    ``unreadable`` error whose key ends with ``/``) are kept. ``warnings``: ``(item, key,
    kind, message)`` of versions indexed with a note; reported (with the errors) for the
    items whose version is indexed.
    """
    counts = DocumentCounts()
    versions = list(versions)
    by_item = {v.item: v.source for v in versions}

    def source_of(item: int) -> str:
        if sources is not None:
            return sources[item]
        return by_item.get(item, "")

    claims = _first_claims(versions, unchanged, failed, counts, known, remove_keys, source_of)
    recomputed, seen, errors = claims.recomputed, claims.seen, claims.errors
    gone = {k for k in remove_keys if k in known and k not in seen}
    gone |= {k for k, doc in known.items() if doc.source in delete_missing_from and k not in seen}
    if claims.kept_folders:  # under a folder that could not be listed: kept, as if unreadable
        prefixes = tuple(claims.kept_folders)
        gone = {k for k in gone if k in remove_keys or not k.startswith(prefixes)}
    deleted = sorted(known[k].doc_id for k in gone)
    counts.deleted = len(deleted)
    new = [v for v in recomputed if v.key not in known]
    fresh = allocate(len(new)) if new else []
    if fresh and fresh[-1] >= id_limit:
        raise ConfigError(f"doc IDs must stay below {id_limit}; this run needs {fresh[-1]}")
    final_of = dict(zip((v.item for v in new), fresh, strict=True))
    upserted = _rows(recomputed, known, final_of, counts, errors)
    indexed = {v.item for v in recomputed}
    errors.extend((key, kind, msg) for item, key, kind, msg in warnings if item in indexed)
    modified = {d.doc_id for d in upserted if d.key in known}
    return ResolvedChanges(
        upserted=upserted,
        items=np.array([v.item for v in recomputed], dtype=np.int64),
        deleted=deleted,
        errors=errors,
        counts=counts,
        dropped=np.array(sorted(modified | set(deleted)), dtype=np.uint32),
    )
