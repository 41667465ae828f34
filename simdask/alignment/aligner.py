"""The aligner: the passages of text A taken from text B (seed, extend, filter).

1. Both texts are split into words and sentences (:mod:`.segment`); content words (not an
   English stop word; for other languages every word) are stemmed (:mod:`.stemming`).
2. Seeds (:mod:`.seeds`): sentence pairs similar by tf-isf cosine and Dice, sentences sharing
   an exact sorted chunk, sentences sharing a stop-word n-gram (English only).
3. Extension (:mod:`.extend`) with the normal gaps; when the passages found are
   ``summary_ratio`` times longer in B than in A (or none is found), again with the summary
   gaps and seed thresholds (taken in the second case only if its passages are that long).
4. Filtering (:mod:`.filtering`): overlaps in A resolved, short passages dropped;
   in a summary, neighbours that follow each other in both texts joined
   (:func:`.extend.join_in_order`; their joined lengths also decide step 3's second variant).
   Verbatim runs (:mod:`.verbatim`) replace the passages they mostly cover.
5. Each passage gets a kind (verbatim when exact chunks cover most words of both spans,
   summarised when the B span is ``summarised_ratio`` times longer, else paraphrased) and its
   validation cosine as score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from simdask.alignment.config import AlignConfig
from simdask.alignment.extend import Fragment, integrate, join_in_order, trim
from simdask.alignment.filtering import drop_short, resolve_overlaps
from simdask.alignment.null_model import NullModel
from simdask.alignment.pairs import SentenceCosine, SentencePairs, rare_terms, similar_pairs
from simdask.alignment.passage import Passage
from simdask.alignment.seeds import key_matches, window_keys
from simdask.alignment.segment import Segmented, segment
from simdask.alignment.vectors import SentenceVectors, fragment_cosine, sentence_vectors
from simdask.alignment.verbatim import prefer_verbatim, verbatim_runs
from simdask.alignment.word_keys import ids_of, stem_ids_of, word_ids
from simdask.errors import ConfigError
from simdask.kernels.stopwords import CONTENT_STOPWORDS, NGRAM_STOPWORDS

__all__ = ["PreparedText", "align", "align_prepared", "prepare", "word_ids"]

#: the validation cosine of a range of A's sentences and one of B's
Similarity = Callable[[tuple[int, int], tuple[int, int]], float]

_CONTENT_STOP = np.sort(word_ids(CONTENT_STOPWORDS, len(CONTENT_STOPWORDS)))
_NGRAM_STOP = np.sort(word_ids(NGRAM_STOPWORDS, len(NGRAM_STOPWORDS)))


@dataclass(frozen=True)
class PreparedText:
    """One text's units and features, as :func:`prepare` makes them: what the aligner
    computes of a text alone (segmentation, word IDs, stems), so that a text aligned with
    many others is prepared once. Its arrays are read-only. ``language`` and
    ``min_sentence_words``: the settings it was prepared with (:func:`align_prepared`
    checks them against its own)."""

    seg: Segmented
    hashes: np.ndarray  # per kept word
    content: np.ndarray  # per kept word: a content word
    stems: np.ndarray  # hash of the stem of each content word
    barriers: np.ndarray  # cumulative barrier count per sentence
    language: str
    min_sentence_words: int
    #: the keys below, each computed at its first use (a text is aligned with several others)
    kept: dict = field(default_factory=dict, compare=False, repr=False)

    def chunk_keys(self, k: int) -> np.ndarray:
        """The key of each window of ``k`` words, the words sorted inside it
        (:func:`.seeds.window_keys`), read-only."""
        if ("chunks", k) not in self.kept:
            self.kept[("chunks", k)] = _frozen(window_keys(self.hashes, k, True))
        return self.kept[("chunks", k)]

    def stopword_keys(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The positions of its stop words (those of n-grams) and the key of each run of
        ``n`` consecutive ones in that order (:func:`.seeds.window_keys`), read-only."""
        if ("stop", n) not in self.kept:
            at = _frozen(np.flatnonzero(np.isin(self.hashes, _NGRAM_STOP)))
            self.kept[("stop", n)] = at, _frozen(window_keys(self.hashes[at], n, False))
        return self.kept[("stop", n)]


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def prepare(
    text: str, config: AlignConfig | None = None, excluded: Sequence[tuple[int, int]] = ()
) -> PreparedText:
    """``text`` split into words and sentences (``excluded``: ``(start, end)`` code-point
    spans whose words are dropped and which no passage crosses), its words' IDs and its
    content words' stems, under ``config`` (None: defaults; only ``language`` and
    ``min_sentence_words`` matter here). Independent of the text it is aligned with:
    ``align_prepared(prepare(a), prepare(b))`` is ``align(a, b)``, bit for bit."""
    config = config or AlignConfig()
    seg = segment(text, excluded, config.min_sentence_words)
    for name in ("starts", "ends", "sentence", "sent_first", "sent_last", "barrier", "breaks"):
        _frozen(getattr(seg, name))
    hashes = ids_of(seg.tokens)  # each distinct word hashed (and below stemmed) once a process
    english = config.language.lower() == "english"
    content = ~np.isin(hashes, _CONTENT_STOP) if english else np.ones(len(hashes), bool)
    words = [seg.tokens[i] for i in np.flatnonzero(content).tolist()]
    stem_hashes = stem_ids_of(words, config.language)
    arrays = (hashes, content, stem_hashes, np.cumsum(seg.barrier))
    frozen_hashes, frozen_content, frozen_stems, barriers = (_frozen(a) for a in arrays)
    return PreparedText(
        seg,
        frozen_hashes,
        frozen_content,
        frozen_stems,
        barriers,
        config.language,
        config.min_sentence_words,
    )


def _terms(
    a: PreparedText, b: PreparedText
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], tuple[int, int], int]:
    """Both texts' content words as term IDs ``0 <= id < n``, their sentences, the texts'
    sentence counts and ``n``."""
    both = np.concatenate([a.stems, b.stems])
    uniq, ids = np.unique(both, return_inverse=True)
    na = len(a.stems)
    sents = (a.seg.sentence[a.content], b.seg.sentence[b.content])
    return (ids[:na], ids[na:]), sents, (a.seg.n_sentences, b.seg.n_sentences), len(uniq)


def _vectors(a: PreparedText, b: PreparedText) -> tuple[SentenceVectors, SentenceVectors]:
    return sentence_vectors(*_terms(a, b))


def _significant(
    found: list[Fragment], seeds: np.ndarray, a: PreparedText, b: PreparedText, cos, config,
    normal: list[Fragment],
) -> list[Fragment]:  # fmt: skip
    """The summary variant's passages with evidence: holding a passage of the normal variant
    (``normal``: seeds at the normal thresholds, validated), or beating chance
    (:mod:`.null_model`: their seeds, of ``seeds`` inside the passage's sentences of A and
    B, or their sentences' best matches, against B with its words shuffled across its
    sentences; at most ``summary_alpha``)."""
    if not found or config.summary_shuffles == 0 or config.summary_alpha >= 1:
        return found
    null: list[NullModel] = []  # built when a passage needs it
    out = []
    for f in found:
        if any(_holds(f, n) for n in normal):
            out.append(f)
            continue
        if not null:
            low = (config.summary_cosine_threshold, config.summary_dice_threshold)
            shuffles, block = config.summary_shuffles, config.pair_block
            null.append(NullModel.of(*_terms(a, b), low, config.rare_share, shuffles, block))
        ra, rb = (f.a_first, f.a_last), (f.b_first, f.b_last)
        inside = (seeds[:, 0] >= ra[0]) & (seeds[:, 0] <= ra[1])
        inside &= (seeds[:, 1] >= rb[0]) & (seeds[:, 1] <= rb[1])
        k = int(np.count_nonzero(inside))
        if null[0].p_value(k, cos, ra, rb) <= config.summary_alpha:
            out.append(f)
    return out


def _holds(f: Fragment, g: Fragment) -> bool:
    """Whether ``f`` holds ``g``: overlaps it in both texts."""
    return (
        f.a_first <= g.a_last
        and g.a_first <= f.a_last
        and f.b_first <= g.b_last
        and g.b_first <= f.b_last
    )


def _chunk_matches(
    a: PreparedText, b: PreparedText, config: AlignConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Word windows ``(i, j)`` of A and B with the same sorted chunk (no window reaching
    across excluded text)."""
    k = config.chunk_words
    ia, ib = key_matches(a.chunk_keys(k), b.chunk_keys(k), config.max_key_repeats)
    ok = (a.seg.breaks[ia] == a.seg.breaks[ia + k - 1]) & (
        b.seg.breaks[ib] == b.seg.breaks[ib + k - 1]
    )
    return ia[ok], ib[ok]


def _stopword_seeds(a: PreparedText, b: PreparedText, config: AlignConfig) -> np.ndarray:
    """Sentence pairs sharing a stop-word n-gram (English only)."""
    if config.language.lower() != "english":
        return np.zeros((0, 2), dtype=np.int64)
    n = config.stopword_ngram
    (pa, keys_a), (pb, keys_b) = a.stopword_keys(n), b.stopword_keys(n)
    ia, ib = key_matches(keys_a, keys_b, config.max_key_repeats)
    mid = n // 2
    return np.stack([a.seg.sentence[pa[ia + mid]], b.seg.sentence[pb[ib + mid]]], axis=1).astype(
        np.int64
    )


def _uniform_count(n_pairs: int, config: AlignConfig) -> int | None:
    """The number of sentence pairs passing the seed thresholds from which the texts are
    uniformly similar: the least ``c`` with ``c / n_pairs > max_seed_share``, for at least 400
    sentence pairs (texts made of the same few words, such as generated text or lists; their
    sentence pairs are no evidence of copying then, verbatim runs still are); None below 400."""
    if n_pairs < 400:
        return None
    c = int(config.max_seed_share * n_pairs)
    while c / n_pairs <= config.max_seed_share:
        c += 1
    while c > 0 and (c - 1) / n_pairs > config.max_seed_share:
        c -= 1
    return c


def _sentence_pairs(va, vb, config: AlignConfig) -> SentencePairs | None:
    """The sentence pairs that can be sentence seeds (passing the lower of the normal and
    the summary thresholds and sharing a rare stem), in blocks of ``config.pair_block``; None
    when the texts are uniformly similar (or sentence seeds are off)."""
    if not config.sentence_seeds:
        return None
    normal = (config.cosine_threshold, config.dice_threshold)
    summary = (config.summary_cosine_threshold, config.summary_dice_threshold)
    keep = (min(normal[0], summary[0]), min(normal[1], summary[1]))
    rare = rare_terms(va, vb, config.rare_share) if config.rare_share < 1 else None
    limit = _uniform_count(len(va.norm) * len(vb.norm), config)
    pairs = similar_pairs(va, vb, keep, normal, rare, limit, config.pair_block)
    return None if pairs.stopped else pairs


def _seeds(a: PreparedText, b: PreparedText, pairs, chunks, config: AlignConfig, summary=False):
    """The seeds, int64 ``(n, 2)``, sorted and distinct (``summary``: the summary
    variant's thresholds for the sentence pairs)."""
    parts = [np.zeros((0, 2), dtype=np.int64)]
    if pairs is not None:
        low = (config.summary_cosine_threshold, config.summary_dice_threshold)
        cut = low if summary else (config.cosine_threshold, config.dice_threshold)
        parts.append(pairs.passing(*cut))
    if config.chunk_seeds:
        ia, ib = chunks
        parts.append(np.stack([a.seg.sentence[ia], b.seg.sentence[ib]], axis=1))
    if config.stopword_seeds:
        parts.append(_stopword_seeds(a, b, config))
    return np.unique(np.concatenate(parts).astype(np.int64), axis=0)


def _passages(
    found: list[Fragment], a: PreparedText, b: PreparedText, cos, config
) -> list[Fragment]:
    kept = resolve_overlaps(found, cos)
    spans = [_spans(f, a, b) for f in kept]
    ok = drop_short(spans, config.min_chars)
    return [f for f, good in zip(kept, ok, strict=True) if good]


def _spans(f: Fragment, a: PreparedText, b: PreparedText) -> tuple[int, int, int, int]:
    return (*a.seg.span(f.a_first, f.a_last), *b.seg.span(f.b_first, f.b_last))


def _cosines(va: SentenceVectors, vb: SentenceVectors) -> Similarity:
    """The validation cosine of sentence ranges of A and B (:func:`fragment_cosine`), each
    pair of ranges computed once per pair of texts: the extension's levels, its two variants,
    the trimming and the joining ask for the same ranges again."""
    memo: dict[tuple[tuple[int, int], tuple[int, int]], float] = {}

    def similarity(ra: tuple[int, int], rb: tuple[int, int]) -> float:
        got = memo.get((ra, rb))
        if got is None:
            got = memo[(ra, rb)] = fragment_cosine(va, ra, vb, rb)
        return got

    return similarity


def _extend(seeds, a: PreparedText, b: PreparedText, similarity, gaps, config) -> list[Fragment]:
    return integrate(
        seeds,
        gaps,
        (a.barriers, b.barriers),
        similarity,
        config.validation_threshold,
        config.min_gap,
        config.min_seeds,
        config.single_seed_threshold,
    )


def _trim(found: list[Fragment], cos, similarity, config) -> list[Fragment]:
    """Passages narrowed to their mutually best seeds (:func:`.extend.trim`), those that no
    longer validate dropped."""
    narrowed = [trim(f, cos, similarity, config.trim_keep_cosine) for f in found]
    return [f for f in narrowed if f.score >= config.validation_threshold]


def _join(
    found: list[Fragment], a: PreparedText, b: PreparedText, similarity, config
) -> list[Fragment]:
    """Passages that follow each other in both texts joined (:func:`join_in_order`)."""
    return join_in_order(
        found,
        config.summary_suspicious_gap,
        (a.barriers, b.barriers),
        similarity,
        config.validation_threshold,
    )


def _lengths(found: list[Fragment], a: PreparedText, b: PreparedText) -> tuple[int, int]:
    spans = [_spans(f, a, b) for f in found]
    return sum(s[1] - s[0] for s in spans), sum(s[3] - s[2] for s in spans)


def _exact_share(words: tuple[int, int, int, int], chunks, k: int) -> float:
    """The smaller of the shares of A's and B's words in the spans (first, last word of A
    and of B) covered by chunk matches inside both spans."""
    a0, a1, b0, b1 = words
    ia, ib = chunks
    hit = (ia >= a0) & (ia + k - 1 <= a1) & (ib >= b0) & (ib + k - 1 <= b1)
    cover_a = np.zeros(a1 - a0 + k, dtype=bool)
    cover_b = np.zeros(b1 - b0 + k, dtype=bool)
    for off in range(k):
        cover_a[ia[hit] - a0 + off] = True
        cover_b[ib[hit] - b0 + off] = True
    return float(min(cover_a[: a1 - a0 + 1].mean(), cover_b[: b1 - b0 + 1].mean()))


def _kind(f: Fragment, a: PreparedText, b: PreparedText, chunks, config: AlignConfig) -> str:
    words = (
        int(a.seg.sent_first[f.a_first]),
        int(a.seg.sent_last[f.a_last]),
        int(b.seg.sent_first[f.b_first]),
        int(b.seg.sent_last[f.b_last]),
    )
    if (words[3] - words[2] + 1) >= config.summarised_ratio * (words[1] - words[0] + 1):
        return "summarised"
    verbatim = _exact_share(words, chunks, config.chunk_words) >= config.verbatim_share
    return "verbatim" if verbatim else "paraphrased"


def _verbatim(a: PreparedText, b: PreparedText, chunks, config: AlignConfig) -> list[Passage]:
    """The verbatim runs at least ``min_chars`` long on both sides, as passages."""
    k = config.chunk_words
    ia, ib = chunks
    runs = verbatim_runs(ia, ib, k, 2 * k, (a.seg.breaks, b.seg.breaks))
    out = []
    for a0, a1, b0, b1 in runs.tolist():
        span = (a.seg.starts[a0], a.seg.ends[a1], b.seg.starts[b0], b.seg.ends[b1])
        if span[1] - span[0] >= config.min_chars and span[3] - span[2] >= config.min_chars:
            score = _exact_share((a0, a1, b0, b1), chunks, k)
            a_start, a_end, b_start, b_end = (int(x) for x in span)
            out.append(Passage(a_start, a_end, b_start, b_end, "verbatim", score))
    return out


def align(
    text_a: str,
    text_b: str,
    config: AlignConfig | None = None,
    *,
    excluded_a: Sequence[tuple[int, int]] = (),
    excluded_b: Sequence[tuple[int, int]] = (),
) -> list[Passage]:
    """The passages of ``text_a`` taken from ``text_b``, sorted by ``a_start`` and not
    overlapping in A (offsets: code points into the texts as given). ``excluded_a`` and
    ``excluded_b`` are ``(start, end)`` spans no passage may cover (their words seed
    nothing and passages stop at them). A text aligned with many others: :func:`prepare`
    it once and call :func:`align_prepared` (the same passages)."""
    config = config or AlignConfig()
    a, b = prepare(text_a, config, excluded_a), prepare(text_b, config, excluded_b)
    return align_prepared(a, b, config)


def _check_prepared(t: PreparedText, config: AlignConfig, name: str) -> None:
    if (t.language, t.min_sentence_words) != (config.language, config.min_sentence_words):
        raise ConfigError(
            f"expected text {name} prepared with language={config.language!r} and "
            f"min_sentence_words={config.min_sentence_words}, found language={t.language!r} "
            f"and min_sentence_words={t.min_sentence_words}"
        )


def align_prepared(
    a: PreparedText, b: PreparedText, config: AlignConfig | None = None
) -> list[Passage]:
    """The passages of text A taken from text B (:func:`align`), of texts already
    :func:`prepare` d with the same ``language`` and ``min_sentence_words`` as ``config``
    (None: defaults; raises :class:`~simdask.errors.ConfigError` when they differ)."""
    config = config or AlignConfig()
    _check_prepared(a, config, "A")
    _check_prepared(b, config, "B")
    if a.seg.n_sentences == 0 or b.seg.n_sentences == 0:
        return []
    va, vb = _vectors(a, b)
    cos = SentenceCosine.of(va, vb, config.pair_block)
    sim = _cosines(va, vb)
    pairs = _sentence_pairs(va, vb, config)
    chunks = _chunk_matches(a, b, config)
    seeds = _seeds(a, b, pairs, chunks, config)
    gaps = (config.max_gap, config.max_gap)
    found = _extend(seeds, a, b, sim, gaps, config)
    if config.trim:
        found = _trim(found, cos, sim, config)
    found = _passages(found, a, b, cos, config)
    # joined passages decide whether this is a summary, and are kept only for one: joining
    # in order across seedless sentences would mark a student's own paragraph between two
    # copied sections as taken
    joined = _join(found, a, b, sim, config) if config.join_passages else found
    len_a, len_b = _lengths(joined, a, b)
    if not found or len_b >= config.summary_ratio * len_a:
        # the summary variant (wider source gap, its own seed thresholds): taken when the
        # normal variant's passages are long in B against A, or when that found none and
        # the summary variant's passages are
        seeds = _seeds(a, b, pairs, chunks, config, summary=True)
        gaps = (config.summary_suspicious_gap, config.summary_source_gap)
        summary = _extend(seeds, a, b, sim, gaps, config)
        # the passages that beat chance (two texts of one vocabulary share frequent words)
        summary = _significant(summary, seeds, a, b, cos, config, found)
        summary = _passages(summary, a, b, cos, config)
        if config.join_passages:
            summary = _join(summary, a, b, sim, config)
        sum_a, sum_b = _lengths(summary, a, b)
        if summary and (found or sum_b >= config.summary_ratio * sum_a):
            found = summary
    out = []
    for f in found:
        a0, a1, b0, b1 = _spans(f, a, b)
        kind = _kind(f, a, b, chunks, config)
        out.append(Passage(a0, a1, b0, b1, kind, min(max(f.score, 0.0), 1.0)))
    return prefer_verbatim(out, _verbatim(a, b, chunks, config), config.verbatim_cover)
