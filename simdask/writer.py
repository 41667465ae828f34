"""Writing an index: creating one, the writer lock, one run (its run record and the commit)
and garbage collection.

A :class:`Writer` holds the writer lock of one index (taken once, for the ``with`` block or
for one call) and runs updates under it. A run: record it as ``running``; compute on Dask
(:func:`simdask.engine.run.run_update`: new segments as generation ``run_id``, text packs
``r<run_id>-*``); commit everything in one catalog transaction; then compact if the merge
policy says so (:meth:`Writer.compact`, a run of its own, committed the same way) and collect
garbage (:mod:`simdask.write.garbage`). Every run's record, commit and failure handling is
:class:`~simdask.write.run_commit.RunCommit`'s, the one owner of the commit. Until COMMIT
nothing a reader sees has changed and a failure frees what the run wrote; after COMMIT the
run is committed, whatever arrives (an interrupt, an error while cleaning up).

:data:`COMMIT_FAILPOINTS` lists every failure point of the commit window in order; the crash
tests interrupt a run at each of them in turn.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from simdask import failpoints
from simdask.cluster.current import made_current
from simdask.cluster.incidents import cluster_incidents
from simdask.cluster.listen import dashboard_line
from simdask.config import IndexConfig
from simdask.errors import DocumentNotFoundError
from simdask.ingest.sources import SourceItem, source_id
from simdask.progress import Callback
from simdask.read.segment_reads import segment_set
from simdask.storage.changed import changed_keys
from simdask.storage.commit import COMMIT_FAILPOINTS as _CATALOG_FAILPOINTS
from simdask.storage.commit import check_rows
from simdask.storage.create import CATALOG_NAME, create_catalog
from simdask.storage.key_migration import migrate_keys
from simdask.storage.lock import WriterLock
from simdask.summary import RunSummary, run_summary
from simdask.write import rechunk
from simdask.write.clusters import default_connector, found_cluster
from simdask.write.collisions import checked_items
from simdask.write.compute_totals import run_totals_plan
from simdask.write.exclusion_runs import carry_change, measure, measured, share_cluster
from simdask.write.garbage import collect_garbage
from simdask.write.run_commit import RunCommit
from simdask.write.run_notes import note_run
from simdask.write.settings import cluster_ranges, run_config, use_worker_cache

if TYPE_CHECKING:
    from simdask.engine.run import RunOptions, RunOutcome
    from simdask.index import Index

__all__ = ["CATALOG_NAME", "COMMIT_FAILPOINTS", "COMPACTION_FAILPOINTS", "Writer", "create_catalog"]

#: Every failure point from the end of the computation to the end of the run, in the order a
#: run reaches them, each with whether the run is committed there. ``gc.*`` points are hit
#: before each file or folder garbage collection removes.
COMMIT_FAILPOINTS: tuple[tuple[str, bool], ...] = (
    ("before_commit", False),
    *_CATALOG_FAILPOINTS,
    ("after_commit", True),
    ("gc.generation", True),
    ("gc.lsh", True),
    ("gc.pack", True),
    ("gc.work", True),
)
#: the failure points of a compaction's commit (:meth:`Writer.compact`), with the same meaning
COMPACTION_FAILPOINTS: tuple[tuple[str, bool], ...] = (
    ("before_compaction_commit", False),
    ("after_compaction_commit", True),
)


# --- one run --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Request:
    """What one update was asked to do (see :meth:`Writer.update`)."""

    sources: tuple[str | os.PathLike, ...]
    items: tuple[SourceItem, ...]
    client: Any
    options: RunOptions
    cb: Callback
    remove: frozenset[str]
    delete_missing: bool
    rebuild: bool
    connector: Any = None
    keep_hashes: dict[str, str] | None = None  # re-chunking stored texts (simdask.write.rechunk)
    key_prefix: str = ""  # put before the keys of the documents of ``sources``


class Writer:
    """The write side of one open :class:`~simdask.index.Index`.

    ``with index.writer(wait=s) as w:`` holds the writer lock for the block (e.g. before a
    cluster is started, so that a second writer fails at once); a method called outside such
    a block takes the lock for that call only. The lock is taken once: it is not re-entrant.
    ``wait``: seconds to wait for another writer (0: fail at once).
    """

    def __init__(self, index: Index, wait: float = 0.0):
        self.index = index
        self._lock = WriterLock(index.path, wait=wait)
        self._held = False
        self._client = None  # the cluster of the current run (for its compaction)
        self._choose_ranges = False  # the run chooses the index's range count (write/settings)

    def __enter__(self) -> Writer:
        self._lock.__enter__()
        self._held = True
        return self

    def __exit__(self, *exc) -> None:
        self._held = False
        self._lock.__exit__(*exc)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with nullcontext() if self._held else self:
            yield

    def update(
        self,
        sources: Iterable[str | os.PathLike] = (),
        *,
        client=None,
        options: RunOptions | None = None,
        callback: Callback | None = None,
        delete_missing: bool = False,
        remove: Iterable[str] = (),
        rebuild: bool = False,
        config: IndexConfig | None = None,
        items: Sequence[SourceItem] = (),
        max_file_bytes: int | None = None,
        exclude: Iterable[str | os.PathLike] | None = None,
        connector=None,
        key_prefix: str = "",
    ) -> RunSummary:
        """One run; see :meth:`simdask.index.Index.update` for the arguments. ``connector``:
        without ``client``, called with the number of documents listed, returns the context
        manager of the run's client (e.g. in-process workers for a small run; None: a
        LocalCluster of worker processes)."""
        from simdask.engine.run import RunOptions  # loads dask: not when reading

        options = options or RunOptions()
        if client is None and connector is None:  # the caller's cluster, as Dask libraries do
            client, connector = found_cluster()
        if options.worker_cache is None:  # a client passed in (or found) outlives this run
            outlives = client is not None or connector is not None
            cache = use_worker_cache(None, cluster_outlives_run=outlives)
            options = dataclasses.replace(options, worker_cache=cache)
        if max_file_bytes is not None:
            options = dataclasses.replace(options, max_file_bytes=max_file_bytes)
        req = _Request(
            sources=tuple(sources),
            items=tuple(items),
            client=client,
            options=options,
            cb=callback or Callback(),
            remove=frozenset(remove),
            delete_missing=delete_missing,
            rebuild=rebuild,
            connector=connector,
            key_prefix=key_prefix,
        )
        with self._locked(), contextlib.ExitStack() as shared:
            plan = rechunk.plan_exclusions(self.index, config, exclude, rebuild)
            try:
                self.index.config, self._choose_ranges = run_config(self.index, config, rebuild)
                done = None
                if plan.rechunk or len(plan.affected):  # first: the stored texts chunked again
                    req = share_cluster(req, shared, default_connector)
                    done = self._rechunk(req, plan)
                if done is not None and not (req.sources or req.items or req.remove):
                    return done
                return carry_change(self._run(req, plan), done)
            except BaseException:  # the settings in memory are the committed ones again
                with contextlib.suppress(Exception):
                    self.index.config = self.index.catalog.check_format()
                raise

    def remove(self, keys: Iterable[str], **kwargs) -> RunSummary:
        """Delete documents by key (a run without sources); unknown keys are an error."""
        keys = list(keys)
        with self._locked():
            migrate_keys(self.index.catalog)  # an index made before keys named their folder
            known = self.index.catalog.known_for(keys)
            missing = [k for k in keys if k not in known]
            if missing:
                raise DocumentNotFoundError(f"no document with key {missing[0]!r} in the index")
            return self.update((), remove=keys, **kwargs)

    def _rechunk(self, req: _Request, plan: rechunk.ExclusionPlan) -> RunSummary:
        """The run applying changed exclusions: every document (``plan.rechunk``: the run
        replaces the index) or only those the change affects, read from their stored texts
        with no size limit, their content hashes kept."""
        doc_ids, before = None if plan.rechunk else plan.affected, measure(self.index.catalog)
        with rechunk.stored_texts(self.index, doc_ids, req.cb) as stored:
            sub = dataclasses.replace(
                req,
                sources=(),
                items=stored.items,
                remove=frozenset(),
                options=dataclasses.replace(req.options, max_file_bytes=None),
                delete_missing=False,
                rebuild=stored.replace_all,
                keep_hashes=stored.hashes,
            )
            return measured(self._run(sub, plan), before, self.index.catalog, stored.replace_all)

    def _run(self, req: _Request, plan: rechunk.ExclusionPlan) -> RunSummary:
        """List, compute, commit, clean up: one run under the lock."""
        idx, cb = self.index, req.cb
        started = time.perf_counter()
        idx.catalog.abandon_stale_runs()
        if renamed := migrate_keys(idx.catalog):
            cb.message(f"keys of {renamed} documents renamed to <folder name>/<path>")
        t = time.perf_counter()
        cb.stage("scan", None)
        listed = checked_items(idx.catalog, req.sources, req.key_prefix, req.remove, req.rebuild)
        items = [*listed, *req.items]
        cb.end_stage()
        scan_s = time.perf_counter() - t
        run = RunCommit(idx, (i.path for i in items))
        before = segment_set(idx.catalog.segments())
        with contextlib.ExitStack() as cluster:
            with run.settled():
                out = self._compute(req, cluster, run.run_id, items, plan)
                if plan.meta is not None:  # the templates commit with the run using them
                    out.changes.meta["exclusions"] = plan.meta
                failpoints.hit("before_commit")
                t = time.perf_counter()
                cb.stage("commit", None)
                summary = run_summary(run.run_id, out, scan_s)
                summary.sources = sorted(
                    {i.source for i in items} | {source_id(x) for x in req.sources}
                )
                summary.rebuild = req.rebuild
                summary.changed = changed_keys(idx.catalog, out.changes)
                check_rows(out.changes)
                out.changes.totals = run_totals_plan(
                    idx, self._client, req, plan.templates, summary.stats.transfer
                )
                run.commit(out.changes, summary.to_dict(), out.digests.digest)
                cb.end_stage()
            summary.seconds["commit"] = time.perf_counter() - t
            run.after_commit(before, lambda: self._auto_compact(req, summary))
        summary.documents = idx.catalog.n_documents()
        note_run(idx.catalog, listed, summary, rechunk=req.keep_hashes is not None)
        summary.seconds["total"] = time.perf_counter() - started  # serial "other": the notes
        summary.index_bytes = idx.disk_bytes()
        return summary

    def _compute(self, req: _Request, cluster, run_id: int, items, plan) -> RunOutcome:
        """The run on Dask (the cluster entered on the exit stack ``cluster``: it stays for
        the totals and the compaction after the commit), with the incidents it survived."""
        from simdask.cluster.connect import cluster_errors  # loads dask: only a run needs it
        from simdask.engine.run import RunRequest, run_update  # loads dask: only for a run

        idx = self.index
        unchanged = f"the index at {idx.path} is unchanged (generation {idx.catalog.generation})"
        delete_from: frozenset[str] = frozenset()
        if req.delete_missing:
            delete_from = frozenset(i.source for i in items) | {source_id(s) for s in req.sources}
        if req.client is not None:
            ctx = nullcontext(req.client)
        else:
            connector = req.connector if req.connector is not None else default_connector
            ctx = connector(len(items))
        cl = self._client = cluster.enter_context(ctx)
        cluster.enter_context(made_current(cl))  # Dask's default client, until the stack ends
        since = time.time()
        with cluster_errors(cl, unchanged):
            if chosen := cluster_ranges(idx, cl, len(items), self._choose_ranges):
                idx.config = chosen  # a new index's range count, for this cluster
            if line := dashboard_line(getattr(cl, "dashboard_link", None)):
                req.cb.message(line)
            run = RunRequest(
                catalog=idx.catalog,
                store=idx.store,
                text_dir=idx.path / "texts",
                work_dir=idx.path / "work",
                config=idx.config,
                items=items,
                run_id=run_id,
                options=req.options,
                cb=req.cb,
                remove_keys=req.remove,
                delete_missing_from=delete_from,
                replace_all=req.rebuild,
                exclusions=plan.exclusions,
                keep_hashes=req.keep_hashes,
            )
            out = run_update(cl, run)
            out.stats.incidents = cluster_incidents(cl, since)  # deaths and retries
            if out.stats.sizing is not None:  # the run summary says who chose the ranges
                out.stats.sizing.ranges_chosen = chosen is not None
            return out

    # --- compaction -------------------------------------------------------------------------
    def compact(
        self,
        *,
        client=None,
        force: bool = False,
        options: RunOptions | None = None,
        callback: Callback | None = None,
    ) -> dict[str, Any]:
        """Merge segments as the merge policy (``options.merge_policy``) says, or, with
        ``force``, every range into one segment without tombstoned postings. A run of its own
        (a generation, one commit), then garbage collection giving every free catalog page
        back. Returns its statistics (``{}``: nothing due, no page freed)."""
        from simdask.cluster.connect import cluster_errors, connect  # loads dask: only a run
        from simdask.engine.run import RunOptions  # loads dask: only when a run needs it

        options = options or RunOptions()
        with self._locked():
            self.index.catalog.abandon_stale_runs()
            before = segment_set(self.index.catalog.segments())
            found, connector = (client, None) if client is not None else found_cluster()
            if options.worker_cache is None:  # a cluster found outlives the compaction
                outlives = found is not None or connector is not None
                options = dataclasses.replace(options, worker_cache=outlives)
            own = connector(0) if connector is not None else connect()
            with (
                nullcontext(found) if found is not None else own as cl,
                made_current(cl),
                cluster_errors(cl, "the index is unchanged"),  # a worker lost: exit 4
            ):
                out = self._compact_run(cl, options, callback or Callback(), force)
            self.index.drop_caches()
            freed = collect_garbage(self.index, before, vacuum_all=True)["catalog_bytes_freed"]
        return {**out, "catalog_bytes_freed": freed} if out or freed else out

    def _auto_compact(self, req: _Request, summary: RunSummary) -> None:
        """After a committed run: compact if the merge policy says so (in the summary); a
        failure is recorded there (the run stands; the next run compacts again)."""
        try:
            out = self._compact_run(self._client, req.options, req.cb, False)
        except Exception as e:
            summary.stats.compaction_error = f"{type(e).__name__}: {e}"
            return
        if out:
            summary.stats.compaction = out
            summary.seconds["compaction"] = out["seconds"]

    def _compact_run(self, client, options: RunOptions, cb: Callback, force: bool) -> dict:
        """Plan and run one compaction with ``options.merge_policy`` (lock held): a run of
        the writer like an update — its record, its tasks on the engine's stage contract
        (:mod:`simdask.engine.compact_run`), its commit by
        :class:`~simdask.write.run_commit.RunCommit` with the checksums of the segments it
        wrote. Returns its statistics with ``run_id`` (``{}`` when nothing was due). On
        failure before the commit its generation is removed and the previous one stays
        current."""
        # loads dask: only when a run needs it
        from simdask.engine.compact_run import plan_compaction, run_compaction

        idx = self.index
        plan = plan_compaction(idx.catalog, options.merge_policy, force)
        if not plan:
            return {}
        run = RunCommit(idx)
        with run.settled():
            changes, stats = run_compaction(
                client,
                idx.catalog,
                idx.store,
                idx.config,
                plan,
                run_id=run.run_id,
                work_dir=idx.path / "work",
                options=options,
                cb=cb,
            )
            failpoints.hit("before_compaction_commit")
            run.commit(changes, {"compaction": stats})
        failpoints.hit("after_compaction_commit")
        return {"run_id": run.run_id, **stats}

    # --- garbage collection -----------------------------------------------------------------
    def collect_garbage(self, keep: Iterable[tuple[int, int]] = ()) -> dict[str, int]:
        """Delete segments, shard generations, LSH generations, text packs and work files no
        committed state refers to (:func:`simdask.write.garbage.collect_garbage`). Segments
        ``(range, generation)`` in ``keep`` (those committed before the last commit) are kept
        one run longer, for readers that opened them."""
        with self._locked():
            return collect_garbage(self.index, keep)
