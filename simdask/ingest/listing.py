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

import mmap
import os
import stat
from pathlib import Path

import numpy as np

from simdask.kernels.keys import FOLDER_SUFFIX, safe_text

__all__ = [
    "FOLDER_SUFFIX",
    "folder_key",
    "jsonl_lines",
    "not_regular",
    "safe_text",
    "source_id",
    "walk_folder",
]

_BLOCK = 1 << 26  # bytes scanned at a time when listing a JSONL file (64 MiB)
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 13, 32]] = True  # JSON whitespace


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


#: files of the operating system, not of the user: never reported as unsupported
_SYSTEM_FILES = frozenset({"thumbs.db", "desktop.ini", "icon\r"})


def _hidden(name: str) -> bool:
    """Hidden files, Office lock files (``~$x.docx``, ``.~lock.x.odt#``), system files."""
    return name.startswith((".", "~$")) or name.lower() in _SYSTEM_FILES


def _listed(name: str, suffixes) -> bool:
    return not _hidden(name) and os.path.splitext(name)[1].lower() in suffixes


def not_regular(path: str) -> str | None:
    """What ``path`` is when it is not a regular file nor a folder (a FIFO, a device, a
    socket, a symbolic link to nothing), said for a message; None for a file or folder."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"an entry that vanished ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        if os.path.exists(path):
            return None
        return f"a symbolic link to nothing ({os.readlink(path)!r} does not exist)"
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return None
    if stat.S_ISFIFO(st.st_mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(st.st_mode):
        return "a socket"
    return "a device node"


#: the file that makes a folder a simdask index (its catalog): not walked as a source
INDEX_MARK = "catalog.sqlite"


def walk_folder(
    root: Path,
    suffixes,
    skipped: list[tuple[str, str]] | None = None,
    irregular: list[tuple[str, str, str]] | None = None,
    indexes: list[tuple[str, str]] | None = None,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The documents of a folder and the folders that could not be listed.

    Returns ``(files, failed)``: ``files`` as ``(path, path inside root, posix)``, sorted by
    the parts of the relative path, recursively, without hidden files and folders and
    Office lock files; ``failed`` as ``(folder path inside root with a trailing /, reason)``
    for every folder (``root`` itself included: ``""``) that could not be read. Symlinked
    folders are not followed (symlinked files are read). ``skipped``, when given, receives
    the other files (not hidden, suffix not in ``suffixes``) the same way as ``files``, so
    that a caller reports them instead of dropping them silently; ``irregular`` receives
    ``(path, path inside root, what it is)`` of the entries that are neither files nor
    folders (FIFOs, devices, sockets, dangling symlinks: :func:`not_regular`), never read.
    Folders holding a simdask index (a ``catalog.sqlite`` file: e.g. an index kept inside its
    own source folder, with its upload staging folder) are not walked; ``indexes``, when
    given, receives ``(path, path inside root)`` of each (``root`` itself: ``""``).
    """
    files: list[tuple[tuple[str, ...], str]] = []
    failed: list[tuple[str, str]] = []
    others: list[tuple[tuple[str, ...], str]] = []

    def onerror(e: OSError) -> None:
        where = Path(e.filename) if e.filename else root
        rel = where.relative_to(root).as_posix() if where != root else ""
        failed.append((rel + FOLDER_SUFFIX if rel else "", e.strerror or str(e)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        rel_dir = Path(dirpath).relative_to(root).parts
        if INDEX_MARK in filenames and indexes is not None:  # an index's own files
            indexes.append((dirpath, "/".join(rel_dir)))
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            full = os.path.join(dirpath, name)
            odd = None if _hidden(name) or irregular is None else not_regular(full)
            if odd is not None and irregular is not None:
                irregular.append((full, "/".join((*rel_dir, name)), odd))
            elif _listed(name, suffixes) and os.path.isfile(full):
                files.append(((*rel_dir, name), full))
            elif skipped is not None and not _hidden(name) and os.path.isfile(full):
                others.append(((*rel_dir, name), full))
    files.sort()
    if skipped is not None:
        skipped.extend((full, "/".join(parts)) for parts, full in sorted(others))
    return [(full, "/".join(parts)) for parts, full in files], sorted(failed)


def _blank(f, start: int, end: int) -> bool:
    """Whether bytes ``[start, end)`` of ``f`` are all JSON whitespace (read 1 MiB at a time)."""
    f.seek(start)
    while start < end:
        piece = f.read(min(1 << 20, end - start))
        if not piece or piece.strip(b" \t\r\n"):
            return not piece
        start += len(piece)
    return True


def jsonl_lines(path: Path, mapped: bool = True) -> list[tuple[int, int, int]]:
    """The lines of a JSONL file holding something: ``(start, end, line number)`` (byte
    offsets, end exclusive; line numbers from 1). Lines that are empty or only JSON
    whitespace are left out; only lines starting with whitespace are read again.

    The file is memory-mapped and its line breaks found one by one (memchr: ~0.2 s of CPU a
    GB of documents, a fifth of reading it in blocks); a file that cannot be mapped, or
    ``mapped=False``, is read 64 MiB at a time with one numpy pass a block."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if mapped and size:
            try:
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # e.g. a file system without mmap: read it
                m = None
            if m is not None:
                with m:
                    return _mapped_lines(f, m)
        return _block_lines(f)


def _mapped_lines(f, m: mmap.mmap) -> list[tuple[int, int, int]]:
    """:func:`jsonl_lines` of the open file ``f`` through its mapping ``m``."""
    cuts = []
    at = m.find(b"\n")
    while at >= 0:
        cuts.append(at)
        at = m.find(b"\n", at + 1)
    size = len(m)
    ends = np.array([*cuts, size], dtype=np.int64)
    starts = np.concatenate([[0], ends[:-1] + 1])
    if starts[-1] == size:  # the file ends with a line break: no line after it
        ends, starts = ends[:-1], starts[:-1]
    arr = np.frombuffer(m, np.uint8)
    firsts = arr[np.minimum(starts, size - 1)].copy()
    firsts[starts == ends] = 10  # an empty line
    del arr  # the mapping must have no view left when it is closed
    return _kept(f, starts, ends, firsts)


def _kept(f, starts: np.ndarray, cuts: np.ndarray, firsts: np.ndarray):
    """The lines ``[starts, cuts)`` (first bytes ``firsts``) holding more than whitespace."""
    keep = ~_SPACE[firsts]
    for i in np.flatnonzero(~keep).tolist():
        keep[i] = not _blank(f, int(starts[i]), int(cuts[i]))
    numbers = np.arange(1, len(starts) + 1)
    return list(
        zip(starts[keep].tolist(), cuts[keep].tolist(), numbers[keep].tolist(), strict=True)
    )


def _block_lines(f) -> list[tuple[int, int, int]]:
    """:func:`jsonl_lines` of the open file ``f``, read :data:`_BLOCK` bytes at a time: one
    numpy pass for the line breaks and the first byte of every line."""
    ends, firsts = [], []
    size, carry = 0, True  # carry: the next line starts at this block's first byte
    while block := f.read(_BLOCK):
        arr = np.frombuffer(block, np.uint8)
        if carry:
            firsts.append(arr[:1])
        breaks = np.flatnonzero(arr == 10)
        ends.append(breaks + size)
        firsts.append(arr[breaks[breaks + 1 < len(arr)] + 1])
        carry = len(breaks) > 0 and int(breaks[-1]) == len(arr) - 1
        size += len(arr)
    if size == 0:
        return []
    cuts = np.concatenate([*ends, np.array([size], dtype=np.int64)]).astype(np.int64)
    starts = np.concatenate([[0], cuts[:-1] + 1])
    if starts[-1] == size:  # the file ends with a line break: no line after it
        cuts, starts = cuts[:-1], starts[:-1]
    return _kept(f, starts, cuts, np.concatenate(firsts))
