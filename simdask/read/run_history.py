"""``simdask runs INDEX``: the history of the runs of an index, from the catalog's ``runs``
table (every run, compaction and failed run is recorded there with its summary; no log file
to keep). One row per run: when it started and how long it took, its status, its document
counts, seconds per stage, and the cluster incidents it survived (worker deaths, tasks run
again: :mod:`simdask.cluster.incidents`)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from simdask.storage.sql import connection

__all__ = ["RUN_COLUMNS", "run_history"]

#: the columns of ``simdask runs`` (CSV and table; JSONL adds ``seconds`` per stage)
RUN_COLUMNS = (
    "run",
    "status",
    "kind",
    "started",
    "seconds",
    "added",
    "modified",
    "deleted",
    "failed",
    "similarity_rows",
    "worker_deaths",
    "retried_tasks",
    "stages",
    "error",
)


#: the order of the stages (the stored summary's keys are sorted by name)
_STAGE_ORDER = ("scan", "chunk", "merge", "merge+similarity", "similarity", "commit")


def _when(t: float | None) -> str | None:
    """A timestamp as ISO 8601 UTC, seconds precision (None stays None)."""
    if t is None:
        return None
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")


def _row(run_id: int, started, finished, status: str, summary: dict[str, Any]) -> dict:
    """One history row from a ``runs`` record."""
    extra = summary.get("extra") or {}
    incidents = extra.get("incidents") or {}
    seconds = summary.get("seconds") or {}
    order = [k for k in _STAGE_ORDER if k in seconds] + sorted(set(seconds) - set(_STAGE_ORDER))
    stages = {k: round(seconds[k], 3) for k in order}
    if "compaction" in summary:
        kind, stages = "compaction", {"compaction": summary["compaction"].get("seconds", 0.0)}
    else:
        kind = "rebuild" if summary.get("rebuild") else "update"
    return {
        "run": run_id,
        "status": status,
        "kind": kind if status == "committed" else None,
        "started": _when(started),
        "seconds": round(finished - started, 3) if finished and started else None,
        **{k: summary.get(k) for k in ("added", "modified", "deleted", "failed")},
        "similarity_rows": summary.get("similarity_rows"),
        "worker_deaths": incidents.get("worker_deaths"),
        "retried_tasks": incidents.get("retried_tasks"),
        "stages": ", ".join(f"{k} {v:.2f}s" for k, v in stages.items()),
        "stage_seconds": stages,
        "error": summary.get("error"),
    }


def run_history(db: Any, last: int | None = None) -> list[dict[str, Any]]:
    """Every run recorded in the catalog (``db``: the catalog or its connection), oldest
    first (``last``: only the last ``last``): see :data:`RUN_COLUMNS`, with ``stage_seconds``
    (seconds per stage, as the run summary has them). A summary that cannot be parsed is
    shown as an error of that row, never hidden."""
    conn = connection(db)
    rows = conn.execute(
        "SELECT run_id, started_at, finished_at, status, summary FROM runs ORDER BY run_id"
    ).fetchall()
    if last is not None:
        rows = rows[-last:] if last > 0 else []
    out = []
    for run_id, started, finished, status, text in rows:
        try:
            summary = json.loads(text) if text else {}
        except ValueError as e:
            summary = {"error": f"its recorded summary cannot be read: {e}"}
        out.append(_row(run_id, started, finished, status, summary))
    return out
