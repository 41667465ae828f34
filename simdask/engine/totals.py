"""Aligning an index's candidate pairs on the Dask cluster, for the totals (issue 29 item 2).

A job (:class:`~simdask.storage.aligned_tables.AlignJob`) names two stored documents and where
their texts are. One task aligns a batch of jobs (:func:`align_job_batch`, a plain function:
each text read from the index's text packs, its excluded text found as the index excludes
it and the text prepared for the aligner once per batch, each pair aligned as
:func:`simdask.alignment.align` does with the smaller key as text A, the passages turned
into word intervals on both sides). With ``--exclude-quotes`` a quotation is left out of
its own document only: each side's passages are aligned with its own quotations excluded
and the other's matchable (:func:`~simdask.alignment.align_directed`; two alignments when
either text quotes, docs/term.md). Task names are deterministic
(:func:`~simdask.engine.context.task_key`: stage ``totals``, a tag hashed from the jobs and
the settings, the batch number); :func:`align_jobs` yields each batch's results
as it completes, so that a caller can commit per batch (``totals --compute``: resumable).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from simdask.alignment import AlignConfig, PreparedText, align_directed, prepare
from simdask.alignment.segment import word_spans
from simdask.cluster.workers import scheduler_workers
from simdask.engine import prepared_texts
from simdask.engine.context import task_key
from simdask.kernels.aligned_totals import excluded_text, word_intervals
from simdask.kernels.exclusions import quote_spans
from simdask.kernels.words import chunks
from simdask.progress import Callback
from simdask.storage.aligned_tables import AlignJob, PairAlignment
from simdask.storage.text_packs import TextStore

__all__ = [
    "MAX_BATCH_JOBS",
    "MAX_PAIR_CHARS",
    "AlignSettings",
    "align_job_batch",
    "align_jobs",
]

#: most pairs per task (fewer when there are few: about 4 tasks per worker thread)
MAX_BATCH_JOBS = 64
#: a pair whose texts together are longer (characters) is not aligned: the aligner holds
#: Python objects per sentence and word (a 50 MB pair takes minutes, as in the pair views);
#: its documents get no total (never a stale one) and ``simdask totals`` counts them
MAX_PAIR_CHARS = 2_000_000
#: a text a batch needs again at most this many batches later stays prepared in the worker
#: (:mod:`.prepared_texts`; docs/scale.md "Aligned totals: where the time goes", session 16)
KEEP_HORIZON = 300


@dataclass(frozen=True)
class AlignSettings:
    """What the aligner needs besides the jobs: where the text packs are (``texts``, a
    folder), the index's exclusions (``quotes``, ``bibliography``, the template texts and
    the chunk length ``k`` their windows are matched by) and the aligner's settings
    (``align``: :meth:`AlignConfig.to_dict`, None: defaults)."""

    texts: str
    quotes: bool = False
    bibliography: bool = False
    templates: tuple[str, ...] = ()
    k: int = 5
    align: dict[str, Any] | None = None
    _chunks: dict = field(default_factory=dict, compare=False, repr=False)

    def template_chunks(self) -> frozenset:
        """The true chunks (sorted word tuples) of the template texts, built once."""
        if "c" not in self._chunks:
            self._chunks["c"] = frozenset(c for t in self.templates for c in chunks(t, self.k))
        return self._chunks["c"]

    def tag(self) -> str:
        """JSON of what decides the results (not where the texts are)."""
        d = asdict(self)
        d.pop("_chunks")
        d.pop("texts")
        return json.dumps(d, sort_keys=True)


@dataclass(frozen=True)
class _Side:
    """A text as the batch needs it: ``own`` prepared for the aligner under all the index's
    exclusions; ``open`` prepared with its quotations read as matchable text (None: it has
    no quotation excluded); its word spans and length (characters)."""

    own: PreparedText
    open: PreparedText | None
    words: Any
    chars: int


def _prepared(text: str, s: AlignSettings, cfg: AlignConfig) -> _Side:
    """A text prepared once per batch, both ways when it quotes (:class:`_Side`)."""
    tpl = s.template_chunks() if s.templates else frozenset()
    excluded = excluded_text(text, s.quotes, s.bibliography, tpl, s.k)
    prepared = prepare(text, cfg, excluded)
    opened = None
    if s.quotes and quote_spans(text):
        kept = excluded_text(text, False, s.bibliography, tpl, s.k)
        opened = None if kept == excluded else prepare(text, cfg, kept)
    if any(end > start for start, end in excluded):
        return _Side(prepared, opened, word_spans(text), len(text))
    # nothing excluded: the aligner's words are all the text's words (found once)
    return _Side(prepared, opened, (prepared.seg.starts, prepared.seg.ends), len(text))


def align_job_batch(
    jobs: list[AlignJob],
    settings: AlignSettings,
    texts: dict[tuple[str, int, int], str] | None = None,
    later: frozenset = frozenset(),
) -> list[PairAlignment]:
    """Align one batch of jobs (a task); each stored text is read and prepared for the
    aligner (:func:`~simdask.alignment.prepare`) once per batch (from the index's text
    packs, or given in ``texts`` by location when the workers do not share the client's
    filesystem). Returns one :class:`PairAlignment` per job, in order (word intervals over
    the aligner's words, a word counting when it lies wholly inside a passage counted for
    its side: :func:`~simdask.alignment.align_directed`), leaving out the pairs longer than
    :data:`MAX_PAIR_CHARS`. ``later``: the locations of texts a later batch needs, kept
    prepared in this process (:mod:`.prepared_texts`; a text kept by an earlier batch is
    taken from there)."""
    store = TextStore(Path(settings.texts))
    cfg = AlignConfig() if settings.align is None else AlignConfig.from_dict(settings.align)
    cache: dict[tuple[str, int, int], _Side] = {}
    tag = settings.tag()

    def get(loc: tuple[str, int, int]) -> _Side:
        if loc not in cache:
            text = texts[loc] if texts is not None else store.read(*loc)
            got = prepared_texts.held(tag, text)
            if got is None:
                got = _prepared(text, settings, cfg)
                if loc in later:
                    prepared_texts.keep(tag, text, got)
            cache[loc] = got
        return cache[loc]

    out = []
    for j in jobs:
        one, two = (j.a_text, j.b_text) if j.first == j.a else (j.b_text, j.a_text)
        sa, sb = get(one), get(two)
        if sa.chars + sb.chars > MAX_PAIR_CHARS:
            continue
        for_a, for_b = align_directed(sa.own, sb.own, cfg, sa.open, sb.open)
        wa, wb = sa.words, sb.words
        ia = word_intervals(wa[0], wa[1], [(p.a_start, p.a_end) for p in for_a])
        ib = word_intervals(wb[0], wb[1], [(p.b_start, p.b_end) for p in for_b])
        na, nb = len(wa[0]), len(wb[0])
        if j.first == j.a:
            out.append(PairAlignment(j.a, j.b, na, nb, ia, ib))
        else:
            out.append(PairAlignment(j.a, j.b, nb, na, ib, ia))
    return out


def _tag(jobs: list[AlignJob], settings: AlignSettings) -> str:
    """8 hex digits naming the tasks: the same jobs and settings give the same names."""
    h = hashlib.blake2b(digest_size=4)
    h.update(settings.tag().encode())
    for j in jobs:
        h.update(f"{j.a}:{j.a_text}:{j.b}:{j.b_text}\n".encode())
    return h.hexdigest()


def align_jobs(
    jobs: list[AlignJob],
    settings: AlignSettings,
    *,
    client=None,
    batch_jobs: int | None = None,
    callback: Callback | None = None,
    ship_texts: bool = False,
) -> Iterator[list[PairAlignment]]:
    """Align ``jobs`` on the cluster of ``client`` (None: here, batch by batch), yielding
    each batch's results as it completes; ``ship_texts``: the client reads the texts and
    sends each batch its own (workers that do not share the client's filesystem). Progress:
    one stage ``align`` counting pairs."""
    cb = callback or Callback()
    if not jobs:
        return
    if batch_jobs is None:
        workers = scheduler_workers(client).values() if client is not None else ()
        threads = max(1, sum(w.get("nthreads", 1) for w in workers))
        batch_jobs = max(1, min(MAX_BATCH_JOBS, math.ceil(len(jobs) / (4 * threads))))
    batches = [jobs[i : i + batch_jobs] for i in range(0, len(jobs), batch_jobs)]
    texts = [[(j.a_text, j.b_text) for j in b] for b in batches]
    later = prepared_texts.wanted_later(texts, KEEP_HORIZON)
    cb.stage("align", len(jobs))
    try:
        if client is None:
            try:
                for batch, keep in zip(batches, later, strict=True):
                    yield align_job_batch(batch, settings, None, keep)
                    cb.advance(len(batch))
            finally:
                prepared_texts.forget()
            return
        yield from _on_cluster(client, batches, later, settings, cb, ship_texts)
    finally:
        cb.end_stage()


def _batch_texts(batch: list[AlignJob], store: TextStore) -> dict[tuple[str, int, int], str]:
    return {loc: store.read(*loc) for j in batch for loc in (j.a_text, j.b_text)}


def _on_cluster(client, batches, later, settings: AlignSettings, cb: Callback, ship_texts: bool):
    from distributed import as_completed  # dask: only where a cluster runs the tasks

    tag = _tag([j for b in batches for j in b], settings)
    store = TextStore(Path(settings.texts))
    futures = [
        client.submit(
            align_job_batch,
            b,
            settings,
            _batch_texts(b, store) if ship_texts else None,
            later[i],
            key=task_key("totals", tag, b=i),
            pure=False,
        )
        for i, b in enumerate(batches)
    ]
    size = {f.key: len(b) for f, b in zip(futures, batches, strict=True)}
    try:
        for fut in as_completed(futures, loop=client.loop):  # not the default client
            got = fut.result()
            cb.advance(size[fut.key])
            fut.release()
            yield got
    finally:
        for f in futures:
            f.release()
        # the workers' kept texts are this computation's only (a worker that left: nothing
        # to drop there)
        client.run(prepared_texts.forget, on_error="ignore")
