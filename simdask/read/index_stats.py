"""What ``simdask stats`` shows of an index (:meth:`simdask.index.Index.stats`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simdask.config import FORMAT_VERSION
from simdask.storage.catalog_values import meta_int
from simdask.summary import HeavyStats

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = ["index_stats"]


def index_stats(idx: Index) -> dict[str, Any]:
    """Documents, distinct chunks, postings, similarity rows, shards, bytes, config."""
    gen = idx.catalog.generation
    n_keys, n_post, n_segments, n_tombstones = idx.reads.counts()
    counts = idx.catalog.counts()
    last = idx.catalog.last_run()
    return {
        "path": str(idx.path),
        "format_version": FORMAT_VERSION,
        "generation": gen,
        "documents": counts["documents"],
        "too_short": counts["too_short"],
        # files currently failing (not indexed, or only an older version): `simdask errors`
        "failed": sum(1 for f in idx.failures() if not f.indexed),
        "words": counts["words"],
        "distinct_chunks": n_keys,
        "postings": n_post,
        "similarity_rows": counts["similarity_rows"],
        "skipped_chunks": meta_int(idx.catalog, "skipped_chunks"),
        # heavy chunks of the last run (simdask.kernels.heavy): cutoff, mode, work share
        "heavy": (heavy := ((last or {}).get("summary", {}).get("extra") or {}).get("heavy")),
        # the similarity mode used and why (auto: the heavy-only search against its budget)
        "similarity_mode": HeavyStats.from_dict(heavy).describe() if heavy else None,
        "shards": idx.config.shards,
        "segments": n_segments,
        "tombstones": n_tombstones,
        "bytes_on_disk": idx.disk_bytes(),
        "last_run": last["run_id"] if last else None,
        "config": idx.config.to_dict(),
        # update --exclude: the template files and how many chunk IDs they exclude
        "excluded_templates": [
            {"name": t.name, "content_hash": t.content_hash} for t in idx.templates()
        ],
        "excluded_template_chunks": len(idx.exclusions().chunk_ids),
    }
