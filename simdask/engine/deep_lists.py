"""Lists computed one row deeper than stored, cut into what the catalog keeps.

A run computes each list it recomputes down to ``stored_depth + 1`` rows
(:func:`deep_config`); :func:`split_rows` cuts them into the shown rows, the reserve and the
floors that :mod:`simdask.storage.lists` keeps, and returns them for the run to commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simdask.config import IndexConfig
from simdask.kernels.similarity import split_lists
from simdask.kernels.top_rows import Rows

__all__ = ["SplitRows", "deep_config", "split_rows"]


def deep_config(config: IndexConfig) -> IndexConfig:
    """``config`` computing lists one row deeper than stored (that row is the floor)."""
    return config.replace(top_k=config.stored_depth + 1)


@dataclass(frozen=True)
class SplitRows:
    """What a run commits of its lists (the fields of
    :class:`~simdask.storage.catalog.RunChanges` of the same names): ``rows`` shown
    ``(doc, other, shared, percent)``, ``reserve`` rows of the same columns, ``floors``
    ``(doc, percent, other)``."""

    rows: Rows
    reserve: tuple[Any, ...]
    floors: tuple[Any, ...]


def split_rows(
    rows: Rows, config: IndexConfig, replace_all: bool, rows_replaced: np.ndarray
) -> SplitRows:
    """The rows to commit: the lists computed whole (of ``rows_replaced``, or all in a full
    build, ``replace_all``) cut into shown rows, reserve and floors
    (:func:`~simdask.kernels.similarity.split_lists`); the reverse rows added to other
    lists go in as they are (the commit ranks those lists again)."""
    doc = rows[0]
    whole = (
        np.ones(len(doc), bool)
        if replace_all
        else np.isin(doc, np.asarray(rows_replaced, np.int64))
    )
    if whole.all():  # a full build: no copy of every row for the mask, none for the rest
        del whole
        shown, reserve, floors = split_lists(*rows, top_k=config.top_k, depth=config.stored_depth)
        return SplitRows(shown, reserve, floors)
    doc, other, shared, sim = rows
    shown, reserve, floors = split_lists(
        doc[whole], other[whole], shared[whole], sim[whole], config.top_k, config.stored_depth
    )
    rest = ~whole
    d, o, sh, si = (np.concatenate([a, c[rest]]) for a, c in zip(shown, rows, strict=True))
    return SplitRows((d, o, sh, si), reserve, floors)
