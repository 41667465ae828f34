"""The commit of one run of the writer — an update's or a compaction's — from its record to
what follows COMMIT: the one owner of every commit (part of the writer, :mod:`simdask.writer`).

:class:`RunCommit` records the run as ``running`` (its ``run_id`` is its generation), then
:meth:`RunCommit.commit` takes the size and xxh3 of every file the run wrote
(:mod:`simdask.storage.checksums`) and commits its changes in one catalog transaction
(:meth:`~simdask.storage.catalog.Catalog.commit_run`). A failure before COMMIT, settled by
:meth:`RunCommit.settled`, records the run as failed and frees what it wrote (a full disk: one
:class:`~simdask.errors.DiskFullError` naming the space needed); after COMMIT the run is
committed whatever arrives — the catalog says so, not the control flow — and
:meth:`RunCommit.after_commit` cleans up (the automatic compaction, garbage collection)
without undoing it.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from simdask import failpoints
from simdask.storage.checksums import digest, run_files
from simdask.storage.commit import RunChanges
from simdask.storage.diskspace import disk_full, estimate_run_bytes, free_bytes
from simdask.storage.lsh_store import LshStore, lsh_root
from simdask.write.garbage import collect_garbage

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = ["RunCommit"]

_log = logging.getLogger(__name__)


class RunCommit:
    """One run of the writer on ``index`` (writer lock held), recorded as ``running`` when
    made: :attr:`run_id` is its generation. ``paths``: the files the run reads (to estimate
    the space it needs when the disk fills up)."""

    def __init__(self, index: Index, paths: Iterable[str] = ()):
        self.index = index
        self.paths = list(paths)
        self.run_id = index.catalog.start_run()
        self.free_at_start = free_bytes(index.path)

    def commit(self, changes: RunChanges, record: dict[str, Any], hasher=digest) -> None:
        """Commit ``changes`` with the run's ``record`` (its summary) in one transaction,
        with the checksums of the files the run wrote (``hasher``: digests taken ahead)."""
        changes.files = self._checksums(changes, hasher)
        self.index.catalog.commit_run(self.run_id, self.run_id, changes, record)

    def _checksums(self, ch: RunChanges, hasher) -> list[tuple[str, int, str]]:
        """Size and xxh3 of the files this run wrote, read back here before the commit that
        records them (:mod:`simdask.storage.checksums`)."""
        idx, run_id = self.index, self.run_id
        written = {s: g for s, segs in ch.manifests.items() for g, _, _ in segs if g == run_id}
        packs = {d.text_pack for d in ch.upserted if d.text_pack is not None}
        lsh = LshStore(lsh_root(idx.path)).files(run_id) if ch.meta.get("lsh") else []
        return run_files(idx.store, idx.path / "texts", written, packs, lsh, hasher)

    @contextlib.contextmanager
    def settled(self) -> Iterator[None]:
        """Around the run's computation and commit: an error raised after COMMIT is logged
        and the run goes on (it is committed); any other failure is raised, after the run is
        recorded as failed and what it wrote is freed (a full disk: as one
        :class:`~simdask.errors.DiskFullError`)."""
        try:
            yield
        except BaseException as e:
            if not self._settle(e):
                full = self._disk_full(e)
                if full is not None:  # one line naming the path and the space needed
                    raise full from None
                raise

    def _disk_full(self, error: BaseException):
        """A :class:`~simdask.errors.DiskFullError` if ``error`` means the disk is full."""
        idx = self.index
        shards = 0 if idx.store.local_root is None else idx.disk_bytes()
        needed = estimate_run_bytes(shards, self.paths)
        gen = idx.catalog.generation
        unchanged = f"the index is unchanged (generation {gen})"
        return disk_full(error, idx.path, needed, self.free_at_start, unchanged)

    def _settle(self, error: BaseException) -> bool:
        """After ``error`` stopped the run: True if the run is nevertheless committed and
        the error came after COMMIT (an exception: reported, the run goes on); False to
        re-raise it. An uncommitted run is recorded as failed and what it wrote is freed; if
        the catalog cannot say (it cannot be read), nothing is deleted (the next run's garbage
        collection frees it)."""
        run_id = self.run_id
        try:
            status = self.index.catalog.run_status(run_id)
        except Exception:
            return False
        if status == "committed":
            if isinstance(error, Exception):
                _log.warning(
                    "generation %d is committed; after the commit: %s: %s",
                    run_id,
                    type(error).__name__,
                    error,
                )
                return True
            _log.warning("interrupted after the commit: generation %d is committed", run_id)
            return False
        if status == "running":
            self._abort(error)
        return False

    def _abort(self, error: BaseException) -> None:
        """After a failed, uncommitted run: record it (if the disk lets us) and free what it
        wrote (its shard generation, LSH generation, text packs and work folder)."""
        idx, run_id = self.index, self.run_id
        with contextlib.suppress(Exception):
            idx.store.remove_generation(run_id)
        with contextlib.suppress(Exception):
            LshStore(lsh_root(idx.path)).remove_generation(run_id)
        with contextlib.suppress(Exception):
            for pack in idx.texts.packs():
                if pack.startswith(f"r{run_id:06d}-"):
                    idx.texts.remove(pack)
        shutil.rmtree(idx.path / "work" / f"run-{run_id:06d}", ignore_errors=True)
        # e.g. the disk is still full: then the next run marks it abandoned
        with contextlib.suppress(Exception):
            idx.catalog.fail_run(run_id, f"{type(error).__name__}: {error}")

    def after_commit(self, before: set, then: Callable[[], None] = lambda: None) -> None:
        """Clean up after the commit (``then``: the automatic compaction, before garbage
        collection, which keeps the segments ``before`` one run longer); nothing arriving
        here undoes the run (an error is logged as a warning, an interrupt goes on up after
        saying that the run is committed)."""
        try:
            failpoints.hit("after_commit")
            self.index.drop_caches()
            then()
            collect_garbage(self.index, before)
        except Exception as e:
            _log.warning(
                "generation %d is committed, but cleaning up failed (%s: %s); the next run "
                "removes what is left",
                self.run_id,
                type(e).__name__,
                e,
            )
        except BaseException:
            _log.warning("interrupted after the commit: generation %d is committed", self.run_id)
            raise
