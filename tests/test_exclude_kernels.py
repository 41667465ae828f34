"""Exclusions in chunking and in pair reports (issue 16), against brute force on true chunks."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import compare_texts
from simdask.evidence.report_html import render_pair_html
from simdask.kernels.exclusions import (
    Exclusions,
    chunk_excluding,
    excluded_spans,
    merge_spans,
    template_chunk_ids,
)
from simdask.kernels.hashing import chunk_batch, chunk_id, window_chunks
from simdask.kernels.words import WORD_PATTERN, chunks, normalize
from tests.helpers.documents import outside_evidence
from tests.test_exclusions import planted

pytestmark = pytest.mark.unit


def located_words(text: str) -> list[tuple[str, int, int]]:
    """Words with their character spans (ASCII words: normalising keeps their positions)."""
    assert all(w.isascii() for w in WORD_PATTERN.findall(text))
    return [(m.group().lower(), m.start(), m.end()) for m in WORD_PATTERN.finditer(text)]


def reference_ids(text: str, spans, k: int, bits: int, drop=frozenset()) -> set[int]:
    """Brute force: chunk IDs of the windows with a word outside ``spans``, minus ``drop``."""
    ws = located_words(text)
    inside = [any(s <= a and b <= e for s, e in spans) for _, a, b in ws]
    out = set()
    for i in range(len(ws) - k + 1):
        if not all(inside[i : i + k]):
            out.add(chunk_id([w for w, _, _ in ws[i : i + k]], bits))
    return out - set(drop)


def ids_of(cb, d: int) -> set[int]:
    return set(cb.chunk_ids[cb.doc == d].tolist())


def bibliography_text(rng: random.Random, n_own: int, n_refs: int) -> tuple[str, list, list]:
    own = [f"body{i}" for i in range(n_own)]
    refs = [f"ref{i}" for i in range(n_refs)]
    lines = [" ".join(own[i : i + 7]) + "." for i in range(0, n_own, 7)]
    heading = rng.choice(["References", "BIBLIOGRAPHY", "7. Literatura", "Works Cited:"])
    entries = [" ".join(refs[i : i + 6]) for i in range(0, n_refs, 6)]
    return "\n".join([*lines, "", heading, *entries]) + "\n", own, refs


@pytest.mark.parametrize("seed", range(6))
def test_planted_quotes_are_excluded_and_own_text_is_not(seed):
    """Chunks made only of quoted words are gone; every chunk with an own word is kept
    (compared with brute force over the words' roles, not with the span scanner)."""
    text, own, _ = planted(seed)
    k = 3 + seed % 3
    ex = Exclusions(quotes=True)
    cb = chunk_excluding([text], k, 32, 0, ex)
    ws = [w for w, _, _ in located_words(text)]
    role = [w in set(own) for w in ws]
    want = {chunk_id(ws[i : i + k], 32) for i in range(len(ws) - k + 1) if any(role[i : i + k])}
    assert ids_of(cb, 0) == want
    assert cb.n_chunks.tolist() == [len(want)]
    assert cb.n_words.tolist() == [len(ws)]  # the words are those of the whole text
    plain = ids_of(chunk_batch([text], k, 32, 0), 0)
    assert len(plain - want) > 0  # quotations of >= k words existed and were dropped


@pytest.mark.parametrize("seed", range(4))
def test_planted_bibliography_is_excluded(seed):
    rng = random.Random(seed)
    text, _, refs = bibliography_text(rng, 40 + seed * 9, 30 + seed * 5)
    k = 4
    cb = chunk_excluding([text], k, 32, 0, Exclusions(bibliography=True))
    ws = [w for w, _, _ in located_words(text)]
    heading = text.split("\n\n")[1].split("\n")[0]
    refset = set(refs) | set(WORD_PATTERN.findall(heading.lower()))
    outside = [w not in refset for w in ws]
    want = {chunk_id(ws[i : i + k], 32) for i in range(len(ws) - k + 1) if any(outside[i : i + k])}
    assert ids_of(cb, 0) == want
    # quotes off, bibliography on: a quotation in the body still counts
    quoted = text.replace("body3 ", '"q1 q2 q3 q4 q5 q6" body3 ', 1)
    got = ids_of(chunk_excluding([quoted], k, 32, 0, Exclusions(bibliography=True)), 0)
    assert chunk_id(["q1", "q2", "q3", "q4"], 32) in got


def test_template_chunks_dropped_from_every_document():
    tpl = "this thesis template says the same thing in every single document we have"
    texts = [tpl + f" own{d} words of document {d} follow here now" for d in range(3)]
    ids = template_chunk_ids([tpl], 5, 32, 0)
    assert ids.tolist() == sorted({chunk_id(c, 32) for c in chunks(tpl, 5)})
    cb = chunk_excluding(texts, 5, 32, 0, Exclusions(chunk_ids=ids))
    for d, t in enumerate(texts):
        assert ids_of(cb, d) == reference_ids(t, [], 5, 32, set(ids.tolist()))
        assert cb.n_chunks[d] == len(ids_of(cb, d))
    assert chunk_excluding(texts, 5, 32, 0, Exclusions()).chunk_ids.tolist() == (
        chunk_batch(texts, 5, 32, 0).chunk_ids.tolist()
    )


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n_docs=st.integers(1, 4),
    k=st.integers(1, 6),
)
def test_spans_and_ids_equal_brute_force(data, n_docs, k):
    """Random texts, random spans on word boundaries, a random dropped ID set: each
    document's chunk set equals the brute-force one (and documents stay apart)."""
    texts, spans = [], []
    for _ in range(n_docs):
        ws = data.draw(st.lists(st.sampled_from(list("abcdefgh")), max_size=30))
        text = ", ".join(ws)
        cuts = sorted(data.draw(st.lists(st.integers(0, len(ws)), max_size=6)))
        pos = [0] + [text.find(",", i) if i < len(ws) else len(text) for i in range(1, len(ws) + 1)]
        sp = [(pos[a], pos[b]) for a, b in zip(cuts[::2], cuts[1::2], strict=False) if a < b]
        texts.append(text)
        spans.append(merge_spans(sp))
    all_ids = sorted(set(chunk_batch(texts, k, 20, 0).chunk_ids.tolist()))
    drop = np.array(sorted(data.draw(st.sets(st.sampled_from(all_ids or [0])))), np.uint32)
    cb = chunk_batch(texts, k, 20, 0, excluded_spans=spans, drop_ids=drop)
    # every window in document order (the MinHash path): the same sets, unsorted, repeats kept
    ids, doc, n_words = window_chunks(texts, k, 20, 0, excluded_spans=spans, drop_ids=drop)
    assert np.all(np.diff(doc) >= 0) and n_words.tolist() == cb.n_words.tolist()
    for d, t in enumerate(texts):
        assert ids_of(cb, d) == reference_ids(t, spans[d], k, 20, set(drop.tolist()))
        assert set(ids[doc == d].tolist()) == ids_of(cb, d)
    assert np.all(np.diff(cb.chunk_ids.astype(np.int64) * 16 + cb.doc) > 0)  # (chunk, doc) order


def test_non_ascii_words_split_at_spans():
    """NFKC and casefolding inside and outside spans: the words are those of the whole text."""
    text = "ÜBER straße ﬁnal «Zitat ÄÖÜ eins zwei drei» Größe maß ﬂuss weiter"
    ex = Exclusions(quotes=True)
    cb = chunk_excluding([text], 2, 32, 0, ex)
    assert cb.n_words.tolist() == [len(WORD_PATTERN.findall(normalize(text)))]
    inner = ["zitat", "äöü", "eins", "zwei", "drei"]
    gone = {chunk_id(inner[i : i + 2], 32) for i in range(4)}
    assert not gone & ids_of(cb, 0)
    assert chunk_id(["drei", "grösse"], 32) in ids_of(cb, 0)  # casefolded ß


# --- reports -----------------------------------------------------------------------------
def brute_similarity(a: str, b: str, k: int, template: str, quotes: bool) -> float:
    """Brute force over true string chunks: windows with an own word, minus the template's."""

    def chunk_set(text):
        ws = located_words(text)
        spans = merge_spans([(s, e) for s, e, _ in excluded_spans(text, quotes, False)])
        inside = [any(s <= x and y <= e for s, e in spans) for _, x, y in ws]
        return {
            tuple(sorted(w for w, _, _ in ws[i : i + k]))
            for i in range(len(ws) - k + 1)
            if not all(inside[i : i + k])
        } - set(chunks(template, k))

    sa, sb = chunk_set(a), chunk_set(b)
    return 100.0 * len(sa & sb) / len(sa) if sa else 0.0


@pytest.mark.parametrize("large", [False, True])
def test_report_shares_only_a_template(large):
    tpl = " ".join(f"tpl{i}" for i in range(30))
    a = tpl + " " + " ".join(f"a{i}" for i in range(40))
    b = " ".join(f"b{i}" for i in range(10)) + f" {tpl} " + " ".join(f"c{i}" for i in range(50))
    excl = PairExclusions(templates=(tpl,))
    plain = compare_texts(a, b, 5, large=large)
    assert plain.similarity > 30
    ev = compare_texts(a, b, 5, large=large, exclusions=excl)
    assert ev.similarity == brute_similarity(a, b, 5, tpl, False) == 0.0
    assert ev.passages == [] and ev.doc_chunks == len(chunks(a, 5)) - len(set(chunks(tpl, 5)))
    assert [(s, e, kind) for s, e, kind in ev.doc_excluded] == [(0, len(tpl), "template")]
    assert ev.other_excluded == [(b.index("tpl0"), b.index("tpl0") + len(tpl), "template")]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("large", [False, True])
def test_report_equals_brute_force_with_quotes_and_template(seed, large):
    rng = random.Random(seed)
    vocab = [f"v{i}" for i in range(25)]
    tpl = " ".join(rng.choices(vocab, k=25))
    quote = '"' + " ".join(rng.choices(vocab, k=15)) + '"'
    shared = " ".join(rng.choices(vocab, k=30))

    def doc():
        parts = [tpl, shared, quote, " ".join(rng.choices(vocab, k=40))]
        rng.shuffle(parts)
        return " ".join(parts)

    a, b = doc(), doc()
    ev = compare_texts(a, b, 4, large=large, exclusions=PairExclusions(True, False, (tpl,)))
    assert ev.similarity == pytest.approx(brute_similarity(a, b, 4, tpl, True))
    assert ev.reverse_similarity == pytest.approx(brute_similarity(b, a, 4, tpl, True))
    kinds = {x[2] for x in ev.doc_excluded}
    assert kinds == {"quote", "template"}


def test_html_marks_excluded_text_apart_from_passages():
    tpl = " ".join(f"tpl{i}" for i in range(12))
    common = " ".join(f"c{i}" for i in range(12))
    a = f'{tpl} {common} own words here. "quoted q1 q2 q3 q4 q5 q6" end'
    b = f'{common} {tpl} other text. "quoted q1 q2 q3 q4 q5 q6" fin'
    ev = compare_texts(a, b, 4, exclusions=PairExclusions(True, False, (tpl,)))
    rep = ev.report("a", "b", ev.similarity)
    assert {x["kind"] for x in rep["excluded"]["doc"]} == {"template", "quote"}
    page = render_pair_html(rep, a, b)
    assert outside_evidence(page).count('class="excl excl-template"') == 2
    assert outside_evidence(page).count('class="excl excl-quote"') == 2
    assert "<mark" in page and "tpl3" not in "".join(page.split("<mark")[1:]).split("</mark>")[0]
    assert "excluded (not counted)" in page
