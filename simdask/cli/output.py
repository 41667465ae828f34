"""Writing result rows as a table, JSONL or CSV (used by the CLI)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

__all__ = ["FORMATS", "write_rows"]

FORMATS = ("table", "jsonl", "csv")


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def write_rows(
    rows: Iterable[dict[str, Any]], columns: Sequence[str], fmt: str, out: TextIO
) -> int:
    """Write dict rows in ``fmt`` (table, jsonl or csv); returns the number of rows."""
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
    cells = [[_cell(r[c]) for c in columns] for r in rows]
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
