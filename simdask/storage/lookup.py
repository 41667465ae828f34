"""Finding a document by what a person typed: its key, a path, or the end of its key.

Keys are ``<folder name>/<path inside it>`` or a file's name (:mod:`simdask.ingest.listing`),
so a person who typed ``essays/smith.txt``, ``./essays/smith.txt``,
``/home/ann/essays/smith.txt`` or just ``smith.txt`` means the document keyed
``essays/smith.txt``. :func:`resolve_key` tries, in order: the exact key; the path as given
(its trailing parts, longest first, also of the resolved path); a unique end of a key at a
``/`` boundary. An unknown name raises :class:`~simdask.errors.DocumentNotFoundError` naming
the closest keys (difflib); an ambiguous end names the keys it fits.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
from pathlib import Path
from typing import Any

from simdask.errors import DocumentNotFoundError
from simdask.storage.sql import connection

__all__ = ["closest_keys", "keys_ending", "match_keys", "resolve_key"]

_MAX_NAMED = 5


def _exists(conn: Any, key: str) -> bool:
    return conn.execute("SELECT 1 FROM documents WHERE key = ?", (key,)).fetchone() is not None


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _path_suffixes(typed: str) -> list[str]:
    """Candidate keys of a path: its trailing parts, longest first, as typed and resolved."""
    out: list[str] = []
    for path in (Path(typed), Path(os.path.abspath(typed)), Path(typed).resolve()):
        parts = [p for p in path.parts if p not in ("/", "\\", ".")]
        for i in range(len(parts)):
            cand = "/".join(parts[i:])
            if cand and cand not in out:
                out.append(cand)
    return out


def _stem(key: str) -> str:
    """The last part of a key without its suffix (``essays/smith.txt`` -> ``smith``)."""
    return os.path.splitext(key.rsplit("/", 1)[-1])[0]


def closest_keys(conn: Any, typed: str, n: int = 3) -> list[str]:
    """The keys most like ``typed`` (difflib ratio over whole keys and over their last part)."""
    conn = connection(conn)
    keys = [r[0] for r in conn.execute("SELECT key FROM documents")]
    near = difflib.get_close_matches(typed, keys, n=n, cutoff=0.5)
    if len(near) < n:
        names: dict[str, list[str]] = {}
        for k in keys:
            names.setdefault(_stem(k), []).append(k)
        for name in difflib.get_close_matches(_stem(typed), list(names), n=n, cutoff=0.6):
            near.extend(k for k in names[name] if k not in near)
    return near[:n]


def resolve_key(conn: Any, typed: str, *, ends: bool = True) -> str:
    """The key of the document ``typed`` names (``conn``: the catalog, or its SQLite connection).

    Raises :class:`DocumentNotFoundError` when no document fits (naming the closest keys)
    or when ``typed`` is the end of several keys (naming them). ``ends=False``: only the
    exact key or the path as given (a caller that prefers a file on disk to a key's end).
    """
    conn = connection(conn)
    if _exists(conn, typed):
        return typed
    for cand in _path_suffixes(typed):
        if _exists(conn, cand):
            return cand
    if not ends:
        raise DocumentNotFoundError(f"no document with key {typed!r} in the index")
    tail = typed.replace(os.sep, "/")
    while tail.startswith("./"):
        tail = tail[2:]
    rows = conn.execute(
        "SELECT key FROM documents WHERE key LIKE ? ESCAPE '\\' ORDER BY key LIMIT ?",
        ("%/" + _like_escape(tail), _MAX_NAMED + 1),
    ).fetchall()
    if len(rows) == 1:
        return rows[0][0]
    if rows:
        named = ", ".join(repr(r[0]) for r in rows[:_MAX_NAMED])
        more = " and more" if len(rows) > _MAX_NAMED else ""
        raise DocumentNotFoundError(
            f"{typed!r} is the end of several keys: {named}{more}; give more of the key "
            "(`simdask list INDEX PATTERN` lists keys)"
        )
    near = closest_keys(conn, typed)
    hint = (
        f"; did you mean {', '.join(repr(k) for k in near)}?"
        if near
        else "; `simdask list INDEX` lists the keys"
    )
    raise DocumentNotFoundError(f"no document with key {typed!r} in the index{hint}")


def match_keys(conn: Any, pattern: str | None = None) -> list[str]:
    """Keys in order: all, those matching a shell pattern (``*``, ``?``, ``[...]``; against the
    whole key), or those containing ``pattern`` (case-insensitive) when it has no wildcard."""
    conn = connection(conn)
    keys = [r[0] for r in conn.execute("SELECT key FROM documents ORDER BY key")]
    if not pattern:
        return keys
    if any(c in pattern for c in "*?["):
        return [k for k in keys if fnmatch.fnmatchcase(k, pattern)]
    low = pattern.lower()
    return [k for k in keys if low in k.lower()]


def keys_ending(conn: Any, name: str, limit: int = 50) -> list[str]:
    """The keys that are ``name`` or end in ``/name`` (sorted, at most ``limit``)."""
    conn = connection(conn)
    rows = conn.execute(
        "SELECT key FROM documents WHERE key = ? OR key LIKE ? ESCAPE '\\' ORDER BY key LIMIT ?",
        (name, "%/" + _like_escape(name), limit),
    ).fetchall()
    return [r[0] for r in rows]
