"""The pair reports of one static-site export (issue 31 item 7), each pair of texts computed
once.

A document's page marks the passages of up to :data:`~simdask.evidence.doc_view.MAX_SOURCES`
sources, and a pair page shows one pair: the same reports
(:func:`~simdask.evidence.pair_view.index_report`), asked for again and again. A report
depends on the two texts and the index (its exclusions, ``max_df``, the options), and on the
keys only through the names, the similarity the index stores for the pair and the pair's
review (dates, decision). So :class:`SiteReports` computes it once per ordered pair of
texts (SHA-256 of each text) and gives a copy under the keys asked for, with their stored
similarity and review: identical copies (a licence file shipped by ten packages) cost one
alignment, and a pair page reuses its document page's report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from simdask.evidence.pair_view import ViewOptions, index_report
from simdask.evidence.text_cache import TextCache
from simdask.read.review import pair_details

__all__ = ["SiteReports"]


class SiteReports:
    """:func:`~simdask.evidence.pair_view.index_report` for the documents of ``index`` under
    ``options``, each ordered pair of texts computed once (see the module docstring); a call
    with a checked text, another index or other options is passed through uncached.
    ``cache``: a :class:`~simdask.evidence.text_cache.TextCache` for each text's own part
    (None: none; the same reports). ``computed``: reports computed; ``asked``: reports asked for."""

    def __init__(
        self, index, options: ViewOptions | None = None, cache: TextCache | None = None
    ) -> None:
        self._index = index
        self._options = options or ViewOptions()
        self._cache = cache
        self._digests: dict[str, str] = {}
        self._reports: dict[tuple[str, str], dict] = {}
        self._by_keys: dict[tuple[str, str], tuple[str, str]] = {}
        self.computed = 0
        self.asked = 0

    @property
    def options(self) -> ViewOptions:
        """The options of the reports it keeps."""
        return self._options

    def _digest(self, key: str) -> str:
        d = self._digests.get(key)
        if d is None:
            d = hashlib.sha256(self._index.text(key).encode("utf-8")).hexdigest()
            self._digests[key] = d
        return d

    def __call__(
        self,
        index,
        key: str,
        other: str,
        *,
        text: str | None = None,
        other_text: str | None = None,
        options: ViewOptions | None = None,
    ) -> dict:
        """The report of ``key`` and ``other`` (the signature of ``index_report``)."""
        opts = options or ViewOptions()
        if index is not self._index or text is not None or other_text is not None:
            return index_report(index, key, other, text=text, other_text=other_text, options=opts)
        if opts != self._options:
            return index_report(index, key, other, options=opts)
        self.asked += 1
        texts = (self._digest(key), self._digest(other))
        rep = self._reports.get(texts)
        if rep is None:
            rep = index_report(index, key, other, options=opts, cache=self._cache)
            self._reports[texts] = rep
            self._by_keys[(key, other)] = texts
            self.computed += 1
            return rep
        self._by_keys[(key, other)] = texts
        return self._renamed(rep, key, other)

    def missing(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """Of ``pairs`` (``(key, other)``, documents of the index), one per ordered pair of
        texts not computed yet, in their order: what :meth:`add` can be given."""
        seen = set(self._reports)
        out = []
        for key, other in pairs:
            texts = (self._digest(key), self._digest(other))
            if texts not in seen:
                seen.add(texts)
                out.append((key, other))
        return out

    def add(self, key: str, other: str, rep: dict) -> None:
        """Keep ``rep``, the report of ``key`` and ``other`` computed elsewhere (another
        process, :func:`~simdask.evidence.pair_view.index_report` with this object's
        options on the same committed state), as if this object had computed it; a
        later call for these keys (or others of the same texts) takes it."""
        texts = (self._digest(key), self._digest(other))
        if texts not in self._reports:
            self._reports[texts] = rep
            self.computed += 1

    def known(self, key: str, other: str) -> dict | None:
        """The report of ``key`` and ``other`` if one was asked for in this order (else None),
        without computing anything."""
        texts = self._by_keys.get((key, other))
        return None if texts is None else self._renamed(self._reports[texts], key, other)

    def _renamed(self, rep: dict, key: str, other: str) -> dict:
        """``rep`` (of the same two texts) under the keys ``key`` and ``other``: their names,
        the similarity the index stores for them (else the one computed from the texts'
        hashed chunks, the same for the same texts) and their review."""
        if (rep["doc"], rep["other"]) == (key, other):
            return rep
        stored = {r.other: r.similarity for r in self._index.similar(key)}
        hashed = stored.get(other, rep["hashed_similarity"])
        return {
            **rep,
            "doc": key,
            "other": other,
            "hashed_similarity": hashed,
            "difference": hashed - rep["similarity"],
            "review": pair_details(self._index.catalog, [(key, other)])[0],
        }
