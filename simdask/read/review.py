"""What a teacher's review adds to a pair's view (issue 31, items 12 and 13): when each of
the two documents was first indexed and its file last modified ("who was first",
:mod:`simdask.storage.doc_dates`), and the decision marked on the pair
(:mod:`simdask.storage.decisions`, ``simdask mark``). Read-only; times as ISO 8601 in UTC
(``2026-11-28T02:30:00Z``), None when unknown (an index older than the dates, a file not
indexed).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from simdask.storage.decisions import (
    decision_fields,
    decisions_by_pair,
    decisions_for,
    excluded_by_doc,
)
from simdask.storage.doc_dates import dates_of

__all__ = ["DETAIL_FIELDS", "iso_time", "pair_details", "review_lines", "with_decisions"]

#: the fields :func:`pair_details` adds to a pair (``a`` and ``b`` as the pair names them)
DETAIL_FIELDS = (
    "a_first_indexed",
    "a_modified",
    "b_first_indexed",
    "b_modified",
    "decision",
    "note",
    "source_excluded",
)


def iso_time(seconds: float | None) -> str | None:
    """``2026-11-28T02:30:00Z`` for seconds since the epoch (None: None)."""
    if seconds is None:
        return None
    t = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def pair_details(db: Any, pairs: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """Per pair ``(a, b)`` of keys, the :data:`DETAIL_FIELDS`: both documents' first indexed
    and file modification times, the decision and its note (None where there is none), and
    ``source_excluded``: which side the teacher left out of the other's total ("B left out
    of A"; None: neither)."""
    dates = dates_of(db, {k for p in pairs for k in p})
    marks = decisions_for(db, pairs)
    left_out = excluded_by_doc(db, {k for p in pairs for k in p})
    out = []
    for a, b in pairs:
        first_a, mod_a = dates.get(a, (None, None))
        first_b, mod_b = dates.get(b, (None, None))
        d = marks.get((a, b))
        out.append(
            {
                "a_first_indexed": iso_time(first_a),
                "a_modified": iso_time(mod_a),
                "b_first_indexed": iso_time(first_b),
                "b_modified": iso_time(mod_b),
                "decision": None if d is None else d.status,
                "note": None if d is None or not d.note else d.note,
                "source_excluded": _left_out(left_out, a, b),
            }
        )
    return out


def _left_out(left_out: dict[str, frozenset[str]], a: str, b: str) -> str | None:
    said = [f"{y} left out of {x}" for x, y in ((a, b), (b, a)) if y in left_out.get(x, ())]
    return "; ".join(said) or None


def review_lines(details: dict[str, Any], a: str, b: str) -> list[str]:
    """A report's lines for people: who was first, and the decision (none when unknown)."""
    lines = []
    for side, key in (("a", a), ("b", b)):
        first, mod = details[f"{side}_first_indexed"], details[f"{side}_modified"]
        if first is not None:
            file = f", file modified {mod}" if mod is not None else ""
            lines.append(f"{key}: first indexed {first}{file}")
    if details["decision"] is not None:
        note = f": {details['note']}" if details["note"] else ""
        lines.append(f"decision: {details['decision']}{note}")
    if details.get("source_excluded"):
        lines.append(f"excluded by the teacher: {details['source_excluded']}")
    return lines


def with_decisions(db: Any, rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """The unordered pairs' table rows (with ``a_key``, ``b_key``) each with its ``decision``
    and ``note`` (``simdask mark``; None: none), and whether any of them has one (a table
    shows the column only then)."""
    marks = decisions_by_pair(db)
    out = [{**r, **decision_fields(marks, r["a_key"], r["b_key"])} for r in rows]
    return out, any(r["decision"] is not None for r in out)
