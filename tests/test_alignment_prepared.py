"""A text is prepared for the aligner once and aligned with many (issue 29): the passages of
:func:`align_prepared` on :func:`prepare` d texts are those of :func:`align`, bit for bit,
whatever order a prepared text is reused in; the batch functions of the engine prepare each
text once per batch and give what aligning pair by pair gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdask.engine.align_pairs as engine_align
import simdask.engine.totals as engine_totals
from simdask.alignment import AlignConfig, align, align_prepared, prepare
from simdask.engine.align_pairs import align_batch, read_pairs_file
from simdask.engine.totals import AlignSettings, align_job_batch
from simdask.errors import ConfigError
from tests.helpers.paraphrase import paraphrased_pair, totals_jobs, verbatim_pair
from tests.test_alignment import POOL

pytestmark = pytest.mark.unit

_SENTENCES = st.lists(st.integers(0, len(POOL) - 1), max_size=10)


def _text(ids: list[int]) -> str:
    return " ".join(POOL[i] for i in ids)


def _dicts(found) -> list[dict]:
    return [p.to_dict() for p in found]


@settings(max_examples=40, deadline=None)
@given(st.lists(_SENTENCES, min_size=2, max_size=4), st.data())
def test_prepared_texts_give_the_passages_of_align_in_any_order(parts, data):
    """Every text prepared once (with excluded spans), then every ordered pair aligned twice
    in a shuffled order: each result equals ``align`` of the raw texts."""
    shared = data.draw(_SENTENCES)
    texts = [_text(p[: len(p) // 2] + shared + p[len(p) // 2 :]) for p in parts]
    cut = st.tuples(st.integers(0, 400), st.integers(0, 60))
    excl = [[(s, s + n) for s, n in data.draw(st.lists(cut, max_size=2))] for _ in texts]
    prepared = [prepare(t, None, x) for t, x in zip(texts, excl, strict=True)]
    order = [(i, j) for i in range(len(texts)) for j in range(len(texts)) if i != j] * 2
    order = data.draw(st.permutations(order))
    for i, j in order:
        want = align(texts[i], texts[j], excluded_a=excl[i], excluded_b=excl[j])
        assert _dicts(align_prepared(prepared[i], prepared[j])) == _dicts(want)


def test_a_prepared_text_reused_with_many_partners_is_unchanged():
    """Real paraphrase and verbatim pairs: the essay prepared once and aligned with three
    partners gives the same passages (and scores) as aligning each pair from its text."""
    p = paraphrased_pair()
    a, b, *_ = verbatim_pair()
    essay = prepare(p.essay)
    partners = [p.source, a, b, p.source]
    got = [_dicts(align_prepared(essay, prepare(t))) for t in partners]
    want = [_dicts(align(p.essay, t)) for t in partners]
    assert got[0], "the paraphrase must give passages, or the test shows nothing"
    assert got == want


def test_a_prepared_texts_keys_follow_the_settings_it_is_aligned_with():
    """A prepared text keeps its chunk and stop-word n-gram keys after their first use, per
    length: aligned under other ``chunk_words`` and ``stopword_ngram`` in turn, each result
    equals ``align`` under those settings."""
    a, b, *_ = verbatim_pair()
    pa, pb = prepare(a), prepare(b)
    configs = [AlignConfig(), AlignConfig(chunk_words=3, stopword_ngram=4), AlignConfig()]
    configs += [AlignConfig(chunk_words=7, chunk_seeds=True, stopword_ngram=6)]
    results = [_dicts(align_prepared(pa, pb, c)) for c in configs]
    assert results == [_dicts(align(a, b, c)) for c in configs]
    kinds = [{p["kind"] for p in r} for r in results]
    assert "verbatim" in kinds[0], "the pair must hold a verbatim passage, or chunks show nothing"
    assert set(pa.kept) == {
        ("chunks", 5),
        ("chunks", 3),
        ("chunks", 7),
        ("stop", 8),
        ("stop", 4),
        ("stop", 6),
    }


def test_a_text_prepared_with_other_settings_is_refused():
    config = AlignConfig(min_sentence_words=5)
    a, b = prepare("One sentence here. And another one there."), prepare("Some text here.")
    with pytest.raises(ConfigError, match="expected text A prepared with language='english'"):
        align_prepared(a, b, config)


def test_a_batch_of_pairs_files_prepares_each_file_once(tmp_path, monkeypatch):
    p = paraphrased_pair()
    a, b, *_ = verbatim_pair()
    names = {"essay.txt": p.essay, "source.txt": p.source, "a.txt": a, "b.txt": b}
    for name, text in names.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    lines = ["essay.txt\tsource.txt", "a.txt\tsource.txt", "essay.txt\tb.txt", "a.txt\tb.txt"]
    (tmp_path / "pairs.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    calls = []
    real = engine_align.prepare
    monkeypatch.setattr(engine_align, "prepare", lambda t, c: calls.append(t) or real(t, c))
    out = align_batch(read_pairs_file(tmp_path / "pairs.tsv"))
    assert sorted(calls) == sorted(names.values())  # each text once
    for line, r in zip(lines, out, strict=True):
        x, y = line.split("\t")
        assert r["passages"] == _dicts(align(names[x], names[y]))
    assert out[0]["passages"] and out[3]["passages"]


def test_a_batch_of_totals_jobs_prepares_each_text_once(tmp_path, monkeypatch):
    texts, jobs = totals_jobs()
    calls = []
    real = engine_totals.prepare
    monkeypatch.setattr(engine_totals, "prepare", lambda t, c, x: calls.append(t) or real(t, c, x))
    settings_ = AlignSettings(str(tmp_path))
    together = align_job_batch(jobs, settings_, texts)
    assert sorted(calls) == sorted(texts.values())  # each text once
    monkeypatch.setattr(engine_totals, "prepare", real)
    one_by_one = [r for j in jobs for r in align_job_batch([j], settings_, texts)]
    assert len(together) == len(one_by_one) == len(jobs)
    for x, y in zip(together, one_by_one, strict=True):
        assert (x.a, x.b, x.a_words, x.b_words) == (y.a, y.b, y.a_words, y.b_words)
        assert x.a_spans.tolist() == y.a_spans.tolist()
        assert x.b_spans.tolist() == y.b_spans.tolist()
    assert together[0].a_spans.size
