"""Garbage collection of an index (part of the writer, :mod:`simdask.writer`): delete the
segments, LSH generations, text packs and work files no committed state refers to, and
give the catalog's free pages back when that pays (:mod:`simdask.storage.vacuum`).

Only what simdask names as its own is removed (``gen-NNNNNN/shard-NNNN`` segments and
``gen-NNNNNN`` generations, ``rNNNNNN-bNNNNNN.pack`` packs and the temporary files of packs a
killed run was writing, the ``gen-NNNNNN/.tmp-shard-NNNN-XXXXXXXX`` folders of segment writes
never put in place (a worker killed while writing, an attempt that lost to a retry: counted
with ``temp_files``), ``work/run-NNNNNN`` and probe files; ``work/`` itself only if then
empty). The failure point ``gc.<kind>`` is hit before each removal (not before the
unpublished segment folders: no committed state can refer to them).
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from simdask import failpoints
from simdask.read.segment_reads import segment_set
from simdask.storage.kept_maps import kept_maps
from simdask.storage.lsh_store import LshManifest, LshStore, lsh_root
from simdask.storage.segments import remove_segment, stored_segments
from simdask.storage.vacuum import FREE_MIN, FREE_SHARE, vacuum_if_it_pays

__all__ = ["collect_garbage"]

_log = logging.getLogger(__name__)

# what simdask itself puts in work/
_OWN_WORK = re.compile(
    r"run-\d{6,}|probe-[0-9a-f]{12}(\.txt|-[0-9a-f]{8}\.reply)|rechunk-[0-9a-f]{12}\.jsonl"
)


def collect_garbage(
    index, keep: Iterable[tuple[int, int]] = (), vacuum_all: bool = False
) -> dict[str, int]:
    """Delete what no committed state of ``index`` refers to (call with the writer lock).

    Segments ``(range, generation)`` in ``keep`` (those committed before the last commit) are
    kept one run longer, for readers that opened them; so are the LSH generations the
    previous LSH manifest read. The catalog's free pages are given back when that pays
    (:func:`~simdask.storage.vacuum.vacuum_if_it_pays`), with ``vacuum_all`` (an explicit
    ``compact``) whenever there are any and room for the copy. Returns how many of each kind
    were removed, and ``catalog_bytes_freed``.
    """
    live = segment_set(index.catalog.segments()) | set(keep)
    gone = [(g, s) for g, s in stored_segments(index.store) if (s, g) not in live]
    for g, s in gone:
        failpoints.hit("gc.generation")
        remove_segment(index.store, g, s)
    if gone:  # maps of removed segments kept in this process would hold their files open
        kept_maps().prune()
    live_gens = {g for _, g in live}
    stale = [g for g in index.store.generations() if g not in live_gens]
    for g in stale:  # e.g. an interrupted run's temporary files
        failpoints.hit("gc.generation")
        index.store.remove_generation(g)
    lsh = LshStore(lsh_root(index.path))
    dead_lsh = lsh.garbage(LshManifest.from_json(index.catalog.meta("lsh")))
    for g in dead_lsh:
        failpoints.hit("gc.lsh")
        lsh.remove_generation(g)
    dead = index.catalog.unused_packs(index.texts.packs())
    for p in dead:
        failpoints.hit("gc.pack")
        index.texts.remove(p)
    temps = index.texts.temp_files()  # of packs a killed run was writing
    for t in temps:
        failpoints.hit("gc.pack")
        index.texts.remove(t)
    unpublished = index.store.remove_unpublished()  # segments a killed worker was writing
    work = _clear_work(index.path / "work")
    share, least = (0.0, 1) if vacuum_all else (FREE_SHARE, FREE_MIN)
    freed = vacuum_if_it_pays(index.catalog, index.catalog.path, share, least)
    if freed:  # said with -v (simdask's INFO messages)
        _log.info(
            "catalog %s: %.1f MiB of free pages given back", index.catalog.path, freed / 2**20
        )
    return {
        "segments": len(gone),
        "generations": len(stale),
        "lsh_generations": len(dead_lsh),
        "packs": len(dead),
        "temp_files": len(temps) + unpublished,
        "work": work,
        "catalog_bytes_freed": freed,
    }


def _clear_work(work: Path) -> int:
    """Remove simdask's own entries of ``work/``, then the folder if it is empty; returns how
    many entries were removed."""
    if not work.is_dir():
        return 0
    own = sorted(p for p in work.iterdir() if _OWN_WORK.fullmatch(p.name))
    for p in own:
        failpoints.hit("gc.work")
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    failpoints.hit("gc.work")
    with contextlib.suppress(OSError):  # not empty: someone else's files stay
        work.rmdir()
    return len(own)
