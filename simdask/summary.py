"""What the API returns: the summary of a run (with its statistics) and the matches of a
query."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the engine's measurement types (no import of dask at run time)
    from simdask.engine.sizing import TaskSizing
    from simdask.engine.stage_clock import BusyProfile

__all__ = [
    "CacheCounts",
    "ExclusionChange",
    "HeavyStats",
    "QueryMatch",
    "RunStats",
    "RunSummary",
    "run_summary",
]


@dataclass(frozen=True)
class QueryMatch:
    """An indexed document sharing chunks with a query text.

    ``similarity``: percent of the query's chunks found in the document (``shared`` of
    ``query_chunks``); ``reverse_similarity``: percent of the document's chunks found in the
    query (``reverse_shared`` of ``doc_chunks``; the same count as ``shared`` unless the index
    keeps quotations out of the checked document only, docs/term.md).
    """

    key: str
    similarity: float
    reverse_similarity: float
    shared: int
    query_chunks: int
    doc_chunks: int
    reverse_shared: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class CacheCounts:
    """The worker-side shard caches during one run: lookups that found the shard (``hits``),
    that did not (``misses``), and the bytes held afterwards (all workers)."""

    hits: int
    misses: int
    bytes: int

    def to_dict(self) -> dict[str, int]:
        """JSON-ready form."""
        return {"hits": self.hits, "misses": self.misses, "bytes": self.bytes}


@dataclass
class HeavyStats:
    """Heavy chunks in one run (:mod:`simdask.kernels.heavy`; issue 13).

    ``mode``: the similarity mode used (``informative`` or ``exact``); ``cutoff``: chunks held
    by more than this many documents were heavy (None: none). ``auto``: when the index's
    setting is ``auto``, why this mode (:func:`~simdask.kernels.heavy.auto_mode`):
    ``open_docs`` x ``heavy_docs`` = ``pairs`` (query, document) pairs of the heavy-only search
    against the ``budget``, and ``kept`` (an incremental run keeps what the last full build
    chose; its numbers are that build's). A full build also measures:
    ``heavy_chunks`` and their ``heavy_postings``; ``pair_work_all`` / ``pair_work_light``:
    pair counts all-pairs counting would emit through every counted chunk / through the light
    ones, and ``heavy_work_share`` (fraction, 0..1) the part the heavy chunks were;
    ``heavy_docs``: documents holding a heavy chunk; ``heavy_only_docs``: documents whose heavy
    chunks alone could give a row, ``heavy_only_searched`` whether they were searched
    (``exact``) and ``heavy_only_docs_searched`` how many still needed it; ``seconds`` per
    step (``heavy_sets``, ``light_pairs``, ``heavy_only``). None: not measured in this run.
    ``light_postings`` / ``light_lists``: postings and lists of the chunks counted as light
    (``2 <= df <=`` the cutoff and ``max_df``), what the all-pairs views hold; ``view_windows``:
    document windows the views were built in (:func:`~simdask.engine.sizing.view_windows`).
    ``bounded``: the build's light work was over ``light_budget`` pair emissions per posting,
    so ``cutoff`` was lowered to fit it and only pairs whose light chunks alone reach the
    threshold were counted (:mod:`simdask.kernels.heavy_bounded`); incremental runs keep it
    until the index has grown or shrunk by :data:`~simdask.kernels.heavy_bounded.REBOUND_GROWTH`
    from ``bound_docs`` (the documents, as doc-ID space, when the cutoff was chosen): then the
    run re-bounds (recomputes every list with a cutoff chosen again, ``rebound`` True).
    """

    mode: str = "informative"
    cutoff: int | None = None
    heavy_chunks: int | None = None
    heavy_postings: int | None = None
    pair_work_all: int | None = None
    pair_work_light: int | None = None
    heavy_work_share: float | None = None
    heavy_docs: int | None = None
    heavy_only_docs: int | None = None
    heavy_only_searched: bool | None = None
    heavy_only_docs_searched: int | None = None
    seconds: dict[str, float] | None = None
    auto: dict[str, Any] | None = None
    bounded: bool | None = None
    bound_docs: int | None = None
    rebound: bool | None = None
    light_postings: int | None = None
    light_lists: int | None = None
    view_windows: int | None = None

    def describe(self) -> str:
        """One line for the run summary: the mode used and why, e.g. ``similarity mode exact
        (auto: heavy-only search 1,200 x 18,000 documents = 2.16e+07 pairs <= budget
        5e+08); heavy cutoff df > 385``."""
        out = f"similarity mode {self.mode}"
        a = self.auto
        if self.bounded:
            out += (
                " (bounded: light work over its budget; pairs stored when their light chunks "
                "alone reach the threshold)"
            )
        elif a:
            kept = ", kept from the last full build" if a.get("kept") else ""
            op = "<=" if a["pairs"] <= a["budget"] else ">"
            out += (
                f" (auto{kept}: heavy-only search {a['open_docs']:,} x {a['heavy_docs']:,} "
                f"documents = {a['pairs']:.3g} pairs {op} budget {a['budget']:.3g})"
            )
        if self.cutoff is None:
            return out + "; no heavy chunks"
        out += f"; heavy cutoff df > {self.cutoff}"
        if self.mode == "informative" and self.heavy_only_docs:
            out += (
                f"; {self.heavy_only_docs:,} documents could reach the threshold through heavy "
                "chunks alone (pairs sharing only heavy chunks not searched)"
            )
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HeavyStats:
        """Back from :meth:`to_dict` (keys it does not know are ignored)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``mode`` and ``cutoff`` always, the rest when measured."""
        out: dict[str, Any] = {"mode": self.mode, "cutoff": self.cutoff}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name not in out and value is not None:
                out[f.name] = dict(value) if isinstance(value, dict) else value
        return out


@dataclass
class RunStats:
    """What the engine measured in one run (filled by :func:`simdask.engine.run.run_update`).

    ``transfer``: the data placement used (``shared`` or ``dask``); ``seconds``: seconds per
    engine stage, in the order they ran (``chunk``, then ``merge`` and ``similarity``, or
    ``merge+similarity`` when they ran fused); ``words`` of the documents recomputed;
    ``bytes_to_cluster`` / ``bytes_from_cluster``: bytes the client sent and received.
    The rest is None when the run did not reach that stage: ``postings`` after the merge,
    ``shards_rewritten``, ``merges_sent_to_cache`` (merges run on the worker caching the
    shard), ``refilled`` (unchanged documents recomputed because their list lost rows to changed
    ones and kept fewer than ``top_k`` above its floor, :mod:`simdask.storage.lists`),
    ``df_crossed`` (unchanged documents recomputed because they hold a chunk
    whose document count crossed ``max_df``), ``blocks`` and ``candidate_pair_counts`` (pair
    keys emitted) of the similarity stage, ``worker_cache`` (when the worker-side shard cache
    was used), ``heavy`` (:class:`HeavyStats`: the heavy-chunk cutoff and mode, and what a
    build measured), ``segments_written`` (delta segments of an incremental run, one per range
    changed), ``delta_seconds`` (seconds per step of the delta path), ``compaction`` (what the
    automatic compaction after the commit merged, :meth:`simdask.writer.Writer.compact`)
    or ``compaction_error`` (why it failed; the run stands), ``sizing`` (the task sizes chosen:
    :class:`~simdask.engine.sizing.TaskSizing`), ``profile`` (per stage, the seconds no worker
    computed a task, and tasks and task-seconds per task name:
    :class:`~simdask.engine.stage_clock.BusyProfile`).
    """

    transfer: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    words: int = 0
    bytes_to_cluster: int = 0
    bytes_from_cluster: int = 0
    postings: int | None = None
    shards_rewritten: int | None = None
    merges_sent_to_cache: int | None = None
    refilled: int | None = None
    df_crossed: int | None = None
    blocks: int | None = None
    candidate_pair_counts: int | None = None
    worker_cache: CacheCounts | None = None
    heavy: HeavyStats | None = None
    segments_written: int | None = None
    delta_seconds: dict[str, float] | None = None
    compaction: dict[str, Any] | None = None
    compaction_error: str | None = None
    sizing: TaskSizing | None = None
    profile: BusyProfile | None = None
    #: worker deaths and tasks run again during the run (:mod:`simdask.cluster.incidents`)
    incidents: dict[str, int] | None = None

    def extra(self) -> dict[str, Any]:
        """JSON-ready form of what was measured besides ``seconds`` and ``words`` (None
        fields left out): :attr:`RunSummary.extra` and the run record in the catalog."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("seconds", "words") or value is None:
                continue
            out[f.name] = value.to_dict() if hasattr(value, "to_dict") else value
        return out


@dataclass(frozen=True)
class ExclusionChange:
    """What a change of the exclusions (templates, quotations, reference lists) did to the
    index: ``documents`` re-chunked from their stored texts (``whole``: every document, in a
    run replacing the index; else only those holding newly excluded chunks), the similarity
    rows and the chunks counted (the sum of ``|A|``) before and after."""

    documents: int
    whole: bool
    rows_before: int
    rows_after: int
    chunks_before: int
    chunks_after: int

    def describe(self) -> str:
        """One line for people: ``exclusions changed: 6 documents (every document) re-chunked
        from their stored texts; similarity rows 6,320 -> 388; chunks counted 1,234 -> 700
        (43 % fewer: text now excluded)``."""
        which = "every document" if self.whole else "those holding newly excluded text"
        docs = f"{self.documents:,} document{'' if self.documents == 1 else 's'}"
        before, after = self.chunks_before, self.chunks_after
        change = (before - after) / before * 100 if before else 0.0
        what = "fewer: text now excluded" if change >= 0 else "more: text no longer excluded"
        return (
            f"exclusions changed: {docs} ({which}) re-chunked from their stored texts; "
            f"similarity rows {self.rows_before:,} -> {self.rows_after:,}; chunks counted "
            f"{before:,} -> {after:,} ({abs(change):.0f} % {what})"
        )


@dataclass
class RunSummary:
    """What one update did: documents added, modified, deleted, unchanged, failed (per-file
    errors, including duplicate keys; too-short documents are indexed and counted apart),
    similarity rows written, seconds per stage (``scan``, the engine's stages, ``commit``,
    ``total``), the generation committed, and the engine's statistics (``stats``)."""

    run_id: int
    generation: int
    added: int
    modified: int
    deleted: int
    unchanged: int
    failed: int
    too_short: int
    similarity_rows: int
    skipped_chunks: int
    words: int
    documents: int = 0
    index_bytes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    stats: RunStats = field(default_factory=RunStats)
    #: the identities (resolved paths) of the sources this run scanned, and whether it
    #: replaced the index (``--rebuild``): what :mod:`simdask.storage.failures` needs to tell which
    #: earlier errors are superseded
    sources: list[str] = field(default_factory=list)
    rebuild: bool = False
    #: keys of the documents added, modified and deleted (not stored with the run)
    changed: dict[str, list[str]] = field(default_factory=dict)
    #: ``(key, other key)``: a document this run added or modified whose content another
    #: indexed document holds (the same file under two keys; their pair is 100 %; not stored)
    identical: list[tuple[str, str]] = field(default_factory=list)
    #: what a change of the exclusions before this run did (not stored with the run)
    exclusion_change: ExclusionChange | None = None

    @property
    def new_keys(self) -> list[str]:
        """Keys of the documents this run added or modified (from :attr:`changed`)."""
        return self.changed.get("added", []) + self.changed.get("modified", [])

    @property
    def serial_seconds(self) -> dict[str, float]:
        """Seconds per stage in which no worker computed a task of this run: the ``scan``
        and the ``commit`` whole (the client alone), and for the engine's stages what the
        task stream gave (:class:`~simdask.engine.stage_clock.BusyProfile`; ``between``:
        the gaps between them); once the run is over, ``other``: the rest of ``total`` (the
        run's record, starting a cluster, the compaction's planning, garbage collection).
        Empty for a run that computed nothing."""
        out: dict[str, float] = {}
        secs, profile = self.seconds, self.stats.profile
        if "scan" in secs:
            out["scan"] = round(secs["scan"], 3)
        if profile is not None:
            out.update(profile.to_dict()["serial_seconds"])
        if "commit" in secs:
            out["commit"] = round(secs["commit"], 3)
        if profile is not None and "total" in secs:
            known = sum(profile.stage_seconds.values()) + secs.get("compaction", 0.0)
            known += secs.get("scan", 0.0) + secs.get("commit", 0.0)
            out["other"] = round(max(0.0, secs["total"] - known), 3)
        return out

    def describe_serial(self) -> str | None:
        """One line for people: ``serial (no worker busy): scan 0.12s, chunk 0.40s, ...;
        3.1s of 10.2s (30 %)``; None when nothing was measured."""
        serial = self.serial_seconds
        if not serial or self.stats.profile is None:
            return None
        parts = ", ".join(f"{k} {v:.2f}s" for k, v in serial.items())
        total = sum(serial.values())
        wall = self.seconds.get("total") or sum(v for k, v in self.seconds.items() if k != "total")
        share = f" ({100 * total / wall:.0f} %)" if wall else ""
        return f"serial (no worker busy): {parts}; {total:.1f}s of {wall:.1f}s{share}"

    @property
    def extra(self) -> dict[str, Any]:
        """The engine's statistics as a JSON-ready dict (:meth:`RunStats.extra`), e.g.
        ``extra["transfer"]``, ``extra["worker_cache"]["hits"]``."""
        return self.stats.extra()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (errors as ``[key, kind, message]`` lists, ``stats`` as ``extra``)."""
        d = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("stats", "changed", "identical", "exclusion_change")
        }
        d["errors"] = [list(e) for e in self.errors]
        d["extra"] = self.extra
        d["serial_seconds"] = self.serial_seconds
        return d


def run_summary(run_id: int, out, scan_s: float) -> RunSummary:
    """The summary of a computed run (``out``: a :class:`~simdask.engine.run.RunOutcome`;
    documents, index bytes and times are filled in later)."""
    c = out.counts
    return RunSummary(
        run_id=run_id,
        generation=run_id,
        added=c.added,
        modified=c.modified,
        deleted=c.deleted,
        unchanged=c.unchanged,
        failed=c.failed,
        too_short=c.too_short,
        similarity_rows=len(out.changes.rows[0]),
        skipped_chunks=out.changes.skipped_chunks,
        words=out.stats.words,
        seconds={"scan": scan_s, **out.stats.seconds},
        errors=out.changes.errors,
        stats=out.stats,
    )
