"""The writer's side of the totals (issue 29 item 2): what a run's commit does about them,
and ``totals --compute``: every document's candidates aligned on the cluster, committed
batch by batch (the stored pairs are the completion markers: an interrupted computation goes
on where it stopped), then every total in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from simdask.alignment import AlignConfig
from simdask.cluster.current import made_current
from simdask.cluster.placement import choose_transfer
from simdask.errors import ConfigError
from simdask.kernels.partner_rule import PartnerRule
from simdask.progress import Callback
from simdask.storage.aligned_tables import (
    DEFAULT_RULE,
    AlignJob,
    PairAlignment,
    TotalsPlan,
    compute_batch,
    compute_finish,
    compute_start,
)
from simdask.write.clusters import found_cluster
from simdask.write.exclude import Template

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = ["compute_totals", "run_totals_plan", "totals_rule"]


def totals_rule(floor: float | None, cap: int | None) -> PartnerRule | None:
    """The rule of ``totals --compute --floor F --cap N`` (None: neither given): the default
    rule (:data:`~simdask.storage.aligned_tables.DEFAULT_RULE`) with the given floor and cap, never
    fewer than its ``least`` (at most the cap) candidates."""
    if floor is None and cap is None:
        return None
    cap = DEFAULT_RULE.cap if cap is None else cap
    least = min(DEFAULT_RULE.least, cap) if isinstance(cap, int) and cap >= 1 else 1
    return PartnerRule(DEFAULT_RULE.floor if floor is None else floor, cap, least)


def _settings(index: Index, templates: tuple[Template, ...], config: AlignConfig | None):
    from simdask.engine.totals import AlignSettings  # loads dask: only when aligning

    cfg = index.config
    return AlignSettings(
        str(index.path / "texts"),
        cfg.exclude_quotes,
        cfg.exclude_bibliography,
        tuple(t.text for t in templates),
        cfg.k,
        None if config is None else config.to_dict(),
    )


def _aligner(
    index: Index, client, templates: tuple[Template, ...], cb: Callback, ship: bool
) -> Callable[[list[AlignJob]], list[PairAlignment]]:
    def run(jobs: list[AlignJob]) -> list[PairAlignment]:
        from simdask.engine.totals import align_jobs  # loads dask: only when aligning

        settings = _settings(index, templates, None)
        found = align_jobs(jobs, settings, client=client, callback=cb, ship_texts=ship)
        return [r for batch in found for r in batch]

    return run


def _ship_texts(index: Index, client) -> bool:
    """Whether the workers of ``client`` need the texts sent (they do not share the
    client's filesystem)."""
    if client is None:
        return False
    return choose_transfer("auto", client, index.path / "work", [])[0] == "dask"


def run_totals_plan(
    index: Index, client, request: Any, templates: tuple[Template, ...], transfer: str
) -> TotalsPlan:
    """The :class:`TotalsPlan` of a run about to commit (called before its commit), from the
    writer's ``request`` (its ``options.totals`` mode, ``rebuild``, ``keep_hashes``, ``cb``):
    the new and modified documents become tracked in an incremental run of mode ``new`` (not
    a first build, nor a run replacing stored documents: a rebuild, a re-chunking for
    changed exclusions), every document in mode ``all``; the run's ``client`` aligns the
    missing pairs with the exclusions of the run (``templates``), the texts sent to the
    workers when the run's data ``transfer`` was ``dask``."""
    mode = request.options.totals
    replacing = request.rebuild or request.keep_hashes is not None
    had_documents = index.catalog.n_documents(limit=1) > 0
    return TotalsPlan(
        track_new=mode == "new" and had_documents and not replacing,
        track_all=mode == "all",
        aligner=_aligner(index, client, templates, request.cb, transfer == "dask"),
    )


@contextmanager
def _cluster(client, connector) -> Iterator[Any]:
    """The client of ``totals --compute`` made current for the block: ``client``, else the
    one ``connector`` connects (closed afterwards, its cluster left running), else None."""
    with connector(0) if connector is not None else nullcontext(client) as cl, made_current(cl):
        yield cl


def compute_totals(
    index: Index,
    *,
    top: int | None = None,
    rule: PartnerRule | None = None,
    client=None,
    wait: float = 0.0,
    callback: Callback | None = None,
    batch_jobs: int | None = None,
    lock: bool = True,
) -> dict[str, Any]:
    """Align every document's chosen candidates on the cluster of ``client`` and store every
    total. Without ``client``, the cluster a run of :meth:`~simdask.writer.Writer.update`
    would use (:func:`~simdask.write.clusters.found_cluster`): the active
    ``distributed.Client``, else the scheduler of Dask's configuration
    (``DASK_SCHEDULER_ADDRESS``, ``scheduler-address``; connected to after the lock is taken,
    left running), else none: the pairs are aligned in this process, batch by batch.
    Aligned: a fixed ``top`` of them, else those ``rule`` chooses
    (:class:`~simdask.kernels.partner_rule.PartnerRule`), else (both None) as the stored
    setting, at first :data:`~simdask.storage.aligned_tables.DEFAULT_RULE`; every
    document stays tracked from then on. Resumable: each batch of pairs is committed as it
    completes, and pairs already stored are not aligned again. ``lock``: take the writer
    lock (False: the caller holds it). Returns counts: ``pairs`` required, ``aligned`` now,
    ``documents`` with a total."""
    from simdask.engine.totals import align_jobs  # loads dask: only when aligning

    if top is not None and (type(top) is not int or top < 1):
        raise ConfigError(f"top must be a whole number >= 1, found {top!r}")
    if rule is not None and not isinstance(rule, PartnerRule):
        raise ConfigError(f"expected rule a PartnerRule, found {type(rule).__name__}")
    if rule is not None and top is not None:
        raise ConfigError("expected a fixed top or a rule, found both")
    cb = callback or Callback()
    found, connector = (client, None) if client is not None else found_cluster()
    with index.writer(wait=wait) if lock else nullcontext(), _cluster(found, connector) as client:
        chosen, required, jobs, partners = compute_start(index.catalog, top, rule)
        settings = _settings(index, index.templates(), None)
        aligned = 0
        ship = _ship_texts(index, client)
        found = align_jobs(
            jobs, settings, client=client, batch_jobs=batch_jobs, callback=cb, ship_texts=ship
        )
        for batch in found:
            aligned += compute_batch(index.catalog, batch)  # the batch's completion marker
        done = compute_finish(index.catalog, chosen, partners)  # chosen once, at the start
        index.drop_caches()
    have = done["tracked"] - done["dropped"]
    return {"pairs": required, "aligned": aligned, "documents": have}
