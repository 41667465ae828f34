"""The compact data from which the static site's generic pair page renders any stored pair in
the browser (issue 31 item 7): the exact 5-word passages of ``simdask report --exact-only``.

The site writes side-by-side pages for each document's few best partners only; every other
stored pair opens ``pair.html#<a>-<b>`` (:mod:`.site_pair_page`), whose script computes the
pair's passages as :func:`~simdask.evidence.passages.compare_texts` does, from what this
module writes once per distinct text (``data/t/<digest>.js``, identical copies once):

* ``text``: the text as indexed (offsets are code points of it; the script indexes it by
  code point, not UTF-16 unit);
* ``w``: the words as IDs into one vocabulary of the export (a window's chunk is the multiset
  of its ``k`` words, so sorted word IDs name the same chunks as sorted words);
* ``b``: each word's character span, as gaps and lengths (``start - previous end``,
  ``end - start``, flattened);
* ``x``: the windows the index's exclusions leave out (quotations, reference list,
  templates), as ``[first, last + 1]`` ranges of window indexes;
* ``m``: the excluded text ``[start, end, kind]`` shown as excluded;
* ``c`` (an index with ``max_df`` only): the windows whose chunk more than ``max_df``
  documents hold, as ranges; a pair leaves out those of its shared chunks.

and ``data/site.js``: the settings (``k``, the shortest passage in chunks and words, the
size above which texts are compared in numpy instead) and per document ID its key, its text's
digest and its page. Everything is computed by :func:`~.passages.prepare_side` itself, so the
script repeats no tokenisation; it is data, loaded by ``<script>`` elements (a site opened
from ``file://`` can fetch nothing).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import prepare_side, word_offsets
from simdask.evidence.passages_np import LARGE_CHARS
from simdask.kernels.features import SORTED_CHUNK
from simdask.read.doc_freq import common_chunk_ids

__all__ = ["DATA_DIR", "SiteData", "js_value", "mask_ranges", "text_record", "write_site_data"]

#: the data's folder in the site
DATA_DIR = "data"


def js_value(value) -> str:
    """``value`` as a JavaScript literal (JSON) that is safe inside any HTML or script:
    ``<``, ``>``, ``&`` and the line separators escaped."""
    s = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        s = s.replace(ch, esc)
    return s.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def mask_ranges(mask: np.ndarray) -> list[int]:
    """The runs of True in ``mask`` as flat ``[first, last + 1, ...]`` indexes."""
    m = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    return np.flatnonzero(m[1:] != m[:-1]).tolist()


@dataclass
class SiteData:
    """What one export's text records share: the vocabulary (word -> ID) and the chunk IDs
    of each text's windows (for ``max_df``)."""

    vocab: dict[str, int] = field(default_factory=dict)

    def word_ids(self, ws: list[str]) -> list[int]:
        """IDs of ``ws`` (new words get the next ID)."""
        v = self.vocab
        return [v.setdefault(w, len(v)) for w in ws]


def text_record(
    text: str, k: int, exclusions: PairExclusions | None, data: SiteData
) -> tuple[dict, list[tuple[str, ...]]]:
    """The record of one text (see the module docstring; without ``c``) and its windows
    (sorted words, for the ``max_df`` lookup)."""
    if exclusions is not None and not exclusions.active:
        exclusions = None
    side = prepare_side(text, k, exclusions)
    ws = word_offsets(text)[0]  # the words the windows are made of, in order
    starts, ends = (b.tolist() for b in side.bounds)
    spans: list[int] = []
    prev = 0
    for s, e in zip(starts, ends, strict=True):
        spans += (s - prev, e - s)
        prev = e
    rec = {
        "text": text,
        "w": data.word_ids(ws),
        "b": spans,
        "x": mask_ranges(~np.array(side.keep, dtype=bool)),
        "m": [list(m) for m in side.marks],
    }
    return rec, side.windows


def _common_ranges(index, windows: dict[str, list[tuple[str, ...]]]) -> dict[str, list[int]]:
    """Per text digest: the ranges of its windows whose chunk more than ``max_df`` documents
    of ``index`` hold."""
    cfg = index.config
    ids = {
        d: np.array(
            [SORTED_CHUNK.feature_id(c, cfg.hash_bits, cfg.seed) for c in ws],
            dtype=cfg.chunk_dtype,
        )
        for d, ws in windows.items()
    }
    every = np.concatenate([np.zeros(0, cfg.chunk_dtype), *ids.values()])
    common = common_chunk_ids(index, every)
    return {d: mask_ranges(np.isin(v, common)) for d, v in ids.items()}


def digest(text: str) -> str:
    """The name of a text's data file: the first 20 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def write_site_data(index, out: Path, docs, options) -> dict[str, int]:
    """Write ``data/site.js`` and one ``data/t/<digest>.js`` per distinct text of ``docs``
    (the index's documents) into the site ``out``; ``options``: the site's
    :class:`~simdask.evidence.pair_view.ViewOptions` (its ``min_chunks`` and ``min_words``).
    Returns ``texts`` (files written) and ``bytes`` (of all the data)."""
    cfg = index.config
    excl = index.pair_exclusions()
    data = SiteData()
    folder = out / DATA_DIR / "t"
    folder.mkdir(parents=True, exist_ok=True)
    names: dict[int, str] = {}
    records: dict[str, dict] = {}
    windows: dict[str, list[tuple[str, ...]]] = {}
    for d in docs:
        text = index.text(d.key)
        name = names[d.doc_id] = digest(text)
        if name in records:
            continue
        records[name], ws = text_record(text, cfg.k, excl, data)
        if cfg.max_df is not None:
            windows[name] = ws
    common = _common_ranges(index, windows) if cfg.max_df is not None else {}
    written = 0
    for name, rec in records.items():
        if cfg.max_df is not None:
            rec["c"] = common[name]
        body = f"SIMDASK_TEXT({js_value(name)},{js_value(rec)});\n"
        (folder / f"{name}.js").write_text(body, encoding="utf-8")
        written += len(body.encode("utf-8"))
    site = {
        "k": cfg.k,
        "min_chunks": options.min_chunks,
        "min_words": options.min_words,
        "large_chars": LARGE_CHARS,
        "common": cfg.max_df is not None,
        "docs": {str(d.doc_id): [d.key, names[d.doc_id]] for d in docs},
    }
    body = f"var SIMDASK_SITE={js_value(site)};\n"
    (out / DATA_DIR / "site.js").write_text(body, encoding="utf-8")
    return {"texts": len(records), "bytes": written + len(body.encode("utf-8"))}
