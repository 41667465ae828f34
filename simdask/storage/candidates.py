"""A document's candidates: the partners whose passages the aligner looks for (issue 29).

This is the one place that says how candidates are found; the aligned coverage and the
totals (:mod:`simdask.storage.totals`) read them only through :func:`candidate_partners`.
Here they are the stored similarity rows of the document in both directions (``doc ->
other`` and ``other -> doc``), best first by shared chunk count, ties by key (so that an
index built incrementally and one built at once, whose doc IDs differ, rank alike).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simdask.storage.sql import rows_in

__all__ = ["candidate_partners"]

_OUT = (
    "SELECT s.doc, s.other, s.shared, d.key FROM similarity s"
    " JOIN documents d ON d.doc_id = s.other WHERE s.doc IN {in}"
)
_IN = (
    "SELECT s.other, s.doc, s.shared, d.key FROM similarity s"
    " JOIN documents d ON d.doc_id = s.doc WHERE s.other IN {in}"
)


def candidate_partners(conn: Any, doc_ids: Iterable[int], k: int) -> dict[int, list[int]]:
    """Doc ID -> up to ``k`` partner doc IDs, best first, for each of ``doc_ids`` (every one
    of them a key; a document without candidates has ``[]``). ``conn``: the catalog's SQLite
    connection (or the catalog), read in whatever transaction it is in (a read snapshot, or
    the run's commit, which sees the rows it has written)."""
    ids = [int(d) for d in doc_ids]
    best: dict[int, dict[int, tuple[int, str]]] = {d: {} for d in ids}
    for sql in (_OUT, _IN):
        for d, p, shared, key in rows_in(conn, sql, ids):
            got = best[d].get(p)
            if got is None or shared > got[0]:
                best[d][p] = (int(shared), str(key))
    return {
        d: [p for p, _ in sorted(ps.items(), key=lambda t: (-t[1][0], t[1][1]))][: max(k, 0)]
        for d, ps in best.items()
    }
