"""Writing result rows as a table, JSONL or CSV (used by the CLI)."""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

__all__ = ["FORMATS", "table_cell", "write_rows"]

FORMATS = ("table", "jsonl", "csv")


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


#: characters that would break a table's lines or columns: C0/C1 controls and the Unicode
#: line/paragraph separators, and the bidirectional controls (an RTL override in a key
#: would show the rest of its row reversed: issue 30 item 15); a key may hold them; JSONL and
#: CSV keep them as they are
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def table_cell(v: Any) -> str:
    """One value as a table cell: floats with 2 decimals; newlines, tabs and other control
    characters of text escaped (``\\n``, ``\\t``, ``\\x1b``) so each row stays one line; in
    text not in Unicode NFC, the combining characters escaped too (``cafe\\u0301.txt``), so
    that two keys spelled the same in NFC and NFD (``café.txt`` written as macOS writes it)
    do not print the same (issue 30 item 15)."""
    if isinstance(v, float):
        return f"{v:.2f}"
    text = str(v)
    cell = _UNSAFE.sub(lambda m: _escape_char(m.group()), text)
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        cell = "".join(_escape_char(c) if unicodedata.combining(c) else c for c in cell)
    return cell


def write_rows(
    rows: Iterable[dict[str, Any]], columns: Sequence[str], fmt: str, out: TextIO
) -> int:
    """Write dict rows in ``fmt`` (table, jsonl or csv); returns the number of rows. Tables
    escape control characters in cells (see :func:`table_cell`); JSONL and CSV are exact."""
    n = 0
    if fmt == "jsonl":
        for r in rows:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
            n += 1
        return n
    if fmt == "csv":
        w = csv.DictWriter(out, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
            n += 1
        return n
    cells = [[table_cell(r[c]) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    numeric = [all(_is_num(row[i]) for row in cells) for i in range(len(columns))]

    def line(vals: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(vals, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out.write(line(list(columns)) + "\n")
    out.write(line(["-" * w for w in widths]) + "\n")
    for row in cells:
        out.write(line(row) + "\n")
    return len(cells)


def _is_num(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True
