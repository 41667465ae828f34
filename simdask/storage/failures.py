"""The documents that are *currently* not indexed (or not compared), and why.

Every run records the per-file errors it met (the catalog's ``errors`` table), and a run
reads every file of its sources that is not indexed with its current content, so a file that
still fails is reported again by each run over its source. The current failures are then,
for each key, its latest error, unless it was superseded:

- the document was indexed by a later run (its ``updated_at`` is after that run committed);
- a later run scanned all the sources of that run (recorded in its summary as ``sources``,
  or it was a ``--rebuild``) and did not report the key: the file was removed or fixed.

Too-short documents are indexed without chunks (never compared); they are listed from the
documents table, which is always current. Warnings (:data:`WARNING_KINDS`: the document is
indexed, e.g. with stray control bytes dropped) are current while the version the run that
reported them indexed is the document's current one. Reading only: no lock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from simdask.storage.sql import connection, rows_in

__all__ = ["WARNING_KINDS", "Failure", "current_failures"]

#: error kinds that are warnings: the document was indexed (``control_bytes``: stray control
#: bytes dropped from its text); ``too_short`` documents are indexed too, without chunks
WARNING_KINDS = frozenset({"control_bytes"})


@dataclass(frozen=True)
class Failure:
    """A document not indexed (or, ``too_short``, indexed without chunks): its key, the kind
    and message of its last error, the run that reported it, and whether an earlier version
    of it is still indexed (``kept``: its last good content is what is compared; always true
    for a warning, :attr:`warning`)."""

    key: str
    kind: str
    message: str
    run_id: int
    kept: bool

    @property
    def warning(self) -> bool:
        """Whether this is a warning about an indexed document (:data:`WARNING_KINDS`)."""
        return self.kind in WARNING_KINDS

    @property
    def indexed(self) -> bool:
        """Whether the document is indexed as reported (a warning, or ``too_short``: indexed
        without chunks), not a document that failed to read."""
        return self.warning or self.kind == "too_short"

    def to_dict(self) -> dict[str, Any]:
        """The row as ``simdask errors -o jsonl`` prints it."""
        return {
            "key": self.key,
            "kind": self.kind,
            "message": self.message,
            "run": self.run_id,
            "kept": self.kept,
        }


def _runs(conn: Any) -> list[tuple[int, float, frozenset[str] | None, bool]]:
    """Committed indexing runs in order: id, commit time, sources (None: unknown), rebuild."""
    out = []
    for run_id, finished, summary in conn.execute(
        "SELECT run_id, finished_at, summary FROM runs WHERE status = 'committed'"
        " AND json_extract(summary, '$.compaction') IS NULL ORDER BY run_id"
    ):
        s = json.loads(summary or "{}")
        sources = s.get("sources")
        out.append(
            (
                run_id,
                finished or 0.0,
                None if sources is None else frozenset(sources),
                bool(s.get("rebuild")),
            )
        )
    return out


def current_failures(conn: Any, k: int = 5) -> list[Failure]:
    """The current failures of the index whose catalog (or its connection) is ``conn``, by key
    (``k``: the index's words per chunk, named in the message of too-short documents)."""
    conn = connection(conn)
    runs = _runs(conn)
    at = {r[0]: r for r in runs}
    latest: dict[str, tuple[int, str, str]] = {}
    reported: dict[int, set[str]] = {}
    warned: dict[str, list[tuple[int, str, str]]] = {}
    for run_id, key, kind, msg in conn.execute(
        "SELECT run_id, key, kind, message FROM errors WHERE kind != 'too_short' ORDER BY rowid"
    ):
        if run_id in at and kind in WARNING_KINDS:
            warned.setdefault(key, []).append((run_id, kind, msg))
        elif run_id in at:
            latest[key] = (run_id, kind, msg)
            reported.setdefault(run_id, set()).add(key)
    # only the keys with an error: a look-up per batch, not the whole documents table
    sql = "SELECT key, updated_at FROM documents WHERE key IN {in}"
    updated = dict(rows_in(conn, sql, list(latest.keys() | warned.keys())))
    out = []
    covering: dict[int, list[set[str]]] = {}  # run -> keys met by each later run covering it
    for key, (run_id, kind, msg) in latest.items():
        _, finished, sources, _ = at[run_id]
        if updated.get(key, 0.0) > finished:
            continue  # indexed since
        if run_id not in covering:
            covering[run_id] = [
                reported.get(later, set())
                for later, _, scanned, rebuild in runs
                if later > run_id
                and (
                    rebuild or (sources is not None and scanned is not None and scanned >= sources)
                )
            ]
        if any(key not in met for met in covering[run_id]):
            continue  # a later run over its sources no longer met it
        out.append(Failure(key, kind, msg, run_id, key in updated))
    for key, notes in warned.items():  # current while the version they were found in is
        out.extend(
            Failure(key, kind, msg, run_id, True)
            for run_id, kind, msg in notes
            if key in updated and updated[key] == at[run_id][1]
        )
    run_at = {finished: run_id for run_id, finished, _, _ in runs}
    for key, words, when in conn.execute(
        "SELECT key, n_words, updated_at FROM documents WHERE status = 'too_short'"
    ):
        msg = f"{words} words: a document needs at least {k} words to be compared"
        out.append(Failure(key, "too_short", msg, run_at.get(when, 0), True))
    out.sort(key=lambda f: f.key)
    return out
