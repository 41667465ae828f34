"""The merge stage on the cluster (DESIGN §3.3): one merge task per shard, sent to the worker
that caches its previous generation (:mod:`~simdask.cluster.worker_cache`), with the old shard
and the run's pairs read from the shared filesystem or sent through Dask
(:mod:`~simdask.cluster.placement`)."""

from __future__ import annotations

from collections.abc import Callable

from distributed import Client, as_completed

from simdask.cluster.worker_cache import cache_entries, worker_cache
from simdask.engine.tasks import MergeSpec
from simdask.errors import ShardNotCachedError
from simdask.progress import Callback
from simdask.storage.segments import read_range
from simdask.storage.shards import ShardStore

__all__ = ["MergeStage", "cache_retain", "cached_shards"]


def cache_retain(index_id: str, layout: str, keep: dict[int, list[int]]) -> int:
    """Run on each worker: drop this index's cached segments whose layout differs or whose
    generation is not among ``keep[shard]`` (the range's committed segments); returns the
    bytes dropped."""
    cache = worker_cache()
    dropped = 0
    for e in cache.entries():
        if e.index_id == index_id and (
            e.layout != layout or e.generation not in keep.get(e.shard, ())
        ):
            dropped += cache.drop(e)
    return dropped


def cached_shards(client: Client, index_id: str, layout: str, gens: dict[int, list[int]]):
    """``{shard: worker address}`` of a worker caching every segment ``gens[shard]``."""
    held: dict[tuple[str, int], set[int]] = {}
    for addr, entries in client.run(cache_entries).items():
        for idx, lay, shard, gen, _ in entries:
            if idx == index_id and lay == layout and gen in gens.get(shard, ()):
                held.setdefault((addr, shard), set()).add(gen)
    found: dict[int, str] = {}
    for (addr, shard), have in sorted(held.items()):
        if have >= set(gens[shard]):
            found.setdefault(shard, addr)
    return found


class MergeStage:
    """Submit one task per shard (``fn(spec, *args, buckets=..., old=...)``) and wait for all.

    ``transfer='dask'``: a shard not cached on a worker is read by the client and scattered,
    at most ``in_flight`` at a time; a merge sent to a worker whose cached copy has gone
    (:class:`ShardNotCachedError`) is sent again with the shard. ``'shared'``: the tasks read
    what they need from the store.
    """

    def __init__(
        self,
        client: Client,
        store: ShardStore,
        specs: list[MergeSpec],
        *,
        transfer: str,
        buckets: list[list] | None,
        cb: Callback,
        traffic,
        in_flight: int,
        tomb=None,
    ):
        self.client, self.store, self.specs = client, store, specs
        self.tomb = tomb
        self.transfer, self.buckets, self.cb, self.traffic = transfer, buckets, cb, traffic
        self.in_flight = in_flight
        self.sent_to_cache = 0
        self.located: dict[int, str] = {}
        spec = specs[0] if specs else None
        if spec is not None and spec.use_cache:
            gens = {s.shard: list(s.old_generations) for s in specs if s.old_generations}
            client.run(cache_retain, spec.index_id, spec.layout, gens)
            self.located = cached_shards(client, spec.index_id, spec.layout, gens)

    def _submit(self, fn: Callable, s: int, args: tuple, key: str, send_old: bool):
        spec = self.specs[s]
        old = None
        if send_old and spec.old_generations:
            gens = spec.old_generations
            data = read_range(self.store, s, gens, self.tomb, spec.lo, spec.hi)
            old = self.traffic.scatter(data)
        where = {}
        if s in self.located and not send_old:
            where = {"workers": [self.located[s]], "allow_other_workers": True}
        return self.client.submit(
            fn,
            spec,
            *args,
            buckets=None if self.buckets is None else self.buckets[s],
            old=old,
            key=key,
            **where,
        )

    def run(self, fn: Callable, args: tuple, prefix: str, needs_old: bool = True) -> list:
        """All shards' futures, in shard order, each finished. ``needs_old``: the task reads
        the range's committed postings (else nothing old is sent or looked for)."""
        n = len(self.specs)
        futs: list = [None] * n
        shard_of: dict[str, int] = {}
        self.cb.stage("merge", n)
        todo = list(range(n))
        running = as_completed()
        dask_mode = self.transfer == "dask" and needs_old
        limit = self.in_flight if dask_mode else n

        def submit(s: int, key: str, send_old: bool) -> None:
            futs[s] = self._submit(fn, s, args, key, send_old)
            shard_of[futs[s].key] = s
            running.add(futs[s])

        for _ in range(min(limit, n)):
            s = todo.pop(0)
            submit(s, f"{prefix}-s{s:04d}", dask_mode and s not in self.located)
        for f in running:
            s = shard_of.pop(f.key)
            if f.status == "error":
                exc = f.exception()
                if not (dask_mode and isinstance(exc, ShardNotCachedError)):
                    f.result()  # raises the task's error
                self.located.pop(s, None)
                submit(s, f"{prefix}-s{s:04d}-sent", True)
                continue
            if s in self.located:
                self.sent_to_cache += 1
            self.cb.advance(1)
            if todo:
                t = todo.pop(0)
                submit(t, f"{prefix}-s{t:04d}", dask_mode and t not in self.located)
        self.cb.end_stage()
        return futs
