"""What the writer notes about a run's documents after its commit (issue 31, items 3 and 13):
the documents it added or modified whose content another indexed document holds (the run
summary's ``identical``), and when each was first indexed with its file's modification time
(:mod:`simdask.storage.doc_dates`). A run re-chunking stored texts (a change of the
exclusions) adds no document of its own: it notes nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from simdask.ingest.sources import SourceItem
from simdask.storage.catalog import Catalog
from simdask.storage.doc_dates import record_dates
from simdask.storage.source_reads import identical_copies
from simdask.summary import RunSummary

__all__ = ["file_times", "note_run"]


def file_times(items: Sequence[SourceItem], keys: set[str]) -> dict[str, float]:
    """``{key: modification time}`` (seconds since the epoch) of the file items whose key is
    in ``keys`` (JSONL lines: their file's; a file gone since it was read: left out)."""
    out: dict[str, float] = {}
    for item in items:
        key = None if item.key is None else item.prefix + item.key
        if key in keys:
            try:
                out[key] = os.stat(item.path).st_mtime
            except OSError:
                continue
    return out


def note_run(
    catalog: Catalog, items: Sequence[SourceItem], summary: RunSummary, rechunk: bool
) -> None:
    """After the commit of the run ``summary`` of the listed ``items``: its identical copies
    (set on ``summary``) and its documents' dates (recorded); nothing for a re-chunk."""
    if rechunk:
        return
    new = summary.new_keys
    summary.identical = identical_copies(catalog, new)
    record_dates(catalog, time.time(), new, file_times(items, set(new)))
