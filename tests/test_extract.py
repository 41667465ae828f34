"""Extraction per format (words out == words in), encodings, error kinds, reading items."""

from __future__ import annotations

import codecs
import io
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from simdask import IndexConfig
from simdask.engine.chunk_stage import chunk_task
from simdask.errors import ConfigError, ExtractionError
from simdask.ingest.extract import KINDS, extract_text, format_of
from simdask.ingest.extract.pdf_extract import join_hyphenated
from simdask.ingest.extract.plain import STRAY_SHARE, decode_text
from simdask.ingest.sources import (
    KnownHashes,
    content_hash,
    fetch_item,
    list_items,
    parse_item,
    parse_size,
    read_item,
)
from simdask.kernels.words import words
from tests.helpers.documents import (
    CZECH,
    docx_bytes,
    html_bytes,
    image_pdf,
    odt_bytes,
    pdf_bytes,
    prose,
    text_pdf,
    wrap,
)

pytestmark = pytest.mark.unit


DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def fails(data: bytes, name: str, kind: str, *fragments: str, limits=None) -> ExtractionError:
    """Assert that extraction fails with ``kind`` and a message holding ``fragments``."""
    with pytest.raises(ExtractionError) as info:
        extract_text(data, name, limits=limits)
    e = info.value
    assert e.kind == kind, f"{e.kind}: {e.message}"
    assert e.kind in KINDS and e.key == name
    for f in fragments:
        assert f in e.message
    return e


# --- plain text and encodings ------------------------------------------------------------


@pytest.mark.parametrize(
    "encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"]
)
def test_unicode_encodings_with_bom(encoding):
    data = CZECH.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):
        data = "\ufeff".encode(encoding) + data
    assert extract_text(data, "cz.txt") == CZECH


@pytest.mark.parametrize("encoding", ["cp1250", "iso-8859-2"])
@pytest.mark.parametrize(
    "text",
    [
        CZECH,
        "Příliš žluťoučký kůň úpěl ďábelské ódy.",
        "Ještě že tě mám, řekla žena a odešla domů.",
        "Vysoké učení technické v Brně je veřejná vysoká škola a šéf je šťastný.",
        "Ale že to je ono, to se ví, řekl Petr.",
        "Ale že to je ono, to se ví.",  # 2 bytes invalid in UTF-8: not "damaged UTF-8"
    ],
)
def test_czech_legacy_encodings_decode_to_the_right_text(text, encoding):
    # the two code pages differ exactly in š ť ž Š Ť Ž (and a few more): a wrong guess
    # would change those letters, so equality proves the right one was chosen
    assert text.encode("cp1250") != text.encode("iso-8859-2")
    assert extract_text(text.encode(encoding), "cz.txt") == text


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig.", "cp1250"),
        ("Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig.", "iso-8859-2"),
        ("Grüße aus München! Die Straße ist schön, wir essen Äpfel.", "cp1252"),
        ("Le garçon était très content d'être à la plage avec sa sœur.", "cp1252"),
        ("Привет, как дела? Сегодня хорошая погода, и мы идём гулять в парк.", "cp1251"),
    ],
)
def test_other_legacy_encodings(text, encoding):
    assert extract_text(text.encode(encoding), "t.txt") == text


def test_utf16_without_bom_and_damaged_utf8():
    assert extract_text(CZECH.encode("utf-16-le"), "a.txt") == CZECH
    cut = (CZECH + " už").encode("utf-8")[:-1]  # the last character cut in half
    assert extract_text(cut, "a.txt") == CZECH + " u\ufffd"


@pytest.mark.parametrize(
    ("encoding", "stray"),
    [
        ("utf-8", "\x00"),
        ("utf-8", "\x00\x00\x01\x07"),
        ("cp1250", "\x00"),
        ("utf-16", "\x00\x02"),  # with a BOM: decoded first, then the characters dropped
    ],
)
def test_a_few_stray_control_bytes_are_dropped_with_a_note(encoding, stray):
    text = CZECH * 4
    at = len(text) // 3
    data = (text[:at] + stray + text[at:] + stray[:1]).encode(encoding)
    notes: list = []
    assert extract_text(data, "web.txt", notes=notes) == text
    [(kind, message)] = notes
    assert kind == "control_bytes" and message.startswith("warning: dropped")
    assert f"dropped {len(stray) + 1} stray control" in message
    # in HTML too; and without a notes list the text is the same
    assert extract_text(data, "web.html") == text
    page = ("<html><body><p>" + text[:at] + stray + text[at:] + "</p></body></html>").encode(
        encoding
    )
    notes = []
    assert extract_text(page, "p.html", notes=notes) == text and len(notes) == 1
    # clean text has no note
    notes = []
    assert extract_text(text.encode(encoding), "clean.txt", notes=notes) == text and not notes


def _with_nuls(data: bytes, n: int, seed: int) -> bytes:
    """``data`` with ``n`` NUL bytes inserted at random places (inside characters too)."""
    out = bytearray(data)
    for p in sorted(np.random.default_rng(seed).integers(0, len(data), n), reverse=True):
        out[p:p] = b"\x00"
    return bytes(out)


def test_mostly_binary_data_is_still_rejected():
    text = CZECH * 40
    data = text.encode()
    n = int(STRAY_SHARE * len(data))  # at most 5 % of the bytes: stray, dropped
    notes: list = []
    assert extract_text(_with_nuls(data, n - n // 10, 1), "ok.txt", notes=notes) == text
    assert len(notes) == 1
    heavy = _with_nuls(data, n + n // 5, 2)
    fails(heavy, "h.txt", "binary", "expected text, found binary data", "NUL")


def test_binary_and_implausible_bytes_are_rejected():
    rng = np.random.default_rng(0)
    garbage = rng.integers(0, 256, 4096, dtype=np.uint8).tobytes()
    fails(garbage, "g.txt", "binary", "expected text, found binary data", "NUL")
    controls = bytes(rng.integers(1, 32, 400, dtype=np.uint8)) + b"some words" * 5
    fails(controls, "c.md", "binary", "control characters")
    # invalid UTF-8 that no 8-bit code page makes into words: runs of random high bytes
    noise = b" ".join(
        b"w" + bytes(rng.integers(0x80, 0x100, 3, dtype=np.uint8)) + b"x" for _ in range(300)
    )
    fails(noise, "n.txt", "encoding", "expected UTF-8", "no encoding")
    fails(codecs.BOM_UTF16_LE + b"\x00\xd8", "b.txt", "encoding", "UTF-16-LE", "byte 2")
    fails(b"", "e.txt", "empty", "0 bytes")
    fails(b" \n\t \n", "w.txt", "empty", "expected text")


# --- HTML --------------------------------------------------------------------------------


def test_html_visible_text_only():
    paras = [prose(40, seed=1), "Tom & Jerry <3 café", prose(30, seed=2)]
    out = extract_text(html_bytes(paras), "page.html")
    assert words(out) == words(" ".join(paras))
    for hidden in ("title", "stylewords", "scriptwords", "templatewords", "noscriptwords"):
        assert hidden not in out
    assert "hiddenwords" not in out


def test_html_blocks_break_words_inline_elements_do_not_and_entities_decode():
    page = (
        b"<html><body><h1>Head</h1><p>exam<b>ple</b> caf&eacute; &lt;tag&gt;"
        b"</p><div>one</div><div>two</div>li&shy;ne<br>next<table><tr><td>c1</td>"
        b"<td>c2</td></tr></table>A&nbsp;B &#x10D;&#269;</body></html>"
    )
    assert words(extract_text(page, "x.htm")) == words(
        "Head example café tag one two line next c1 c2 A B čč"
    )


@pytest.mark.parametrize("encoding", ["windows-1250", "iso-8859-2", "utf-8"])
def test_html_charset_from_meta(encoding):
    assert words(extract_text(html_bytes([CZECH], encoding), "cz.html")) == words(CZECH)


def test_html_without_meta_is_detected():
    page = f"<html><body><p>{CZECH}</p></body></html>".encode("cp1250")
    assert words(extract_text(page, "cz.html")) == words(CZECH)


# --- PDF ---------------------------------------------------------------------------------

#: PDFs are read in the bounded helper process (simdask.ingest.extract.isolated): a process
_HELPER_PROCESS = pytest.mark.integration


@_HELPER_PROCESS
def test_pdf_pages_in_order_and_hyphenated_line_ends_joined():
    text = prose(900, seed=3)
    lines = wrap(text, hyphenate_every=3)
    assert sum(line.endswith("-") for line in lines) >= 10, "the fixture must hyphenate"
    pages = [lines[i : i + 30] for i in range(0, len(lines), 30)]
    assert len(pages) >= 3
    assert words(extract_text(pdf_bytes(pages), "p.pdf")) == words(text)


@_HELPER_PROCESS
def test_pdf_keeps_hyphens_inside_lines_and_before_capitals():
    pdf = pdf_bytes([["a well-known and long-standing exam-", "ple of Jean-", "Paul here"]])
    out = extract_text(pdf, "h.pdf")
    assert "well-known" in out and "long-standing" in out
    assert "example" in out and "Jean-Paul" in out


def test_join_hyphenated_rules():
    assert join_hyphenated("exam-\nple") == "example"
    assert join_hyphenated("exam\ufffeple") == "example"
    assert join_hyphenated("well-known") == "well-known"
    assert join_hyphenated("Jean-\r\nPaul") == "Jean-Paul"
    assert join_hyphenated("page 12-\n13") == "page 12-\n13"


@_HELPER_PROCESS
def test_pdf_czech_with_unicode_font():
    if not DEJAVU.exists():  # Debian package fonts-dejavu-core; .ci/run installs it
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must have the DejaVu Sans font ({DEJAVU}: fonts-dejavu-core)")
        pytest.skip("needs the DejaVu Sans font for Czech glyphs (fonts-dejavu-core)")
    out = extract_text(pdf_bytes([wrap(CZECH)], font=str(DEJAVU)), "cz.pdf")
    assert words(out) == words(CZECH)


@_HELPER_PROCESS
def test_pdf_errors():
    good = text_pdf(prose(200, seed=4))
    fails(good[: len(good) // 3], "trunc.pdf", "corrupt", "expected a")
    fails(b"%PDF-1.7\n" + bytes(range(256)) * 4, "junk.pdf", "corrupt", "damaged")
    fails(b"just some text, not a pdf at all", "fake.pdf", "corrupt", "expected a PDF")
    fails(pdf_bytes([["secret words"]], password="pw"), "enc.pdf", "encrypted", "password")
    fails(image_pdf(3), "scan.pdf", "image_only", "scanned images without a text layer")
    fails(pdf_bytes([[], []]), "blank.pdf", "empty", "2 pages")
    from fpdf import FPDF  # an owner password alone only restricts editing: readable

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.text(15, 20, "readable words under an owner password")
    pdf.set_encryption(owner_password="owner")
    assert "readable words" in extract_text(bytes(pdf.output()), "owner.pdf")


def test_pdf_missing_library_names_the_extra(monkeypatch):
    import sys

    from simdask.ingest.extract.pdf_text import read_pdf  # what the helper process runs

    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # import fails as if not installed
    with pytest.raises(ExtractionError) as info:
        read_pdf(text_pdf("some words here"), "x.pdf")
    assert info.value.kind == "missing_dependency"
    assert "pip install 'simdask[pdf]'" in info.value.message


# --- DOCX and ODT ------------------------------------------------------------------------


def test_docx_paragraphs_tables_headers_footers():
    paras = [prose(60, seed=5), prose(50, seed=6)]
    table = [["alpha cell", "beta cell"], ["gamma cell", "delta cell"]]
    data = docx_bytes(paras, table, header="running header", footer="page footer")
    expected = [*paras, *(c for row in table for c in row), "running header", "page footer"]
    assert words(extract_text(data, "d.docx")) == words(" ".join(expected))


def test_odt_headings_spans_tables_notes_headers():
    paras = [prose(60, seed=7), prose(40, seed=8)]
    table = [["one cell", "two cell"], ["three cell", "four cell"]]
    data = odt_bytes(paras, "The heading", table, note="a footnote body", header="page header")
    expected = ["The heading", *paras, *(c for r in table for c in r), "a footnote body"]
    assert words(extract_text(data, "o.odt")) == words(" ".join([*expected, "page header"]))


def _zip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return out.getvalue()


def test_office_errors():
    fails(b"not a zip at all", "a.docx", "corrupt", "expected a DOCX file", "found")
    fails(_zip({"other.xml": b"<a/>"}), "b.docx", "corrupt", "word/document.xml")
    fails(_zip({"word/document.xml": b"<w:document"}), "c.docx", "corrupt", "well-formed XML")
    fails(b"PK\x03\x04" + b"\x00" * 50, "d.odt", "corrupt", "expected an ODT file")
    manifest = (
        b'<m:manifest xmlns:m="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        b'<m:file-entry m:full-path="content.xml"><m:encryption-data/></m:file-entry>'
        b"</m:manifest>"
    )
    enc = _zip(
        {
            "mimetype": b"application/vnd.oasis.opendocument.text",
            "content.xml": os.urandom(64),
            "META-INF/manifest.xml": manifest,
        }
    )
    fails(enc, "e.odt", "encrypted", "password")
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600
    # an OLE file that is not encrypted goes to antiword (a process): tests/test_term_formats.py
    fails(ole + "EncryptionInfo".encode("utf-16-le"), "p.docx", "encrypted", "password")
    deep = b"<w:document xmlns:w='x'>" + b"<a>" * 50_000 + b"</a>" * 50_000 + b"</w:document>"
    fails(
        _zip({"word/document.xml": deep}), "deep.docx", "too_complex", "256 levels"
    )  # no RecursionError


@_HELPER_PROCESS
def test_format_by_content_where_the_suffix_lies():
    pdf = text_pdf("the words of a pdf file with a misleading name")
    docx = docx_bytes(["the words of a docx file"])
    odt = odt_bytes(["the words of an odt file"])
    assert format_of(pdf, "report.txt") == "pdf" and format_of(pdf, "noext") == "pdf"
    assert format_of(docx, "a.pdf") == "docx" and format_of(odt, "a.docx") == "odt"
    assert format_of(b"<!DOCTYPE html><p>x", "noext") == "html"
    assert format_of(b"plain words", "noext") == "plain"
    assert "misleading" in extract_text(pdf, "report.txt")
    assert "docx" in extract_text(docx, "a.pdf")


# --- listing and reading items -----------------------------------------------------------


def test_folder_walk_formats_hidden_and_lock_files(tmp_path):
    names = [
        "a.txt",
        "b.MD",
        "c.Html",
        "d.htm",
        "e.PDF",
        "f.docx",
        "g.odt",
        "sub/h.txt",
        "skip.doc",
        "skip.jsonl",
        ".hidden.txt",
        ".git/x.txt",
        "~$f.docx",
        ".~lock.g.odt#",
    ]
    for n in names:
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_bytes(b"x")
    items = list_items([tmp_path])
    keys = [it.key for it in items if not it.error]
    top = tmp_path.name + "/"
    expected = ["a.txt", "b.MD", "c.Html", "d.htm", "e.PDF", "f.docx", "g.odt"]
    # .doc and .rtf are read since issue 31 (item 17): antiword and striprtf
    assert keys == [top + k for k in (*expected, "skip.doc", "sub/h.txt")]
    # the other files are not dropped silently: items reported as unsupported (issue 18)
    others = [(it.key, it.error_kind) for it in items if it.error]
    assert others == [(top + "skip.jsonl", "unsupported")]


def test_fetch_item_unreadable_and_too_large(tmp_path):
    f = tmp_path / "doc.txt"
    f.write_text("one two three four five six", encoding="utf-8")
    [item] = list_items([f])
    assert fetch_item(item, 27) == f.read_bytes()
    with pytest.raises(ExtractionError) as info:
        fetch_item(item, 26)
    assert info.value.kind == "too_large" and "expected at most 26 bytes" in info.value.message
    assert fetch_item(item, None) == f.read_bytes()
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text('{"id": "a", "text": "short"}\n{"id": "b", "text": "' + "x" * 99 + '"}\n')
    a, b = list_items([jsonl])
    assert parse_item(a, fetch_item(a, 40))[:2] == ("a", "short")
    with pytest.raises(ExtractionError, match="expected at most 40 bytes"):
        fetch_item(b, 40)  # the limit applies per line
    f.unlink()
    with pytest.raises(ExtractionError) as info:
        fetch_item(item)
    assert info.value.kind == "unreadable" and info.value.key == "doc.txt"
    assert "No such file" in info.value.message


@_HELPER_PROCESS
def test_parse_item_hashes_raw_bytes_and_skips_extraction_when_unchanged(tmp_path, monkeypatch):
    pdf = text_pdf(prose(80, seed=9))
    (tmp_path / "d.pdf").write_bytes(pdf)
    [item] = list_items([tmp_path])
    d = f"{tmp_path.name}/d.pdf"
    key, text, digest = read_item(item)
    assert key == d and digest == content_hash(pdf) and words(text) == words(prose(80, 9))
    known = KnownHashes({d: digest})

    def boom(*_):
        raise AssertionError("extracted although unchanged")

    monkeypatch.setattr("simdask.ingest.sources.extract_text", boom)
    assert parse_item(item, pdf, known) == (d, None, digest)
    res = chunk_task(
        [item], 0, known, IndexConfig(shards=16), str(tmp_path / "b"), str(tmp_path / "t"), 1, 0
    )
    assert res.unchanged == [(0, d)] and not res.errors and not res.keys
    with pytest.raises(AssertionError, match="extracted although unchanged"):
        parse_item(item, pdf + b"\n", known)  # changed bytes are extracted


def test_parse_size():
    assert parse_size("50MB") == 50_000_000 and parse_size("100m") == 100_000_000
    assert parse_size("2GiB") == 2 * 2**30 and parse_size("1.5 kB") == 1500
    assert parse_size("4096") == 4096 and parse_size("3KiB") == 3072
    for bad in ("x", "-1", "MB", "5 iB"):
        with pytest.raises(ConfigError, match="expected a size"):
            parse_size(bad)


def test_decode_text_is_used_for_markdown():
    assert extract_text("# Nadpis\n\nŠťastný *text*".encode("cp1250"), "r.md").startswith("# N")
    assert decode_text(b"plain ascii") == "plain ascii"


def _raw_docx(body: bytes) -> bytes:
    """A minimal DOCX whose document body is ``body`` (raw XML)."""
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", b"<Types/>")
        doc = f'<w:document xmlns:w="{w}"><w:body>'.encode() + body + b"</w:body></w:document>"
        z.writestr("word/document.xml", doc)
    return out.getvalue()


def test_parsing_work_is_bounded_too_complex():
    """Issue 30 item 5: millions of empty paragraphs in a few kB, or elements nested
    thousands deep, are ``too_complex`` instead of minutes of CPU and gigabytes."""
    import time

    from simdask.ingest.extract.extract_limits import ExtractLimits

    words = b"<w:p><w:r><w:t>a few real words</w:t></w:r></w:p>"
    small = ExtractLimits(elements=20_000)
    ok = extract_text(_raw_docx(words * 4000), "ok.docx", limits=small)
    assert ok.count("a few real words") == 4000
    many = _raw_docx(words + b"<w:p/>" * 20_000)  # 20,005 elements with the document's own
    fails(
        many,
        "many.docx",
        "too_complex",
        "at most 20,000 XML elements",
        "word/document.xml",
        limits=small,
    )
    deep = _raw_docx(b"<w:p>" * 100_000 + b"<w:r><w:t>x</w:t></w:r>" + b"</w:p>" * 100_000)
    t = time.perf_counter()
    fails(deep, "deep.docx", "too_complex", "at most 256 levels")
    assert time.perf_counter() - t < 2.0
    nested = b"<w:tbl><w:tr><w:tc>" * 20 + words + b"</w:tc></w:tr></w:tbl>" * 20
    assert "a few real words" in extract_text(_raw_docx(nested), "tables.docx")  # 62 deep
