"""Finding a document by what a person typed (issue 18): key, path, unique end of a key."""

from __future__ import annotations

import re
import sqlite3

import pytest

from simdask.errors import DocumentNotFoundError
from simdask.storage.lookup import match_keys, resolve_key

pytestmark = pytest.mark.unit

KEYS = [
    "essays/smith.txt",
    "essays/2025/smith.txt",
    "essays/jones.txt",
    "theses/jones.txt",
    "notes_1%.md",
    "thesis-7",
]


@pytest.fixture
def conn():
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE documents (key TEXT PRIMARY KEY)")
    c.executemany("INSERT INTO documents VALUES (?)", [(k,) for k in KEYS])
    return c


def test_exact_path_and_unique_end(conn, tmp_path, monkeypatch):
    assert resolve_key(conn, "thesis-7") == "thesis-7"
    assert resolve_key(conn, "2025/smith.txt") == "essays/2025/smith.txt"
    assert resolve_key(conn, "./essays/jones.txt") == "essays/jones.txt"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DocumentNotFoundError):  # only keys and paths, no ends of keys
        resolve_key(conn, "2025/smith.txt", ends=False)
    # a path as given on the command line: absolute, or relative to where simdask runs
    (tmp_path / "essays").mkdir()
    (tmp_path / "essays" / "smith.txt").write_text("x")
    assert resolve_key(conn, str(tmp_path / "essays" / "smith.txt")) == "essays/smith.txt"
    monkeypatch.chdir(tmp_path / "essays")
    assert resolve_key(conn, "smith.txt") == "essays/smith.txt"  # the path, not ambiguous
    assert resolve_key(conn, "notes_1%.md") == "notes_1%.md"


def test_ambiguous_and_unknown_names(conn, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        DocumentNotFoundError, match=re.escape("end of several keys: 'essays/jones.txt'")
    ):
        resolve_key(conn, "jones.txt")
    with pytest.raises(DocumentNotFoundError, match=re.escape("did you mean 'essays/jones.txt'")):
        resolve_key(conn, "essays/jnoes.txt")
    with pytest.raises(DocumentNotFoundError, match="no document with key '1_%'"):
        resolve_key(conn, "1_%")  # LIKE wildcards are taken literally
    with pytest.raises(DocumentNotFoundError) as err:
        resolve_key(conn, "zzzzzzzz")
    assert "`simdask list INDEX` lists the keys" in str(err.value)


def test_match_keys(conn):
    assert match_keys(conn) == sorted(KEYS)
    assert match_keys(conn, "essays/*") == sorted(k for k in KEYS if k.startswith("essays/"))
    assert match_keys(conn, "JONES") == ["essays/jones.txt", "theses/jones.txt"]
    assert match_keys(conn, "*.md") == ["notes_1%.md"]
