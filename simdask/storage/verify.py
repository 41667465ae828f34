"""Full verification of an index (``simdask check INDEX``) and the damage messages readers use.

:func:`check_index` reads everything once: the catalog (SQLite's ``integrity_check``, every
JSON value parsed, format, config, the checksum table against its own checksum), every file
recorded in the catalog's ``files`` table against its size and xxh3 (see
:mod:`simdask.storage.checksums`), the text packs documents point to, and the values of the
current shards and of the similarity table against their domains (doc IDs the catalog knows,
offsets that fit, chunk IDs in the shard's range, similarity within [0, 100] percent, shared
chunks at most those of either document). It never raises for damage; it reports it.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simdask.config import IndexConfig
from simdask.errors import DiskFullError, IndexDamagedError, IndexFormatError, IndexNotFoundError
from simdask.kernels.postings import ShardData
from simdask.kernels.segment_merge import live_mask
from simdask.storage import checksums
from simdask.storage.backends import index_shard_store
from simdask.storage.catalog import Catalog
from simdask.storage.diskspace import catalog_error
from simdask.storage.lists import list_problems, reserve_rows
from simdask.storage.quoted_chunks import quoted_problems, quoted_sizes
from simdask.storage.reads import stored_similarities
from simdask.storage.segments import current_tombstones, migrate_legacy
from simdask.storage.shards import ShardStore

__all__ = ["CheckReport", "Damage", "catalog_value_problems", "check_index"]


@dataclass(frozen=True)
class Damage:
    """One damaged thing: ``kind`` (``catalog``, ``missing``, ``size``, ``checksum``,
    ``shard``, ``similarity``), ``name`` (a file relative to the index folder, or a table) and
    what was expected and found."""

    kind: str
    name: str
    message: str


@dataclass
class CheckReport:
    """The result of :func:`check_index`: damage found, files verified (count, bytes hashed),
    and notes that are not damage (e.g. files written before checksums were recorded)."""

    path: Path
    damage: list[Damage] = field(default_factory=list)
    files_checked: int = 0
    bytes_hashed: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is damaged."""
        return not self.damage

    def add(self, kind: str, name: str, message: str) -> None:
        """Record one damaged thing."""
        self.damage.append(Damage(kind, name, message))


@dataclass(frozen=True)
class _Index:
    """What the check reads of an open index: its folder, catalog, shard store, settings."""

    path: Path
    catalog: Catalog
    store: ShardStore
    config: IndexConfig


def check_index(path: str | os.PathLike[str]) -> CheckReport:
    """Verify the whole index at ``path`` (reads every recorded file once; memory bounded by
    the largest shard). Raises :class:`IndexNotFoundError` when there is no catalog at all."""
    path = Path(path)
    cat_path = path / "catalog.sqlite"
    if not cat_path.is_file():
        raise IndexNotFoundError(f"no simdask index at {path}: expected {cat_path}")
    report = CheckReport(path)
    try:
        conn = sqlite3.connect(f"file:{cat_path}?mode=ro", uri=True)
        problems = [r[0] for r in conn.execute("PRAGMA integrity_check(20)").fetchall()]
        if problems != ["ok"]:
            report.add(
                "catalog", "catalog.sqlite", "SQLite integrity_check: " + "; ".join(problems)
            )
            return report
        for name, problem in catalog_value_problems(conn):
            report.add("catalog", name, problem)
        catalog = Catalog(cat_path)
        try:
            config = catalog.check_format()
            store = index_shard_store(path, catalog.meta("shard_store"), config.chunk_dtype)
            migrate_legacy(catalog, store)  # format 1 (one shard per range) -> segments
            idx = _Index(path, catalog, store, config)
            try:
                recorded: dict[str, tuple[int, str]] | None = checksums.recorded(conn)
            except IndexDamagedError as e:  # never taken for an index without checksums
                report.add("catalog", "catalog.sqlite:files", str(e))
                recorded = None
            _check_files(idx, recorded, report)
            _check_values(idx, report)
        finally:
            catalog.close()
    except sqlite3.DatabaseError as e:
        error = catalog_error(cat_path, e)
        if isinstance(error, DiskFullError):  # not damage: say what is wrong and stop
            raise error from None
        report.add("catalog", "catalog.sqlite", f"cannot be read: {e}")
    except IndexFormatError as e:
        report.add("catalog", "catalog.sqlite", f"cannot be read: {e}")
    return report


#: ``meta`` rows holding an integer, and those holding JSON (any other value that starts as
#: JSON does is parsed too)
_INT_META = ("format_version", "generation", "key_scheme", "list_floors", "skipped_chunks")
_JSON_META = ("config", "exclusions", "lsh")


def catalog_value_problems(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """``(where, what)`` of catalog values that do not parse: every run summary and JSON
    ``meta`` value as JSON, the integer ``meta`` values as integers (SQLite's own checks see
    pages and indexes, not a flipped byte inside a text value)."""
    out = []
    for name, value in conn.execute("SELECT name, value FROM meta ORDER BY name"):
        try:
            if name in _INT_META:
                int(value)
            elif name in _JSON_META or str(value)[:1] in "{[":
                json.loads(value)
        except (TypeError, ValueError) as e:
            out.append((f"catalog.sqlite:meta.{name}", f"expected {_form(name)}, found {e}"))
    bad = []
    for run_id, summary in conn.execute(
        "SELECT run_id, summary FROM runs WHERE summary IS NOT NULL ORDER BY run_id"
    ):
        try:
            json.loads(summary)
        except (TypeError, ValueError):
            bad.append(str(run_id))
    if bad:
        where = "catalog.sqlite:runs.summary"
        out.append((where, f"expected JSON, found none that parses in runs {', '.join(bad[:5])}"))
    return out


def _form(name: str) -> str:
    return "an integer" if name in _INT_META else "JSON"


def _check_files(
    idx: _Index, recorded: dict[str, tuple[int, str]] | None, report: CheckReport
) -> None:
    """The recorded files against their sizes and checksums (``recorded`` None: the checksum
    table is damaged, reported already: files are checked for presence only)."""
    if recorded is None:
        recorded = {}
    elif not recorded:
        report.notes.append(
            "no checksums recorded (index written before simdask recorded "
            "them): files checked for presence and values only"
        )
    for name, (size, xxh3) in sorted(recorded.items()):
        report.files_checked += 1
        got = _digest(idx, name)
        if got is None:
            report.add("missing", name, f"expected a file of {size} bytes, found none")
            continue
        found_size, found = got
        report.bytes_hashed += found_size
        if found_size != size:
            report.add("size", name, f"expected {size} bytes, found {found_size}")
        elif found != xxh3:
            report.add("checksum", name, f"expected xxh3 {xxh3}, found {found}")
    packs = {d.text_pack for d in idx.catalog.documents() if d.text_pack is not None}
    for pack in sorted(packs):
        name = checksums.pack_name(pack)
        if name not in recorded and not (idx.path / name).is_file():
            report.add("missing", name, "a text pack documents point to is not there")
    for shard, gen in _segments(idx):
        prefix = checksums.shard_prefix(gen, shard)
        if not idx.store.exists(gen, shard) and not any(n.startswith(prefix) for n in recorded):
            report.add("missing", prefix.rstrip("/"), "a current segment is not there")


def _digest(idx: _Index, name: str) -> tuple[int, str] | None:
    """``(size, xxh3)`` of the recorded file ``name`` (a shard file of a URL store read
    there), None when it is missing."""
    if name.startswith("shards/") and idx.store.local_root is None:
        try:
            return idx.store.file_digest(name.removeprefix("shards/"))
        except FileNotFoundError:
            return None
    p = idx.path / name
    return checksums.digest(p) if p.is_file() else None


def _check_values(idx: _Index, report: CheckReport) -> None:
    """Shard arrays and similarity rows against their domains."""
    docs = idx.catalog.documents()
    n_chunks = {d.doc_id: d.n_chunks for d in docs}
    known = np.zeros(max(n_chunks, default=-1) + 1, dtype=bool)
    known[list(n_chunks)] = True
    tomb = current_tombstones(idx.catalog)
    for shard, gen in _segments(idx):
        name = checksums.shard_prefix(gen, shard).rstrip("/")
        try:
            data = idx.store.read(gen, shard)
        except Exception as e:
            report.add("shard", name, f"cannot be read: {type(e).__name__}: {e}")
            continue
        for problem in _shard_problems(data, known, tomb):
            report.add("shard", name, problem)
        sample = idx.store.key_sample(gen, shard)
        if sample is not None and not np.array_equal(sample[1], data.chunk_keys[:: sample[0]]):
            report.add(
                "shard",
                name,
                f"key_sample differs from chunk_keys[::{sample[0]}] (the queries' index)",
            )
    _check_rows(idx, n_chunks, report)
    for problem in list_problems(idx.catalog, idx.config.top_k, idx.config.stored_depth):
        report.add("similarity", "catalog.sqlite:similarity+reserve", problem)


def _check_rows(idx: _Index, n_chunks: dict[int, int], report: CheckReport) -> None:
    """Every stored row within its domain: known doc IDs, 0..100 %, shared chunks at most
    those of either document; with ``exclude_quotes`` (counts in the checked document's
    direction, docs/term.md) at most ``|U(doc)|`` and ``|U(other)| + |Q(other)|``."""
    cfg = idx.config
    quoted = quoted_sizes(idx.catalog, cfg.hash_bits) if cfg.exclude_quotes else {}
    for problem in quoted_problems(idx.catalog, cfg.hash_bits, set(n_chunks), cfg.exclude_quotes):
        report.add("similarity", "catalog.sqlite:quoted_chunks", problem)
    rows = itertools.chain(stored_similarities(idx.catalog), reserve_rows(idx.catalog))
    bad = 0
    first = ""
    for doc, other, shared, sim in rows:
        na, nb = n_chunks.get(doc), n_chunks.get(other)
        if na is None or nb is None or not 0.0 <= sim <= 100.0:
            ok = False
        else:
            ok = shared <= min(na, nb + quoted.get(other, 0))
        if not ok:
            bad += 1
            first = first or f"doc {doc} other {other} shared {shared} similarity {sim}"
    if bad:
        whose = "the other's with its quotations" if cfg.exclude_quotes else "either document"
        report.add(
            "similarity",
            "catalog.sqlite:similarity+reserve",
            f"{bad} rows outside their domain (known doc IDs, 0..100 %, shared chunks at most "
            f"the document's and {whose}), e.g. {first}",
        )


def _segments(idx: _Index) -> list[tuple[int, int]]:
    """``(range, generation)`` of every committed segment."""
    return [(s, g) for s, segs in sorted(idx.catalog.segments().items()) for g, _, _ in segs]


def _shard_problems(data: ShardData, known: np.ndarray, tomb: np.ndarray) -> list[str]:
    """What is wrong with one segment's arrays (empty: nothing); postings that tombstones
    ``tomb`` hide may name doc IDs removed since."""
    out = []
    keys, offsets, ids = data.chunk_keys, data.offsets, data.doc_ids
    if len(offsets) != len(keys) + 1 or (len(offsets) and int(offsets[0]) != 0):
        out.append(f"expected {len(keys) + 1} offsets starting at 0, found {len(offsets)}")
    elif len(offsets) and int(offsets[-1]) != len(ids):
        out.append(f"offsets end at {int(offsets[-1])}, expected {len(ids)} postings")
    elif np.any(np.diff(offsets.astype(np.int64)) < 0):
        out.append("offsets decrease")
    if len(keys) and np.any(keys[1:] <= keys[:-1]):  # uint64 chunk IDs: no int64 diff
        out.append("chunk IDs not strictly increasing")
    if len(keys) and (int(keys[0]) < data.lo or int(keys[-1]) >= data.hi):
        out.append(f"chunk IDs outside the shard's range [{data.lo}, {data.hi})")
    ids64 = ids.astype(np.int64)
    unknown = (ids64 >= len(known)) | ~known[np.minimum(ids64, max(len(known) - 1, 0))]
    unknown &= live_mask(ids, data.generation, tomb)
    if len(ids) and (len(known) == 0 or np.any(unknown)):
        out.append(
            f"{int(np.count_nonzero(unknown)) if len(known) else len(ids)} postings name doc "
            "IDs the catalog does not know"
        )
    return out
