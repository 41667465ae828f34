"""Feature types: how a text becomes the IDs the index stores, and where those IDs live in
the chunk-ID space.

A :class:`FeatureType` gives

* **how a text becomes IDs**: :meth:`FeatureType.chunk` (each text's distinct feature IDs, as
  the chunk stage, the delta probes, queries and the LSH mode take them),
  :meth:`FeatureType.windows` (every window's ID in document order, repeats kept) and
  :meth:`FeatureType.feature_id` (one feature in plain Python, the reference);
* **its namespace** in the chunk-ID space, :attr:`FeatureType.namespace`: mixed into the hash
  seed (:meth:`FeatureType.seed`), so that the IDs of two feature types of one index are
  independent hashes and a feature of one type matches only features of the same type.
  Namespace 0 leaves the seed as it is: the IDs every index has stored so far.

:data:`SORTED_CHUNK` is the feature the index stores today (DESIGN §1: ``k`` consecutive
words, sorted, hashed to ``hash_bits`` bits; :mod:`simdask.kernels.hashing`), with the
index's exclusions applied (:mod:`simdask.kernels.exclusions`). A new feature type is a
subclass in a module of its own with a namespace of its own, registered in
:data:`FEATURE_TYPES` (docs/architecture.md, "Where to add things"). Pure: no I/O.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from simdask.errors import ConfigError
from simdask.kernels.exclusions import Exclusions, chunk_excluding, window_chunks_excluding
from simdask.kernels.hashing import ChunkedBatch, chunk_id

__all__ = ["FEATURE_TYPES", "SORTED_CHUNK", "FeatureType", "SortedChunk", "feature_type"]

#: an odd 64-bit constant: namespace ``n`` turns seed ``s`` into ``s ^ (n * _SPREAD)``
_SPREAD = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


class FeatureType(ABC):
    """One kind of feature of a text (see the module docstring)."""

    #: the name settings and documentation use
    name: str
    #: its namespace in the chunk-ID space (0: the seed as given)
    namespace: int

    def seed(self, seed: int) -> int:
        """The hash seed of this feature type for the index seed ``seed``."""
        return (seed ^ (self.namespace * _SPREAD)) & _MASK if self.namespace else seed

    @abstractmethod
    def chunk(
        self,
        texts: Sequence[str],
        k: int,
        hash_bits: int,
        seed: int,
        exclusions: Exclusions | None = None,
    ) -> ChunkedBatch:
        """Each text's distinct feature IDs (``hash_bits`` bits; ``k`` words a feature), the
        parts ``exclusions`` leaves out not counted."""

    @abstractmethod
    def windows(
        self,
        texts: Sequence[str],
        k: int,
        hash_bits: int,
        seed: int,
        exclusions: Exclusions | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every window's feature ID in document order (repeats kept): ``(ids, text of each,
        position)`` as :func:`~simdask.kernels.hashing.window_chunks` gives them."""

    @abstractmethod
    def feature_id(self, words: Sequence[str], hash_bits: int, seed: int) -> int:
        """The ID of one feature made of ``words`` (normalised), in plain Python."""


class SortedChunk(FeatureType):
    """``k`` consecutive words, sorted, hashed: the index's chunk (DESIGN §1)."""

    name = "sorted_chunk"
    namespace = 0

    def chunk(
        self,
        texts: Sequence[str],
        k: int,
        hash_bits: int,
        seed: int,
        exclusions: Exclusions | None = None,
    ) -> ChunkedBatch:
        return chunk_excluding(list(texts), k, hash_bits, self.seed(seed), exclusions)

    def windows(
        self,
        texts: Sequence[str],
        k: int,
        hash_bits: int,
        seed: int,
        exclusions: Exclusions | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return window_chunks_excluding(list(texts), k, hash_bits, self.seed(seed), exclusions)

    def feature_id(self, words: Sequence[str], hash_bits: int, seed: int) -> int:
        return chunk_id(list(words), hash_bits, self.seed(seed))


#: the feature the index stores
SORTED_CHUNK = SortedChunk()

#: the feature types by name
FEATURE_TYPES: dict[str, FeatureType] = {SORTED_CHUNK.name: SORTED_CHUNK}


def feature_type(name: str) -> FeatureType:
    """The registered feature type ``name``; :class:`ConfigError` names the known ones."""
    if name not in FEATURE_TYPES:
        known = sorted(FEATURE_TYPES)
        raise ConfigError(f"unknown feature type {name!r}; expected one of {known}")
    return FEATURE_TYPES[name]
