"""Marking a pair (issue 31, item 12; ``simdask mark``): the keys checked against the index,
then the decision stored (:mod:`simdask.storage.decisions`); or one source left out of one
document's total (``mark DOC SOURCE --exclude-source``). A decision never changes the
stored similarities and no run changes it."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from simdask.errors import DocumentNotFoundError
from simdask.storage.decisions import set_decision, set_source_exclusion

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = ["exclude_source", "mark_pair"]


def mark_pair(index: Index, a: str, b: str, status: str, note: str = "") -> None:
    """Mark the pair of indexed documents ``a``, ``b`` (keys) ``reviewed``, ``dismissed`` or
    ``confirmed`` with ``note``, or ``clear`` its decision. Raises
    :class:`~simdask.errors.DocumentNotFoundError` for a key the index does not hold (a
    decision on a removed document can still be cleared) and
    :class:`~simdask.errors.ConfigError` for another status."""
    if status != "clear":
        known = index.catalog.known_for([a, b])
        for key in (a, b):
            if key not in known:
                raise DocumentNotFoundError(f"no document with key {key!r} in the index")
    set_decision(index.catalog, a, b, status, note, time.time())


def exclude_source(index: Index, doc: str, source: str, excluded: bool, note: str = "") -> None:
    """Leave the indexed document ``source`` out of document ``doc``'s total and sources
    (``excluded``; with ``note``), or take that back. Raises
    :class:`~simdask.errors.DocumentNotFoundError` for a key the index does not hold (taking
    an exclusion back needs none)."""
    if excluded:
        known = index.catalog.known_for([doc, source])
        for key in (doc, source):
            if key not in known:
                raise DocumentNotFoundError(f"no document with key {key!r} in the index")
    set_source_exclusion(index.catalog, doc, source, excluded, note, time.time())
