"""Changing what an index excludes (issue 16): which run does it, and the documents it reads.

A change of the exclusions (``update --exclude FILE...`` naming other templates,
``--no-exclude``, ``--exclude-quotes`` / ``--exclude-bibliography`` switched) can change the
chunk set of any document: a template chunk may be anywhere, a quotation in any text, and a
chunk excluded so far is in no posting list, so the documents holding it cannot be looked up.
So the writer re-chunks every document from its stored text (:func:`stored_items`) in one run
that replaces the index (a full build, ``replace_all``) under the new exclusions, and commits
the new settings and templates in that run's transaction: the result is exactly a full build
with the new exclusions, and a crash before its commit leaves the old state. Keys, sources and
the content hashes of the original files are kept, so the next update sees them unchanged.
:func:`plan_exclusions` decides whether a run is needed.

No dask here.
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from simdask.config import IndexConfig
from simdask.errors import ConfigError
from simdask.exclude import (
    META_NAME,
    Template,
    index_exclusions,
    read_templates,
    same_exclusions,
    templates_from_meta,
    templates_to_meta,
)
from simdask.ingest.sources import SourceItem
from simdask.kernels.exclusions import Exclusions

__all__ = [
    "ExclusionPlan",
    "only_exclusions_differ",
    "plan_exclusions",
    "run_rechunk",
    "stored_items",
]


@dataclass(frozen=True)
class ExclusionPlan:
    """What one update excludes: ``templates`` and the resulting ``exclusions``; ``meta``: the
    catalog metadata to commit with the run (None: unchanged); ``rechunk``: the indexed
    documents must first be re-chunked from their stored texts."""

    templates: tuple[Template, ...]
    exclusions: Exclusions
    meta: str | None
    rechunk: bool


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
    has_docs = index.catalog.counts()["documents"] > 0
    meta = None if same and exclude is None else templates_to_meta(new)
    return ExclusionPlan(
        new, index_exclusions(cfg, new), meta, not same and has_docs and not rebuild
    )


def only_exclusions_differ(a: IndexConfig, b: IndexConfig) -> bool:
    """Whether ``a`` and ``b`` differ only in the exclusion settings (changed without
    ``--rebuild``: the writer re-chunks the stored texts)."""
    keep = {n: getattr(a, n) for n in IndexConfig.EXCLUSION_SETTINGS}
    return b.replace(**keep) == a


def stored_items(index, work: Path) -> tuple[list[SourceItem], dict[str, str], Path]:
    """Every document of ``index`` as an item to chunk again: their stored texts written as
    one JSONL file in ``work`` (``rechunk-<hex>.jsonl``; the caller removes it), each line an
    item of its document's source. Returns the items, the content hashes to keep by key, and
    the file. A document without a stored text cannot be re-chunked: :class:`ConfigError`."""
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"rechunk-{uuid.uuid4().hex[:12]}.jsonl"
    items: list[SourceItem] = []
    hashes: dict[str, str] = {}
    pos = 0
    try:
        with open(path, "wb") as f:
            for i, d in enumerate(index.catalog.documents()):
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


def run_rechunk(index, req, run):
    """The run applying changed exclusions: ``run(request)`` (the writer's ``_run``) with the
    writer's request ``req`` made to read every document of ``index`` from its stored text
    (:func:`stored_items`), with no size limit, replacing the index, the content hashes kept.
    Returns what ``run`` returns; the JSONL file is removed afterwards."""
    items, hashes, path = stored_items(index, index.path / "work")
    req.cb.message(f"exclusions changed: re-chunking {len(items)} documents' stored texts")
    sub = dataclasses.replace(
        req,
        sources=(),
        items=tuple(items),
        remove=frozenset(),
        options=dataclasses.replace(req.options, max_file_bytes=None),
        delete_missing=False,
        rebuild=True,
        keep_hashes=hashes,
    )
    try:
        return run(sub)
    finally:
        path.unlink(missing_ok=True)
