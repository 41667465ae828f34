"""The text aligner (issue 28): constructed cases with known answers, hypothesis properties,
coverage against a brute-force reference, the configuration."""

from __future__ import annotations

import itertools
import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdask
from simdask.alignment import AlignConfig, Passage, align, aligned_coverage
from simdask.alignment.extend import Fragment, join_in_order
from simdask.alignment.filtering import resolve_overlaps
from simdask.alignment.segment import segment, word_spans
from simdask.errors import ConfigError
from simdask.kernels.stemming import has_stemmer, stem_words
from tests.helpers.dense_alignment import DenseCosine
from tests.helpers.documents import prose
from tests.helpers.paraphrase import paraphrased_pair

pytestmark = pytest.mark.unit

BEES = [
    "Honey bees communicate the location of flowers through a waggle dance performed "
    "inside the hive.",
    "The angle of the dance relative to gravity tells the other workers the "
    "direction of the food source.",
    "Its duration encodes the distance, so a longer waggle run points to a more distant meadow.",
    "Foragers returning with rich nectar dance more vigorously and recruit more of their sisters.",
    "Karl von Frisch decoded this language in the middle of the twentieth century "
    "and later shared a Nobel prize.",
    "Modern researchers use high speed cameras and machine learning to follow "
    "thousands of dancing bees at once.",
]
VOLCANO = [
    "Volcanic eruptions release enormous quantities of ash, sulphur dioxide and "
    "water vapour into the atmosphere.",
    "Fine particles can circle the globe for months and lower surface temperatures measurably.",
    "After the eruption of Tambora in 1815 Europe experienced a year without a summer.",
    "Crops failed across New England and famine spread through several Swiss cantons.",
    "Geologists monitor swelling of the ground with satellite radar to anticipate new eruptions.",
    "Seismometers placed around the crater record the tremor of magma rising through "
    "narrow conduits.",
    "Evacuation plans depend on reliable warnings issued days rather than hours ahead.",
    "Lava flows rarely kill people, whereas pyroclastic currents move faster than any car.",
]
RAIL = [
    "The first public railway to use steam locomotives opened between Stockton and "
    "Darlington in 1825.",
    "Within two decades engineers had laid thousands of miles of track across Britain.",
    "Standard time zones were introduced largely because timetables demanded a common clock.",
    "Railway companies built hotels, telegraph lines and even whole towns along their routes.",
    "Freight rates shaped which industries prospered and which coastal ports declined.",
    "Electrification in the twentieth century replaced coal smoke with overhead catenary wires.",
]
COOK = [
    "Bread dough needs time for gluten to develop and for yeast to produce carbon dioxide.",
    "A long cold fermentation in the refrigerator deepens the flavour of the crust.",
    "Professional bakers weigh flour, water and salt instead of measuring them in cups.",
    "Steam in the oven during the first minutes keeps the surface supple so the loaf can expand.",
    "Sourdough starters are cultures of wild yeast and lactic acid bacteria kept alive for years.",
    "Rye flour behaves differently because its pentosans rather than gluten hold the "
    "crumb together.",
]
CHESS = [
    "Chess engines evaluate millions of positions every second using alpha beta search.",
    "Neural networks trained by self play changed opening theory within a few years.",
    "Grandmasters now prepare novelties with computer assistance long before a tournament.",
    "Endgame tablebases give perfect play for every position with seven pieces or fewer.",
    "Blitz games with three minutes per side reward intuition more than deep calculation.",
    "Correspondence players were among the first to embrace engines as analytical partners.",
]


def _join(*parts: list[str]) -> str:
    return " ".join(s for part in parts for s in part)


def _text_with(middle: str, before: list[str], after: list[str]) -> tuple[str, int]:
    text = _join(before) + " " + middle + " " + _join(after)
    return text, text.index(middle)


PASSAGE = _join(BEES)
SOURCE = _join(VOLCANO, BEES, RAIL)
B_AT = SOURCE.index(PASSAGE)


def test_verbatim_copy_is_one_passage_with_exact_spans():
    a, at = _text_with(PASSAGE, COOK, CHESS)
    found = align(a, SOURCE)
    # spans run from the first word's start to the last word's end (the final "." is not a word)
    assert found == [
        Passage(at, at + len(PASSAGE) - 1, B_AT, B_AT + len(PASSAGE) - 1, "verbatim", 1.0)
    ]


def test_verbatim_copy_starting_mid_sentence_has_word_exact_spans():
    """The copy starts mid-sentence in both texts: the sentence-level passage would begin at
    the sentence starts; the verbatim run gives the exact words."""
    k = PASSAGE.index("the location")
    copy = PASSAGE[k:]
    anchor = "Sourdough starters are cultures of wild yeast and"
    a = _join(COOK, CHESS).replace(anchor, anchor + " " + copy + " ")
    at = a.index(copy)
    assert align(a, SOURCE) == [
        Passage(at, at + len(copy) - 1, B_AT + k, B_AT + len(PASSAGE) - 1, "verbatim", 1.0)
    ]


def test_shuffled_sentences_are_one_passage():
    shuffled = BEES[:]
    random.Random(3).shuffle(shuffled)
    assert shuffled != BEES
    a, at = _text_with(_join(shuffled), COOK, CHESS)
    found = align(a, SOURCE)
    assert len(found) == 1
    p = found[0]
    assert (p.a_start, p.a_end) == (at, at + len(PASSAGE) - 1)
    assert (p.b_start, p.b_end) == (B_AT, B_AT + len(PASSAGE) - 1)


SYNONYMS = {
    "communicate": "convey",
    "angle": "orientation",
    "encodes": "signals",
    "vigorously": "energetically",
    "decoded": "deciphered",
    "researchers": "scientists",
    "follow": "track",
}


@pytest.mark.parametrize("in_order", [False, True])
def test_own_paragraph_between_two_copied_sections_is_not_marked(in_order):
    """Two paraphrased sections with the student's own paragraph between them are two
    passages, whether they follow the source's order or not: joining in order is for
    summaries only, and never marks the own paragraph as taken."""
    p = paraphrased_pair(in_order)
    found = align(p.essay, p.source)
    assert len(found) == 2
    own = (p.spans_a[0][1], p.spans_a[1][0])  # the own paragraph between the sections
    for f, span_a, span_b in zip(found, p.spans_a, p.spans_b, strict=True):
        assert f.a_end <= own[0] + 2 or f.a_start >= own[1] - 2
        assert abs(f.a_start - span_a[0]) <= 2 and abs(f.a_end - span_a[1]) <= 2
        assert abs(f.b_start - span_b[0]) <= 2 and abs(f.b_end - span_b[1]) <= 2


def test_synonym_swaps_are_one_paraphrased_passage():
    swapped = PASSAGE
    for old, new in SYNONYMS.items():
        swapped = swapped.replace(old, new)
    a, at = _text_with(swapped, COOK, CHESS)
    found = align(a, SOURCE)
    assert len(found) == 1
    p = found[0]
    end = at + len(swapped)
    # inside the copied region and covering nearly all of it (the first words differ)
    assert at <= p.a_start and p.a_end <= end
    assert p.a_end - p.a_start >= 0.9 * len(swapped)
    assert B_AT <= p.b_start < p.b_end <= B_AT + len(PASSAGE)
    assert p.kind in ("paraphrased", "verbatim")


SUMMARY = (
    "Bees tell hive mates where flowers are with a waggle dance. The angle of the dance gives "
    "the direction and its duration gives the distance of the food. Karl von Frisch decoded "
    "the dance language and won a Nobel prize."
)


def test_summary_of_a_known_passage_is_one_summarised_passage():
    a, at = _text_with(SUMMARY, COOK, CHESS)
    found = align(a, SOURCE)
    assert len(found) == 1
    p = found[0]
    assert (p.a_start, p.a_end) == (at, at + len(SUMMARY) - 1)
    assert p.b_start >= B_AT and p.b_end <= B_AT + len(PASSAGE)
    assert p.b_end - p.b_start >= 2 * (p.a_end - p.a_start)
    assert p.kind == "summarised"


def test_shared_set_phrases_are_no_passage():
    phrases = [
        "At the end of the day, on the other hand, it goes without saying that",
        "in the light of the above and as a matter of fact, last but not least.",
    ]
    a = _join(COOK[:3], phrases, COOK[3:], [phrases[0] + " " + phrases[1]], CHESS)
    b = _join(VOLCANO[:4], phrases, RAIL, [phrases[1]], VOLCANO[4:])
    assert align(a, b) == []


def test_texts_of_the_same_few_words_are_no_passage_but_their_copies_are():
    """Generated prose of a 40-word vocabulary: every sentence resembles every other, which is
    no evidence of copying (no passage); a copy between two such texts is still found."""
    for s1, s2 in ((108, 109), (101, 102), (104, 105)):
        assert align(prose(300, seed=s1), prose(300, seed=s2)) == []
    brown = prose(400, seed=101)
    copied = brown[: len(brown) * 3 // 4]
    bailey = prose(450, seed=102) + " " + copied + " " + prose(350, seed=103)
    found = align(bailey, brown)
    at = bailey.index(copied)
    assert [(p.a_start, p.b_start, p.kind) for p in found] == [(at, 0, "verbatim")]
    assert at + len(copied) - 10 <= found[0].a_end <= at + len(copied)  # cut mid-word


def test_unrelated_texts_are_no_passage():
    assert align(_join(COOK, CHESS), _join(VOLCANO, RAIL)) == []
    assert align("", SOURCE) == [] and align(SOURCE, "") == []
    assert align("...", "!!!") == []


def test_excluded_text_is_never_covered():
    a, at = _text_with(PASSAGE, COOK, CHESS)
    mid = (at + 200, at + 260)
    found = align(a, SOURCE, excluded_a=[mid])
    assert found, "the parts of the copy outside the excluded span are still found"
    for p in found:
        assert p.a_end <= mid[0] or p.a_start >= mid[1]
    # excluding the whole copy in B leaves nothing to find
    assert align(a, SOURCE, excluded_b=[(B_AT, B_AT + len(PASSAGE))]) == []
    found_b = align(a, SOURCE, excluded_b=[(B_AT + 300, B_AT + 301)])
    assert found_b
    for p in found_b:
        assert p.b_end <= B_AT + 300 or p.b_start >= B_AT + 301


def _fragment(a0, a1, b0, b1, score=0.5):
    return Fragment(a0, a1, b0, b1, score, np.array([[a0, b0], [a1, b1]], dtype=np.int64))


def test_overlapping_passages_keep_the_better_one():
    x, y = _fragment(0, 3, 0, 3), _fragment(2, 5, 10, 13)
    cos = np.zeros((8, 14))
    cos[np.arange(4), np.arange(4)] = 0.9  # x's sentences match their B fragment well
    cos[np.arange(2, 6), np.arange(10, 14)] = 0.3
    assert resolve_overlaps([y, x], DenseCosine(cos)) == [x]
    cos[np.arange(2, 6), np.arange(10, 14)] = 1.0  # now y is the better one
    cos[np.arange(4), np.arange(4)] = 0.2
    assert resolve_overlaps([x, y], DenseCosine(cos)) == [y]
    apart = _fragment(6, 7, 0, 1)
    assert resolve_overlaps([apart, x], DenseCosine(cos)) == [x, apart]


def test_neighbours_in_order_are_joined_when_the_join_validates():
    no_barriers = (np.zeros(20, np.int64), np.zeros(20, np.int64))
    f, g = _fragment(0, 2, 0, 3), _fragment(4, 6, 6, 9)
    joined = join_in_order([g, f], 3, no_barriers, lambda ra, rb: 0.8, 0.34)
    assert [(j.a_first, j.a_last, j.b_first, j.b_last, j.score) for j in joined] == [
        (0, 6, 0, 9, 0.8)
    ]
    assert join_in_order([f, g], 3, no_barriers, lambda ra, rb: 0.2, 0.34) == [f, g]
    assert join_in_order([f, g], 0, no_barriers, lambda ra, rb: 0.8, 0.34) == [f, g]  # gap
    reversed_b = _fragment(4, 6, 0, 1)
    late = _fragment(0, 2, 5, 9)
    assert join_in_order([late, reversed_b], 3, no_barriers, lambda ra, rb: 0.8, 0.34) == [
        late,
        reversed_b,
    ]
    barrier = (np.array([0, 0, 0, 1, 1, 1, 1] + [1] * 13), np.zeros(20, np.int64))
    assert join_in_order([f, g], 3, barrier, lambda ra, rb: 0.8, 0.34) == [f, g]


# --- hypothesis properties -------------------------------------------------------------

POOL = BEES + VOLCANO + RAIL + COOK + CHESS


@st.composite
def text_pairs(draw):
    """Two texts built from the sentence pool, sharing a run of sentences (maybe none)."""
    idx = st.integers(0, len(POOL) - 1)
    a = draw(st.lists(idx, max_size=12))
    b = draw(st.lists(idx, max_size=12))
    shared = draw(st.lists(idx, max_size=8))
    ia = draw(st.integers(0, len(a)))
    ib = draw(st.integers(0, len(b)))
    ta = " ".join(POOL[i] for i in a[:ia] + shared + a[ia:])
    tb = " ".join(POOL[i] for i in b[:ib] + shared + b[ib:])
    return ta, tb


def _check(found: list[Passage], a: str, b: str) -> None:
    for p in found:
        assert 0 <= p.a_start < p.a_end <= len(a)
        assert 0 <= p.b_start < p.b_end <= len(b)
        assert p.kind in simdask.alignment.KINDS and 0.0 <= p.score <= 1.0
    starts = [p.a_start for p in found]
    assert starts == sorted(starts)
    for p, q in itertools.pairwise(found):
        assert p.a_end <= q.a_start, "passages overlap in A"


@settings(max_examples=60, deadline=None)
@given(text_pairs())
def test_passages_lie_inside_the_texts_and_do_not_overlap_in_a(pair):
    a, b = pair
    _check(align(a, b), a, b)


@settings(max_examples=60, deadline=None)
@given(text_pairs(), st.data())
def test_excluded_spans_are_never_covered(pair, data):
    a, b = pair
    cut = st.tuples(st.integers(0, max(len(a), 1)), st.integers(0, 80))
    spans = [(s, s + n) for s, n in data.draw(st.lists(cut, max_size=3))]
    found = align(a, b, excluded_a=spans)
    _check(found, a, b)
    for p in found:
        for s, e in spans:
            assert p.a_end <= s or p.a_start >= e or e <= s


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, len(POOL) - 1), min_size=2, max_size=6, unique=True),
    st.lists(st.integers(0, len(POOL) - 1), max_size=6),
    st.lists(st.integers(0, len(POOL) - 1), max_size=6),
)
def test_swapping_the_texts_mirrors_a_verbatim_copy(shared, before, after):
    """A verbatim copy is found the same both ways: swapped inputs give mirrored spans, up to
    one word at an edge: chunks are sorted bags of words, so where the copy ends in "a year
    without a summer" and the next text starts with "A", the window shifted by one word has
    the same bag, and the run takes that word in one direction only."""
    copy = " ".join(POOL[i] for i in shared)
    others = [i for i in dict.fromkeys(before + after) if i not in shared]  # each text its own
    a = " ".join([*(POOL[i] for i in others[: len(others) // 2]), copy])
    b = " ".join([copy, *(POOL[i] for i in others[len(others) // 2 :])])
    forward = sorted((p.a_start, p.a_end, p.b_start, p.b_end) for p in align(a, b))
    backward = sorted((q.b_start, q.b_end, q.a_start, q.a_end) for q in align(b, a))
    assert forward, "the copy is found"
    assert len(forward) == len(backward)
    for f, g in zip(forward, backward, strict=True):
        assert all(abs(x - y) <= 12 for x, y in zip(f, g, strict=True)), (f, g)


# --- coverage --------------------------------------------------------------------------


def _coverage_brute(text: str, spans: list[tuple[int, int]]) -> float:
    covered = np.zeros(len(text) + 1, dtype=bool)
    for s, e in spans:
        covered[s:e] = True
    words = [m.span() for m in re.finditer(r"[^\W_]+", text)]
    if not words:
        return 0.0
    return sum(bool(covered[s:e].all()) for s, e in words) / len(words)


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet="ab cé.\n", max_size=60), st.data())
def test_coverage_matches_brute_force(text, data):
    n = len(text)
    span = st.tuples(st.integers(0, n), st.integers(0, n)).map(sorted).map(tuple)
    sa = data.draw(st.lists(span, max_size=4))
    sb = data.draw(st.lists(span, max_size=len(sa), min_size=len(sa)))
    passages = [
        Passage(a0, a1, b0, b1, "verbatim", 1.0) for (a0, a1), (b0, b1) in zip(sa, sb, strict=True)
    ]
    share_a, share_b = aligned_coverage(passages, text, text)
    assert share_a == pytest.approx(_coverage_brute(text, sa))
    assert share_b == pytest.approx(_coverage_brute(text, sb))


def test_coverage_of_a_verbatim_copy():
    a, _ = _text_with(PASSAGE, COOK, CHESS)
    share_a, share_b = aligned_coverage(align(a, SOURCE), a, SOURCE)
    n_words = len(re.findall(r"[^\W_]+", PASSAGE))
    assert share_a == pytest.approx(n_words / len(re.findall(r"[^\W_]+", a)))
    assert share_b == pytest.approx(n_words / len(re.findall(r"[^\W_]+", SOURCE)))


# --- units, stemming and configuration -------------------------------------------------


def test_sentences_and_offsets_are_code_points_of_the_text_as_given():
    text = "Ünïcode wörds here. Straße ﬁne now! X"
    seg = segment(text, min_sentence_words=0)
    assert [text[s:e] for s, e in zip(seg.starts, seg.ends, strict=True)] == [
        "Ünïcode", "wörds", "here", "Straße", "ﬁne", "now", "X",
    ]  # fmt: skip
    assert seg.tokens == ["ünïcode", "wörds", "here", "strasse", "fine", "now", "x"]
    assert [seg.span(i, i) for i in range(seg.n_sentences)] == [(0, 18), (20, 34), (36, 37)]
    # a word in lower case after a full stop does not start a sentence
    assert segment("It was e.g. small here. Then more", min_sentence_words=0).n_sentences == 2


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab É\u0301ﬁ_.1\U0001f600\u4e00ß\ud800\n", max_size=40))
def test_word_spans_are_the_pattern_runs_in_code_points(text):
    starts, ends, tokens = word_spans(text)
    ref = [m.span() for m in re.finditer(r"[^\W_]+", text)]
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == ref
    assert tokens == [simdask.normalize(text[s:e]) for s, e in ref]


def test_short_sentences_are_joined_to_the_next():
    seg = segment("Yes. No. This sentence is long enough. Fine.", min_sentence_words=3)
    assert seg.n_sentences == 2
    assert seg.span(0, 0) == (0, 37)  # "Yes. No." joined to the sentence after them


def test_stemming_and_the_fallback_for_languages_without_a_stemmer():
    assert stem_words(["dancing", "dances"], "english") == ["danc", "danc"]
    assert has_stemmer("czech") and not has_stemmer("klingon")
    assert stem_words(["dancing", "dances"], "klingon") == ["dancing", "dances"]
    a, at = _text_with(PASSAGE, COOK, CHESS)
    found = align(a, SOURCE, AlignConfig(language="klingon"))
    assert [(p.a_start, p.b_start) for p in found] == [(at, B_AT)]


def test_config_round_trip_and_validation():
    config = AlignConfig(max_gap=6, chunk_seeds=False)
    assert AlignConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ConfigError, match="unknown AlignConfig keys"):
        AlignConfig.from_dict({"gap": 3})
    with pytest.raises(ValueError, match="cosine_threshold must be in"):
        AlignConfig(cosine_threshold=1.5)
    with pytest.raises(ConfigError, match="min_gap must be <= max_gap"):
        AlignConfig(max_gap=2, min_gap=3)
    with pytest.raises(ConfigError, match="chunk_words must be at least 1"):
        AlignConfig(chunk_words=0)
    with pytest.raises(ConfigError, match="chunk_seeds must be True or False"):
        AlignConfig(chunk_seeds=1)


def test_passage_validation_and_dict():
    p = Passage(1, 5, 2, 9, "paraphrased", 0.5)
    assert p.to_dict() == {
        "a_start": 1, "a_end": 5, "b_start": 2, "b_end": 9, "kind": "paraphrased", "score": 0.5,
    }  # fmt: skip
    with pytest.raises(ConfigError, match="kind must be one of"):
        Passage(1, 5, 2, 9, "copied", 0.5)
    with pytest.raises(ConfigError, match="start <= end"):
        Passage(5, 1, 2, 9, "verbatim", 0.5)


def test_public_api_exports():
    assert simdask.align is align and simdask.AlignConfig is AlignConfig
    assert simdask.Passage is Passage and simdask.aligned_coverage is aligned_coverage
