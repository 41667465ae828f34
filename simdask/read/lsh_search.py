"""MinHash LSH searches (read-only): all pairs of an index, query texts, two groups.

Candidates are the pairs sharing a band key; each is kept with its Jaccard estimate from the
whole signature (the share of agreeing positions) when that is at least ``min_jaccard``. The
:class:`~simdask.index.Index` methods ``lsh_pairs`` and ``lsh_query`` are thin over these. None
of this imports dask, distributed or zarr.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from simdask.cluster.spec import default_workers
from simdask.config import IndexConfig
from simdask.errors import ConfigError
from simdask.kernels.features import SORTED_CHUNK
from simdask.kernels.lsh_bands import LshParams, band_keys, candidate_pairs, cross_pairs, is_empty
from simdask.kernels.minhash import agreement, signatures_csr
from simdask.storage.lsh_store import LshManifest, LshStore, lsh_root

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = [
    "LshMatch",
    "LshPair",
    "default_threads",
    "exact_jaccard",
    "group_pairs",
    "index_pairs",
    "index_query",
    "text_pairs",
]

#: candidate pairs whose signatures are compared at once (bounds memory: pairs x perms bytes)
_PAIR_BLOCK = 65536
#: texts chunked and signed at once by one thread (bounds memory; 500 used ~25 % less CPU than
#: 2000 on 500-word texts, 2-core VM, 2026-11-25: the arrays of a block stay in cache)
_TEXT_BLOCK = 500


def default_threads() -> int:
    """Threads the in-memory LSH searches use when not told: one per core this process may
    run on (:func:`~simdask.cluster.spec.default_workers`)."""
    return default_workers()


@dataclass(frozen=True)
class LshPair:
    """A pair of documents sharing a band key. ``jaccard``: estimated Jaccard similarity of
    their chunk sets (fraction 0..1); ``exact``: the exact one, when asked for (else None)."""

    doc: str
    other: str
    jaccard: float
    exact: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"doc", "other", "jaccard"}`` (and ``"exact_jaccard"`` when computed)."""
        d: dict[str, Any] = {"doc": self.doc, "other": self.other, "jaccard": self.jaccard}
        if self.exact is not None:
            d["exact_jaccard"] = self.exact
        return d


@dataclass(frozen=True)
class LshMatch:
    """An indexed document ``key`` found for a query text, with the estimated Jaccard
    similarity (fraction 0..1)."""

    key: str
    jaccard: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"key": self.key, "jaccard": self.jaccard}


def _estimates(sig_a: np.ndarray, sig_b: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Jaccard estimates of pairs ``(sig_a[a[i]], sig_b[b[i]])``, in blocks."""
    out = np.empty(len(a), dtype=np.float64)
    for lo in range(0, len(a), _PAIR_BLOCK):
        hi = lo + _PAIR_BLOCK
        out[lo:hi] = agreement(sig_a[a[lo:hi]], sig_b[b[lo:hi]])
    return out


def _manifest(idx: Index) -> tuple[LshManifest, LshParams]:
    man = LshManifest.from_json(idx.catalog.meta("lsh"))
    params = idx.config.lsh_params
    if man is None or params is None:
        raise ConfigError(
            f"index at {idx.path} has no LSH data: build it with `simdask update INDEX "
            "SOURCE... --lsh BANDSxROWS` (an index with documents needs --rebuild)"
        )
    return man, params


def index_pairs(idx: Index, min_jaccard: float = 0.0, exact: bool = False) -> list[LshPair]:
    """All candidate pairs of the index with estimated Jaccard >= ``min_jaccard`` (fraction),
    each unordered pair once, best first; ``exact``: also the exact Jaccard of the chunk sets
    (from the stored texts)."""
    with idx.catalog.read_snapshot():  # one read snapshot: manifest and documents agree
        man, params = _manifest(idx)
        store = LshStore(lsh_root(idx.path), idx.reads.check_file)
        keys, docs = store.all_bands(man)
        a, b = candidate_pairs(keys, docs)
        ids = np.union1d(a, b)
        sigs = store.signatures_of(man, ids, params.perms)
        est = _estimates(sigs, sigs, np.searchsorted(ids, a), np.searchsorted(ids, b))
        keep = est >= min_jaccard
        a, b, est = a[keep], b[keep], est[keep]
        names = idx.catalog.keys_of(np.union1d(a, b).tolist())
    ex = _exact_of(idx, names, a, b) if exact else [None] * len(a)
    pairs = [
        LshPair(min(names[x], names[y]), max(names[x], names[y]), j, e)
        for x, y, j, e in zip(a.tolist(), b.tolist(), est.tolist(), ex, strict=True)
    ]
    pairs.sort(key=lambda p: (-p.jaccard, p.doc, p.other))
    return pairs


def _exact_of(idx: Index, names: dict[int, str], a: np.ndarray, b: np.ndarray) -> list[float]:
    docs = sorted(names)
    texts = [idx.text(names[d]) for d in docs]
    sets = _chunk_sets(texts, idx.config, idx.exclusions())
    pos = {d: i for i, d in enumerate(docs)}
    return [
        exact_jaccard(sets[pos[x]], sets[pos[y]])
        for x, y in zip(a.tolist(), b.tolist(), strict=True)
    ]


def _chunk_sets(texts: Sequence[str], config: IndexConfig, excl=None) -> list[np.ndarray]:
    cb = SORTED_CHUNK.chunk(list(texts), config.k, config.hash_bits, config.seed, excl)
    order = np.argsort(cb.doc, kind="stable")
    ids, doc = cb.chunk_ids[order], cb.doc[order]
    cut = np.searchsorted(doc, np.arange(len(texts) + 1))
    return [ids[cut[i] : cut[i + 1]] for i in range(len(texts))]


def exact_jaccard(set_a: np.ndarray, set_b: np.ndarray) -> float:
    """Exact Jaccard similarity (fraction) of two arrays of distinct chunk IDs (0 if both
    are empty)."""
    union = len(np.union1d(set_a, set_b))
    return len(np.intersect1d(set_a, set_b, assume_unique=True)) / union if union else 0.0


def _text_lsh(
    texts: Sequence[str],
    config: IndexConfig,
    params: LshParams,
    block: int = _TEXT_BLOCK,
    excl=None,
    threads: int = 1,
):
    """Signatures and band keys of texts, chunked ``block`` texts at a time (bounded memory),
    under the index's exclusions ``excl`` (None: none). With ``threads`` > 1 the blocks run in
    a thread pool (numpy releases the GIL in the word hashing, the MinHash blocks and the
    sorts); the blocks are joined in text order, so the result does not depend on ``threads``.
    """
    if threads < 1:
        raise ConfigError(f"threads must be at least 1, got {threads}")

    def one(lo: int) -> tuple[np.ndarray, np.ndarray]:
        part = list(texts[lo : lo + block])
        # every window's chunk ID in document order: a signature needs no sorted distinct set
        ids, doc, _ = SORTED_CHUNK.windows(part, config.k, config.hash_bits, config.seed, excl)
        offsets = np.searchsorted(doc, np.arange(len(part) + 1))
        s = signatures_csr(ids, offsets, params.perms, config.seed)
        return s, band_keys(s, params)

    starts = range(0, len(texts), block)
    if threads > 1 and len(starts) > 1:
        with ThreadPoolExecutor(min(threads, len(starts))) as ex:
            done = list(ex.map(one, starts))  # map keeps the order of the blocks
    else:
        done = [one(lo) for lo in starts]
    sigs = [np.zeros((0, params.perms), np.uint32)] + [s for s, _ in done]
    keys = [np.zeros((0, params.bands), np.uint64)] + [k for _, k in done]
    return np.concatenate(sigs), np.concatenate(keys)


def index_query(idx: Index, texts: Sequence[str], min_jaccard: float = 0.0) -> list[list[LshMatch]]:
    """For each text (not in the index), the indexed documents sharing one of its band keys
    with estimated Jaccard >= ``min_jaccard`` (fraction), best first. Read-only."""
    with idx.catalog.read_snapshot():
        man, params = _manifest(idx)
        store = LshStore(lsh_root(idx.path), idx.reads.check_file)
        sigs, keys = _text_lsh(texts, idx.config, params, excl=idx.exclusions())
        keys = keys[~is_empty(sigs)] if len(sigs) else keys
        rows = np.flatnonzero(~is_empty(sigs))
        hits = store.docs_with_keys(man, keys)
        packed = np.unique((rows[hits[:, 0]].astype(np.int64) << 32) | hits[:, 1])
        q, d = packed >> 32, packed & 0xFFFFFFFF
        ids = np.unique(d)
        dsig = store.signatures_of(man, ids, params.perms)
        est = _estimates(sigs, dsig, q, np.searchsorted(ids, d))
        keep = est >= min_jaccard
        q, d, est = q[keep], d[keep], est[keep]
        names = idx.catalog.keys_of(np.unique(d).tolist())
    out: list[list[LshMatch]] = [[] for _ in texts]
    for qi, di, j in zip(q.tolist(), d.tolist(), est.tolist(), strict=True):
        out[qi].append(LshMatch(names[di], j))
    for m in out:
        m.sort(key=lambda x: (-x.jaccard, x.key))
    return out


def group_pairs(
    texts_a: Sequence[str],
    texts_b: Sequence[str],
    params: LshParams,
    config: IndexConfig | None = None,
    min_jaccard: float = 0.0,
    excl=None,
    threads: int | None = None,
) -> list[tuple[int, int, float]]:
    """Two groups (paper 003's second use case): ``(i, j, jaccard)`` for text ``i`` of A and
    ``j`` of B sharing a band key with estimated Jaccard >= ``min_jaccard``, best first.
    In memory, no index. ``excl``: an :class:`~simdask.kernels.exclusions.Exclusions` every
    chunk set leaves out (None: none). ``threads``: as for :func:`text_pairs`."""
    config = config or IndexConfig()
    n = default_threads() if threads is None else threads
    sa, ka = _text_lsh(texts_a, config, params, excl=excl, threads=n)
    sb, kb = _text_lsh(texts_b, config, params, excl=excl, threads=n)
    ra, rb = np.flatnonzero(~is_empty(sa)), np.flatnonzero(~is_empty(sb))  # texts with chunks
    i, j = cross_pairs(ka[ra], kb[rb])
    i, j = ra[i], rb[j]
    est = _estimates(sa, sb, i, j)
    keep = est >= min_jaccard
    out = list(zip(i[keep].tolist(), j[keep].tolist(), est[keep].tolist(), strict=True))
    out.sort(key=lambda t: (-t[2], t[0], t[1]))
    return out


def text_pairs(
    texts: Sequence[str],
    params: LshParams,
    config: IndexConfig | None = None,
    min_jaccard: float = 0.0,
    threads: int | None = None,
) -> list[tuple[int, int, float]]:
    """All pairs of one group of texts (paper 003's first use case without an index):
    ``(i, j, jaccard)`` with ``i < j`` for texts sharing a band key, with estimated Jaccard
    >= ``min_jaccard`` (fraction), best first. In memory, one process: chunk IDs (``config``'s
    k, hash bits and seed; default :class:`IndexConfig`), signatures, band keys, pairs,
    estimates. ``threads``: threads chunking and signing blocks of texts at once (None: one per
    CPU, :func:`default_threads`); the result is the same for any number.
    ``simdask lsh dedup`` runs it on files."""
    config = config or IndexConfig()
    n = default_threads() if threads is None else threads
    sigs, keys = _text_lsh(texts, config, params, threads=n)
    rows = np.flatnonzero(~is_empty(sigs))  # texts with chunks
    a, b = candidate_pairs(keys[rows].ravel(), np.repeat(rows, params.bands))
    est = _estimates(sigs, sigs, a, b)
    keep = est >= min_jaccard
    out = list(zip(a[keep].tolist(), b[keep].tolist(), est[keep].tolist(), strict=True))
    out.sort(key=lambda t: (-t[2], t[0], t[1]))
    return out
