"""Changing what an index excludes (issue 16): which run does it, and the documents it reads.

**Only the affected documents** when that is known exactly: when the quotation and
bibliography settings stay and no chunk ID excluded so far stops being excluded (templates
added, or removed ones whose chunk IDs all belong to a kept template too), a document's
chunk set changes iff it holds one of the newly excluded chunk IDs ``A``: its new set is its
old one minus ``A``. Those documents are looked up in the postings like a query
(:meth:`~simdask.index.Index.holders`) and re-chunked from their stored texts in an
incremental run (:func:`run_affected`): modified documents, so their postings and every
similarity involving them are recomputed as for an edited file, the other documents are
untouched; the result equals a full build with the new exclusions. An incremental run costs
more per document than a build, so this path is taken only while the affected documents are
at most :data:`AFFECTED_MAX_FRACTION` of the index (measured: docs/repeats.md); beyond, every
document is re-chunked (the same result).

**Every document** otherwise: a chunk that stops being excluded is in no posting list, so
the documents holding it cannot be looked up, and a quotation or reference-list setting can
change any text. The writer then re-chunks every document from its stored text
(:func:`stored_items`) in one run that replaces the index (a full build, ``replace_all``).

Either way the run commits the new settings and templates in its own transaction: the result
is exactly a full build with the new exclusions, and a crash before its commit leaves the old
state. Keys, sources and the content hashes of the original files are kept, so the next update
sees them unchanged. :func:`plan_exclusions` decides whether a run is needed.

No dask here.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simdask.config import IndexConfig
from simdask.errors import ConfigError
from simdask.ingest.sources import SourceItem
from simdask.kernels.exclusions import Exclusions
from simdask.progress import Callback
from simdask.storage.quoted_chunks import quoted_recorded, read_quoted
from simdask.write.exclude import (
    META_NAME,
    Template,
    index_exclusions,
    read_templates,
    same_exclusions,
    templates_from_meta,
    templates_to_meta,
)

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = [
    "AFFECTED_MAX_FRACTION",
    "ExclusionPlan",
    "StoredTexts",
    "affected_documents",
    "only_exclusions_differ",
    "plan_exclusions",
    "stored_items",
    "stored_texts",
]


#: the affected documents are re-chunked alone while they are at most this fraction of the
#: index's documents (on 787 real documents the affected-only run was 2.5-5x faster for 3-10
#: documents, even at 40 and slower from 120: docs/repeats.md)
AFFECTED_MAX_FRACTION = 0.02


@dataclass(frozen=True)
class ExclusionPlan:
    """What one update excludes: ``templates`` and the resulting ``exclusions``; ``meta``: the
    catalog metadata to commit with the run (None: unchanged); ``rechunk``: the indexed
    documents must first be re-chunked from their stored texts; ``affected``: else, the doc
    IDs of the documents to re-chunk first (those holding a newly excluded chunk ID)."""

    templates: tuple[Template, ...]
    exclusions: Exclusions
    meta: str | None
    rechunk: bool
    affected: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))


def plan_exclusions(
    index,
    config: IndexConfig | None,
    exclude: Iterable[str | os.PathLike] | None,
    rebuild: bool,
) -> ExclusionPlan:
    """The exclusions of an update of ``index`` given ``config`` (None: the stored one) and
    ``exclude`` (template files; None: keep the stored templates, empty: none). The template
    files are read here (a missing or unreadable one raises
    :class:`~simdask.errors.SourceError` before anything runs)."""
    old_cfg = index.config
    old = templates_from_meta(index.catalog.meta(META_NAME))
    new = old if exclude is None else read_templates(exclude)
    cfg = config or old_cfg
    same = same_exclusions(old_cfg, old, cfg, new)
    has_docs = index.catalog.n_documents(limit=1) > 0  # not a count of every document
    meta = None if same and exclude is None else templates_to_meta(new)
    excl = index_exclusions(cfg, new)
    if has_docs and not rebuild and cfg.exclude_quotes and not quoted_recorded(index.catalog):
        return ExclusionPlan(new, excl, meta, True)  # built before the quoted chunks were kept
    if same or not has_docs or rebuild:
        return ExclusionPlan(new, excl, meta, False)
    affected = affected_documents(index, index.exclusions(), excl)
    n_docs = index.catalog.n_documents()
    if affected is None or len(affected) > max(1.0, AFFECTED_MAX_FRACTION * n_docs):
        return ExclusionPlan(new, excl, meta, True)
    return ExclusionPlan(new, excl, meta, False, affected)


def affected_documents(index, old: Exclusions, new: Exclusions) -> np.ndarray | None:
    """The doc IDs whose chunk sets change from exclusions ``old`` to ``new``, when that can
    be known exactly from the postings (see the module docstring), else None."""
    if (old.quotes, old.bibliography) != (new.quotes, new.bibliography):
        return None
    if len(np.setdiff1d(old.chunk_ids, new.chunk_ids, assume_unique=True)):
        return None  # chunks no longer excluded: in no posting list
    added = np.setdiff1d(new.chunk_ids, old.chunk_ids, assume_unique=True)
    held = index.holders(added)
    if new.quotes:  # a quotation holding a newly excluded chunk changes the document's Q
        docs, sets = read_quoted(index.catalog, index.config.hash_bits)
        hit = [int(d) for d, q in zip(docs.tolist(), sets, strict=True) if np.isin(q, added).any()]
        held = np.union1d(held, np.asarray(hit, np.uint64)).astype(np.uint64)
    return held


def only_exclusions_differ(a: IndexConfig, b: IndexConfig) -> bool:
    """Whether ``a`` and ``b`` differ only in the exclusion settings (changed without
    ``--rebuild``: the writer re-chunks the stored texts)."""
    keep = {n: getattr(a, n) for n in IndexConfig.EXCLUSION_SETTINGS}
    return b.replace(**keep) == a


def stored_items(
    index, work: Path, doc_ids: np.ndarray | None = None
) -> tuple[list[SourceItem], dict[str, str], Path]:
    """Every document of ``index`` (or those of ``doc_ids``) as an item to chunk again: their
    stored texts written as one JSONL file in ``work`` (``rechunk-<hex>.jsonl``; the caller
    removes it), each line an item of its document's source. Returns the items, the content
    hashes to keep by key, and the file. A document without a stored text cannot be
    re-chunked: :class:`ConfigError`."""
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"rechunk-{uuid.uuid4().hex[:12]}.jsonl"
    items: list[SourceItem] = []
    hashes: dict[str, str] = {}
    pos = 0
    try:
        with open(path, "wb") as f:
            if doc_ids is None:
                docs = index.catalog.documents()
            else:
                docs = index.catalog.documents_by_id(doc_ids.tolist())
            for i, d in enumerate(docs):
                if d.text_pack is None:
                    raise ConfigError(
                        f"document {d.key!r} has no stored text, so the index cannot apply "
                        "new exclusions by itself: pass --rebuild with all SOURCEs"
                    )
                text = index.texts.read(d.text_pack, d.text_offset, d.text_length)
                line = json.dumps({"id": d.key, "text": text}, ensure_ascii=False).encode() + b"\n"
                f.write(line)
                items.append(
                    SourceItem(d.source, str(path), None, pos, pos + len(line), line=i + 1)
                )
                hashes[d.key] = d.content_hash
                pos += len(line)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return items, hashes, path


@dataclass(frozen=True)
class StoredTexts:
    """Documents to chunk again from their stored texts: the run's ``items`` (lines of a
    JSONL file in the index's work folder), their content ``hashes`` by key (kept: the texts
    did not change) and whether they are every document (``replace_all``: the run replaces
    the index) or only those the change affects (modified documents of an incremental run)."""

    items: tuple[SourceItem, ...]
    hashes: dict[str, str]
    replace_all: bool


@contextlib.contextmanager
def stored_texts(index: Index, doc_ids: np.ndarray | None, cb: Callback) -> Iterator[StoredTexts]:
    """The stored texts of ``doc_ids`` (None: every document) as a run's items
    (:func:`stored_items`), for the block; the JSONL file is removed afterwards."""
    items, hashes, path = stored_items(index, index.path / "work", doc_ids)
    if doc_ids is None:
        cb.message(f"exclusions changed: re-chunking {len(items)} documents' stored texts")
    else:
        cb.message(f"exclusions changed: re-chunking the {len(items)} documents they affect")
    try:
        yield StoredTexts(tuple(items), hashes, doc_ids is None)
    finally:
        path.unlink(missing_ok=True)
