"""The runs of one change of the exclusions, told as one (issue 31, item 5).

A change of the templates, quotations or reference-list setting re-chunks the stored texts
(:mod:`simdask.write.rechunk`) in a run of its own, before the run of the sources given with
it. :func:`measure` and :func:`measured` say what the re-chunk changed (documents,
similarity rows and chunks counted, before and after), which the last run's summary carries;
:func:`share_cluster` lets both runs use one cluster, so that it is started (and announced)
once. No dask here: the connector given is called, not imported.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

from simdask.storage.catalog import Catalog
from simdask.summary import ExclusionChange, RunSummary

__all__ = ["carry_change", "measure", "measured", "share_cluster"]


def measure(catalog: Catalog) -> tuple[int, int]:
    """``(similarity rows, chunks counted)`` of the committed index (chunks: the sum of
    ``|A|`` over its documents). Counts both tables: a change of the exclusions costs far
    more."""
    counts = catalog.counts()
    return counts["similarity_rows"], counts["chunk_sets_total"]


def measured(run: RunSummary, before: tuple[int, int], catalog: Catalog, whole: bool) -> RunSummary:
    """The re-chunk ``run``, carrying what it changed (:class:`ExclusionChange`): from
    :func:`measure` ``before`` it and of ``catalog`` now; ``whole``: every document."""
    after = measure(catalog)
    run.exclusion_change = ExclusionChange(
        documents=run.added + run.modified,
        whole=whole,
        rows_before=before[0],
        rows_after=after[0],
        chunks_before=before[1],
        chunks_after=after[1],
    )
    return run


def carry_change(run: RunSummary, rechunk: RunSummary | None) -> RunSummary:
    """``run``, carrying what the re-chunk run before it (if any) changed."""
    if rechunk is not None:
        run.exclusion_change = rechunk.exclusion_change
    return run


def share_cluster(request: Any, stack: contextlib.ExitStack, default: Callable) -> Any:
    """``request`` (the writer's request, with ``client`` and ``connector``) whose connector
    starts the cluster once, on ``stack``, and hands the same client to every later run of
    the request; unchanged when a client was given."""
    if request.client is not None:
        return request
    connect = request.connector if request.connector is not None else default
    held: list[Any] = []

    def connector(n_items: int):
        if not held:
            held.append(stack.enter_context(connect(n_items)))
        return contextlib.nullcontext(held[0])

    return dataclasses.replace(request, connector=connector)
