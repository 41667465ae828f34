"""A run's sources checked against each other and against the index before the run starts.

Two mistakes a first real term runs into (issue 31) are refused before anything is read or
written, with a message naming the documents and what to run instead:

- **the same key from two sources** (:class:`~simdask.errors.KeyCollisionError`): keys are
  ``<folder name>/<path inside>``, so ``2025/submissions`` and ``2026/submissions`` both key
  Smith's essay ``submissions/smith.docx``. Indexing the second used to report one
  ``duplicate_key`` per file and exit 0, so that 2026 Smith was never compared with 2025
  Smith. The message suggests ``--key-prefix 2026/`` (the name of the folder holding the
  source), which keys them ``2026/submissions/smith.docx``.
- **the same files twice** (:class:`~simdask.errors.SourceOverlapError`): a folder inside a
  folder indexed from another source, or holding one (``update idx archive``, next term
  ``update idx archive/2026``), would index each file under two keys and pair it with
  itself at 100 %. The message says "already indexed as ..." and which folder to update.

Only the items listed from the run's sources are checked (documents re-chunked from their
stored texts and items passed in by the API keep their keys); JSONL lines, whose keys are
known only once read, are still reported one ``duplicate_key`` error each by the run. Costs
what the run's items cost: indexed lookups of their keys, and a few per source.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path

from simdask.errors import KeyCollisionError, SourceOverlapError
from simdask.ingest.sources import SourceItem, list_items, source_id
from simdask.kernels.keys import FOLDER_SUFFIX, key_prefix
from simdask.storage.catalog import Catalog
from simdask.storage.source_reads import key_under, sources_above, sources_below

__all__ = ["check_sources", "checked_items", "suggested_prefix"]

#: keys named in a collision message (then how many more)
SHOWN = 3
#: items of a source tried for an example of a document already indexed
EXAMPLES_TRIED = 50


def suggested_prefix(source: str) -> str:
    """The ``--key-prefix`` suggested for a source: the name of the folder holding it and
    ``/`` (``2026/`` for ``alt/2026/submissions``); ``""`` at the file system root."""
    name = Path(source).parent.name
    return name + FOLDER_SUFFIX if name else ""


def checked_items(
    catalog: Catalog,
    sources: Sequence[str | os.PathLike],
    prefix: str = "",
    remove: Collection[str] = frozenset(),
    rebuild: bool = False,
) -> list[SourceItem]:
    """The items of ``sources`` (:func:`~simdask.ingest.sources.list_items`, their keys after
    ``prefix``, a ``--key-prefix`` checked by :func:`~simdask.kernels.keys.key_prefix`),
    once :func:`check_sources` found nothing wrong with them."""
    items = list_items(sources, key_prefix(prefix))
    check_sources(catalog, sources, items, remove=remove, rebuild=rebuild)
    return items


def check_sources(
    catalog: Catalog,
    sources: Sequence[str | os.PathLike],
    items: Sequence[SourceItem],
    *,
    remove: Collection[str] = frozenset(),
    rebuild: bool = False,
) -> None:
    """Raise :class:`SourceOverlapError` when one of ``sources`` lies inside another source
    of this run or of the index (or holds one), and :class:`KeyCollisionError` when two
    sources give one key (``items``: those listed from ``sources``; keys in ``remove`` are
    freed by the run). With ``rebuild`` the index is replaced, so only the run's own sources
    are checked against each other."""
    ids = sorted({source_id(s) for s in sources})
    _overlap_in_run(ids)
    if not rebuild:
        for s in ids:
            _overlap_with_index(catalog, s, items)
    _keys(catalog, items, remove, rebuild)


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def _overlap_in_run(ids: list[str]) -> None:
    for a in ids:
        for b in ids:
            if _inside(b, a):
                raise SourceOverlapError(
                    f"source {b} lies inside {a}, also given: expected sources that do not "
                    f"overlap, found its files twice (they would be indexed under two keys and "
                    f"paired with themselves); nothing was indexed: give only {a}"
                )


def _rel_inside(item: SourceItem) -> str:
    """The path of an item's file inside its source folder (``""`` for a file source)."""
    key = item.key or ""
    return key.split(FOLDER_SUFFIX, 1)[1] if FOLDER_SUFFIX in key else ""


def _example(catalog: Catalog, source: str, owner: str, items: Sequence[SourceItem]) -> str:
    """``"already indexed as 'K'"`` for a file of ``source`` that the indexed source
    ``owner`` (a folder holding ``source``) holds, or ``""`` when none of the first
    :data:`EXAMPLES_TRIED` files is."""
    mine = [i for i in items if i.source == source and not i.error][:EXAMPLES_TRIED]
    for item in mine:
        rel = os.path.join(os.path.relpath(source, owner), _rel_inside(item)).rstrip(os.sep)
        key = key_under(catalog, owner, rel)
        if key is not None:
            return f"{item.path} is already indexed as {key!r}; "
    return ""


def _overlap_with_index(catalog: Catalog, source: str, items: Sequence[SourceItem]) -> None:
    above = sources_above(catalog, source)
    if above:
        owner = above[0]
        raise SourceOverlapError(
            f"source {source} lies inside {owner}, indexed before: expected a source the "
            f"index does not hold yet, found its files indexed from {owner}; "
            f"{_example(catalog, source, owner, items)}nothing was indexed. Update the folder "
            f"indexed before instead (`simdask update INDEX {owner}` indexes what is new in it "
            "and leaves the rest unchanged)"
        )
    below = _listed_below(catalog, source, items) if os.path.isdir(source) else []
    if below:
        key = key_under(catalog, below[0], "")
        more = f" and {len(below) - 1} more" if len(below) > 1 else ""
        raise SourceOverlapError(
            f"source {source} holds {below[0]}{more}, indexed before on its own: expected a "
            f"source the index does not hold yet, found files already indexed (e.g. as "
            f"{key!r}); nothing was indexed. Update {below[0]} on its own, or remove its "
            "documents first (`simdask remove INDEX KEY...`) to index them under this folder"
        )


def _listed_below(catalog: Catalog, source: str, items: Sequence[SourceItem]) -> list[str]:
    """The indexed sources inside the folder ``source`` that hold files this run lists from
    it (a JSONL file indexed on its own inside the folder is not one: folders list no
    ``.jsonl``). Resolves the items' paths only when there is such a source."""
    below = sources_below(catalog, source)
    if not below:
        return []
    paths = [os.path.realpath(i.path) for i in items if i.source == source and not i.error]
    return [b for b in below if any(p == b or _inside(p, b) for p in paths)]


def _keys(
    catalog: Catalog, items: Sequence[SourceItem], remove: Collection[str], rebuild: bool
) -> None:
    owner: dict[str, SourceItem] = {}
    clashes: list[tuple[str, SourceItem, str]] = []
    for item in items:
        if item.key is None or item.key.endswith(FOLDER_SUFFIX):
            continue
        key = item.prefix + item.key
        first = owner.setdefault(key, item)
        if first.source != item.source:
            clashes.append((key, item, f"also given by {first.source}"))
    if not rebuild:
        known = catalog.known_for(owner)
        for key, item in owner.items():
            doc = known.get(key)
            if doc is not None and doc.source != item.source and key not in remove:
                clashes.append((key, item, f"already indexed from {doc.source}"))
    if clashes:
        raise KeyCollisionError(_collision_message(clashes))


def _collision_message(clashes: list[tuple[str, SourceItem, str]]) -> str:
    shown = "; ".join(f"{k!r} of {i.path} ({why})" for k, i, why in clashes[:SHOWN])
    more = f"; and {len(clashes) - SHOWN} more" if len(clashes) > SHOWN else ""
    item = clashes[0][1]
    prefix = suggested_prefix(item.source) or "NAME/"
    if item.prefix == prefix:
        prefix = "NAME/"
    other = f" other than {item.prefix!r}" if item.prefix else ""
    return (
        f"expected keys that no other source gives, found {len(clashes)} taken by another "
        f"source (a folder of the same name elsewhere?): {shown}{more}; nothing was indexed. "
        f"Keep the keys apart with a --key-prefix{other}, e.g. --key-prefix {prefix} (keys "
        f"such as {prefix + (item.key or '')!r}), and give the same prefix at every later "
        "update of this source; `simdask remove` frees a key"
    )
