"""Small generated corpora and a brute-force reference similarity (Python sets)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from simdask.kernels.words import chunks


def make_docs(n: int = 40, seed: int = 0, vocab: int = 1500) -> dict[str, str]:
    """Random documents with planted reuse: copied passages, a contained short text, near-dupes.

    Words are drawn with a skewed distribution so that common chunks occur, with punctuation
    and capitals so that normalisation matters.
    """
    rng = random.Random(seed)
    words = [f"w{i}x" if i % 7 else f"Ünï{i}" for i in range(vocab)]
    weights = [1.0 / (i + 1) for i in range(vocab)]

    def text(nw: int) -> list[str]:
        return rng.choices(words, weights=weights, k=nw)

    docs = {f"d{i:03d}": text(rng.randint(60, 400)) for i in range(n)}
    keys = sorted(docs)
    for i in range(0, n - 1, 5):  # passage copied from keys[i] into keys[i+1]
        src, dst = docs[keys[i]], docs[keys[i + 1]]
        a = rng.randrange(0, len(src) // 2)
        passage = src[a : a + rng.randint(20, len(src) // 2)]
        at = rng.randrange(0, len(dst))
        docs[keys[i + 1]] = dst[:at] + passage + dst[at:]
    docs["short_inside"] = docs[keys[2]][10:40]  # wholly contained
    docs["near_dup"] = [w if j % 9 else "zzz" for j, w in enumerate(docs[keys[3]])]
    docs["tiny"] = ["only", "three", "words"]

    def render(ws: list[str]) -> str:
        out = []
        for j, w in enumerate(ws):
            out.append(w.capitalize() if j % 11 == 0 else w)
            if j % 13 == 12:
                out[-1] += ","
        return " ".join(out) + "."

    return {k: render(v) for k, v in docs.items()}


def write_txt(docs: dict[str, str], folder: Path) -> Path:
    """Write documents as ``<key>.txt`` files."""
    folder.mkdir(parents=True, exist_ok=True)
    for k, t in docs.items():
        (folder / f"{k}.txt").write_text(t, encoding="utf-8")
    return folder


def write_jsonl(docs: dict[str, str], path: Path) -> Path:
    """Write documents as JSONL lines of ``{"id", "text"}``."""
    with open(path, "w", encoding="utf-8") as f:
        for k, t in docs.items():
            f.write(json.dumps({"id": k, "text": t}) + "\n")
    return path


def reference_similarity(
    docs: dict[str, str], k: int = 5
) -> dict[tuple[str, str], tuple[int, float]]:
    """Brute force over true string chunk sets: {(a, b): (shared, percent a->b)}, shared > 0."""
    sets = {key: set(chunks(t, k)) for key, t in docs.items()}
    out = {}
    keys = sorted(sets)
    for a in keys:
        if not sets[a]:
            continue
        for b in keys:
            if b == a or not sets[b]:
                continue
            shared = len(sets[a] & sets[b])
            if shared:
                out[(a, b)] = (shared, 100.0 * shared / len(sets[a]))
    return out


def rel(key: str) -> str:
    """A folder document's key without its folder name (``docs/d001.txt`` -> ``d001.txt``):
    keys are ``<folder name>/<path inside it>`` (simdask.ingest.listing)."""
    return key.split("/", 1)[1] if "/" in key else key


def stem(key: str) -> str:
    """The ``make_docs`` name of a document written by :func:`write_txt`
    (``docs/d001.txt`` -> ``d001``)."""
    return rel(key).removesuffix(".txt")
