"""The all-pairs work of the phrase-rich corpus by size, from its document frequencies alone
(no index built, so no load dependence): Σ df(df-1)/2 over all chunks, the adaptive heavy
cutoff of :func:`simdask.kernels.heavy.choose_cutoff` and the light pair emissions it leaves
(what the similarity stage emitted before issue 33), and the cutoff and light work of a
bounded build (:func:`simdask.kernels.heavy_bounded.bounded_cutoff`, default budgets).

Chunks are the sorted 5-word windows of each document's words (the generator's tokens without
sentence boundaries are exactly :func:`simdask.kernels.words.words` of its text), keyed by a
64-bit polynomial of the sorted word ranks, counted per document once.

    python scripts/bench_phrase_work.py --sizes 10000,20000,40000,100000
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from simdask.config import DEFAULT_LIGHT_BUDGET, DEFAULT_LIGHT_FLOOR
from simdask.ingest.phrases import PhraseBank
from simdask.ingest.prose import BLOCK_DOCS, ProseParams, plant_passages
from simdask.kernels.heavy import choose_cutoff, light_work
from simdask.kernels.heavy_bounded import bounded_cutoff

from _benchutil import banner

K = 5


def block_keys(bank: PhraseBank, block: int, seed: int) -> list[np.ndarray]:
    """Per document of the block: its distinct chunk keys (as generate_phrase_block makes the
    documents: same random stream, lengths, planted passages)."""
    params = ProseParams()
    rng = np.random.default_rng([seed, block, 0xF4A5])
    mu = np.log(params.mean_words) - params.sigma**2 / 2
    lengths = np.maximum(
        rng.lognormal(mu, params.sigma, BLOCK_DOCS).astype(np.int64), params.min_words
    )
    tokens = bank.document_tokens(lengths, rng)
    plant_passages(tokens, [str(i) for i in range(BLOCK_DOCS)], params.reuse_fraction, rng)
    out = []
    for t in tokens:
        w = t[t != 0].astype(np.uint64)
        win = np.sort(sliding_window_view(w, K), axis=1)
        h = np.zeros(len(win), np.uint64)
        for j in range(K):
            h = h * np.uint64(1_000_003) + win[:, j]
        out.append(np.unique(h))
    return out


def figures(keys: np.ndarray, n_docs: int) -> dict:
    """The work figures of one corpus size from its (chunk key per document) array."""
    _, df = np.unique(keys, return_counts=True)
    values, counts = np.unique(df, return_counts=True)
    values, counts = values.astype(np.int64), counts.astype(np.int64)
    postings = int(keys.size)
    cutoff = choose_cutoff(values, counts, postings)
    lowered = bounded_cutoff(
        values, counts, postings, cutoff, DEFAULT_LIGHT_BUDGET, DEFAULT_LIGHT_FLOOR
    )
    return {
        "docs": n_docs,
        "postings": postings,
        "pair_work_all": light_work(values, counts, None),
        "cutoff_before": cutoff,
        "heavy_chunks_before": int(counts[values > (cutoff or 10**18)].sum()),
        "light_work_before": light_work(values, counts, cutoff),
        "bounded_cutoff": lowered,
        "light_work_bounded": light_work(values, counts, lowered if lowered else cutoff),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,20000,40000,100000")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(banner(), flush=True)
    bank = PhraseBank.build()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    parts: list[np.ndarray] = []
    n = 0
    for b in range(-(-sizes[-1] // BLOCK_DOCS)):
        docs = block_keys(bank, b, args.seed)
        for d in docs:
            if n in sizes:
                print(json.dumps(figures(np.concatenate(parts), n)), flush=True)
            parts.append(d)
            n += 1
    if n in sizes:
        print(json.dumps(figures(np.concatenate(parts), n)), flush=True)


if __name__ == "__main__":
    main()
