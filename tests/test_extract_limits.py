"""ExtractLimits (issue 30 item 5) in-process: validation and round trip, the limits of the
extractors that run in this process (DOCX/ODT text and entity bombs, HTML elements and its
hidden-element stack, RTF group depth, text of any document and of a JSONL line). The
helper-process formats (PDF, RTF text, .doc) and the measured memory and CPU of every bomb:
tests/test_bombs.py."""

from __future__ import annotations

import json
import time

import pytest

from simdask.errors import ConfigError, ExtractionError
from simdask.ingest.extract import extract_text
from simdask.ingest.extract.extract_limits import ExtractLimits, as_limits, kind_over
from simdask.ingest.extract.rtf_text import group_depth
from simdask.ingest.sources import SourceItem, parse_item
from tests.helpers import bombs

pytestmark = pytest.mark.unit


def _kind(data: bytes, name: str, limits: ExtractLimits | None = None) -> str | None:
    try:
        extract_text(data, name, limits=limits)
    except ExtractionError as e:
        assert e.message.startswith("expected "), e.message
        return e.kind
    return None


def test_limits_validated_and_round_trip():
    limits = ExtractLimits(elements=10, cpu_seconds=1.5)
    assert ExtractLimits.from_dict(limits.to_dict()) == limits
    assert ExtractLimits.from_dict({}) == ExtractLimits()
    for bad in ({"depth": 0}, {"elements": -1}, {"cpu_seconds": "1"}, {"depth": True}):
        with pytest.raises(ConfigError, match="must be a positive"):
            ExtractLimits(**bad)
    with pytest.raises(ConfigError, match="at least 256 MiB"):
        ExtractLimits(pdf_memory_bytes=100 * 2**20)
    with pytest.raises(ConfigError):
        ExtractLimits.from_dict({"nope": 1})
    assert ExtractLimits.for_file_size(10_000).inflated_bytes == 20_000
    assert ExtractLimits.for_file_size(0).inflated_bytes == 2 * 2**30
    assert ExtractLimits.for_file_size(None) == ExtractLimits()
    assert as_limits(5000) == ExtractLimits(inflated_bytes=5000, text_chars=5000)
    assert kind_over(ExtractLimits(), 101, 1) == "bomb"
    assert kind_over(ExtractLimits(), 100, 1) == "too_large"


def test_entity_expansion_bomb_is_a_bomb():
    assert _kind(bombs.docx_laughs(), "laughs.docx") == "bomb"


def test_docx_text_over_the_text_limit():
    data = bombs.odt_text(400_000)  # ~250,000 characters of text in a few kB: a bomb
    with pytest.raises(ExtractionError) as info:
        extract_text(data, "a.odt", limits=ExtractLimits(text_chars=100_000))
    assert info.value.kind == "bomb" and "at most 100,000 characters" in info.value.message
    assert _kind(data, "a.odt", ExtractLimits(text_chars=1_000_000)) is None


def test_html_elements_bounded_and_hidden_stack_linear():
    limits = ExtractLimits(elements=10_000)
    assert _kind(bombs.html_nested(20_000), "n.html", limits) == "too_complex"
    assert _kind(bombs.html_nested(4_000), "n.html", limits) is None
    # 60,000 elements in a hidden one, closed by end tags of elements not open: a search of
    # the open elements per end tag was quadratic (seconds here, minutes at 300,000)
    t = time.process_time()
    assert extract_text(bombs.html_hidden_nested(60_000), "h.html").strip() == "word"
    assert time.process_time() - t < 3.0
    page = b"<div hidden><p>a<p>b<span>c</div><p>shown</p><script>x</script>"
    assert extract_text(page, "p.html").strip() == "shown"


def test_rtf_group_depth():
    assert group_depth(b"{\\rtf1 {a}{b{c}}}") == 3
    assert group_depth(b"{\\rtf1 \\{ not a group \\}}") == 1
    assert group_depth(b"}}}{a}") == 1  # unbalanced closing braces do not hide later groups
    assert group_depth(bombs.rtf_nested(1000)) == 1001
    assert group_depth(b"plain") == 0


def test_plain_text_and_jsonl_line_over_the_text_limit():
    text = b"words and more words " * 100
    assert _kind(text, "a.txt", ExtractLimits(text_chars=1000)) == "too_large"
    assert _kind(text, "a.txt", ExtractLimits(text_chars=5000)) is None
    big = "w " * (ExtractLimits().text_chars // 2 + 1)
    line = json.dumps({"id": "x", "text": big}).encode()
    item = SourceItem(source="s", path="d.jsonl", key=None, line=1)
    with pytest.raises(ExtractionError) as info:
        parse_item(item, line)
    assert info.value.kind == "too_large" and "JSONL line" in info.value.message
