"""The streaming prose generator (simdask.ingest.prose): the bigram model against counted
bigrams, determinism by seed and document number, constant memory, planted reuse."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from simdask.errors import ConfigError
from simdask.ingest.prose import (
    BLOCK_DOCS,
    ProseModel,
    ProseParams,
    generate_block,
    iter_documents,
    jsonl_texts,
    train_model,
    write_jsonl,
)
from simdask.kernels.words import words
from tests.helpers.planted_truth import assert_planted_where_truth_says

pytestmark = pytest.mark.unit

SUBJECTS = ["the student", "a reviewer", "this thesis", "the method", "our archive"]
VERBS = ["describes", "finds", "compares", "shows", "counts"]
OBJECTS = ["similar documents", "the shared chunks", "copied passages", "a common phrase"]


def training_texts(n: int = 60, seed: int = 3) -> list[str]:
    """Texts of sentences from a tiny grammar (repeated phrases, like real prose)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        sents = []
        for _ in range(int(rng.integers(3, 9))):
            s = " ".join(
                [
                    SUBJECTS[rng.integers(len(SUBJECTS))],
                    VERBS[rng.integers(len(VERBS))],
                    OBJECTS[rng.integers(len(OBJECTS))],
                ]
            )
            sents.append(s.capitalize() + ("!" if rng.random() < 0.2 else "."))
        out.append(" ".join(sents))
    return out


def brute_bigrams(texts: list[str]) -> Counter:
    """Bigram counts with '.' between sentences, by plain Python."""
    seq: list[str] = []
    for t in texts:
        for sent in t.replace("!", ".").split("."):
            ws = words(sent)
            if ws:
                seq += [*ws, "."]
    seq = [".", *seq]
    return Counter(itertools.pairwise(seq))


@pytest.fixture(scope="module")
def model() -> ProseModel:
    return train_model(training_texts())


SMALL = ProseParams(mean_words=120, sigma=0.3, min_words=20, reuse_fraction=0.1)


def test_model_matches_counted_bigrams(model):
    counts = brute_bigrams(training_texts())
    index = {w: i for i, w in enumerate(model.vocab)}
    assert model.vocab[0] == "."
    assert set(model.vocab) == {a for a, _ in counts} | {b for _, b in counts}
    for a in {a for a, _ in counts}:
        total = sum(c for (x, _), c in counts.items() if x == a)
        want = {index[b]: c / total for (x, b), c in counts.items() if x == a}
        got = model.probabilities(index[a])
        assert got.keys() == want.keys()
        for k, p in want.items():
            assert got[k] == pytest.approx(p)


def test_rare_words_end_sentences_and_dead_ends_lead_to_the_boundary():
    m = train_model(["alpha beta gamma. alpha beta delta. alpha zeta"], max_vocab=5)
    assert m.vocab[:3] == (".", "alpha", "beta")
    assert len(m.vocab) == 5
    # the last word of the text has no successor in the text: it ends a sentence
    for s in range(len(m.vocab)):
        assert sum(m.probabilities(s).values()) == pytest.approx(1.0)
    with pytest.raises(ConfigError):
        train_model([" ... "])
    with pytest.raises(ConfigError):
        train_model(["a b"], max_vocab=1)


def test_step_draws_follow_the_model(model):
    state = model.vocab.index("the")
    probs = model.probabilities(state)
    u = np.random.default_rng(0).random(40_000)
    nxt = model.step(np.full(len(u), state, np.int64), u)
    freq = Counter(nxt.tolist())
    assert set(freq) <= set(probs)
    for w, p in probs.items():
        assert freq[w] / len(u) == pytest.approx(p, abs=0.01)


def test_generated_bigrams_follow_the_model(model):
    docs = list(
        iter_documents(
            model, 300, seed=5, params=ProseParams(mean_words=120, min_words=20, reuse_fraction=0)
        )
    )
    index = {w: i for i, w in enumerate(model.vocab)}
    seen: Counter = Counter()
    for d in docs:
        for sent in d.text.split("."):
            ws = [index[w] for w in words(sent)]
            seen.update(itertools.pairwise(ws))
    for (a, b), _ in seen.items():
        assert b in model.probabilities(a), (model.vocab[a], model.vocab[b])
    a = index["the"]
    total = sum(c for (x, _), c in seen.items() if x == a)
    probs = model.probabilities(a)
    for b, p in probs.items():
        if b:  # within sentences: the distribution given that the sentence goes on
            assert seen[(a, b)] / total == pytest.approx(p / (1 - probs.get(0, 0)), abs=0.03)


def test_deterministic_by_seed_and_document_number(model):
    whole = list(iter_documents(model, BLOCK_DOCS + 200, seed=7, params=SMALL))
    part = list(iter_documents(model, 10, seed=7, start=BLOCK_DOCS - 5, params=SMALL))
    assert part == whole[BLOCK_DOCS - 5 : BLOCK_DOCS + 5]
    assert [d.key for d in part][:2] == [f"p{BLOCK_DOCS - 5:09d}", f"p{BLOCK_DOCS - 4:09d}"]
    other = list(iter_documents(model, 10, seed=8, start=BLOCK_DOCS - 5, params=SMALL))
    assert all(a.text != b.text for a, b in zip(part, other, strict=True))
    lengths = [len(words(d.text)) for d in whole]
    assert min(lengths) >= SMALL.min_words
    assert 0.8 * SMALL.mean_words < np.mean(lengths) < 1.3 * SMALL.mean_words


def test_planted_passages_are_where_the_truth_says(model):
    docs, reuse = generate_block(model, 3, seed=2, params=SMALL)
    assert_planted_where_truth_says(docs, reuse, SMALL)


_PEAKS = """
import sys, tracemalloc
from simdask.ingest.prose import BLOCK_DOCS, ProseModel, ProseParams, iter_documents

model = ProseModel.load(sys.argv[1])
params = ProseParams(mean_words=120, sigma=0.3, min_words=20, reuse_fraction=0.1)
for n in (BLOCK_DOCS, 6 * BLOCK_DOCS):
    tracemalloc.start()
    total = sum(len(d.text) for d in iter_documents(model, n, seed=1, params=params))
    print(n, total, tracemalloc.get_traced_memory()[1])
    tracemalloc.stop()
"""


@pytest.mark.system  # starts a subprocess (the unit tier starts none)
def test_constant_memory_whatever_the_corpus_size(model, tmp_path):
    """Peak traced memory of generating 6 blocks of documents is that of one block. Measured
    in a fresh interpreter: tracemalloc also counts the allocations of other threads (the
    test session's Dask cluster runs an event loop in this process)."""
    path = model.save(tmp_path / "m.npz")
    out = subprocess.run(
        [sys.executable, "-c", _PEAKS, str(path)], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    (n1, total1, small), (n6, total6, large) = (map(int, x.split()) for x in out[:2])
    assert (n1, n6) == (BLOCK_DOCS, 6 * BLOCK_DOCS)
    assert total1 > n1 * SMALL.mean_words * 3 and total6 > n6 * SMALL.mean_words * 3
    assert large < 1.3 * small


def test_write_jsonl_streams_parts_and_truth(model, tmp_path):
    files = write_jsonl(model, 1100, tmp_path / "c", seed=4, docs_per_file=500, params=SMALL)
    assert [f.name for f in files] == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    lines = [json.loads(x) for f in files for x in f.read_text().splitlines()]
    want = list(iter_documents(model, 1100, seed=4, params=SMALL))
    assert [(x["id"], x["text"]) for x in lines] == [(d.key, d.text) for d in want]
    assert list(jsonl_texts(files))[:3] == [d.text for d in want[:3]]
    truth = [json.loads(x) for x in (tmp_path / "c/truth.jsonl").read_text().splitlines()]
    assert truth and all(t["source"] < "p000001100" and t["target"] < "p000001100" for t in truth)
    assert not list((tmp_path / "c").glob("*.tmp"))


def test_save_load_round_trip(model, tmp_path):
    back = ProseModel.load(model.save(tmp_path / "m.npz"))
    assert back.vocab == model.vocab
    for a in ("row", "nxt", "cum"):
        assert np.array_equal(getattr(back, a), getattr(model, a))
    assert list(iter_documents(back, 3, params=SMALL)) == list(
        iter_documents(model, 3, params=SMALL)
    )


def test_bad_parameters_are_config_errors(model):
    for kw in ({"mean_words": 3}, {"sigma": -1}, {"reuse_fraction": 0.9}):
        with pytest.raises(ConfigError):
            ProseParams(**kw)
    with pytest.raises(ConfigError):
        list(iter_documents(model, -1))
    with pytest.raises(ConfigError):
        ProseModel((".", "a"), np.array([0, 1, 1]), np.array([1]), np.array([1]))
