"""Lists computed one row deeper than stored, cut into what the catalog keeps.

A run computes each list it recomputes down to ``stored_depth + 1`` rows
(:func:`deep_config`); :func:`split_rows` cuts them into the shown rows, the reserve and the
floors that :mod:`simdask.storage.lists` keeps.
"""

from __future__ import annotations

import numpy as np

from simdask.config import IndexConfig
from simdask.kernels.similarity import split_lists
from simdask.kernels.top_rows import Rows
from simdask.storage.commit import RunChanges

__all__ = ["deep_config", "split_rows"]


def deep_config(config: IndexConfig) -> IndexConfig:
    """``config`` computing lists one row deeper than stored (that row is the floor)."""
    return config.replace(top_k=config.stored_depth + 1)


def split_rows(changes: RunChanges, rows: Rows, config: IndexConfig) -> None:
    """Set the rows to commit: the lists computed whole (of ``changes.rows_replaced``, or
    all in a full build) cut into shown rows, reserve and floors
    (:func:`~simdask.kernels.similarity.split_lists`); the reverse rows added to other
    lists go in as they are (the commit ranks those lists again)."""
    doc = rows[0]
    whole = (
        np.ones(len(doc), bool)
        if changes.replace_all
        else np.isin(doc, np.asarray(changes.rows_replaced, np.int64))
    )
    if whole.all():  # a full build: no copy of every row for the mask, none for the rest
        del whole
        shown, reserve, floors = split_lists(*rows, top_k=config.top_k, depth=config.stored_depth)
        changes.rows, changes.reserve, changes.floors = shown, reserve, floors
        return
    doc, other, shared, sim = rows
    shown, reserve, floors = split_lists(
        doc[whole], other[whole], shared[whole], sim[whole], config.top_k, config.stored_depth
    )
    rest = ~whole
    d, o, sh, si = (np.concatenate([a, c[rest]]) for a, c in zip(shown, rows, strict=True))
    changes.rows = (d, o, sh, si)
    changes.reserve, changes.floors = reserve, floors
