"""Where a run's time goes (issue 32 item 1): per stage, the seconds at least one worker
computed a task and the *serial* seconds in which none did (the client reading, planning,
gathering or waiting), from the scheduler's task stream; and the tasks and task-seconds
(work) per task-name stage.

The client marks each stage's window (:meth:`StageClock.stage`, wall-clock epoch seconds);
the scheduler records every task's compute interval (``startstops``, the workers' clocks:
on one machine the same clock, across machines as synchronised as the machines are).
:func:`busy_profile` puts the two together once the run's tasks are done. The arithmetic,
:func:`union_length` and :func:`overlap_length`, is plain numpy.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "BusyProfile",
    "StageClock",
    "busy_profile",
    "overlap_length",
    "profile_of",
    "start_task_stream",
    "task_stage",
    "union_intervals",
    "union_length",
]


@dataclass
class StageClock:
    """The client's stage windows of one run: ``(name, start, end)`` in epoch seconds, and
    the run's own start and end (``started``, ``ended``)."""

    started: float = field(default_factory=time.time)
    ended: float | None = None
    windows: list[tuple[str, float, float]] = field(default_factory=list)

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Mark the window of stage ``name`` around the block."""
        t = time.time()
        try:
            yield
        finally:
            self.windows.append((name, t, time.time()))

    def mark(self, name: str, start: float) -> float:
        """Record the window of stage ``name`` from ``start`` (epoch seconds, ``time.time()``)
        to now; returns its seconds."""
        end = time.time()
        self.windows.append((name, start, end))
        return end - start

    def stop(self) -> None:
        """Mark the end of the run's computation."""
        self.ended = time.time()


def union_intervals(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The union of intervals ``[starts[i], stops[i])`` as disjoint sorted ``(n, 2)`` rows."""
    if len(starts) == 0:
        return np.zeros((0, 2))
    order = np.argsort(starts, kind="stable")
    s, e = np.asarray(starts, float)[order], np.asarray(stops, float)[order]
    reach = np.maximum.accumulate(e)
    # a new disjoint interval starts where a start lies past everything before it
    new = np.ones(len(s), bool)
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, len(s) - 1]
    return np.column_stack([s[first], reach[last]])


def union_length(starts: np.ndarray, stops: np.ndarray) -> float:
    """Seconds covered by at least one interval ``[starts[i], stops[i])``."""
    u = union_intervals(starts, stops)
    return float((u[:, 1] - u[:, 0]).sum()) if len(u) else 0.0


def overlap_length(union: np.ndarray, lo: float, hi: float) -> float:
    """Seconds of the disjoint intervals ``union`` (:func:`union_intervals`) inside
    ``[lo, hi)``."""
    if len(union) == 0 or hi <= lo:
        return 0.0
    a, b = np.maximum(union[:, 0], lo), np.minimum(union[:, 1], hi)
    return float(np.clip(b - a, 0.0, None).sum())


def task_stage(key: str, tag: str) -> str | None:
    """The stage of a task named ``simdask-<stage>-<tag>...`` (:func:`~.context.task_key`)
    of the run tagged ``tag``; None for another run's or a foreign task."""
    head, sep, _ = key.partition(f"-{tag}")
    if not sep or not head.startswith("simdask-"):
        return None
    return head[len("simdask-") :]


@dataclass
class BusyProfile:
    """What :func:`busy_profile` measured. ``tasks`` / ``task_seconds``: per task-name stage
    (``chunk``, ``merge``, ``pairs``, ``rows``, ...), this run's tasks and their summed
    compute seconds (the work, in worker-thread seconds). ``stage_seconds`` /
    ``busy_seconds`` / ``serial_seconds``: per client stage window (``chunk``, ``merge``,
    ``similarity``, ...; ``between``: the rest of the run's computation, e.g. resolving IDs
    and the gaps between stages), its wall seconds, the seconds at least one worker computed
    a task, and the seconds none did."""

    tasks: dict[str, int]
    task_seconds: dict[str, float]
    stage_seconds: dict[str, float]
    busy_seconds: dict[str, float]
    serial_seconds: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (seconds rounded to milliseconds)."""

        def r(d):
            return {k: round(v, 3) for k, v in d.items()}

        return {
            "tasks": dict(self.tasks),
            "task_seconds": r(self.task_seconds),
            "stage_seconds": r(self.stage_seconds),
            "busy_seconds": r(self.busy_seconds),
            "serial_seconds": r(self.serial_seconds),
        }


def profile_of(records: list[dict], clock: StageClock, tag: str) -> BusyProfile:
    """:class:`BusyProfile` of the task-stream ``records`` (dicts with ``key`` and
    ``startstops``) against the windows of ``clock``; tasks of other runs count as busy
    time (the workers were not idle) but not among this run's ``tasks``."""
    tasks: dict[str, int] = {}
    work: dict[str, float] = {}
    starts, stops = [], []
    for rec in records:
        key = rec["key"] if isinstance(rec["key"], str) else str(rec["key"])
        stage = task_stage(key, tag)
        for ss in rec.get("startstops", ()):
            if ss.get("action") != "compute":
                continue
            starts.append(ss["start"])
            stops.append(ss["stop"])
            if stage is not None:
                work[stage] = work.get(stage, 0.0) + ss["stop"] - ss["start"]
        if stage is not None:
            tasks[stage] = tasks.get(stage, 0) + 1
    union = union_intervals(np.asarray(starts, float), np.asarray(stops, float))
    end = clock.ended if clock.ended is not None else time.time()
    wall: dict[str, float] = {}
    busy: dict[str, float] = {}
    for name, lo, hi in clock.windows:
        wall[name] = wall.get(name, 0.0) + hi - lo
        busy[name] = busy.get(name, 0.0) + overlap_length(union, lo, hi)
    run_busy = overlap_length(union, clock.started, end)
    wall["between"] = max(0.0, (end - clock.started) - sum(wall.values()))
    busy["between"] = max(0.0, run_busy - sum(busy.values()))
    serial = {k: max(0.0, wall[k] - busy[k]) for k in wall}
    return BusyProfile(tasks, work, wall, busy, serial)


def start_task_stream(client) -> None:
    """Make sure the scheduler records the task stream from now on (its plugin is added on
    the first request; with a dashboard it is there already)."""
    client.get_task_stream(count=0)


def busy_profile(client, clock: StageClock, tag: str) -> BusyProfile:
    """:func:`profile_of` the scheduler's task stream since ``clock.started``."""
    records = client.get_task_stream(start=clock.started - 1.0)
    return profile_of(records, clock, tag)
