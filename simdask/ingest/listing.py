"""Listing sources: document keys, source identities, folder walks and JSONL line ranges.

The key scheme (README "Keys are ..."; docs/design.md §2): a document found in a folder
source is keyed ``<folder name>/<path inside it>`` (``essays/smith.txt`` for
``essays/smith.txt`` given as the folder ``essays/``, ``./essays`` or ``/home/ann/essays``),
a file given directly by its name (``smith.txt``), a JSONL line by its ``id``. The folder's
name is that of the path as given (made absolute without resolving symlinks: ``.`` is the
name of the working directory), so keys do not depend on the working directory. A source is
identified by its resolved path (:func:`source_id`), which is what ``--delete-missing`` and
the key-ownership check compare.

File names that are not valid UTF-8 keep their bytes in keys written ``\\xNN``
(:func:`safe_text`): keys are always valid Unicode and can be stored and printed.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = [
    "FOLDER_SUFFIX",
    "folder_key",
    "jsonl_lines",
    "safe_text",
    "source_id",
    "walk_folder",
]

#: Keys naming a folder (an unreadable one, in a per-file error) end with this.
FOLDER_SUFFIX = "/"
_BLOCK = 1 << 22  # bytes scanned at a time when listing a JSONL file (4 MiB)
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 13, 32]] = True  # JSON whitespace


def safe_text(text: str) -> str:
    """``text`` as valid Unicode: undecodable bytes of a file name (kept by Python as
    surrogate escapes) are written ``\\xNN``, any other lone surrogate ``\\udNNN``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
        return raw.decode("utf-8", "backslashreplace")
    return text


def source_id(path: str | os.PathLike) -> str:
    """The identity of a source: its resolved absolute path (symlinks followed), as valid
    Unicode (:func:`safe_text`). ``essays``, ``./essays/`` and ``/home/ann/essays`` are the
    same source."""
    return safe_text(str(Path(path).resolve()))


def folder_key(path: str | os.PathLike) -> str:
    """The key prefix of a folder source's documents: the folder's name and ``/``
    (``essays/``); empty for the file system root."""
    name = Path(os.path.abspath(path)).name
    return safe_text(name) + FOLDER_SUFFIX if name else ""


def _listed(name: str, suffixes) -> bool:
    if name.startswith((".", "~$")):
        return False  # hidden files, Office lock files (~$x.docx, .~lock.x.odt#)
    return os.path.splitext(name)[1].lower() in suffixes


def walk_folder(root: Path, suffixes) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The documents of a folder and the folders that could not be listed.

    Returns ``(files, failed)``: ``files`` as ``(path, path inside root, posix)``, sorted by
    the parts of the relative path, recursively, without hidden files and folders and
    Office lock files; ``failed`` as ``(folder path inside root with a trailing /, reason)``
    for every folder (``root`` itself included: ``""``) that could not be read. Symlinked
    folders are not followed (symlinked files are read).
    """
    files: list[tuple[tuple[str, ...], str]] = []
    failed: list[tuple[str, str]] = []

    def onerror(e: OSError) -> None:
        where = Path(e.filename) if e.filename else root
        rel = where.relative_to(root).as_posix() if where != root else ""
        failed.append((rel + FOLDER_SUFFIX if rel else "", e.strerror or str(e)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel_dir = Path(dirpath).relative_to(root).parts
        for name in filenames:
            full = os.path.join(dirpath, name)
            if _listed(name, suffixes) and os.path.isfile(full):
                files.append(((*rel_dir, name), full))
    files.sort()
    return [(full, "/".join(parts)) for parts, full in files], sorted(failed)


def jsonl_lines(path: Path) -> list[tuple[int, int, int]]:
    """The lines of a JSONL file holding something: ``(start, end, line number)`` (byte
    offsets, end exclusive; line numbers from 1). Lines that are empty or only JSON
    whitespace are left out. Reads the file in blocks of 4 MiB; memory stays a few times
    that."""
    out: list[tuple[int, int, int]] = []
    line_no, line_start, last_text = 1, 0, -1
    pos = 0
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            arr = np.frombuffer(block, np.uint8)
            breaks = np.flatnonzero(arr == 10)
            # the position of the last non-whitespace byte at or before each byte
            idx = np.where(_SPACE[arr], -1, np.arange(pos, pos + len(arr), dtype=np.int64))
            last = np.maximum.accumulate(np.maximum(idx, last_text)) if len(arr) else idx
            if len(breaks):
                ends = pos + breaks
                starts = np.concatenate([[line_start], ends[:-1] + 1])
                keep = last[breaks] >= starts
                numbers = line_no + np.arange(len(breaks))
                out.extend(
                    zip(
                        starts[keep].tolist(),
                        ends[keep].tolist(),
                        numbers[keep].tolist(),
                        strict=True,
                    )
                )
                line_no += len(breaks)
                line_start = int(ends[-1]) + 1
            last_text = int(last[-1])
            pos += len(arr)
    if last_text >= line_start:
        out.append((line_start, pos, line_no))
    return out
