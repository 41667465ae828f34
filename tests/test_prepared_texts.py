"""Prepared texts kept by a process across the batches of one computation (issue 29, the
totals' cost): the texts a later batch needs are prepared once, the results are those of
batches that keep nothing, a kept text is found by its content (never a stale one for a
location), the table stays within its size and is emptied at the computation's end."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdask.engine.prepared_texts as prepared_texts
import simdask.engine.totals as engine_totals
from simdask.engine.totals import AlignSettings, align_job_batch, align_jobs
from tests.helpers.paraphrase import totals_jobs

pytestmark = pytest.mark.unit


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.lists(st.integers(0, 6), max_size=2), max_size=4), max_size=8),
    st.integers(0, 8),
)
def test_wanted_later_names_the_texts_a_later_batch_within_the_horizon_needs(batches, horizon):
    got = prepared_texts.wanted_later(batches, horizon)
    assert len(got) == len(batches)
    for i, batch in enumerate(batches):
        here = {t for job in batch for t in job}
        ahead = {t for b in batches[i + 1 : i + 1 + horizon] for job in b for t in job}
        assert got[i] == here & ahead


def test_the_table_keeps_at_most_its_characters_least_recently_used_out(monkeypatch):
    monkeypatch.setattr(prepared_texts, "MAX_CHARS", 10)
    prepared_texts.forget()
    prepared_texts.keep("t", "aaaa", 1)
    prepared_texts.keep("t", "bbbb", 2)
    assert prepared_texts.held("t", "aaaa") == 1  # now the most recently used
    prepared_texts.keep("t", "cccc", 3)  # 12 characters: the least recently used goes
    assert prepared_texts.held("t", "bbbb") is None
    assert (prepared_texts.held("t", "aaaa"), prepared_texts.held("t", "cccc")) == (1, 3)
    assert prepared_texts.held("other settings", "aaaa") is None
    prepared_texts.keep("t", "x" * 11, 4)  # longer than the table: not kept
    assert prepared_texts.held("t", "x" * 11) is None
    assert prepared_texts.forget() == 2
    assert prepared_texts.held("t", "aaaa") is None


def _rows(found) -> list[tuple]:
    return [(r.a, r.b, r.a_words, r.b_words, r.a_spans.tolist(), r.b_spans.tolist()) for r in found]


def _counting(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = engine_totals.prepare
    monkeypatch.setattr(engine_totals, "prepare", lambda t, c, x: calls.append(t) or real(t, c, x))
    return calls


def test_batches_keeping_the_texts_later_ones_need_prepare_each_once(tmp_path, monkeypatch):
    """One job a batch (each text in two batches): kept, each text is prepared once; the
    results equal those of batches that keep nothing."""
    texts, jobs = totals_jobs()
    s = AlignSettings(str(tmp_path))
    prepared_texts.forget()
    plain = [r for j in jobs for r in align_job_batch([j], s, texts)]
    later = prepared_texts.wanted_later([[(j.a_text, j.b_text)] for j in jobs], 10)
    calls = _counting(monkeypatch)
    kept = [r for j, w in zip(jobs, later, strict=True) for r in align_job_batch([j], s, texts, w)]
    assert sorted(calls) == sorted(set(texts.values()))  # each distinct text once (of 8)
    assert _rows(kept) == _rows(plain)
    assert kept[0].a_spans.size and kept[3].a_spans.size
    prepared_texts.forget()


def test_a_kept_text_is_found_by_its_content_not_its_location(tmp_path, monkeypatch):
    """The same location holding another text (another index, a rebuilt one) gets that
    text's alignment, never the kept one of the first."""
    texts, jobs = totals_jobs()
    s = AlignSettings(str(tmp_path))
    prepared_texts.forget()
    first = align_job_batch(jobs[:1], s, texts, frozenset(texts))
    swapped = dict(texts)
    swapped[jobs[0].a_text], swapped[jobs[0].b_text] = texts[jobs[3].a_text], texts[jobs[3].b_text]
    again = align_job_batch(jobs[:1], s, swapped, frozenset())
    expected = align_job_batch(jobs[3:], s, texts)[0]
    assert _rows(first) != _rows(again)
    assert _rows(again)[0][2:] == _rows([expected])[0][2:]  # counts and intervals
    prepared_texts.forget()


def test_align_jobs_here_prepares_shared_texts_once_and_forgets_them(tmp_path, monkeypatch):
    texts, jobs = totals_jobs()
    s = AlignSettings(str(tmp_path))
    prepared_texts.forget()
    expected = _rows(align_job_batch(jobs, s, texts))
    monkeypatch.setattr(
        engine_totals, "align_job_batch", lambda b, st_, t, w: align_job_batch(b, st_, texts, w)
    )
    calls = _counting(monkeypatch)
    got = [r for batch in align_jobs(jobs, s, batch_jobs=1) for r in batch]
    assert _rows(got) == expected
    assert sorted(calls) == sorted(set(texts.values()))  # each distinct text once (of 8)
    assert prepared_texts.forget() == 0  # emptied when the computation ended
