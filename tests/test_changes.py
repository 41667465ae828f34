"""resolve_changes (kernels/changes.py) against a brute-force reference: per key, which item
wins, which documents are added, modified, unchanged, deleted, failed, and their doc IDs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.kernels.changes import (
    DocumentCounts,
    DocumentRow,
    KnownDocument,
    NewVersion,
    resolve_changes,
)

pytestmark = pytest.mark.unit

KEYS = ["a", "b", "c", "d", "e", "f", "s1/x", "s1/y", "s1/"]
SOURCES = ["s1", "s2", "s3"]


def _version(item: int, key: str, n_chunks: int, source: str = "s1") -> NewVersion:
    return NewVersion(item, key, source, f"h{item}", n_chunks, n_chunks + 4, "p.pack", item, 10)


def reference(events, known, first_free, remove_keys, delete_missing_from):
    """The decisions written out per key, from the rules: items in order; an error claims its
    key and is always reported (an unreadable folder ``x/`` also keeps every known key under
    it); the first non-error item of an unclaimed key wins unless another source's document
    holds the key (and it is not being removed); later items of a claimed key, and such held
    keys, are duplicate_key errors. ``events``: ``(item, kind, payload, source)``."""
    claimed: dict[str, str] = {}  # key -> source that claimed it
    errors, winners, n_failed, n_unchanged, folders = [], [], 0, 0, []
    for _item, kind, data, src in sorted(events, key=lambda e: e[0]):
        if kind == "error":
            key = data[0]
            errors.append(data)
            n_failed += 1
            claimed.setdefault(key, src)
            if data[1] == "unreadable" and key.endswith("/"):
                folders.append(key)
            continue
        key = data if kind == "same" else data.key
        if key in claimed:
            errors.append(
                (
                    key,
                    "duplicate_key",
                    f"key {key!r} given twice in this run, by {claimed[key]} and by {src}; "
                    "first kept",
                )
            )
            n_failed += 1
            continue
        if key in known and known[key].source != src and key not in remove_keys:
            errors.append(
                (
                    key,
                    "duplicate_key",
                    f"key {key!r} is held by a document from {known[key].source}; this one "
                    f"from {src} is not indexed (keys are unique across sources: remove the "
                    "other one first, or rename the file)",
                )
            )
            n_failed += 1
            continue
        claimed[key] = src
        if kind == "same":
            n_unchanged += 1
        else:
            winners.append(data)
    deleted = sorted(
        doc.doc_id
        for key, doc in known.items()
        if key not in claimed
        and (
            key in remove_keys
            or (doc.source in delete_missing_from and not any(key.startswith(f) for f in folders))
        )
    )
    next_id = first_free
    rows, added, modified, too_short = [], 0, 0, 0
    for v in winners:
        if v.key in known:
            doc_id = known[v.key].doc_id
            modified += 1
        else:
            doc_id = next_id
            next_id += 1
            added += 1
        status = "too_short" if v.n_chunks == 0 else "indexed"
        if status == "too_short":
            too_short += 1
            errors.append(
                (
                    v.key,
                    "too_short",
                    f"{v.n_words} words: too few to be compared (fewer than one chunk)",
                )
            )
        rows.append(
            DocumentRow(
                doc_id,
                v.key,
                v.source,
                v.content_hash,
                v.n_chunks,
                v.n_words,
                status,
                v.text_pack,
                v.text_offset,
                v.text_length,
            )
        )
    counts = DocumentCounts(added, modified, n_unchanged, len(deleted), n_failed, too_short)
    dropped = sorted({r.doc_id for r in rows if r.key in known} | set(deleted))
    return rows, [v.item for v in winners], deleted, errors, counts, dropped


@st.composite
def runs(draw):
    known_keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=5))
    ids = draw(st.permutations(list(range(10)))) if known_keys else []
    known = {
        k: KnownDocument(ids[i], f"old-{k}", draw(st.sampled_from(SOURCES)))
        for i, k in enumerate(known_keys)
    }
    n_items = draw(st.integers(0, 12))
    events = []
    for item in draw(st.permutations(list(range(n_items)))):
        key = draw(st.sampled_from(KEYS))
        kind = draw(st.sampled_from(["new", "same", "error"]))
        src = draw(st.sampled_from(SOURCES))
        if kind == "new":
            events.append((item, kind, _version(item, key, draw(st.integers(0, 3)), src), src))
        elif kind == "same":
            events.append((item, kind, key, src))
        else:
            events.append((item, kind, (key, "unreadable", f"cannot read {key}"), src))
    remove = frozenset(draw(st.lists(st.sampled_from(KEYS), max_size=3)))
    missing = frozenset(draw(st.lists(st.sampled_from(SOURCES), max_size=2)))
    return known, events, remove, missing


def _split(events):
    versions = [d for _, k, d, _ in events if k == "new"]
    unchanged = [(i, d) for i, k, d, _ in events if k == "same"]
    failed = [(i, *d) for i, k, d, _ in events if k == "error"]
    return versions, unchanged, failed


@settings(max_examples=300, deadline=None)
@given(runs())
def test_resolve_changes_equals_reference(run):
    known, events, remove, missing = run
    first_free = 10
    got = resolve_changes(
        *_split(events),
        known,
        lambda n: list(range(first_free, first_free + n)),
        remove_keys=remove,
        delete_missing_from=missing,
        sources=[src for *_, src in sorted(events, key=lambda e: e[0])],
    )
    ref = reference(events, known, first_free, remove, missing)
    rows, items, deleted, errors, counts, dropped = ref
    assert got.upserted == rows
    assert got.deleted == deleted
    assert got.errors == errors
    assert got.counts == counts
    assert got.dropped.tolist() == dropped
    assert got.items.tolist() == items
    assert got.doc_ids.tolist() == [r.doc_id for r in rows]
    assert got.touched.tolist() == sorted({r.doc_id for r in rows} | set(deleted))
    assert got.chunked.tolist() == sorted(r.doc_id for r in rows if r.n_chunks > 0)
    assert got.words == sum(r.n_words for r in rows)
    # every item is accounted for once
    n_items = len(events)
    assert counts.added + counts.modified + counts.unchanged + counts.failed == n_items


def test_resolve_changes_cases():
    known = {
        "a": KnownDocument(3, "ha", "s1"),
        "b": KnownDocument(5, "hb", "s1"),
        "c": KnownDocument(7, "hc", "s2"),
        "d": KnownDocument(8, "hd", "s1"),
    }
    got = resolve_changes(
        [_version(0, "a", 2), _version(2, "new", 0), _version(3, "a", 1), _version(4, "c", 4)],
        [(1, "b")],
        [(5, "d", "unreadable", "cannot read d")],
        known,
        lambda n: [0, 1][:n],
        remove_keys={"c", "zzz"},  # c is given in the run: indexed, not removed
        delete_missing_from={"s1"},
    )
    assert [(r.key, r.doc_id, r.status) for r in got.upserted] == [
        ("a", 3, "indexed"),
        ("new", 0, "too_short"),
        ("c", 7, "indexed"),
    ]
    assert got.counts == DocumentCounts(
        added=1, modified=2, unchanged=1, deleted=0, failed=2, too_short=1
    )
    assert got.deleted == []  # d failed to read: it keeps its old version
    assert [e[:2] for e in got.errors] == [
        ("a", "duplicate_key"),
        ("d", "unreadable"),
        ("new", "too_short"),
    ]
    assert got.dropped.tolist() == [3, 7]
    assert got.items.tolist() == [0, 2, 4]


def test_resolve_changes_id_limit():
    with pytest.raises(ConfigError, match="doc IDs must stay below 100; this run needs 100"):
        resolve_changes(
            [_version(0, "x", 1), _version(1, "y", 1)],
            [],
            [],
            {},
            lambda n: list(range(99, 99 + n)),
            id_limit=100,
        )


def test_document_row_columns_in_catalog_order():
    row = DocumentRow(4, "k", "src", "h", 3, 9, "indexed", "p", 10, 20)
    assert row.columns() == (4, "k", "src", "h", 3, 9, "indexed", "p", 10, 20)
