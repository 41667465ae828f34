"""A merged range as a reference to its written segment, not its arrays (issue 13 item 5).

A merge task that writes its range into a shared, raw (memory-mappable) shard store returns a
:class:`SegmentRef` instead of the merged :class:`~simdask.kernels.postings.ShardData`: the
worker then frees the merged arrays as soon as the task ends, instead of holding every range
it merged until the similarity stage has built its compact views. The later per-shard tasks
(df histogram, heavy postings, pair work, the blocks' views, the rows of an incremental run)
open the segment memory-mapped, one range per task (:func:`on_shard`, used by
:meth:`~simdask.engine.context.RunContext.map_shards`); the arrays are the same, so are the
results. Without a shared raw store (a remote or compressed store, or no shared filesystem:
the client writes the segments back) the merge tasks keep returning the merged shard.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dask.sizeof import sizeof

from simdask.errors import IndexFormatError
from simdask.kernels.postings import ShardData
from simdask.storage.backends import open_shard_store

__all__ = ["SegmentRef", "on_shard", "on_stored_shard", "open_shard"]


@dataclass(frozen=True)
class SegmentRef:
    """Segment ``generation`` of range ``shard`` (``[lo, hi)``) in the raw shard store at
    ``store_root``: ``n_chunks`` distinct chunks, ``n_postings`` postings."""

    store_root: str
    shard: int
    generation: int
    lo: int
    hi: int
    n_chunks: int
    n_postings: int

    def open(self, wide_offsets: bool = True) -> ShardData:
        """The segment memory-mapped (:meth:`~simdask.storage.shards.ShardStore.map`; not
        ``wide_offsets``: its offsets as stored, uint32 or uint64, not copied)."""
        store = open_shard_store(self.store_root)
        data = store.map(self.generation, self.shard, wide_offsets)
        if data is None:
            raise IndexFormatError(
                f"segment {self.shard} of generation {self.generation} at {self.store_root} "
                "was written raw (memory-mappable) and is not raw now"
            )
        return data


def open_shard(shard, wide_offsets: bool = True):
    """``shard`` itself, or the segment a :class:`SegmentRef` names, memory-mapped (not
    ``wide_offsets``: offsets as stored, see :meth:`SegmentRef.open`)."""
    return shard.open(wide_offsets) if isinstance(shard, SegmentRef) else shard


def on_shard(fn: Callable, shard, *args):
    """``fn(shard, *args)`` on the merged shard (a :class:`SegmentRef` is opened for this
    call only: its maps close when ``fn`` returns, unless ``fn`` returns a view of them)."""
    return fn(open_shard(shard), *args)


def on_stored_shard(fn: Callable, shard, *args):
    """:func:`on_shard` for an ``fn`` that reads offsets of either dtype (uint32 or uint64):
    a :class:`SegmentRef`'s offsets stay mapped as stored, not copied to uint64 (8 bytes a
    chunk of the range: 0.55 GB at 75 M postings). For the per-range passes of the
    similarity stage, which read them a piece at a time (:mod:`simdask.kernels.range_pieces`)."""
    return fn(open_shard(shard, wide_offsets=False), *args)


@sizeof.register(SegmentRef)
def _sizeof_ref(ref: SegmentRef) -> int:
    """Dask's size estimate of a reference: a few hundred bytes, whatever the segment."""
    return 200
