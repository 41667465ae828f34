"""Words and readable chunks (DESIGN §1): NFKC + casefold, words are ``[^\\W_]+``, sorted windows.

The byte path (:func:`simdask.kernels.words.token_bytes` +
:func:`simdask.kernels.hashing.word_spans`) that the
vectorised chunker hashes must find exactly the same words as :func:`simdask.kernels.words.words`.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.hashing import word_spans
from simdask.kernels.words import chunks, normalize, token_bytes, words

pytestmark = pytest.mark.unit


def ref_words(text: str) -> list[str]:
    """The definition, written out independently of the package."""
    return re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", text).casefold())


def byte_path_words(text: str) -> list[str]:
    buf = np.frombuffer(token_bytes(text) + b" ", np.uint8)
    starts, ends = word_spans(buf)
    assert starts.dtype == np.int64 and ends.dtype == np.int64
    assert len(starts) == len(ends) and bool(np.all(starts < ends))
    return [bytes(buf[s:e]).decode("utf-8") for s, e in zip(starts, ends, strict=True)]


# --------------------------------------------------------------------------------------------
# the examples of DESIGN §1 and the project's own sentence


def test_design_example_first_four_chunks():
    text = "Additionaly, we sort the words inside each chunk. This at the first sight ..."
    assert chunks(text)[:4] == [
        ("additionaly", "sort", "the", "we", "words"),
        ("inside", "sort", "the", "we", "words"),
        ("each", "inside", "sort", "the", "words"),
        ("chunk", "each", "inside", "the", "words"),
    ]
    # 13 words -> 9 overlapping windows; the last is "at first sight the this"
    assert len(words(text)) == 13
    assert len(chunks(text)) == 9
    assert chunks(text)[-1] == ("at", "first", "sight", "the", "this")


def test_own_sentence_punctuation_capitals_overlap_sorting():
    text = "Zebras, QUIETLY eat: apples (and) Bananas! Yet... nobody--Zebras too?--WATCHES."
    assert words(text) == [
        "zebras",
        "quietly",
        "eat",
        "apples",
        "and",
        "bananas",
        "yet",
        "nobody",
        "zebras",
        "too",
        "watches",
    ]
    got = chunks(text)
    assert got == [
        ("and", "apples", "eat", "quietly", "zebras"),
        ("and", "apples", "bananas", "eat", "quietly"),
        ("and", "apples", "bananas", "eat", "yet"),
        ("and", "apples", "bananas", "nobody", "yet"),
        ("and", "bananas", "nobody", "yet", "zebras"),
        ("bananas", "nobody", "too", "yet", "zebras"),
        ("nobody", "too", "watches", "yet", "zebras"),
    ]
    # overlapping: consecutive windows share k - 1 words (as multisets)
    ws = words(text)
    for i, c in enumerate(got):
        assert c == tuple(sorted(ws[i : i + 5]))
    # a transposition inside a window does not change that window
    swapped = "QUIETLY zebras, eat: apples (and) Bananas!"
    assert chunks(swapped)[0] == got[0]


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_window_count_and_other_k(k):
    ws = [f"w{i}" for i in range(10)]
    got = chunks(" ".join(ws), k)
    assert len(got) == 10 - k + 1
    assert got == [tuple(sorted(ws[i : i + k])) for i in range(10 - k + 1)]


# --------------------------------------------------------------------------------------------
# normalisation rules


def test_nfkc():
    assert words("ﬁne ﬂow") == ["fine", "flow"]  # ligatures
    assert words("ＡＢＣ ｄｅｆ １２３") == ["abc", "def", "123"]  # fullwidth letters, digits
    assert words("x² ½") == ["x2", "1", "2"]  # superscript digit; ½ -> 1⁄2 (fraction slash)
    assert words("e\u0301cole") == ["école"]  # NFKC composes the combining accent
    assert words("Ⅻ") == ["xii"]  # roman numeral twelve, compatibility + casefold


def test_casefold():
    assert words("Straße") == ["strasse"]
    assert words("STRASSE straße") == ["strasse", "strasse"]
    assert words("ΣΊΣΥΦΟΣ") == ["σίσυφοσ"]  # final sigma folded too (lower() would give ς)
    assert normalize("ǅ") == "dž"  # titlecase digraph: NFKC splits it, casefold lowers
    assert words("ÉCOLE école") == ["école", "école"]


def test_separators_underscore_digits():
    assert words("snake_case") == ["snake", "case"]
    assert words("__init__") == ["init"]
    assert words("x2 3.14 1,000 route66") == ["x2", "3", "14", "1", "000", "route66"]
    assert words("١٢٣ ٤") == ["١٢٣", "٤"]  # Arabic-Indic digits are digits
    assert words("don't e-mail a/b\tc\nd\x00e") == [
        "don",
        "t",
        "e",
        "mail",
        "a",
        "b",
        "c",
        "d",
        "e",
    ]
    assert words("漢字かな 😀 emoji😀here") == ["漢字かな", "emoji", "here"]
    assert words("") == [] and words(" ,.;!? _ \n") == []


def test_fewer_than_k_words_gives_no_chunks():
    assert chunks("only four words here") == []
    assert chunks("one two three four five") == [("five", "four", "one", "three", "two")]
    assert chunks("") == []
    assert chunks("a b", k=3) == []
    assert chunks("a b c", k=3) == [("a", "b", "c")]


def test_token_bytes_fast_and_join_paths():
    # ASCII fast path keeps separators (lowered); word bytes are [0-9a-z]
    assert token_bytes("Hello_World, 42!") == b"hello_world, 42!"
    # non-ASCII path: normalised words joined by single spaces, UTF-8
    assert token_bytes("Straße, ﬁne_X") == b"strasse fine x"
    for t in ("Hello_World, 42!", "Straße, ﬁne_X"):
        assert byte_path_words(t) == words(t)


# --------------------------------------------------------------------------------------------
# property: words == the regex definition == the byte path, on arbitrary Unicode


_any_char = st.characters(exclude_categories=("Cs",))
_ascii = st.characters(max_codepoint=127)  # includes control characters and '_'
_combining = st.characters(categories=("Mn", "Mc", "Me"))
_cjk = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
_emoji = st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF)
_tricky = st.sampled_from(
    [*"ﬁﬂﬀＡｚ１２ßẞİıΣσςǅⅫ²½ᵃ°µÅÅ\u0301\u0308\u200b\u200d\u00a0\u3000_", "e\u0301", "ᄀ\u1161"]
)

unicode_text = st.one_of(
    st.text(_any_char, max_size=200),
    st.text(_ascii, max_size=200),
    st.lists(st.one_of(_ascii, _combining, _cjk, _emoji, _tricky), max_size=200).map("".join),
    # mostly ASCII with a little non-ASCII: exercises both paths on near-identical text
    st.lists(
        st.one_of(
            st.sampled_from(["Ab", "x_y", "A1_b2", "\t", "\x00", "__", "CAPS", "a" * 70]),
            st.lists(st.one_of(_any_char, _tricky), min_size=1, max_size=3).map("".join),
        ),
        max_size=40,
    ).map(" ".join),
)


@settings(max_examples=600, deadline=None)
@given(unicode_text)
def test_words_equal_the_regex_definition_and_the_byte_path(text):
    ws = words(text)
    assert ws == ref_words(text)
    assert byte_path_words(text) == ws
    if text.isascii():
        # the fast path must not normalise differently from the definition
        assert token_bytes(text) == text.lower().encode("ascii")


@settings(max_examples=200, deadline=None)
@given(unicode_text, st.integers(1, 6))
def test_chunks_are_sorted_windows_of_words(text, k):
    ws = ref_words(text)
    assert chunks(text, k) == [tuple(sorted(ws[i : i + k])) for i in range(len(ws) - k + 1)]
