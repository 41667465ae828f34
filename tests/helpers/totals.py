"""A brute-force reference for the aligned totals: every required pair aligned again from the
stored texts, each document's covered words as a Python set."""

from __future__ import annotations

from simdask.alignment import align
from simdask.alignment.segment import word_spans
from simdask.kernels.aligned_totals import excluded_text
from simdask.kernels.partner_rule import PartnerRule
from simdask.kernels.words import chunks
from simdask.storage.aligned_tables import DEFAULT_RULE
from simdask.storage.candidate_store import candidate_partners, ensure_candidate_tables


def chosen_by_rule(conn, ids: list[int], rule: PartnerRule) -> dict[int, list[int]]:
    """Each document's partners to align, in plain Python: its stored candidates by rank
    while their score is at least ``floor`` x its best (and ``min_score``), never fewer than
    ``least``, at most ``cap``; then its similarity partners not among them (the order of
    ``candidate_partners``) until it holds ``least``."""
    ensure_candidate_tables(conn)
    out = {}
    every = candidate_partners(conn, ids, 10**6)  # stored candidates, then similarity ones
    for d in ids:
        rows = conn.execute(
            "SELECT other, score FROM candidates WHERE doc = ? ORDER BY rank", (d,)
        ).fetchall()
        bar = max(rule.floor * rows[0][1], rule.min_score) if rows else 0
        keep = [o for i, (o, s) in enumerate(rows) if i < rule.cap and (s >= bar or i < rule.least)]
        stored = {o for o, _ in rows}
        for o in every[d]:
            if len(keep) >= rule.least:
                break
            if o not in stored and o not in keep:
                keep.append(o)
        out[d] = keep
    return out


def reference_totals(
    idx, tracked: set[str] | None = None, top: int | None = None, rule: PartnerRule | None = None
) -> dict:
    """``key -> (total percent, {source key: share percent})`` of the ``tracked`` documents
    (None: all) of ``idx``: their required partners (own chosen candidates: a fixed ``top``,
    else by ``rule``, else the default rule; and tracked documents that have them among
    theirs), each pair aligned with the smaller key as text A, the document's own quotations
    excluded and its partner's not (when the index excludes quotations), the words wholly
    inside a passage counted as a set."""
    conn = idx.catalog.conn
    key_of = dict(conn.execute("SELECT doc_id, key FROM documents"))
    tracked = set(key_of.values()) if tracked is None else tracked
    ids = [d for d, k in key_of.items() if k in tracked]
    if top is not None:
        rule = PartnerRule(floor=0.0, cap=top, least=top)
    chosen = chosen_by_rule(conn, ids, rule or DEFAULT_RULE)
    cands = {key_of[d]: [key_of[p] for p in ps] for d, ps in chosen.items()}
    partners = {k: set(cands[k]) for k in tracked}
    for x in tracked:
        for p in cands[x]:
            if p in partners:
                partners[p].add(x)
    cfg = idx.config
    tpl = frozenset(c for t in idx.templates() for c in chunks(t.text, cfg.k))
    texts = {k: idx.text(k) for k in key_of.values()}

    def excl(k, quotes=cfg.exclude_quotes):
        return excluded_text(texts[k], quotes, cfg.exclude_bibliography, tpl, cfg.k)

    def inside(text, spans):
        merged: list[list[int]] = []  # spans that overlap or touch, joined
        for a, b in sorted(x for x in spans if x[1] > x[0]):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        starts, ends, _ = word_spans(text)
        pairs = zip(starts.tolist(), ends.tolist(), strict=True)
        return {i for i, (s, e) in enumerate(pairs) if any(a <= s and e <= b for a, b in merged)}

    out = {}
    for d in sorted(tracked):
        n = len(word_spans(texts[d])[0])
        union, shares = set(), {}
        for p in partners[d]:
            a, b = sorted((d, p))
            # a quotation is left out of its own document only (docs/term.md): d's own
            # quotations excluded, p's read as text d may have copied
            excluded = {d: excl(d), p: excl(p, False)}
            found = align(texts[a], texts[b], excluded_a=excluded[a], excluded_b=excluded[b])
            side = [(x.a_start, x.a_end) if d == a else (x.b_start, x.b_end) for x in found]
            words = inside(texts[d], side)
            union |= words
            if words:
                shares[p] = 100.0 * len(words) / n
        out[d] = (100.0 * len(union) / n if n else 0.0, shares)
    return out


def stored_totals(idx) -> dict:
    """``key -> (total, {source: share})`` as the index holds them."""
    return {t.doc: (t.total, {s.key: s.share for s in t.sources}) for t in idx.totals()}


def assert_totals_close(got: dict, want: dict) -> None:
    """Equal key sets, totals and shares within 1e-9 percent."""
    assert set(got) == set(want), sorted(set(got) ^ set(want))
    for k in want:
        assert abs(got[k][0] - want[k][0]) < 1e-9, (k, got[k], want[k])
        assert set(got[k][1]) == set(want[k][1]), (k, got[k], want[k])
        for s, v in want[k][1].items():
            assert abs(got[k][1][s] - v) < 1e-9, (k, s, got[k], want[k])
