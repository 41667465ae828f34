"""The sources left out of a checked text's results (issue 31 item 12): ``simdask mark DOC
SOURCE --exclude-source`` leaves a source out of an indexed document; ``query`` applies the
same decision to a checked text that *is* that document, and takes sources to leave out
for this check alone (``query --exclude-source KEY``).

A checked text is an indexed document when an indexed key is its name or ends in ``/`` and
its name (a file checked again from another folder) *and* the stored text of that document is
the checked text, character for character: a file of the same name from another year, or an
edited copy, is another document and takes none of its decisions. The document it is is
left out of its results too (a text found in itself is no finding). A row of such a source
stays in the results, flagged ``source_excluded`` (its similarity is the stored measure,
unchanged), as ``similar`` shows a document's rows; the checked text's total leaves it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from simdask.read.total_reads import query_rows, sort_rows
from simdask.storage.decisions import excluded_by_doc
from simdask.storage.lookup import keys_ending, resolve_key

__all__ = ["flag_rows", "indexed_as", "query_exclusions", "rows_with_totals"]


def indexed_as(index: Any, name: str, text: str) -> str | None:
    """The key of the indexed document the checked text ``text`` named ``name`` is (see the
    module docstring), or None. Call inside a snapshot."""
    for key in keys_ending(index.catalog, name.rsplit("/", 1)[-1]):
        if (key == name or key.endswith("/" + name) or name.endswith("/" + key)) and (
            index.catalog.document(key).text_pack is not None and index.text(key) == text
        ):
            return key
    return None


def query_exclusions(
    index: Any, docs: Sequence[tuple[str, Any]], extra: Iterable[str] = ()
) -> dict[str, frozenset[str]]:
    """Per checked text (``docs``: ``(name, text or error)``, as
    :func:`~simdask.ingest.sources.read_queries` gives them): the indexed keys left out of
    its results: the document it is (:func:`indexed_as`: its own row is no source) and the
    decisions kept on that document, and ``extra``, keys (or their ends, as ``report``
    takes them) named for this check; a key of ``extra`` that names no document raises
    :class:`~simdask.errors.DocumentNotFoundError`. Texts with none are absent."""
    named = frozenset(resolve_key(index.catalog, k) for k in extra)
    same = {name: indexed_as(index, name, text) for name, text in docs if isinstance(text, str)}
    kept = excluded_by_doc(index.catalog, [k for k in same.values() if k is not None])
    out = {}
    for name, key in same.items():
        # the document it is is no source of itself (its 100 % row stays, flagged)
        gone = named | kept.get(key, frozenset()) | {key} if key is not None else named
        if gone:
            out[name] = frozenset(gone)
    return out


def flag_rows(rows: list[dict], excluded: dict[str, frozenset[str]]) -> list[dict]:
    """``query``'s rows (dicts with ``query`` and ``key``), each with ``source_excluded``:
    ``key`` is left out of ``query``'s results (:func:`query_exclusions`)."""
    return [{**r, "source_excluded": r["key"] in excluded.get(r["query"], ())} for r in rows]


def rows_with_totals(
    index: Any,
    rows: list[dict],
    texts: dict[str, str],
    top: int = 5,
    sort: str = "similarity",
    min_total: float | None = None,
) -> list[dict]:
    """:func:`~simdask.read.total_reads.query_rows` of the rows :func:`flag_rows` flagged: each
    checked text's total from its sources not left out (a text whose every source is left
    out: 0 %); a row left out gets its text's total and ``aligned`` None (not counted),
    then filtered and sorted as there."""
    kept = [r for r in rows if not r["source_excluded"]]
    out, totals = query_rows(index, kept, texts, top, sort, None)
    total_of = {t.doc: t.total for t in totals}
    out += [
        {**r, "aligned": None, "total": total_of.get(r["query"], 0.0)}
        for r in rows
        if r["source_excluded"]
    ]
    return sort_rows(out, sort, min_total)
