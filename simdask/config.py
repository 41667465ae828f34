"""IndexConfig: the settings an index is built with, stored in the index and checked on open."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from simdask.errors import ConfigError, check_keys
from simdask.kernels.lsh_bands import LshParams
from simdask.kernels.postings import chunk_dtype, shard_width

__all__ = [
    "DEFAULT_AUTO_BUDGET",
    "DEFAULT_HASH_BITS",
    "DEFAULT_LIGHT_BUDGET",
    "DEFAULT_LIGHT_FLOOR",
    "FORMAT_VERSION",
    "MAX_HASH_BITS",
    "SIMILARITY_MODES",
    "IndexConfig",
]

#: Version of the on-disk layout; an index of another version is refused on open.
FORMAT_VERSION = 3
#: format versions this simdask opens: 1 (one shard per range, a ``shards`` table) is migrated
#: to 2 (per-range segments and tombstones) when opened; 2 gets the reserve and floor tables
#: of 3 (:mod:`simdask.storage.lists`) on open and its floors before its first incremental run
#: (a simdask reading only 1 and 2 refuses a version-3 index instead of breaking its floors)
READABLE_VERSIONS = (1, 2, 3)
#: chunk-ID width of new indexes, in bits (docs/accuracy.md: why 64); an index stores its own
MAX_HASH_BITS = 64
DEFAULT_HASH_BITS = 64
#: similarity modes (:mod:`simdask.kernels.heavy`); ``auto`` picks one of the other two per build
SIMILARITY_MODES = ("auto", "informative", "exact")
#: (query document, document) pairs the ``auto`` mode lets the heavy-only search cost
#: (docs/realtext.md: man pages need ~1e8, generated prose of 30k documents ~1e9)
DEFAULT_AUTO_BUDGET = 500_000_000
#: light pair emissions per posting a full build may cost before it is bounded
#: (:mod:`simdask.kernels.heavy_bounded`; docs/scale.md "Phrase-rich text", issue 33)
DEFAULT_LIGHT_BUDGET = 4
#: light pair emissions below which a full build is never bounded (~50 s of one core's work)
DEFAULT_LIGHT_FLOOR = 500_000_000


#: reserve rows per document beyond ``top_k`` when ``IndexConfig.slack`` is None
DEFAULT_SLACK = 16


@dataclass(frozen=True)
class IndexConfig:
    """Settings of one index.

    ``k``: words per chunk. ``hash_bits``: bits of a chunk ID (16..64; uint32 IDs up to 32
    bits, uint64 above; the default 64 makes stored values equal exact counting over the true
    chunks in practice, docs/accuracy.md; 28 is the seed's setting). ``shards``: number
    of equal ranges the chunk-ID space is split into (fixed when the index is created: the
    merge and the per-range passes run one task per range); ``None``: not given, i.e. for a
    new index chosen by its first run for its cluster's worker threads
    (:func:`~simdask.engine.sizing.new_ranges`: 16 on up to four threads), for an existing
    index its own (an index's stored settings always hold a number). ``seed``: hash seed
    (changing it changes every chunk ID). ``threshold``: least similarity stored, in
    percent (0 < t <= 100).
    ``top_k``: most similar documents shown per document (the similarity table). ``slack``:
    rows kept per document beyond ``top_k`` (the reserve table; ``None``: ``min(top_k,
    DEFAULT_SLACK)``, 16: a list is recomputed only after more than 16 of its partners were
    deleted or modified, about 14 % of the index at once for a list of 116 rows, while the
    reserve adds at most 16 rows a document), so that
    deletions and modifications refill a list only when they ate into what is shown
    (:attr:`stored_depth`; an index written before this setting existed reads as ``0``).
    ``max_df``: chunks held by more than this many documents are not counted for similarity
    (``None``: count all).
    ``similarity_mode``: ``informative`` stores every pair sharing at least one light
    (non-heavy) chunk with its exact count over all chunks and does not search pairs sharing
    only heavy chunks; ``exact`` stores what counting over all chunks gives for every pair
    (:mod:`simdask.kernels.heavy`); ``auto`` (default) is ``exact`` when the dense heavy-only
    search of a full build is at most ``auto_budget`` (query document, document) pairs and
    ``informative`` otherwise (:func:`~simdask.kernels.heavy.auto_mode`), the choice kept by
    incremental runs until the next full build. ``auto_budget``: that budget, in pairs.
    ``heavy_df``: chunks held by more than this many
    documents are heavy (``None``: chosen per full build, see
    :func:`~simdask.kernels.heavy.choose_cutoff`; ``0``: every chunk). ``max_heavy``: most
    heavy chunks the adaptive cutoff makes (bounds the per-document bitsets: 1 bit each).
    ``light_budget``: pair emissions per posting the light chunks of an ``informative`` or
    ``auto`` full build may cost at the adaptive cutoff; above it, and above ``light_floor``
    pair emissions in all, the build is *bounded* (:mod:`simdask.kernels.heavy_bounded`: the
    cutoff lowered to fit the larger of the two, only pairs whose light chunks alone reach the
    threshold stored, with exact counts; None: never).
    ``lsh``: MinHash LSH setting ``"BANDSxROWS"`` such as ``"20x5"`` (``None``: no LSH mode;
    see :mod:`simdask.kernels.lsh_bands`). ``exclude_quotes`` / ``exclude_bibliography``: chunks
    whose words all lie inside a quotation / the reference list are left out of every chunk
    set (:mod:`simdask.kernels.exclusions`); changing them recomputes the index from its stored
    texts (template texts excluded by ``update --exclude`` are kept in the catalog, not here).
    ``candidates``: keep each document's paraphrase-robust candidate partners (content word
    pairs, :mod:`simdask.kernels.candidate_scores`), which the aligned totals then align
    first; off by default: the scoring's work grows faster than the corpus (docs/scale.md,
    "Candidate partners per range").
    """

    k: int = 5
    hash_bits: int = DEFAULT_HASH_BITS
    shards: int | None = None
    seed: int = 0
    threshold: float = 1.0
    top_k: int = 100
    slack: int | None = None
    max_df: int | None = None
    similarity_mode: str = "auto"
    auto_budget: int = DEFAULT_AUTO_BUDGET
    heavy_df: int | None = None
    max_heavy: int = 1024
    light_budget: int | None = DEFAULT_LIGHT_BUDGET
    light_floor: int = DEFAULT_LIGHT_FLOOR
    lsh: str | None = None
    exclude_quotes: bool = False
    exclude_bibliography: bool = False
    candidates: bool = False

    #: the settings that decide what is excluded: changing only these needs no --rebuild
    EXCLUSION_SETTINGS = ("exclude_quotes", "exclude_bibliography")

    def __post_init__(self) -> None:
        def need(cond: bool, what: str, value: Any) -> None:
            if not cond:
                raise ConfigError(f"{what}, got {value!r}")

        for name in ("k", "hash_bits", "shards", "seed", "top_k"):
            value = getattr(self, name)
            need(
                (isinstance(value, int) and not isinstance(value, bool))
                or (value is None and name == "shards"),
                f"{name} must be an integer{' or None' if name == 'shards' else ''}",
                value,
            )
        need(1 <= self.k <= 64, "k (words per chunk) must be in 1..64", self.k)
        need(
            16 <= self.hash_bits <= MAX_HASH_BITS,
            f"hash_bits must be in 16..{MAX_HASH_BITS}",
            self.hash_bits,
        )
        if self.shards is not None:
            self._check_shards(need)
        need(0 <= self.seed < 2**64, "seed must be in 0..2**64-1", self.seed)
        need(
            isinstance(self.threshold, (int, float)) and 0 < self.threshold <= 100,
            "threshold must be a percentage in (0, 100]",
            self.threshold,
        )
        need(self.top_k >= 1, "top_k must be at least 1", self.top_k)
        need(
            self.slack is None
            or (
                isinstance(self.slack, int) and not isinstance(self.slack, bool) and self.slack >= 0
            ),
            "slack must be None or an integer >= 0",
            self.slack,
        )
        need(
            self.max_df is None
            or (
                isinstance(self.max_df, int)
                and not isinstance(self.max_df, bool)
                and self.max_df >= 2
            ),
            "max_df must be None or an integer >= 2",
            self.max_df,
        )

        need(
            self.similarity_mode in SIMILARITY_MODES,
            "similarity_mode must be 'auto', 'informative' or 'exact'",
            self.similarity_mode,
        )
        for name in ("heavy_df", "max_heavy", "auto_budget", "light_budget", "light_floor"):
            value = getattr(self, name)
            need(
                (value is None and name in ("heavy_df", "light_budget"))
                or (isinstance(value, int) and not isinstance(value, bool) and value >= 0),
                f"{name} must be {'None or ' if name in ('heavy_df', 'light_budget') else ''}"
                "an integer >= 0",
                value,
            )
        for name in (*self.EXCLUSION_SETTINGS, "candidates"):
            need(
                isinstance(getattr(self, name), bool),
                f"{name} must be True or False",
                getattr(self, name),
            )
        if self.lsh is not None:
            object.__setattr__(self, "lsh", str(LshParams.parse(self.lsh)))

    def _check_shards(self, need) -> None:
        n = self.ranges
        need(1 <= n <= min(4096, 2**self.hash_bits), "shards must be in 1..4096", n)
        width = shard_width(self.hash_bits, n)
        need(
            (n - 1) * width < 2**self.hash_bits,
            f"shards must leave every range non-empty: at most "
            f"{-(-(2**self.hash_bits) // width)} ranges of {width} IDs fit in 2**{self.hash_bits}",
            n,
        )

    @property
    def ranges(self) -> int:
        """``shards``, which must be chosen (:class:`ConfigError` if it is None: the range
        count of a new index is chosen by its first run, ``simdask.write.settings``)."""
        if self.shards is None:
            raise ConfigError(
                "expected the settings of an index, whose shards (range count) is a number; "
                "found shards None (chosen for the cluster by the run that creates the index)"
            )
        return self.shards

    @property
    def stored_depth(self) -> int:
        """Rows kept per document: ``top_k`` shown plus ``slack`` in reserve."""
        slack = min(self.top_k, DEFAULT_SLACK) if self.slack is None else self.slack
        return self.top_k + slack

    @property
    def lsh_params(self):
        """The :class:`~simdask.kernels.lsh_bands.LshParams` of ``lsh``, or None."""
        if self.lsh is None:
            return None

        return LshParams.parse(self.lsh)

    def differences(self, other: IndexConfig) -> str:
        """The settings where ``other`` differs, in the CLI's words: ``"hash-bits: 20 in the
        index, 24 asked; k: 5 in the index, 6 asked"`` (``self`` is the index's)."""
        old, new = self.to_dict(), other.to_dict()
        return "; ".join(
            f"{name.replace('_', '-')}: {old[name]} in the index, {new.get(name)} asked"
            for name in old
            if old[name] != new.get(name)
        )

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IndexConfig:
        """Build from a dict written by :meth:`to_dict`; unknown keys are an error. A dict
        without ``slack`` (an index written before it existed, whose lists are cut at
        ``top_k``) reads as ``slack`` 0."""
        data = {"slack": 0, **data}
        check_keys("IndexConfig", data, (f.name for f in dataclasses.fields(cls)))
        return cls(**data)

    def replace(self, **changes: Any) -> IndexConfig:
        """A copy with some settings changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @property
    def shard_width(self) -> int:
        """Chunk IDs per shard range (the last range may be shorter)."""
        return shard_width(self.hash_bits, self.ranges)

    @property
    def chunk_dtype(self) -> np.dtype:
        """The dtype of this index's chunk IDs: uint32 up to 32 ``hash_bits``, else uint64."""
        return chunk_dtype(self.hash_bits)

    @property
    def shard_layout(self) -> str:
        """The settings that decide what a shard holds (k, hash bits, seed, shard count), as a
        string: a worker-side cached shard is used only under the same layout."""
        return f"k{self.k}-h{self.hash_bits}-s{self.seed}-n{self.ranges}"
