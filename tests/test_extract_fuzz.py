"""Property tests: any bytes give text or an ExtractionError; Unicode round-trips."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdask.errors import ExtractionError
from simdask.ingest.extract import SUFFIXES, extract_text
from tests.helpers.documents import docx_bytes, odt_bytes, text_pdf

# integration, not unit: bytes that look like an old Word file (OLE magic) are read by antiword,
# a subprocess, whatever their suffix
pytestmark = pytest.mark.integration


_SETTINGS = settings(max_examples=60, deadline=5000, suppress_health_check=[HealthCheck.too_slow])


#: makers of valid documents of each format to mutate (cut, flip bytes), so the fuzzer gets
#: past the first magic-byte check into the real parsers; made by the ``seeds`` fixture, not
#: at import (the PDF writer's import and the documents cost ~2 CPU s of every pytest process
#: that collects this module, whichever tests it runs)
_SEED_MAKERS = (
    lambda: text_pdf("fuzzing seed words " * 30),
    lambda: docx_bytes(["fuzzing seed words " * 10]),
    lambda: odt_bytes(["fuzzing seed words " * 10]),
    lambda: b"<!DOCTYPE html><html><body><p>seed &amp; words</p></body></html>",
)


@pytest.fixture(scope="module")
def seeds() -> list[bytes]:
    """The seed documents, made before the first example (outside its deadline)."""
    return [make() for make in _SEED_MAKERS]


def _outcome(data: bytes, name: str) -> None:
    try:
        text = extract_text(data, name)
    except ExtractionError as e:
        assert e.kind and e.message and e.key == name
    else:
        assert isinstance(text, str) and text.strip()


@pytest.mark.parametrize("suffix", [*SUFFIXES, ""])
@_SETTINGS
@given(data=st.binary(max_size=3000))
def test_arbitrary_bytes_give_text_or_extraction_error(suffix, data):
    _outcome(data, "doc" + suffix)


@pytest.mark.parametrize("suffix", [".pdf", ".docx", ".odt", ".html", ".txt"])
@_SETTINGS
@given(
    seed=st.sampled_from(range(len(_SEED_MAKERS))),
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=8),
)
def test_damaged_documents_give_text_or_extraction_error(seeds, suffix, seed, cut, flips):
    data = bytearray(seeds[seed])
    for where, value in flips:
        data[int(where * (len(data) - 1))] = value
    _outcome(bytes(data[: max(1, int(cut * len(data)))]), "doc" + suffix)


_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=400).filter(
    lambda t: t.strip() and not t.startswith("\ufeff")
)


@_SETTINGS
@given(text=_TEXT, encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"]))
def test_unicode_text_round_trips_through_plain_extraction(text, encoding):
    assert extract_text(text.encode(encoding), "t.txt") == text
    assert extract_text(text.encode(encoding), "t.md") == text


def test_round_trip_property_covers_non_ascii():
    assert unicodedata.category("\u00ad") == "Cf"  # soft hyphens stay in plain text
    assert extract_text("a\u00adb ž".encode("utf-16"), "x.txt") == "a\u00adb ž"
