"""``simdask repeats``: every word n-gram occurring at least ``min_count`` times, with locations.

The location-based two-pass method of paper 004 (Huston, Moffat & Croft) as Dask tasks
(:mod:`simdask.engine.repeats_tasks`), stage after stage:

1. per batch of documents: a (hash, location) record for every n-gram, split by hash range
   into temporary files (hash of ``hash_bits`` >= 56 bits, 16 bytes a record);
2. per hash range: sort, keep the hashes seen ``min_count`` times, their locations back in
   document order, split by batch;
3. per batch: read the documents again and take the true n-gram texts at those locations only;
4. per hash range: group the texts exactly (byte comparison), so a hash collision never makes
   a false repeat; write the rows.

The one-pass baseline (``method="one-pass"``) writes every n-gram with its text in step 1 and
groups in step 4. Memory per task is bounded by ``batch_bytes`` (text per batch) and
``range_bytes`` (records per range); temporary disk holds at most two stages' files.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import os
import shutil
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simdask.engine.context import task_key
from simdask.engine.repeats_config import METHODS, RepeatsConfig
from simdask.engine.repeats_tasks import (
    IndexText,
    Plan,
    group_task,
    onepass_task,
    pass1_task,
    pass2_task,
    select_task,
)
from simdask.engine.stage import drive
from simdask.errors import ConfigError
from simdask.ingest.sources import SourceItem, list_items
from simdask.kernels.ngrams import RECORD
from simdask.progress import Callback
from simdask.storage.catalog import Catalog
from simdask.storage.create import CATALOG_NAME

__all__ = ["METHODS", "RepeatsConfig", "RepeatsResult", "find_repeats", "list_documents"]

_BYTES_PER_WORD = 6  # estimate of text bytes per word, to size the hash ranges


@dataclass
class RepeatsResult:
    """What a run did: ``rows`` written, ``documents`` read, ``ngrams`` seen, ``candidates``
    (two-pass: locations kept after pass 1), read ``errors`` ``(document, kind, message)``,
    ``seconds`` per stage, ``temp_written`` bytes per stage (the group stage's are the result
    rows) and ``peak_temp_bytes`` (the most bytes the temporary folder held, result rows not
    counted, sampled every 50 ms)."""

    rows: int = 0
    documents: int = 0
    ngrams: int = 0
    candidates: int = 0
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    temp_written: dict[str, int] = field(default_factory=dict)
    peak_temp_bytes: int = 0


def list_documents(sources: list[str | os.PathLike]) -> list[SourceItem | IndexText]:
    """The documents of ``sources``: an index folder gives its stored texts, anything else is a
    source as for ``update`` (file, folder, ``.jsonl``)."""
    refs: list[SourceItem | IndexText] = []
    for src in sources:
        catalog_path = Path(src) / CATALOG_NAME
        if not catalog_path.is_file():  # not an index: a source
            refs.extend(list_items([src]))
            continue
        catalog = Catalog(catalog_path)
        try:
            catalog.check_format()
            root = str(Path(src) / "texts")
            refs.extend(
                IndexText(d.key, root, d.text_pack, d.text_offset, d.text_length)
                for d in catalog.documents()
                if d.text_pack is not None and d.text_offset is not None
                if d.text_length is not None
            )
        finally:
            catalog.close()
    return refs


def _size(ref: SourceItem | IndexText) -> int:
    if isinstance(ref, IndexText):
        return 4 * ref.length  # compressed; text is some times larger
    if ref.end >= 0:
        return ref.end - ref.start
    try:
        return os.path.getsize(ref.path)
    except OSError:
        return 0


def _batches(refs: list, batch_bytes: int) -> list[int]:
    """First document of every batch (about ``batch_bytes`` of text each), then the total."""
    bases, acc = [0], 0
    for i, ref in enumerate(refs):
        if acc >= batch_bytes:
            bases.append(i)
            acc = 0
        acc += _size(ref)
    return [*bases, len(refs)] if refs else [0]


class _DiskWatcher:
    """Samples the bytes under a folder every ``interval`` seconds; ``peak`` is the most seen.

    The result rows (``rows/``, the output itself, the same for every method) are not counted.
    """

    def __init__(self, folder: str, interval: float = 0.05):
        self.folder, self.interval, self.peak = folder, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> int:
        """Bytes under the folder now (files vanishing meanwhile are skipped)."""
        total = 0
        for root, dirs, files in os.walk(self.folder):
            if root == self.folder and "rows" in dirs:
                dirs.remove("rows")
            for f in files:
                with contextlib.suppress(OSError):
                    total += os.stat(os.path.join(root, f)).st_size
        self.peak = max(self.peak, total)
        return total

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> _DiskWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@dataclass(frozen=True)
class _Host:
    """A ``repeats`` run as :func:`~.stage.drive` sees it (it belongs to no index): the
    client, progress and the run's part of every task name (:func:`~.context.task_key`)."""

    client: Any
    cb: Callback
    tag: str


class _PassStage:
    """One pass as a stage (the :class:`~.stage.Stage` contract): ``fn(*calls[i])`` for every
    unit ``i``, all submitted at once (each task's memory is bounded by ``batch_bytes`` or
    ``range_bytes``), task names ``simdask-r<name>-<tag>-bNNNNNN`` per batch of documents or
    ``-sNNNN`` per hash range (``per``); :attr:`results` in unit order once driven."""

    def __init__(self, host: _Host, name: str, fn, calls: list[tuple], per: str):
        self.host, self.name, self.fn, self.calls, self.per = host, name, fn, calls, per
        self.size = self.limit = len(calls)
        self.results: list[Any] = [None] * len(calls)

    def submit(self, i: int):
        b, s = (i, None) if self.per == "b" else (None, i)
        key = task_key(f"r{self.name}", self.host.tag, b=b, s=s)
        return self.host.client.submit(self.fn, *self.calls[i], key=key)

    def collect(self, i: int, future) -> None:
        self.results[i] = future.result()


def _stage(host: _Host, res: RepeatsResult, name: str, fn, calls: list[tuple], per: str):
    """Run ``fn(*args)`` for every ``args`` in ``calls`` as one stage (:class:`_PassStage`);
    their results in order. Records its seconds and temporary bytes written in ``res``."""
    t0 = time.perf_counter()
    stage = _PassStage(host, name, fn, calls, per)
    drive(host, stage)
    out = stage.results
    res.seconds[name] = time.perf_counter() - t0
    res.temp_written[name] = sum(int(o["bytes"]) for o in out)
    return out


def _range_bits(refs: list, config: RepeatsConfig, bits: int) -> int:
    records = sum(_size(r) for r in refs) / _BYTES_PER_WORD
    want = records * RECORD.itemsize / config.range_bytes
    return max(0, min(12, bits, math.ceil(math.log2(want)) if want > 1 else 0))


def find_repeats(
    sources: list[str | os.PathLike],
    out: str | os.PathLike,
    config: RepeatsConfig,
    *,
    client,
    tmp: str | os.PathLike | None = None,
    callback=None,
    test_hash_bits: int | None = None,
) -> RepeatsResult:
    """Write every n-gram of ``sources`` occurring ``config.min_count`` times to ``out``.

    ``out`` ends in ``.jsonl`` (one row a line: ``ngram``, ``count``, ``documents``,
    ``locations`` as ``[key, word offset]`` in document order) or ``.parquet`` (needs pyarrow;
    ``locations`` as a list of ``{key, offset}``). Rows are ordered by hash range, then text.
    ``tmp``: folder for the temporary files (default: the system's). ``client``: a
    ``distributed.Client``. ``test_hash_bits``: tests only, a narrower hash to force collisions.
    """
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in (".jsonl", ".parquet"):
        raise ConfigError(f"output file must end in .jsonl or .parquet, got {out.name!r}")
    if suffix == ".parquet":
        _need_pyarrow()
    bits = config.hash_bits if test_hash_bits is None else test_hash_bits
    if not 1 <= bits <= 64:
        raise ConfigError(f"test_hash_bits must be in 1..64, got {bits}")
    refs = list_documents(sources)
    bases = _batches(refs, config.batch_bytes)
    res = RepeatsResult()
    work = tempfile.mkdtemp(prefix="simdask-repeats-", dir=tmp)
    plan = Plan(
        config.n, config.min_count, bits, _range_bits(refs, config, bits), config.seed, work
    )
    try:
        with _DiskWatcher(work) as watch:
            _run_stages(client, refs, bases, plan, config.method, res, callback)
            watch.sample()
        res.peak_temp_bytes = watch.peak
        _write_output(Path(work, "rows"), plan.n_ranges, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res


def _run_stages(client, refs, bases, plan: Plan, method: str, res: RepeatsResult, callback):
    """The stages of one run (module docstring), stage after stage; fills ``res``."""
    host = _Host(client, callback or Callback(), uuid.uuid4().hex[:8])
    run = functools.partial(_stage, host, res)
    batches = [(b, refs[lo:hi], lo) for b, (lo, hi) in enumerate(itertools.pairwise(bases))]
    first = pass1_task if method == "two-pass" else onepass_task
    p1 = run("pass1", first, [(*a, plan) for a in batches], "b")
    keys: list[str | None] = [None] * len(refs)
    for (_, _, lo), o in zip(batches, p1, strict=True):
        keys[lo : lo + len(o["keys"])] = o["keys"]
        res.errors.extend(tuple(e) for e in o["errors"])
    res.documents = sum(len(o["keys"]) for o in p1)
    res.ngrams = sum(o["records"] for o in p1)
    Path(plan.tmp, "keys.json").write_text(json.dumps(keys), "utf-8")
    ranges = range(plan.n_ranges)
    stage = "op"
    if method == "two-pass":
        selected = run("select", select_task, [(r, bases, plan) for r in ranges], "s")
        res.candidates = sum(o["selected"] for o in selected)
        calls = [(*a, o["keys"], plan) for a, o in zip(batches, p1, strict=True)]
        run("pass2", pass2_task, calls, "b")
        stage = "p2"
    rows = run("group", group_task, [(r, stage, plan) for r in ranges], "s")
    res.rows = sum(o["rows"] for o in rows)


def _need_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError as e:
        raise ConfigError(
            "a .parquet output needs pyarrow (pip install 'simdask[parquet]'); "
            "use a .jsonl output or install it"
        ) from e


def _write_output(rows_dir: Path, n_ranges: int, out: Path) -> None:
    """The range row files, in range order, into ``out`` atomically."""
    parts = [rows_dir / f"r{r:04d}.jsonl" for r in range(n_ranges)]
    parts = [p for p in parts if p.exists()]
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
    try:
        if out.suffix.lower() == ".parquet":
            _write_parquet(parts, tmp)
        else:
            with open(tmp, "wb") as f:
                for p in parts:
                    with open(p, "rb") as src:
                        shutil.copyfileobj(src, f)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_parquet(parts: list[Path], path: Path) -> None:
    import pyarrow as pa  # optional (parquet extra)
    import pyarrow.parquet as pq  # optional (parquet extra)

    loc = pa.list_(pa.struct([("key", pa.string()), ("offset", pa.int64())]))
    schema = pa.schema(
        [("ngram", pa.string()), ("count", pa.int64()), ("documents", pa.int64()),
         ("locations", loc)]
    )  # fmt: skip
    with pq.ParquetWriter(path, schema) as w:
        for p in parts:
            rows = [json.loads(line) for line in p.read_text("utf-8").splitlines()]
            for row in rows:
                row["locations"] = [{"key": k, "offset": o} for k, o in row["locations"]]
            if rows:
                w.write_table(pa.Table.from_pylist(rows, schema=schema))
