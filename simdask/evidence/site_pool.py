"""The static site's pair reports computed on all cores (issue 31 item 7).

A site's cost is its pair reports (:func:`~simdask.evidence.pair_view.index_report`: the
exact comparison and the aligner), each independent of the others. :func:`compute_reports`
hands the reports a site needs, each pair of texts once
(:meth:`SiteReports.missing <simdask.evidence.site_reports.SiteReports.missing>`), to
worker processes in batches; each worker opens the index, reads it in one snapshot of the
same committed generation as the caller, keeps each text's own part for its next pairs
(:class:`~simdask.evidence.text_cache.TextCache`) and returns the reports, which the caller
keeps (:meth:`SiteReports.add <simdask.evidence.site_reports.SiteReports.add>`). The pages
are then written from them as before: the same site, byte for byte, whatever the number of
workers (tests compare them). A worker that finds another generation (an update committed
meanwhile) returns nothing and the caller computes that batch itself, in its own snapshot;
so does a worker that dies (killed, out of memory: the pool is broken), and then the caller
computes every batch not done (a script that starts the pool without an
``if __name__ == "__main__":`` guard, which ``spawn`` needs, ends up here too).

Workers are processes started afresh (``spawn``: the caller holds SQLite connections and
threads, which ``fork`` would copy); they ignore Ctrl-C (the caller decides: it cancels the
batches not started and stops them).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from simdask.errors import ConfigError
from simdask.evidence.pair_view import ViewOptions, index_report
from simdask.evidence.site_reports import SiteReports
from simdask.evidence.text_cache import TextCache
from simdask.index import Index
from simdask.progress import Callback

__all__ = ["MIN_PARALLEL", "compute_reports", "default_workers", "report_batch"]

#: fewer reports than this are computed in the calling process (starting a worker costs
#: about a second of CPU: the imports)
MIN_PARALLEL = 24
#: batches per worker (the last batches of a slow worker leave the others idle less long)
_BATCHES_PER_WORKER = 8


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _ignore_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def report_batch(
    path: str, generation: int, options: dict, pairs: Sequence[tuple[str, str]]
) -> list[dict] | None:
    """The reports of ``pairs`` (``(key, other)``) of the index at ``path``, as
    :func:`~simdask.evidence.pair_view.index_report` gives them under ``options``
    (:meth:`ViewOptions.to_dict` form), in order, read in one snapshot; None when the
    committed generation is not ``generation`` (the caller's). Runs in a worker process."""
    opts = ViewOptions.from_dict(options)
    cache = TextCache()
    with Index.open(path) as idx, idx.snapshot():
        if idx.catalog.generation != generation:
            return None
        return [index_report(idx, k, o, options=opts, cache=cache) for k, o in pairs]


def _batches(
    pairs: list[tuple[str, str]], cost: dict[str, int], n: int
) -> list[list[tuple[str, str]]]:
    """``pairs`` cut into about ``n`` batches of about equal ``cost`` (a pair: the words of
    both texts), the pairs of one first document together (its text is prepared once per
    batch), the costliest first: a long pair (two copies of a 2 MB licence) starts at once
    instead of last, when the other workers would wait for it."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for p in pairs:
        groups.setdefault(p[0], []).append(p)

    def weight(group: list[tuple[str, str]]) -> int:
        return sum(1 + cost.get(a, 0) + cost.get(b, 0) for a, b in group)

    target = max(1, sum(weight(g) for g in groups.values()) // max(1, n))
    out: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    load = 0
    for group in sorted(groups.values(), key=lambda g: -weight(g)):  # ties: in order
        if current and load + weight(group) > target:
            out.append(current)
            current, load = [], 0
        current += group
        load += weight(group)
    return [*out, current] if current else out


def compute_reports(
    index,
    reports: SiteReports,
    pairs: Sequence[tuple[str, str]],
    workers: int,
    callback: Callback | None = None,
) -> int:
    """Compute the reports of ``pairs`` (``(key, other)``, documents of ``index``) not yet
    in ``reports``, on ``workers`` processes (1: none; fewer than :data:`MIN_PARALLEL`
    reports: none either), and keep them there. Call inside the caller's snapshot.
    Returns how many reports were computed."""
    if type(workers) is not int or workers < 1:
        raise ConfigError(f"workers must be a whole number >= 1, found {workers!r}")
    todo = reports.missing(pairs)
    cb = callback or Callback()
    cb.stage("pair reports", len(todo))
    try:
        if workers == 1 or len(todo) < MIN_PARALLEL:
            for key, other in todo:
                reports(index, key, other, options=reports.options)
                cb.advance(1)
        else:
            _in_pool(index, reports, todo, workers, cb)
    finally:
        cb.end_stage()
    return len(todo)


def _in_pool(index, reports: SiteReports, todo, workers: int, cb: Callback) -> None:
    """:func:`compute_reports` on a pool of ``workers`` processes."""
    words = {d.key: d.n_words for d in index.catalog.documents()}
    batches = _batches(todo, words, workers * _BATCHES_PER_WORKER)
    args = (str(index.path), index.catalog.generation, reports.options.to_dict())
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(min(workers, len(batches)), ctx, initializer=_ignore_ctrl_c)
    try:
        futures = {pool.submit(report_batch, *args, b): b for b in batches}
        for done in as_completed(futures):
            batch = futures[done]
            try:
                found = done.result()
            except BrokenProcessPool:  # a worker died (killed, out of memory): done here
                cb.message("a worker process of the site's pair reports stopped: computed here")
                found = None
            if found is None:  # or another generation: computed in the caller's snapshot
                found = [reports(index, k, o, options=reports.options) for k, o in batch]
            for (key, other), rep in zip(batch, found, strict=True):
                reports.add(key, other, rep)
            cb.advance(len(batch))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
