"""Issue 31 item 4 in the aligned totals: with ``--exclude-quotes`` a quotation is left out of
its own document only. A passage B copies without quotation marks from inside A's quotation is
B's copied text (in B's aligned coverage, total and sources' shares) and never A's. Checked
against a brute force (each side aligned with its own quotations excluded and the other's
read as text, covered words as Python sets) on generated texts with planted quoted and
unquoted passages, in the engine's batches, the stored totals (a build, an incremental run,
``totals --compute``), a checked text's total (``query --totals``) and the views'
coverage; each also against the planted passages, which the old rule (both sides'
quotations excluded) misses."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.alignment import align
from simdask.alignment.segment import word_spans
from simdask.engine.totals import AlignSettings, align_job_batch
from simdask.evidence.doc_view import document_view
from simdask.evidence.pair_view import index_report
from simdask.kernels.aligned_totals import excluded_text
from simdask.read.total_reads import query_total, source_spans
from simdask.read.undirected_pairs import Pair
from simdask.storage.aligned_tables import AlignJob
from tests.helpers.totals import assert_totals_close, reference_totals, stored_totals

pytestmark = pytest.mark.integration

VOCAB = [f"w{i}" for i in range(4000)]


def para(rng: random.Random, sentences: int) -> str:
    """``sentences`` sentences of 8 to 14 random words (a vocabulary of 4,000)."""
    return " ".join(
        " ".join(rng.choices(VOCAB, k=rng.randint(8, 14))) + "." for _ in range(sentences)
    )


def planted(seed: int, p: int, r: int, s: int) -> tuple[str, str, dict[str, str]]:
    """``(A, B, passages)``: A quotes P (``p`` sentences), which B copies unquoted; B quotes
    R (``r`` sentences), which A copies unquoted; both share S (``s`` sentences) unquoted;
    0 sentences: that passage is not planted."""
    rng = random.Random(seed)
    pp, rr, ss = para(rng, p), para(rng, r), para(rng, s)
    a = [para(rng, 3), f"As they wrote, “{pp}”" if p else "", para(rng, 3), rr, para(rng, 2), ss]
    b = [para(rng, 2), pp, para(rng, 3), f"In their words, “{rr}”" if r else "", para(rng, 2)]
    b += [ss, para(rng, 2)]
    return " ".join(x for x in a if x), " ".join(x for x in b if x), {"P": pp, "R": rr, "S": ss}


def covered(text: str, spans) -> set[int]:
    """The word indexes of ``text`` (the aligner's words) lying wholly inside a span."""
    starts, ends, _ = word_spans(text)
    pairs = zip(starts.tolist(), ends.tolist(), strict=True)
    return {i for i, (s, e) in enumerate(pairs) if any(a <= s and e <= b for a, b in spans)}


def words_of(text: str, part: str) -> set[int]:
    """The word indexes of the first occurrence of ``part`` in ``text`` (empty: none)."""
    at = text.find(part) if part else -1
    return set() if at < 0 else covered(text, [(at, at + len(part))])


def brute(a: str, b: str, quotes_rule: str = "own") -> tuple[set[int], set[int]]:
    """Each side's covered words by the aligner: ``own`` (a quotation is left out of its own
    document only) or ``both`` (the rule before: both sides' quotations left out)."""

    def ex(t: str, quotes: bool):
        return excluded_text(t, quotes, False, frozenset(), 5)

    other_quotes = quotes_rule == "both"
    for_a = align(a, b, excluded_a=ex(a, True), excluded_b=ex(b, other_quotes))
    for_b = align(a, b, excluded_a=ex(a, other_quotes), excluded_b=ex(b, True))
    return (
        covered(a, [(x.a_start, x.a_end) for x in for_a]),
        covered(b, [(x.b_start, x.b_end) for x in for_b]),
    )


def intervals_words(iv) -> set[int]:
    return {i for lo, hi in iv.tolist() for i in range(lo, hi)}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(  # passages of 3 sentences or more: the aligner finds every one (measured)
    seed=st.integers(0, 10**6),
    p=st.sampled_from([0, 3, 4]),
    r=st.sampled_from([0, 3]),
    s=st.sampled_from([0, 3]),
    a_first=st.booleans(),
)
def test_a_batch_counts_each_sides_passages_by_its_own_quotations(seed, p, r, s, a_first):
    a, b = planted(seed, p, r, s)[:2]
    passages = planted(seed, p, r, s)[2]
    locs = {("t", 0, len(a)): a, ("t", 1, len(b)): b}
    job = AlignJob(1, 2, ("t", 0, len(a)), ("t", 1, len(b)), 1 if a_first else 2)
    got = align_job_batch([job], AlignSettings("unused", quotes=True), locs)[0]
    first, second = (a, b) if a_first else (b, a)
    want = brute(first, second)
    want_a, want_b = want if a_first else want[::-1]
    assert intervals_words(got.a_spans) == want_a
    assert intervals_words(got.b_spans) == want_b
    # the rule: a quotation never counts for the text quoting it
    assert want_a.isdisjoint(words_of(a, passages["P"]))
    assert want_b.isdisjoint(words_of(b, passages["R"]))
    # a copy of a quotation the aligner finds is one the old rule (both sides' quotations
    # out) misses: the copy lies in the quoting side's excluded text there
    old = brute(first, second, "both")
    old_a, old_b = old if a_first else old[::-1]
    for copier, copied, mine, before in ((b, "P", want_b, old_b), (a, "R", want_a, old_a)):
        found = words_of(copier, passages[copied])
        if found and found <= mine:
            assert not found <= before


@pytest.mark.parametrize("a_first", [True, False])
def test_planted_copies_of_quotations_count_for_the_copier(a_first):
    """Planted passages the aligner finds whole (seed 1): P (quoted by A) in B's covered
    words, R (quoted by B) in A's, neither in the quoting text's."""
    a, b, passages = planted(1, 3, 3, 3)
    locs = {("t", 0, len(a)): a, ("t", 1, len(b)): b}
    job = AlignJob(1, 2, ("t", 0, len(a)), ("t", 1, len(b)), 1 if a_first else 2)
    got = align_job_batch([job], AlignSettings("unused", quotes=True), locs)[0]
    mine_a, mine_b = intervals_words(got.a_spans), intervals_words(got.b_spans)
    assert words_of(b, passages["P"]) <= mine_b and words_of(a, passages["R"]) <= mine_a
    assert mine_a.isdisjoint(words_of(a, passages["P"]))
    assert mine_b.isdisjoint(words_of(b, passages["R"]))


def corpus(n: int = 4) -> dict[str, str]:
    """Pairs (a, b) of planted texts, and two documents of their own."""
    docs = {}
    for i in range(n):
        a, b, _ = planted(100 + i, 3, 2 if i % 2 else 0, 2)
        docs[f"q{i}a"], docs[f"q{i}b"] = a, b
    rng = random.Random(7)
    docs["own1"], docs["own2"] = para(rng, 12), para(rng, 10)
    return docs


CFG = IndexConfig(hash_bits=32, shards=2, top_k=3, exclude_quotes=True)


def _write(docs: dict[str, str], folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    for k, t in docs.items():
        (folder / f"{k}.txt").write_text(t)


def test_stored_totals_follow_the_rule_in_builds_runs_and_compute(tmp_path, client):
    docs = corpus()
    keys = sorted(docs)
    src = tmp_path / "src"
    _write({k: docs[k] for k in keys[:6]}, src)
    idx = Index.create(tmp_path / "inc", CFG)
    idx.update([src], client=client, options=RunOptions(totals="all"))
    _write({k: docs[k] for k in keys[6:]}, src)  # the other documents, an incremental run
    idx.update([src], client=client)
    got = stored_totals(idx)
    assert len(got) == len(docs)
    assert_totals_close(got, reference_totals(idx))
    for i in range(4):  # B's copy of A's quotation is in B's total and A's share of it
        a, b, parts = planted(100 + i, 3, 2 if i % 2 else 0, 2)
        _, shares_b = got[f"src/q{i}b.txt"]
        p_words = words_of(b, parts["P"])
        assert shares_b[f"src/q{i}a.txt"] >= 100.0 * len(p_words) / len(word_spans(b)[0])
        # A's passages from B leave its quotation out
        from_b = dict(source_spans(idx.catalog, f"src/q{i}a.txt", a)).get(f"src/q{i}b.txt", [])
        assert covered(a, from_b).isdisjoint(words_of(a, parts["P"]))
    full = Index.create(tmp_path / "full", CFG)
    shutil.copytree(src, tmp_path / "src2")
    full.update([tmp_path / "src2"], client=client, options=RunOptions(totals="off"))
    full.compute_totals(client=client)
    names = {k.split("/", 1)[1]: v for k, v in got.items()}
    again = {k.split("/", 1)[1]: v for k, v in stored_totals(full).items()}
    assert set(names) == set(again)
    for k, (t, _) in names.items():
        assert abs(t - again[k][0]) < 1e-9, k


def test_a_checked_texts_total_and_the_views_follow_the_rule(tmp_path, client):
    docs = corpus(2)
    src = tmp_path / "src"
    _write(docs, src)
    idx = Index.create(tmp_path / "idx", CFG)
    idx.update([src], client=client, options=RunOptions(totals="all"))
    a, b, parts = planted(100, 3, 0, 2)
    # b checked as a text not in the index, against A: its copy of A's quotation counts
    matches = [m for m in idx.query(b) if m.key == "src/q0a.txt"]
    total, aligned = query_total(idx, "checked", b, matches, top=1)
    want_b = brute(b, a)[0]  # the checked text is text A
    n_b = len(word_spans(b)[0])
    assert total.total == pytest.approx(100.0 * len(want_b) / n_b)
    assert aligned["src/q0a.txt"] == pytest.approx(total.total)
    assert words_of(b, parts["P"]) <= want_b
    # the pair's view (doc B as text A): each side's coverage by its own quotations only
    rep = index_report(idx, "src/q0b.txt", "src/q0a.txt")
    cov_b, cov_a = brute(b, a)
    assert rep["aligned_coverage"]["doc"] == pytest.approx(100.0 * len(cov_b) / n_b)
    n_a = len(word_spans(a)[0])
    assert rep["aligned_coverage"]["other"] == pytest.approx(100.0 * len(cov_a) / n_a)
    assert words_of(b, parts["P"]) <= cov_b and cov_a.isdisjoint(words_of(a, parts["P"]))
    assert covered(b, rep["counted_spans"]["doc"]) == cov_b
    # a checked document's view total: the union of what each source's passages count for it
    pair = Pair("checked", "src/q0a.txt", 50.0, 50.0, 1, 1, 1)
    view = document_view(idx, "checked", [pair], text=b)
    assert view.total_from == "view"
    assert view.total == pytest.approx(100.0 * len(cov_b) / n_b)


def test_pairs_aligned_by_the_rule_before_are_aligned_again(tmp_path, client):
    """An index whose stored pairs were aligned with both sides' quotations left out (the
    meta ``totals`` without ``"quotes": "own"``): the pairs of its quoting documents are
    aligned again by ``totals --compute`` (and by a run's commit), the others kept."""
    docs = corpus(2)
    docs["plain1"], docs["plain2"] = planted(300, 0, 0, 4)[:2]  # no quotation: kept
    src = tmp_path / "src"
    _write(docs, src)
    idx = Index.create(tmp_path / "idx", CFG)
    idx.update([src], client=client, options=RunOptions(totals="all"))
    want = stored_totals(idx)
    c = idx.catalog.conn
    ids = dict(c.execute("SELECT key, doc_id FROM documents"))
    quoter, copier = ids["src/q0a.txt"], ids["src/q0b.txt"]
    a, b = sorted((quoter, copier))
    with c:  # as the rule before stored it: the copier's copy of the quotation not counted
        c.execute(
            "UPDATE aligned_pairs SET a_spans = NULL, b_spans = NULL WHERE a = ? AND b = ?", (a, b)
        )
        c.execute("UPDATE meta SET value = json_remove(value, '$.quotes') WHERE name = 'totals'")
    out = idx.compute_totals(client=client)
    assert out["aligned"] >= 1  # the quoting documents' pairs, not every pair
    assert out["aligned"] < c.execute("SELECT count(*) FROM aligned_pairs").fetchone()[0]
    assert_totals_close(stored_totals(idx), want)
    assert_totals_close(stored_totals(idx), reference_totals(idx))
