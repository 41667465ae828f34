"""Aligned pairs and per-document totals in the catalog (issue 29 item 2).

Tables (created on first use, so that an older index reads as "no totals yet"):

- ``aligned_pairs (a, b, a_words, b_words, a_share, b_share, a_spans, b_spans)``: one row per
  aligned unordered pair (``a < b`` by doc ID): each side's word count, the share (0..1) of
  its words inside the passages taken from the other, and those passages as word intervals
  (:mod:`simdask.kernels.aligned_totals`), so that totals are unions recomputed without
  aligning again. A pair row is valid while neither document changes: a run deletes the
  rows of every document it adds, modifies or deletes.
- ``doc_totals (doc, words, total)``: the *tracked* documents (those with a total) and their
  totals; ``total_sources (doc, source, share)``: the sources of each total.
- ``total_cands (doc, rank, partner)``: the candidates (:mod:`simdask.storage.candidate_store`)
  each tracked document's total was computed from.

The total of a tracked document ``d`` is the share of its words in the union of its passages
from its *required* partners: its own chosen candidates (the stored candidates a
:class:`~simdask.kernels.partner_rule.PartnerRule` chooses,
:func:`~simdask.storage.candidate_store.rule_partners`) and every tracked document that has ``d``
among its chosen candidates. Which documents are tracked: every document when the meta
``totals`` says ``"scope": "all"`` (``totals --compute``, ``update --align``), else those an
incremental run added or modified (and kept, by key, across runs). :func:`settle` brings the
tables to that definition inside the caller's transaction (the run's commit or a
``totals --compute`` batch), aligning the missing required pairs with the given aligner.
What is stored is read by :mod:`simdask.storage.aligned_reads`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from simdask.kernels.aligned_totals import doc_total, intervals_from_bytes, intervals_to_bytes
from simdask.kernels.partner_rule import PartnerRule
from simdask.storage.candidate_store import rule_partners
from simdask.storage.quoted_chunks import realign_quoting
from simdask.storage.sql import connection, insert_values, rows_in

__all__ = [
    "DEFAULT_RULE",
    "DEFAULT_TOP",
    "AlignJob",
    "PairAlignment",
    "TotalsPlan",
    "compute_batch",
    "compute_finish",
    "compute_start",
    "ensure_tables",
    "missing_jobs",
    "plan_rule",
    "remember_tracked",
    "required_pairs",
    "settle",
    "store_pairs",
    "totals_meta",
]

#: candidates aligned per document before the rule (the least the default rule aligns)
DEFAULT_TOP = 5
#: which candidates of a document are aligned by default (issue 29): those scoring at least
#: 0.1 of its best (docs/alignment.md, "How many candidates to align"), never fewer than the
#: 5 best (the fixed top 5 of before), at most 10 (the cost bound: twice the top 5's pairs)
DEFAULT_RULE = PartnerRule(floor=0.1, cap=10, least=DEFAULT_TOP)
_TABLES = (
    "CREATE TABLE IF NOT EXISTS aligned_pairs (a INTEGER NOT NULL, b INTEGER NOT NULL,"
    " a_words INTEGER NOT NULL, b_words INTEGER NOT NULL, a_share REAL NOT NULL,"
    " b_share REAL NOT NULL, a_spans BLOB, b_spans BLOB, PRIMARY KEY (a, b)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS aligned_pairs_b ON aligned_pairs (b)",
    "CREATE TABLE IF NOT EXISTS doc_totals (doc INTEGER PRIMARY KEY, words INTEGER NOT NULL,"
    " total REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS total_sources (doc INTEGER NOT NULL, source INTEGER NOT NULL,"
    " share REAL NOT NULL, PRIMARY KEY (doc, source)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS total_cands (doc INTEGER NOT NULL, rank INTEGER NOT NULL,"
    " partner INTEGER NOT NULL, PRIMARY KEY (doc, rank)) WITHOUT ROWID",
)
_PER_DOC = ("doc_totals", "total_sources", "total_cands")


@dataclass(frozen=True)
class AlignJob:
    """One pair to align: doc IDs ``a < b``; ``first`` is the side aligned as text A (the
    smaller key, so that doc IDs do not decide the result); each side's stored text as
    ``(pack, offset, length)``."""

    a: int
    b: int
    a_text: tuple[str, int, int]
    b_text: tuple[str, int, int]
    first: int


@dataclass(frozen=True)
class PairAlignment:
    """An aligned pair (doc IDs ``a < b``): each side's word count and passages as word
    intervals (``(m, 2)`` int arrays over that side's words)."""

    a: int
    b: int
    a_words: int
    b_words: int
    a_spans: np.ndarray
    b_spans: np.ndarray


#: aligns a list of jobs, yielding their results (any order); None: nothing can be aligned
Aligner = Callable[[list[AlignJob]], Iterable[PairAlignment]]


@dataclass(frozen=True)
class TotalsPlan:
    """What a commit does about totals. ``top``: a fixed number of candidates per tracked
    document, else ``rule`` (:class:`~simdask.kernels.partner_rule.PartnerRule`), else (both
    None) the stored setting, at first :data:`DEFAULT_RULE`; ``track_new``: the documents
    the run adds or modifies become tracked; ``track_all``: every document is tracked from
    now on (stored);
    ``aligner``: aligns the missing required pairs (None: a tracked document missing one
    loses its total, never keeps a stale one); ``partners``: every tracked document's
    partners chosen by the same rule under the same lock (``totals --compute``'s start)."""

    top: int | None = None
    rule: PartnerRule | None = None
    track_new: bool = False
    track_all: bool = False
    aligner: Aligner | None = None
    partners: dict[int, list[int]] | None = None


def ensure_tables(c: sqlite3.Connection) -> None:
    """Create the tables if the catalog has none yet (inside the caller's transaction)."""
    for sql in _TABLES:
        c.execute(sql)


def totals_meta(c: sqlite3.Connection) -> dict[str, Any]:
    """The stored settings: ``{"rule": PartnerRule, "top": int, "scope": "all" | "runs",
    "quotes": "own" | None}`` (``top``: the most candidates aligned per document, the rule's
    cap; ``quotes``: ``"own"`` once the stored pairs count each side's quotations only in
    its own direction, :func:`realign_quoting`). Settings stored
    before the rule (``{"top": k}``) read as the fixed top k they were; none: the default."""
    row = c.execute("SELECT value FROM meta WHERE name = 'totals'").fetchone()
    got = json.loads(row[0]) if row else {}
    if "rule" in got:
        rule = PartnerRule.from_dict(got["rule"])
    elif "top" in got:
        k = int(got["top"])
        rule = PartnerRule(floor=0.0, cap=k, least=k)
    else:
        rule = DEFAULT_RULE
    return {
        "rule": rule,
        "top": rule.cap,
        "scope": got.get("scope", "runs"),
        "quotes": got.get("quotes"),
    }


def plan_rule(meta: dict[str, Any], top: int | None, rule: PartnerRule | None) -> PartnerRule:
    """The rule a computation uses: a fixed ``top`` (a whole number >= 1), else ``rule``,
    else the stored one (``meta``: :func:`totals_meta`)."""
    if top is not None:
        return PartnerRule(floor=0.0, cap=int(top), least=int(top))
    return rule if rule is not None else meta["rule"]


def remember_tracked(c: sqlite3.Connection) -> None:
    """Before a commit changes documents: the keys of the tracked documents, in the temporary
    table ``t_tracked_keys`` (a full build gives documents new IDs; keys survive)."""
    ensure_tables(c)
    c.execute("DROP TABLE IF EXISTS t_tracked_keys")
    c.execute(
        "CREATE TEMP TABLE t_tracked_keys AS SELECT d.key AS key FROM doc_totals t"
        " JOIN documents d ON d.doc_id = t.doc"
    )


def _pairs_of(c: sqlite3.Connection, docs: Iterable[int]) -> set[tuple[int, int]]:
    ids = list(docs)
    got = rows_in(c, "SELECT a, b FROM aligned_pairs WHERE a IN {in}", ids)
    return {*got, *rows_in(c, "SELECT a, b FROM aligned_pairs WHERE b IN {in}", ids)}


def _invalidate(c: sqlite3.Connection, changed: list[int], replace_all: bool) -> set[int]:
    """Delete the pairs and per-document rows of ``changed`` documents; returns the partners
    of the deleted pairs (their totals change)."""
    if replace_all:
        for t in ("aligned_pairs", *_PER_DOC):
            c.execute(f"DELETE FROM {t}")
        return set()
    gone = _pairs_of(c, changed)
    c.executemany("DELETE FROM aligned_pairs WHERE a = ? AND b = ?", sorted(gone))
    for t in _PER_DOC:
        c.executemany(f"DELETE FROM {t} WHERE doc = ?", ((d,) for d in changed))
    return {x for p in gone for x in p}


def _tracked(c: sqlite3.Connection, plan: TotalsPlan, scope: str, new: list[int]) -> set[int]:
    if scope == "all":
        return {int(r[0]) for r in c.execute("SELECT doc_id FROM documents")}
    kept = c.execute(
        "SELECT d.doc_id FROM documents d JOIN t_tracked_keys t ON t.key = d.key"
    ).fetchall()
    return {int(r[0]) for r in kept} | (set(new) if plan.track_new else set())


def required_pairs(cands: dict[int, list[int]]) -> set[tuple[int, int]]:
    """The unordered pairs ``(min, max)`` of every document and each of its candidates."""
    return {(min(d, p), max(d, p)) for d, ps in cands.items() for p in ps if p != d}


def _stored_cands(c: sqlite3.Connection) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for d, p in c.execute("SELECT doc, partner FROM total_cands ORDER BY doc, rank"):
        out.setdefault(int(d), []).append(int(p))
    for (d,) in c.execute("SELECT doc FROM doc_totals"):
        out.setdefault(int(d), [])
    return out


def _jobs(c: sqlite3.Connection, pairs: list[tuple[int, int]]) -> list[AlignJob]:
    ids = sorted({x for p in pairs for x in p})
    sql = "SELECT doc_id, key, text_pack, text_offset, text_length FROM documents"
    loc = {int(r[0]): r[1:] for r in rows_in(c, sql + " WHERE doc_id IN {in}", ids)}
    out = []
    for a, b in pairs:
        ka, kb = loc[a], loc[b]
        if ka[1] is None or kb[1] is None:
            continue  # no stored text: cannot be aligned (the pair stays missing)
        first = a if ka[0] <= kb[0] else b
        out.append(AlignJob(a, b, tuple(ka[1:]), tuple(kb[1:]), first))
    return out


def missing_jobs(c: sqlite3.Connection, required: set[tuple[int, int]]) -> list[AlignJob]:
    """The jobs aligning the pairs of ``required`` that are not stored, in pair order."""
    stored = _pairs_of(c, sorted({x for p in required for x in p}))
    return _jobs(c, sorted(required - stored))


def store_pairs(c: sqlite3.Connection, found: Iterable[PairAlignment]) -> int:
    """Write aligned pairs (replacing rows of the same pairs); returns how many."""
    rows = []
    for r in found:
        sa = _share(r.a_spans, r.a_words)
        sb = _share(r.b_spans, r.b_words)
        blobs = intervals_to_bytes(r.a_spans), intervals_to_bytes(r.b_spans)
        rows.append((r.a, r.b, r.a_words, r.b_words, sa, sb, *blobs))
    head = (
        "INSERT OR REPLACE INTO aligned_pairs (a, b, a_words, b_words, a_share, b_share,"
        " a_spans, b_spans)"
    )
    if not rows:
        return 0
    return insert_values(c, head, [list(col) for col in zip(*rows, strict=True)])


def _share(spans: np.ndarray, words: int) -> float:
    from_total = doc_total(words, {0: spans})  # one source: its share is the total
    return from_total[0]


def settle(
    c: sqlite3.Connection,
    plan: TotalsPlan,
    upserted: Iterable[int] = (),
    deleted: Iterable[int] = (),
    replace_all: bool = False,
) -> dict[str, int]:
    """Bring the tables to their definition (module docstring) inside the caller's
    transaction, after the documents and similarity rows of the transaction are written:
    the pairs of the ``upserted`` and ``deleted`` documents (doc IDs) dropped, the missing
    required pairs aligned by ``plan.aligner``, the totals of every tracked document whose
    pairs changed recomputed. Needs :func:`remember_tracked` earlier in the transaction
    (unless the scope is ``all``). Returns counts: ``aligned`` pairs, ``totals`` written,
    ``tracked`` documents, ``dropped`` (tracked documents left without a total because a
    pair could not be aligned)."""
    ensure_tables(c)
    meta = totals_meta(c)
    rule = plan_rule(meta, plan.top, plan.rule)
    scope = "all" if plan.track_all or meta["scope"] == "all" else "runs"
    new = [int(d) for d in upserted]
    changed = sorted(set(new) | {int(d) for d in deleted})
    old_cands = {} if replace_all else _stored_cands(c)
    touched = _invalidate(c, changed, replace_all) | set(changed) | realign_quoting(c)
    tracked = _tracked(c, plan, scope, new)
    if plan.partners is not None and tracked <= plan.partners.keys():
        cands = {d: plan.partners[d] for d in sorted(tracked)}
    else:
        cands = rule_partners(c, sorted(tracked), rule)
    old_req, req = required_pairs(old_cands), required_pairs(cands)
    touched |= {x for p in old_req ^ req for x in p}
    touched |= {d for d in tracked if old_cands.get(d) != cands[d]}
    touched |= tracked - {int(r[0]) for r in c.execute("SELECT doc FROM doc_totals")}
    missing = sorted(req - _pairs_of(c, sorted({x for p in req for x in p})))
    aligned = 0
    if missing and plan.aligner is not None:
        aligned = store_pairs(c, plan.aligner(_jobs(c, missing)))
        now = _pairs_of(c, sorted({x for p in missing for x in p}))
        missing = [p for p in missing if p not in now]
    lacking = {x for p in missing for x in p}
    c.executemany("DELETE FROM total_cands WHERE doc = ?", ((d,) for d in sorted(touched)))
    cand_rows = [(d, r, p) for d in sorted(touched & tracked) for r, p in enumerate(cands[d])]
    if cand_rows:
        head = "INSERT INTO total_cands (doc, rank, partner)"
        insert_values(c, head, [list(col) for col in zip(*cand_rows, strict=True)])
    written = _write_totals(c, sorted((touched & tracked) - lacking), cands, tracked)
    gone = sorted(tracked & lacking)
    for t in ("doc_totals", "total_sources"):
        c.executemany(f"DELETE FROM {t} WHERE doc = ?", ((d,) for d in gone))
    c.execute(
        "INSERT OR REPLACE INTO meta (name, value) VALUES ('totals', ?)",
        (json.dumps({"rule": rule.to_dict(), "scope": scope, "quotes": "own"}, sort_keys=True),),
    )
    return {"aligned": aligned, "totals": written, "tracked": len(tracked), "dropped": len(gone)}


def _write_totals(
    c: sqlite3.Connection, docs: list[int], cands: dict[int, list[int]], tracked: set[int]
) -> int:
    """Recompute and write the totals of ``docs`` from the stored pairs of their required
    partners."""
    if not docs:
        return 0
    partners: dict[int, set[int]] = {d: set(cands.get(d, ())) for d in docs}
    want = set(docs)
    for x in tracked:
        for p in cands.get(x, ()):
            if p in want:
                partners[p].add(x)
    spans: dict[int, dict[int, np.ndarray]] = {d: {} for d in docs}
    words: dict[int, int] = {}
    sql = "SELECT a, b, a_words, b_words, a_spans, b_spans FROM aligned_pairs WHERE {} IN {{in}}"
    for side in ("a", "b"):
        for a, b, wa, wb, sa, sb in rows_in(c, sql.format(side), docs):
            for d, o, w, s in ((a, b, wa, sa), (b, a, wb, sb)):
                if d in want and o in partners[d]:
                    spans[d][o] = intervals_from_bytes(s)
                    words[d] = int(w)
    bare = [d for d in docs if d not in words]  # no pair: the index's word count
    words.update(rows_in(c, "SELECT doc_id, n_words FROM documents WHERE doc_id IN {in}", bare))
    for t in ("doc_totals", "total_sources"):
        c.executemany(f"DELETE FROM {t} WHERE doc = ?", ((d,) for d in docs))
    tot_rows, src_rows = [], []
    for d in docs:
        total, sources = doc_total(words.get(d, 0), spans[d])
        tot_rows.append((d, words.get(d, 0), total))
        src_rows += [(d, s, share) for s, share in sources]
    head = "INSERT INTO doc_totals (doc, words, total)"
    insert_values(c, head, [list(x) for x in zip(*tot_rows, strict=True)])
    if src_rows:
        head = "INSERT INTO total_sources (doc, source, share)"
        insert_values(c, head, [list(x) for x in zip(*src_rows, strict=True)])
    return len(docs)


@contextmanager
def _transaction(c: sqlite3.Connection) -> Iterator[None]:
    c.execute("BEGIN IMMEDIATE")
    try:
        yield
        c.execute("COMMIT")
    except BaseException:
        if c.in_transaction:
            c.execute("ROLLBACK")
        raise


def compute_start(
    db: Any, top: int | None, rule: PartnerRule | None = None
) -> tuple[PartnerRule, int, list[AlignJob], dict[int, list[int]]]:
    """``totals --compute``, first step (the writer lock held): ``(rule, required pairs,
    jobs, partners)``: which candidates are aligned (:func:`plan_rule`: a fixed ``top``,
    else ``rule``, else the stored setting), how many pairs every document's chosen
    candidates make, the jobs aligning those not stored yet, and every document's chosen
    partners (for :func:`compute_finish`, under the same lock)."""
    c = connection(db)
    with _transaction(c):
        ensure_tables(c)
        realign_quoting(c)
    chosen = plan_rule(totals_meta(c), top, rule)
    ids = [int(r[0]) for r in c.execute("SELECT doc_id FROM documents")]
    partners = rule_partners(c, ids, chosen)
    required = required_pairs(partners)
    return chosen, len(required), missing_jobs(c, required), partners


def compute_batch(db: Any, found: Iterable[PairAlignment]) -> int:
    """``totals --compute``: one batch of aligned pairs committed (its completion marker)."""
    c = connection(db)
    with _transaction(c):
        return store_pairs(c, found)


def compute_finish(
    db: Any, rule: PartnerRule, partners: dict[int, list[int]] | None = None
) -> dict[str, int]:
    """``totals --compute``, last step: every document tracked by ``rule``, every total
    written, in one transaction (:func:`settle`; ``partners``: from :func:`compute_start`)."""
    c = connection(db)
    with _transaction(c):
        return settle(c, TotalsPlan(rule=rule, track_all=True, partners=partners))
