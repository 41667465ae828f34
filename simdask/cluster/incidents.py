"""What a run survived on its cluster: workers that died and the tasks run again because of it.

Read from the scheduler's event log (``Client.get_events("all")``): every worker the scheduler
removes is an event ``remove-worker`` naming the tasks it was processing (run again elsewhere)
and the results it held that are computed again; ``expected`` removals (a worker retired or
closed on purpose) are not deaths. Recorded in the run summary (``extra["incidents"]``) and
shown by ``simdask runs``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["cluster_incidents"]


def cluster_incidents(client: Any, since: float) -> dict[str, int] | None:
    """``{"worker_deaths", "retried_tasks"}`` since ``since`` (``time.time()`` seconds, the
    scheduler's clock); None when the scheduler cannot be asked."""
    try:
        events = client.get_events("all")
    except Exception:  # a lost or in-process scheduler without events: not known
        return None
    deaths = retried = 0
    for t, msg in events:
        if t < since or not isinstance(msg, dict) or msg.get("action") != "remove-worker":
            continue
        if msg.get("expected"):
            continue
        deaths += 1
        retried += len(msg.get("processing-tasks") or ())
        retried += len(msg.get("lost-computed-tasks") or ())
    return {"worker_deaths": deaths, "retried_tasks": retried}
