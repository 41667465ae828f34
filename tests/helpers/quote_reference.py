"""Brute-force references for quotations counted in the checked document only (issue 31 item
4, docs/term.md): each text's U and Q by plain Python over every window, and the directed
lists ``|U(a) ∩ (U(b) ∪ Q(b))| / |U(a)|`` with Python sets and Counters."""

from __future__ import annotations

import random
from collections import Counter

from simdask.config import IndexConfig
from simdask.kernels.exclusions import quote_spans
from simdask.kernels.hashing import chunk_id
from simdask.kernels.words import WORD_PATTERN


def quoting_corpus(seed: int, n: int, words: int = 40) -> dict[str, str]:
    """``n`` lower-case texts ``d00.txt``...: own words (at least ``words``), 0-2 quotations
    (``"..."``) of a pool of passages, and in some a pool passage copied unquoted."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(60)]
    pool = [" ".join(rng.choices(vocab, k=rng.randint(8, 20))) for _ in range(4)]
    out = {}
    for i in range(n):
        parts = [" ".join(rng.choices(vocab, k=rng.randint(words, words + 20)))]
        for _ in range(rng.randint(0, 2)):
            parts.append(f'as they said "{rng.choice(pool)}" and')
            parts.append(" ".join(rng.choices(vocab, k=rng.randint(0, 8))))
        if rng.random() < 0.4:
            parts.insert(rng.randint(0, len(parts)), rng.choice(pool))
        out[f"d{i:02d}.txt"] = " ".join(p for p in parts if p)
    return out


def brute_sets(text: str, cfg: IndexConfig) -> tuple[set[int], set[int]]:
    """U and Q of one lower-case text: the chunk ID of every window of ``k`` words, in U when
    one of its words lies outside every quotation; Q = every window's ID minus U."""
    spans = quote_spans(text)
    ws = [(m.group(), m.start(), m.end()) for m in WORD_PATTERN.finditer(text)]
    inside = [any(s <= a and b <= e for s, e in spans) for _, a, b in ws]
    u, c = set(), set()
    for i in range(len(ws) - cfg.k + 1):
        cid = chunk_id([w for w, _, _ in ws[i : i + cfg.k]], cfg.hash_bits, cfg.seed)
        c.add(cid)
        if not all(inside[i : i + cfg.k]):
            u.add(cid)
    return u, c - u


def reference_lists(
    texts: dict[str, str], cfg: IndexConfig, doc_ids: dict[str, int]
) -> dict[str, list[tuple[float, int, str]]]:
    """Every document's stored list under the rule: ``(similarity, shared, other key)`` with
    shared ``|U(a) ∩ (U(b) ∪ Q(b))|`` over the chunks of U held by at most ``max_df``
    documents' U, at least ``threshold`` percent, best ``top_k`` (ties: lower doc ID)."""
    sets = {k: brute_sets(t, cfg) for k, t in texts.items()}
    df: Counter = Counter(c for u, _ in sets.values() for c in u)
    out = {}
    for a, (ua, _) in sets.items():
        counted = {c for c in ua if cfg.max_df is None or df[c] <= cfg.max_df}
        rows = []
        for b, (ub, qb) in sets.items():
            shared = len(counted & (ub | (qb if ub else set())))
            sim = 100.0 * shared / len(ua) if ua else 0.0
            if b != a and shared and sim >= cfg.threshold:
                rows.append((sim, shared, b))
        rows.sort(key=lambda r: (-r[0], doc_ids[r[2]]))
        if rows:
            out[a] = [(round(s, 9), n, b) for s, n, b in rows[: cfg.top_k]]
    return out


def reference_count(texts: dict[str, str], cfg: IndexConfig, a: str, b: str) -> int:
    """``|U(a) ∩ (U(b) ∪ Q(b))|`` over the chunks of U(a) held by at most ``max_df``
    documents' U: the count of ``a -> b`` under the rule."""
    sets = {k: brute_sets(t, cfg) for k, t in texts.items()}
    df: Counter = Counter(c for u, _ in sets.values() for c in u)
    ua, (ub, qb) = sets[a][0], sets[b]
    counted = {c for c in ua if cfg.max_df is None or df[c] <= cfg.max_df}
    return len(counted & (ub | (qb if ub else set())))
