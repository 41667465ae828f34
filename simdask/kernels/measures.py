"""Similarity measures: how the shared-chunk count of a pair becomes a value, in every form the
code needs, said once per measure.

A :class:`Measure` gives

* its **numpy form**, :meth:`Measure.value` (``shared`` chunks of a pair and the size ``|A|``
  of the set measured, scalars or arrays broadcast together);
* its **threshold inversion**, :meth:`Measure.need`: per document the fewest shared chunks
  that reach a threshold, by the same float expression as the values, so that counting
  kernels can prune a pair from its count alone (``shared >= need``);
* its **SQL form**, :meth:`Measure.sql`, over stored rows (the catalog's ``shared`` and
  ``n_chunks`` columns);
* its **wording**: :meth:`Measure.say` (a value in a sentence) and :meth:`Measure.holds`
  (both directions of a pair in plain words).

:data:`CONTAINMENT` is the measure the index stores (DESIGN §1: ``100 * |A & B| / |A|``,
asymmetric). A new measure is a subclass of :class:`Measure` in a module of its own,
registered in :data:`MEASURES` (docs/architecture.md, "Where to add things"). Pure: no I/O.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import overload

import numpy as np

from simdask.errors import ConfigError

__all__ = ["CONTAINMENT", "MEASURES", "NEVER", "Containment", "Measure", "containment", "measure"]

#: :meth:`Measure.need` of a document no shared count lets pass (empty, threshold > 0)
NEVER = np.iinfo(np.int64).max // 4


class Measure(ABC):
    """One similarity measure of a pair's shared chunks (see the module docstring)."""

    #: the name settings and output use
    name: str
    #: the unit of its values as printed after a number (``" %"``)
    unit: str

    @abstractmethod
    def value(
        self, shared: np.ndarray | int | float, size: np.ndarray | int | float
    ) -> np.ndarray | float:
        """The measure of a set of ``size`` distinct chunks that shares ``shared`` with
        another set (float64; scalars give a float, arrays an array)."""

    @abstractmethod
    def sql(self, shared: str, size: str) -> str:
        """The SQL expression of :meth:`value` over the columns (or expressions) ``shared``
        and ``size``."""

    def need(self, size: np.ndarray, threshold: float) -> np.ndarray:
        """Per document of ``size`` distinct chunks: the fewest shared chunks ``s`` with
        ``value(s, size) >= threshold`` (int64), exactly as :meth:`value` computes it (the
        measure grows with ``shared``); :data:`NEVER` where no count passes. This general
        form searches ``0 .. size`` by bisection; a measure with a closed form overrides it."""
        n = np.asarray(size, np.int64)
        lo = np.zeros(len(n), np.int64)
        hi = n + 1  # hi: passes, or n + 1 (none does)
        while True:
            open_ = lo < hi
            if not open_.any():
                break
            mid = (lo + hi) // 2
            ok = np.asarray(self.value(np.minimum(mid, n), n)) >= threshold
            ok &= mid <= n
            hi = np.where(open_ & ok, mid, hi)
            lo = np.where(open_ & ~ok, mid + 1, lo)
        return np.where(lo > n, NEVER, lo)

    def say(self, value: float) -> str:
        """A value for a sentence: ``62 %``, ``4.4 %``, ``0.3 %`` (whole numbers from 10; never
        rounded to 0 or to 100 when it is not)."""
        if 99.5 <= value < 100.0:
            return f"{value:.1f}{self.unit}"
        text = f"{value:.0f}" if value >= 10 else f"{value:.1f}"
        if text == "0.0" and value > 0:
            text = f"{value:.2f}" if value >= 0.005 else "<0.01"
        return f"{text}{self.unit}"

    @abstractmethod
    def holds(self, a: str, b: str, a_in_b: float, b_in_a: float) -> str:
        """Both directions of a pair in plain words (``a_in_b``: the value of ``a`` measured
        against ``b``; ``b_in_a`` the reverse)."""


class Containment(Measure):
    """How much of a chunk set is found in another one, in percent (0..100): ``100 * shared /
    size``, ``size`` being the set's number of distinct chunks. Not symmetric: the similarity
    of ``A`` to ``B`` is ``containment(|A & B|, |A|)`` (DESIGN §1). An empty set is 0 %
    contained."""

    name = "containment"
    unit = " %"

    def value(
        self, shared: np.ndarray | int | float, size: np.ndarray | int | float
    ) -> np.ndarray | float:
        if np.ndim(shared) == 0 and np.ndim(size) == 0:
            return 100.0 * float(shared) / float(size) if size else 0.0
        sizes = np.asarray(size)
        top = 100.0 * np.asarray(shared)
        out = np.zeros(np.broadcast(top, sizes).shape)
        np.divide(top, sizes, out=out, where=sizes != 0)
        return out

    def sql(self, shared: str, size: str) -> str:
        return f"100.0 * {shared} / {size}"

    def need(self, size: np.ndarray, threshold: float) -> np.ndarray:
        """The closed form ``ceil(threshold * size / 100)``, corrected by one where the float
        division rounds, so that ``shared >= need`` exactly when :meth:`value` passes. An
        empty document passes only at ``threshold <= 0`` (need 0), else never."""
        n = np.asarray(size, np.int64)
        s = np.maximum(np.ceil(threshold * n.astype(np.float64) / 100.0), 0).astype(np.int64)
        full = n > 0
        s[~full] = 0 if threshold <= 0 else NEVER
        m = np.flatnonzero(full)
        sm, nm = s[m], n[m]
        while True:  # the ceil is off by one at most where the division rounds
            down = (sm > 0) & (np.asarray(self.value(sm - 1, nm)) >= threshold)
            up = ~down & (np.asarray(self.value(sm, nm)) < threshold)
            if not (down.any() or up.any()):
                break
            sm = sm - down + up
        s[m] = sm
        return s

    def holds(self, a: str, b: str, a_in_b: float, b_in_a: float) -> str:
        """``"B holds 62 % of A; A holds 18 % of B"``."""
        return f"{b} holds {self.say(a_in_b)} of {a}; {a} holds {self.say(b_in_a)} of {b}"


#: the measure the index stores and every view shows
CONTAINMENT = Containment()

#: the measures by name
MEASURES: dict[str, Measure] = {CONTAINMENT.name: CONTAINMENT}


def measure(name: str) -> Measure:
    """The registered measure ``name``; :class:`ConfigError` names the known ones."""
    if name not in MEASURES:
        raise ConfigError(
            f"unknown similarity measure {name!r}; expected one of {sorted(MEASURES)}"
        )
    return MEASURES[name]


@overload
def containment(shared: int | float, size: int | float) -> float: ...
@overload
def containment(shared: np.ndarray, size: np.ndarray | int) -> np.ndarray: ...
@overload
def containment(shared: np.ndarray | int, size: np.ndarray) -> np.ndarray: ...
def containment(
    shared: np.ndarray | int | float, size: np.ndarray | int | float
) -> np.ndarray | float:
    """:data:`CONTAINMENT`'s value, in percent (0..100, float64): ``100 * shared / size``
    (scalars give a float, arrays broadcast together an array)."""
    return CONTAINMENT.value(shared, size)
