"""``simdask align PAIRS_FILE``: many pairs of files aligned on a Dask cluster (issue 28).

A pairs file has one pair a line, two file paths separated by a tab (relative paths are
relative to the pairs file's folder; blank lines are skipped). The pairs are cut into
batches; one task per batch (:func:`align_batch`, a plain function: it reads the batch's
files and prepares each text for the aligner once, then aligns each pair as
:func:`simdask.alignment.align` does) runs on the workers, which read the files at the
client's paths (one machine, or a shared filesystem).
Task names are deterministic (:func:`~simdask.engine.context.task_key`: stage ``align``, a
tag hashed from the pairs and the aligner's settings, the batch number). The results are
written in the order of the pairs file, as the batches complete.

Offsets are code points into each file's text as read by :func:`read_pair_text` (the text
simdask indexes, :func:`~simdask.ingest.sources.read_document`): for a plain-text file its
decoded characters, unchanged (line ends included; a byte order mark is not a character of
the text; valid UTF-8 with a stray NUL or control characters is text here), for other
formats the extracted text (``simdask text`` prints it).
A file that cannot be read gives its pair a line with ``"error"`` (the file's name and the
reason) and the run goes on.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from simdask.alignment import AlignConfig, PreparedText, align_prepared, prepare
from simdask.cluster.workers import scheduler_workers
from simdask.engine.context import task_key
from simdask.errors import ConfigError, ExtractionError
from simdask.ingest.extract import format_of
from simdask.ingest.sources import (
    SourceItem,
    fetch_item,
    parse_item,
    read_document,
    safe_text,
    source_id,
)
from simdask.progress import Callback

__all__ = [
    "MAX_BATCH_PAIRS",
    "AlignSummary",
    "PairPaths",
    "align_batch",
    "align_pairs",
    "read_pair_text",
    "read_pairs_file",
    "write_alignments",
]

#: most pairs per task (fewer when there are few pairs: about 4 tasks per worker thread)
MAX_BATCH_PAIRS = 64


@dataclass(frozen=True)
class PairPaths:
    """One line of a pairs file: the two paths as written (``a``, ``b``: what the output
    names) and where they are (``a_path``, ``b_path``: absolute)."""

    a: str
    b: str
    a_path: str
    b_path: str


@dataclass
class AlignSummary:
    """What a run did: ``pairs`` aligned or failed, ``passages`` found, and ``errors``: one
    ``(a, b, message)`` per pair whose files could not be read."""

    pairs: int = 0
    passages: int = 0
    errors: list[tuple[str, str, str]] = field(default_factory=list)


def read_pairs_file(path: str | os.PathLike) -> list[PairPaths]:
    """The pairs of a pairs file (module docstring). Raises
    :class:`~simdask.errors.ConfigError` naming the line when a line does not hold two
    tab-separated paths, and when the file cannot be read."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"expected a readable UTF-8 pairs file at {p}, found: {e}") from e
    base = p.resolve().parent
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not all(parts):
            raise ConfigError(
                f"{p} line {n}: expected two file paths separated by a tab, "
                f"found {len(parts)} field{'' if len(parts) == 1 else 's'}: {line[:80]!r}"
            )
        a, b = parts
        out.append(PairPaths(a, b, str(base / a), str(base / b)))
    return out


def read_pair_text(path: str) -> str:
    """The text of one file of a pair, as offsets into it must count, read once and within
    the usual size limit: a plain-text file of valid UTF-8 with at most 1 % NUL bytes is its
    decoded characters, unchanged (a byte order mark is not a character of it; stray NUL or
    control characters, as a few files of the PAN corpus have, are kept, where indexing drops
    them); any other file is extracted as :func:`~simdask.ingest.sources.read_document`
    extracts it. Raises :class:`~simdask.errors.ExtractionError`."""
    p = Path(path)
    if not p.is_file():
        return read_document(p)[1]  # raises: missing, naming what is there instead
    item = SourceItem(source_id(p), str(p), safe_text(p.name))
    data = fetch_item(item)
    if format_of(data, p.name) == "plain" and data.count(0) <= len(data) // 100:
        try:
            return data.removeprefix(codecs.BOM_UTF8).decode("utf-8")
        except UnicodeDecodeError:
            pass  # another encoding: extraction detects it
    return parse_item(item, data)[1] or ""


def _read(path: str, shown: str, cache: dict[str, str | ExtractionError]) -> str | None:
    """The text of ``path`` (cached per batch), or None with the reason in ``cache``."""
    if path not in cache:
        try:
            cache[path] = read_pair_text(path)
        except ExtractionError as e:
            cache[path] = e
    got = cache[path]
    return got if isinstance(got, str) else None


def _reason(shown: str, e: ExtractionError) -> str:
    """``"a.txt: missing: expected a document file at ..."``: the name as written, the kind
    and the reason."""
    return f"{shown}: {e.kind}: {e.message}"


def align_batch(pairs: list[PairPaths], config: dict[str, Any] | None = None) -> list[dict]:
    """Align one batch of pairs (a task): per pair ``{"a", "b", "passages": [...]}`` with
    each passage's ``a_start, a_end, b_start, b_end, kind, score``, or ``{"a", "b",
    "error"}`` when a file cannot be read (its name, kind and reason). ``config``: the
    aligner's settings as :meth:`AlignConfig.to_dict` (None: defaults). Each file is read
    and prepared for the aligner (:func:`~simdask.alignment.prepare`) once per batch."""
    cfg = AlignConfig() if config is None else AlignConfig.from_dict(config)
    cache: dict[str, str | ExtractionError] = {}
    prepared: dict[str, PreparedText] = {}

    def ready(path: str, text: str) -> PreparedText:
        if path not in prepared:
            prepared[path] = prepare(text, cfg)
        return prepared[path]

    out: list[dict[str, Any]] = []
    for pr in pairs:
        ta = _read(pr.a_path, pr.a, cache)
        tb = _read(pr.b_path, pr.b, cache)
        if ta is None or tb is None:
            bad = [
                _reason(shown, err)
                for shown, path, t in ((pr.a, pr.a_path, ta), (pr.b, pr.b_path, tb))
                if t is None and isinstance(err := cache[path], ExtractionError)
            ]
            out.append({"a": pr.a, "b": pr.b, "error": "; ".join(dict.fromkeys(bad))})
            continue
        found = align_prepared(ready(pr.a_path, ta), ready(pr.b_path, tb), cfg)
        out.append({"a": pr.a, "b": pr.b, "passages": [p.to_dict() for p in found]})
    return out


def _tag(pairs: list[PairPaths], config: dict | None) -> str:
    """8 hex digits naming a run's tasks: the same pairs and settings give the same names."""
    h = hashlib.blake2b(digest_size=4)
    h.update(json.dumps(config, sort_keys=True).encode())
    for pr in pairs:
        h.update(f"{pr.a_path}\t{pr.b_path}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _batch_size(n: int, threads: int) -> int:
    return max(1, min(MAX_BATCH_PAIRS, math.ceil(n / max(1, 4 * threads))))


def align_pairs(
    pairs: list[PairPaths],
    *,
    client,
    config: AlignConfig | None = None,
    batch_pairs: int | None = None,
    callback: Callback | None = None,
) -> Iterator[dict]:
    """Align ``pairs`` on the cluster of ``client`` (a ``distributed.Client``), in batches
    of ``batch_pairs`` (None: about four tasks per worker thread, at most
    :data:`MAX_BATCH_PAIRS`); yields one result per pair (:func:`align_batch`), in the
    order of ``pairs``, as the batches complete. Progress: one stage ``align`` counting
    pairs."""
    from distributed import as_completed  # dask: only where a cluster runs the tasks

    if batch_pairs is not None and batch_pairs < 1:
        raise ConfigError(f"batch_pairs must be at least 1, found {batch_pairs}")
    cb = callback or Callback()
    cfg = None if config is None else config.to_dict()
    if batch_pairs is None:
        threads = sum(w.get("nthreads", 1) for w in scheduler_workers(client).values())
        batch_pairs = _batch_size(len(pairs), threads)
    tag = _tag(pairs, cfg)
    batches = [pairs[i : i + batch_pairs] for i in range(0, len(pairs), batch_pairs)]
    futures = [
        client.submit(align_batch, batch, cfg, key=task_key("align", tag, b=i), pure=False)
        for i, batch in enumerate(batches)
    ]
    order = {f.key: i for i, f in enumerate(futures)}
    done: dict[int, list[dict]] = {}
    nxt = 0
    cb.stage("align", len(pairs))
    try:
        for fut in as_completed(futures, loop=client.loop):  # not the default client
            i = order[fut.key]
            done[i] = fut.result()
            cb.advance(len(batches[i]))
            fut.release()
            while nxt in done:
                yield from done.pop(nxt)
                nxt += 1
    finally:
        cb.end_stage()
        for f in futures:
            f.release()


def write_alignments(results: Iterator[dict], out: IO[str]) -> AlignSummary:
    """Write ``results`` (:func:`align_pairs`) to ``out`` as JSONL, one line per pair,
    flushed per line; returns the counts and the pairs that failed."""
    summary = AlignSummary()
    for r in results:
        out.write(json.dumps(r, ensure_ascii=False) + "\n")
        out.flush()
        summary.pairs += 1
        if "error" in r:
            summary.errors.append((r["a"], r["b"], r["error"]))
        else:
            summary.passages += len(r["passages"])
    return summary
