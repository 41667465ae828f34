"""Which candidate score ranks the true source highest (issue 29: summaries), by brute force
over an index's stored content n-gram sets.

``python scripts/eval_candidate_scores.py --corpus PATH --index DIR`` (the index as
scripts/eval_retrieval.py builds it, with candidates). Reads every document's stored feature
IDs (``candidate_features``), builds the suspicious x source matrix of the stored score
(summed weights ``round(1000 ln((max_df + 1) / df))`` of the shared features held by
2..max_df documents, :mod:`simdask.kernels.candidate_scores`) and of normalised variants, and prints
per sub-corpus the recall of the labelled sources at 10, at max(10, labelled) and at 50 among
the source documents, over the **whole** ranking (not bounded by the stored depth).
"""

from __future__ import annotations

import argparse
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _pan_pool import SUBCORPORA, read_pairs

MAX_DF = 50


def matrices(index: Path):
    """(features of the suspicious documents, of the sources, the feature weights,
    suspicious name -> row, source name -> row)."""
    c = sqlite3.connect(index / "catalog.sqlite")
    keys = dict(c.execute("SELECT doc_id, key FROM documents"))
    feats = {
        d: np.frombuffer(b, dtype="<u4")
        for d, b in c.execute("SELECT doc_id, ids FROM candidate_features")
    }
    docs = sorted(feats)
    every = np.unique(np.concatenate([feats[d] for d in docs]))
    rows = np.concatenate([np.full(len(feats[d]), i) for i, d in enumerate(docs)])
    cols = np.concatenate([np.searchsorted(every, feats[d]) for d in docs])
    x = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(docs), len(every)))
    df = np.asarray(x.sum(0)).ravel()
    inside = (df >= 2) & (df <= MAX_DF)
    w = np.where(inside, np.rint(1000 * np.log((MAX_DF + 1) / np.maximum(df, 1))), 0.0)
    is_src = np.array([keys[d].startswith("src/") for d in docs])
    susp, src = np.flatnonzero(~is_src), np.flatnonzero(is_src)
    s_rows = {keys[docs[j]][5:]: n for n, j in enumerate(susp)}
    r_rows = {keys[docs[j]][4:]: n for n, j in enumerate(src)}
    return x[susp], x[src], w, s_rows, r_rows


def recall_row(m: np.ndarray, pairs, s_rows, r_rows, n_labelled: Counter) -> str:
    """Per sub-corpus with plagiarism: recall at 10 / max(10, labelled) / 50, percent."""
    order = np.argsort(-m, axis=1, kind="stable")
    rank = np.empty_like(order)
    rank[np.arange(m.shape[0])[:, None], order] = np.arange(m.shape[1])
    out = []
    for sub, _ in SUBCORPORA[1:]:
        rk = np.array([rank[s_rows[a], r_rows[b]] for a, b in pairs[sub]])
        deep = np.array([max(10, n_labelled[a]) for a, _ in pairs[sub]])
        out.append(
            f"{100 * np.mean(rk < 10):.1f} / {100 * np.mean(rk < deep):.1f} / "
            f"{100 * np.mean(rk < 50):.1f}"
        )
    return " | ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--index", type=Path, required=True)
    args = ap.parse_args()
    pairs = {sub: read_pairs(args.corpus, sub, None) for sub, _ in SUBCORPORA}
    n_labelled = Counter(s for sub, _ in SUBCORPORA[1:] for s, _ in pairs[sub])
    xs, xr, w, s_rows, r_rows = matrices(args.index)
    score = (xs.multiply(w) @ xr.T).toarray()
    n_feat = np.maximum(np.asarray(xr.sum(1)).ravel(), 1)
    mass = np.maximum(np.asarray(xr.multiply(w).sum(1)).ravel(), 1)
    xw_s, xw_r = xs.multiply(w).tocsr(), xr.multiply(w).tocsr()
    norm = np.maximum(np.sqrt(np.asarray(xw_r.multiply(xw_r).sum(1)).ravel()), 1)
    variants = (
        ("stored score (shared weight)", score),
        ("score / (source's features)^0.25", score / n_feat[None, :] ** 0.25),
        ("score / sqrt(source's features)", score / np.sqrt(n_feat)[None, :]),
        ("score / sqrt(source's weight mass)", score / np.sqrt(mass)[None, :]),
        ("cosine of weight vectors", (xw_s @ xw_r.T).toarray() / norm[None, :]),
    )
    print("| score | no obfuscation | random | translation | summary |\n|---|---|---|---|---|")
    for label, m in variants:
        print(f"| {label} | {recall_row(m, pairs, s_rows, r_rows, n_labelled)} |", flush=True)


if __name__ == "__main__":
    main()
