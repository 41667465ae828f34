"""The candidate partners of one run (client side, after the documents' IDs are resolved).

The run's new and modified documents' texts (already in their text packs) become content
n-gram sets (:mod:`simdask.kernels.content_ngrams`); with the stored sets of every other
document (:func:`~simdask.storage.candidates.read_features`) they make the feature's postings,
and :func:`~simdask.kernels.candidates.top_candidates` ranks the partners of the documents
whose lists may change (:func:`~simdask.kernels.candidates.affected_documents`; a build:
every document). The result commits with the run
(:class:`~simdask.storage.candidates.CandidateChanges`). Thin: the work is in the kernels.
"""

from __future__ import annotations

import time

import numpy as np

from simdask.kernels.candidates import (
    CandidateConfig,
    affected_documents,
    build_postings,
    top_candidates,
)
from simdask.kernels.changes import DocumentRow, ResolvedChanges
from simdask.kernels.content_ngrams import CONTENT_NGRAM
from simdask.kernels.exclusions import Exclusions
from simdask.storage.candidates import (
    CandidateChanges,
    read_features,
    stored_candidate_config,
)
from simdask.storage.catalog import Catalog
from simdask.storage.text_packs import TextStore

__all__ = ["FEATURE_BATCH", "candidate_changes", "document_features", "run_candidate_stage"]

#: texts turned into features at a time
FEATURE_BATCH = 256


def document_features(
    texts: TextStore,
    rows: list[DocumentRow],
    config: CandidateConfig,
    exclusions: Exclusions | None,
) -> dict[int, np.ndarray]:
    """The content n-gram IDs of each document of ``rows`` with a stored text (doc ID ->
    its distinct IDs, ascending), read from its text pack."""
    with_text = [r for r in rows if r.text_pack is not None]
    out: dict[int, np.ndarray] = {}
    for i in range(0, len(with_text), FEATURE_BATCH):
        part = with_text[i : i + FEATURE_BATCH]
        strs = [texts.read(r.text_pack, r.text_offset, r.text_length) for r in part]  # type: ignore[arg-type]
        cb = CONTENT_NGRAM.chunk(strs, config.ngram, config.hash_bits, config.seed, exclusions)
        order = np.argsort(cb.doc, kind="stable")
        bounds = np.searchsorted(cb.doc[order], np.arange(len(part) + 1))
        ids = cb.chunk_ids[order]
        for j, r in enumerate(part):
            out[r.doc_id] = np.sort(ids[bounds[j] : bounds[j + 1]])
    return out


def candidate_changes(
    catalog: Catalog,
    texts: TextStore,
    resolved: ResolvedChanges,
    replace_all: bool,
    exclusions: Exclusions | None,
) -> CandidateChanges:
    """The candidate tables' changes of a run that resolved ``resolved``. A build
    (``replace_all``), or an index without stored candidates (an index from before them:
    every stored text is read), ranks every document's partners; otherwise only the
    documents :func:`~simdask.kernels.candidates.affected_documents` names."""
    config = CandidateConfig() if replace_all else stored_candidate_config(catalog)
    full = replace_all or config is None
    config = config or CandidateConfig()
    fresh = document_features(texts, resolved.upserted, config, exclusions)
    old = {} if replace_all else read_features(catalog, config)
    gone = {int(d) for d in resolved.dropped} | {int(d) for d in resolved.deleted}
    if full and not replace_all:  # an index from before the candidates: read every text
        known = [r for r in catalog.documents() if r.doc_id not in fresh and r.doc_id not in gone]
        fresh.update(document_features(texts, known, config, exclusions))
    removed = [old[d] for d in sorted(gone) if d in old]
    live = {d: f for d, f in old.items() if d not in gone}
    live.update(fresh)
    docs = sorted(live)
    sizes = [len(live[d]) for d in docs]
    post = build_postings(
        np.concatenate([np.zeros(0, np.uint64), *[live[d] for d in docs]]),
        np.repeat(np.asarray(docs, np.int64), sizes),
    )
    if full:
        targets = np.asarray(docs, np.int64)
    else:
        hit = affected_documents(post, list(fresh.values()), removed, config.max_df)
        targets = np.union1d(hit, np.asarray(sorted(fresh), np.int64))
    rows = top_candidates(
        post, targets, [live[int(d)] for d in targets], config.max_df, config.depth
    )
    dropped = np.asarray(sorted(gone), np.int64)
    return CandidateChanges(
        config=config,
        features=fresh,
        dropped=dropped,
        replaced=np.union1d(targets, dropped),
        rows=rows,
        full=full,
    )


def run_candidate_stage(
    catalog, texts, resolved, replace_all, exclusions, changes, stats, enabled: bool
) -> None:
    """:func:`candidate_changes` into the run's ``changes`` (a
    :class:`~simdask.storage.catalog.RunChanges`), its seconds into ``stats.seconds``; an
    index without ``candidates`` (its setting, ``enabled`` False) keeps none: stored ones
    (the setting turned off) are dropped by the commit."""
    if not enabled:
        config = stored_candidate_config(catalog)
        if config is not None:
            changes.candidates = CandidateChanges(config, full=True, off=True)
        return
    t = time.perf_counter()
    changes.candidates = candidate_changes(catalog, texts, resolved, replace_all, exclusions)
    stats.seconds["candidates"] = time.perf_counter() - t
