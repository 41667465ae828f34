"""Table, JSONL and CSV output of result rows (simdask/cli/output.py)."""

from __future__ import annotations

import csv
import io
import json
import unicodedata

import pytest

from simdask.cli.output import table_cell, write_rows

pytestmark = pytest.mark.unit

ROWS = [
    {"key": "line one\nline two.txt", "other": "tab\there", "similarity": 12.5},
    {"key": "cr\rand\x1besc\u2028sep", "other": "plain.txt", "similarity": 100.0},
]


def test_table_rows_stay_one_line_each_with_keys_escaped():
    out = io.StringIO()
    assert write_rows(ROWS, ["key", "other", "similarity"], "table", out) == 2
    lines = out.getvalue().splitlines()
    assert len(lines) == 4  # header, rule, two rows
    assert lines[2].split() == ["line", "one\\nline", "two.txt", "tab\\there", "12.50"]
    assert lines[3].startswith("cr\\rand\\x1besc\\u2028sep ")
    assert lines[3].endswith("100.00")
    # the columns line up: every row as long as the header's ruler says
    width = len(lines[1])
    assert all(len(line) <= width for line in lines)


def test_csv_and_jsonl_keep_keys_exact():
    out = io.StringIO()
    write_rows(ROWS, ["key", "other", "similarity"], "csv", out)
    back = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["key"] for r in back] == [r["key"] for r in ROWS]
    out = io.StringIO()
    write_rows(ROWS, ["key", "other", "similarity"], "jsonl", out)
    assert [json.loads(x)["key"] for x in out.getvalue().split("\n")[:-1]] == [
        r["key"] for r in ROWS
    ]


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("a\nb", "a\\nb"),
        ("\x00", "\\x00"),
        ("\x85", "\\x85"),
        ("ü/ß", "ü/ß"),
        (1.0, "1.00"),
        # bidirectional controls (issue 30 item 15): an RTL override would reverse the row
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
        ("\u2066a\u2069\u200f", "\\u2066a\\u2069\\u200f"),
        ("עברית", "עברית"),  # right-to-left text itself is kept
    ],
)
def test_table_cell(value, cell):
    assert table_cell(value) == cell


def test_nfc_and_nfd_spellings_of_one_name_print_differently():
    """Issue 30 item 15: ``café.txt`` with é as one character (NFC) and as e + U+0301 (NFD, as
    macOS writes names) are two files and two keys; a table shows the decomposed one's
    combining mark escaped, the composed one (and text in NFC, marks included) as it is."""
    nfc = unicodedata.normalize("NFC", "essays/café.txt")
    nfd = unicodedata.normalize("NFD", "essays/café.txt")
    assert nfc != nfd
    assert table_cell(nfc) == nfc
    assert table_cell(nfd) == "essays/cafe\\u0301.txt"
    hindi = "निबंध.txt"  # combining vowel signs that NFC keeps
    assert unicodedata.is_normalized("NFC", hindi) and table_cell(hindi) == hindi
    out = io.StringIO()
    write_rows([{"key": nfc}, {"key": nfd}], ["key"], "table", out)
    rows = out.getvalue().splitlines()[2:]
    assert len(set(rows)) == 2
    out = io.StringIO()  # JSONL gives the keys exactly
    write_rows([{"key": nfd}], ["key"], "jsonl", out)
    assert json.loads(out.getvalue())["key"] == nfd
