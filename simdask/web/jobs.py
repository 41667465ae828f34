"""Adding uploaded documents to the index: a queue of jobs run one at a time by one thread.

Each job is a folder of uploaded files (``<job folder>/uploads/<name>``, so the documents get
the keys ``uploads/<name>``). The thread takes the writer lock without waiting; when another
writer (a ``simdask update`` in a terminal, say) holds it, the job stays queued with the state
``waiting for the writer lock`` and is retried every few seconds, so nothing is ever written
beside another writer. A job runs one incremental update (:meth:`simdask.writer.Writer.update`)
on the cluster the server was started with (a LocalCluster by default); its progress (stage,
tasks done of total) is visible through :meth:`Jobs.status`. The reader of the web pages never
waits for a job: it reads the last committed state.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from simdask.errors import IndexLockedError, SimdaskError
from simdask.index import Index
from simdask.progress import Callback

__all__ = ["Job", "JobStoppedError", "Jobs"]

_log = logging.getLogger(__name__)


@dataclass
class Job:
    """One queued upload: ``state`` is queued, waiting for the writer lock, running, done or
    failed; ``stage``/``done``/``total`` the progress of the running stage."""

    id: int
    files: list[str]
    folder: str
    state: str = "queued"
    stage: str = ""
    done: int = 0
    total: int | None = None
    message: str = ""
    attempts: int = 0
    summary: dict[str, Any] = field(default_factory=dict)
    created: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (without the server-side folder)."""
        d = asdict(self)
        d.pop("folder")
        return d


class JobStoppedError(SimdaskError, RuntimeError):
    """The server is shutting down: the running job stops (its run is not committed)."""


class _JobProgress(Callback):
    """A job's progress; raises :class:`JobStoppedError` at the next step once ``stopping``
    is set, so that shutting down ends the run and closes its cluster."""

    def __init__(self, job: Job, stopping: threading.Event):
        self.job = job
        self.stopping = stopping

    def stage(self, name: str, total: int | None) -> None:
        self._check()
        self.job.stage, self.job.total, self.job.done = name, total, 0

    def advance(self, n: int = 1) -> None:
        self._check()
        self.job.done += n

    def _check(self) -> None:
        if self.stopping.is_set():
            raise JobStoppedError("the server is shutting down; the run was not committed")

    def message(self, text: str) -> None:
        self.job.message = text


class Jobs:
    """The queue of indexing jobs of one server and the thread that runs them.

    ``index_path``: the index; ``spec``: the :class:`~simdask.cluster.spec.ClusterSpec` to run
    on; ``retry``: seconds between attempts to take a busy writer lock; ``max_file_bytes``: the
    run's file size limit.
    """

    def __init__(self, index_path: Path, spec: Any, max_file_bytes: int, retry: float = 2.0):
        self.index_path = index_path
        self.spec = spec
        self.max_file_bytes = max_file_bytes
        self.retry = retry
        self._jobs: dict[int, Job] = {}
        self._queue: deque[Job] = deque()
        self._ids = itertools.count(1)
        self._cv = threading.Condition()
        self._stop = False
        self._stopping = threading.Event()  # seen by the running job's progress
        self._thread = threading.Thread(target=self._loop, name="simdask-indexer", daemon=True)
        self._thread.start()

    def submit(self, folder: Path, files: list[str]) -> Job:
        """Queue the uploads in ``folder`` (the job owns it and removes it when done)."""
        with self._cv:
            job = Job(next(self._ids), files, str(folder))
            self._jobs[job.id] = job
            self._queue.append(job)
            self._cv.notify()
        return job

    def status(self, job_id: int | None = None) -> list[dict[str, Any]]:
        """All jobs (newest first), or the one with ``job_id`` (empty list if unknown)."""
        with self._cv:
            jobs = [self._jobs[job_id]] if job_id in self._jobs else []
            if job_id is None:
                jobs = sorted(self._jobs.values(), key=lambda j: -j.id)
            return [j.to_dict() for j in jobs]

    def close(self, timeout: float = 120.0) -> None:
        """Stop the running job at its next step (not committed) and the thread, and wait
        for its cluster to close (queued jobs are dropped). A process that exited with a
        LocalCluster still open would leave its worker processes' semaphores behind
        ("leaked semaphore objects", issue 30 item 13)."""
        self._stopping.set()
        with self._cv:
            self._stop = True
            self._cv.notify()
        self._thread.join(timeout)
        if self._thread.is_alive():
            _log.warning("the indexing job did not stop within %.0f s", timeout)

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self._stop:
                    self._cv.wait()
                if self._stop:
                    return
                job = self._queue[0]
            if self._run(job):
                with self._cv:
                    self._queue.popleft()
                shutil.rmtree(job.folder, ignore_errors=True)
            else:
                with self._cv:
                    self._cv.wait(self.retry)

    def _run(self, job: Job) -> bool:
        """Try the job once; False when the writer lock is busy (to be retried)."""
        from simdask.cluster.connect import connect  # dask and distributed: only for runs
        from simdask.engine.run import RunOptions  # the engine imports dask: only for runs

        job.attempts += 1
        try:
            with Index.open(self.index_path) as idx, idx.writer(wait=0) as writer:
                job.state, job.message = "running", f"on {self.spec.describe()}"
                staging = _stage(Path(job.folder) / "uploads", Path(self.index_path))
                with connect(self.spec) as client:
                    summary = writer.update(
                        [staging],
                        client=client,
                        callback=_JobProgress(job, self._stopping),
                        options=RunOptions(
                            max_file_bytes=self.max_file_bytes or None,
                            worker_cache=bool(self.spec.outlives_run),
                        ),
                    )
        except IndexLockedError as e:
            job.state, job.message = "waiting for the writer lock", str(e)
            return False
        except JobStoppedError as e:
            job.state, job.message = "stopped", str(e)
            return True
        except Exception as e:  # reported on the page; the index is unchanged or committed
            _log.exception("indexing job %s failed", job.id)
            job.state, job.message = "failed", f"{type(e).__name__}: {e}"
            return True
        job.state, job.stage = "done", ""
        job.summary = {
            "run_id": summary.run_id,
            "generation": summary.generation,
            "added": summary.added,
            "modified": summary.modified,
            "failed": summary.failed,
            "documents": summary.documents,
            "errors": [list(e) for e in summary.errors[:50]],
        }
        job.message = (
            f"run {summary.run_id}: {summary.added} added, {summary.modified} modified, "
            f"{summary.failed} failed; {summary.documents} documents in the index"
        )
        return True


def _stage(uploads: Path, index_path: Path) -> Path:
    """Move a job's uploaded files into the index's one upload folder
    (``INDEX/work/uploads``, emptied first) and return it. Every job indexes that same folder,
    so its documents keep one source and the keys ``uploads/<name>``: uploading a name again
    modifies that document (keys are unique across sources; a new folder per job would make
    each re-upload a ``duplicate_key`` error). Called under the writer lock."""
    staging = index_path / "work" / "uploads"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    for f in sorted(uploads.iterdir()) if uploads.is_dir() else []:
        shutil.move(str(f), staging / f.name)
    return staging
