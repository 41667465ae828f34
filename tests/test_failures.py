"""Which documents are *currently* not indexed (issue 18), from the runs' errors and sources."""

from __future__ import annotations

import json
import sqlite3

import pytest

from simdask.storage.failures import current_failures

pytestmark = pytest.mark.unit


def _catalog(runs, errors, documents):
    c = sqlite3.connect(":memory:")
    c.executescript(
        "CREATE TABLE runs (run_id INTEGER PRIMARY KEY, finished_at REAL, status TEXT,"
        " summary TEXT);"
        "CREATE TABLE errors (run_id INTEGER, key TEXT, kind TEXT, message TEXT);"
        "CREATE TABLE documents (key TEXT, n_words INTEGER, status TEXT, updated_at REAL);"
    )
    for run_id, sources, extra in runs:
        summary = {"sources": sources, **extra} if sources is not None else extra
        c.execute(
            "INSERT INTO runs VALUES (?, ?, 'committed', ?)",
            (run_id, float(run_id), json.dumps(summary)),
        )
    c.executemany("INSERT INTO errors VALUES (?, ?, ?, ?)", errors)
    c.executemany("INSERT INTO documents VALUES (?, ?, ?, ?)", documents)
    return c


def test_superseded_errors_are_not_current():
    c = _catalog(
        runs=[
            (1, ["/e"], {}),
            (2, ["/l"], {}),  # another source: /e's errors stay current
            (3, ["/e", "/l"], {}),  # /e again: only what still fails is current
            (4, ["/x"], {"compaction": {"ranges": 1}}),  # not an indexing run
        ],
        errors=[
            (1, "e/old.doc", "unsupported", "m1"),
            (1, "e/gone.png", "unsupported", "m2"),
            (1, "e/fixed.pdf", "corrupt", "m3"),
            (1, "e/kept.pdf", "corrupt", "m4"),
            (2, "l/x.rtf", "unsupported", "m5"),
            (3, "e/old.doc", "unsupported", "m6"),
            (3, "e/kept.pdf", "corrupt", "m7"),
            (3, "e/tiny.txt", "too_short", "ignored: listed from documents"),
        ],
        documents=[
            ("e/fixed.pdf", 300, "indexed", 3.0),  # indexed by run 3
            ("e/kept.pdf", 300, "indexed", 0.5),  # an older version indexed before run 1
            ("e/tiny.txt", 3, "too_short", 3.0),
        ],
    )
    got = {f.key: (f.kind, f.message, f.run_id, f.kept) for f in current_failures(c, k=5)}
    assert got == {
        "e/old.doc": ("unsupported", "m6", 3, False),
        "e/kept.pdf": ("corrupt", "m7", 3, True),
        "e/tiny.txt": (
            "too_short",
            "3 words: a document needs at least 5 words to be compared",
            3,
            True,
        ),
    }  # l/x.rtf and e/gone.png: run 3 scanned their sources and no longer met them


def test_rebuild_and_unknown_sources():
    c = _catalog(
        runs=[(1, None, {}), (2, ["/a"], {}), (3, ["/b"], {"rebuild": True})],
        errors=[(1, "old", "corrupt", "m"), (2, "a/x", "corrupt", "m")],
        documents=[],
    )
    assert current_failures(c) == []  # the rebuild replaced everything
    c = _catalog(
        runs=[(1, None, {}), (2, ["/a"], {})],
        errors=[(1, "old", "corrupt", "m")],
        documents=[],
    )
    assert [f.key for f in current_failures(c)] == ["old"]  # sources of run 1 unknown: kept


def test_warnings_are_current_while_their_version_is_indexed():
    c = _catalog(
        runs=[(1, ["/w"], {}), (2, ["/w"], {}), (3, ["/w"], {})],
        errors=[
            (1, "w/nul.txt", "control_bytes", "warning: dropped 2"),  # still that version
            (1, "w/fixed.txt", "control_bytes", "warning: dropped 1"),  # modified in run 3
            (2, "w/gone.txt", "control_bytes", "warning: dropped 3"),  # deleted since
        ],
        documents=[("w/nul.txt", 300, "indexed", 1.0), ("w/fixed.txt", 300, "indexed", 3.0)],
    )
    got = {f.key: (f.kind, f.run_id, f.kept, f.warning, f.indexed) for f in current_failures(c)}
    # runs 2 and 3 scanned /w without meeting nul.txt again (unchanged: not re-read): the
    # warning stays, since the version it was found in is the one indexed
    assert got == {"w/nul.txt": ("control_bytes", 1, True, True, True)}
