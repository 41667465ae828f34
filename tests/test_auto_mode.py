"""The ``auto`` similarity mode (issue 13): exact when the heavy-only search fits its budget,
informative when it does not, decided per full build and kept by incremental runs.

End to end on corpora built to have heavy chunks (template paragraphs in most documents,
boilerplate-only documents, duplicates), against brute-force Counters/sets
(:func:`tests.test_heavy.reference_rows`).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.config import DEFAULT_AUTO_BUDGET
from simdask.engine.similarity_stage import stored_heavy
from simdask.errors import ConfigError
from simdask.kernels.heavy import auto_mode
from simdask.kernels.words import chunks
from simdask.summary import HeavyStats
from tests.helpers.corpus import stem, write_txt
from tests.test_heavy import brute_rows, reference_rows, template_texts

pytestmark = pytest.mark.unit

THRESHOLD, TOP_K = 2.0, 5


@given(
    open_docs=st.integers(0, 10**6), heavy_docs=st.integers(0, 10**6), budget=st.integers(0, 10**13)
)
def test_auto_mode_against_definition(open_docs, heavy_docs, budget):
    mode, pairs = auto_mode(open_docs, heavy_docs, budget)
    assert pairs == open_docs * heavy_docs
    assert mode == ("exact" if open_docs * heavy_docs <= budget else "informative")


def test_config_modes_and_budget():
    cfg = IndexConfig()
    assert cfg.similarity_mode == "auto" and cfg.auto_budget == DEFAULT_AUTO_BUDGET
    assert IndexConfig.from_dict(cfg.replace(auto_budget=7).to_dict()).auto_budget == 7
    # an index stored before the auto mode existed keeps its mode and gets the default budget
    old = {k: v for k, v in cfg.replace(similarity_mode="informative").to_dict().items()}
    del old["auto_budget"]
    assert IndexConfig.from_dict(old).similarity_mode == "informative"
    for bad in ({"similarity_mode": "fast"}, {"auto_budget": -1}, {"auto_budget": 1.5}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            cfg.replace(**bad)


def test_stored_heavy_keeps_the_build_decision():
    why = {"pairs": 12, "budget": 10, "open_docs": 3, "heavy_docs": 4, "kept": False}
    last = {"extra": {"heavy": {"mode": "informative", "cutoff": 6, "auto": why}}}
    kept = stored_heavy(last, IndexConfig())
    assert (kept.mode, kept.cutoff) == ("informative", 6)
    assert kept.auto == {**why, "kept": True}
    assert "kept from the last full build" in kept.describe()
    # a mode asked for explicitly is used as it is, with the recorded cutoff
    exact = stored_heavy(last, IndexConfig(similarity_mode="exact"))
    assert (exact.mode, exact.cutoff, exact.auto) == ("exact", 6, None)
    # nothing recorded: no heavy chunks (the modes agree) or the cheap mode
    assert stored_heavy(None, IndexConfig()).mode == "exact"
    assert stored_heavy(None, IndexConfig(heavy_df=3)).mode == "informative"


def test_describe_says_mode_and_why():
    why = {"pairs": 2 * 10**9, "budget": 5 * 10**8, "open_docs": 40_000, "heavy_docs": 50_000}
    h = HeavyStats("informative", 385, heavy_only_docs=41_000, auto={**why, "kept": False})
    text = h.describe()
    assert text.startswith("similarity mode informative (auto: heavy-only search 40,000 x 50,000")
    assert "2e+09 pairs > budget 5e+08" in text and "df > 385" in text
    assert "41,000 documents could reach" in text
    h = HeavyStats("exact", None, auto={**why, "pairs": 0, "kept": False})
    assert "0 pairs <= budget" in h.describe() and "no heavy chunks" in h.describe()
    assert HeavyStats.from_dict(h.to_dict()) == h


# --------------------------------------------------------------------------------------------
# end to end through Index on a LocalCluster


def _build(path, texts, client, src, **config):
    cfg = IndexConfig(hash_bits=32, shards=3, top_k=TOP_K, threshold=THRESHOLD, **config)
    idx = Index.create(path, cfg)
    idx.update([write_txt(texts, src)], client=client, options=RunOptions(block_pairs=500))
    return idx


def _rows(idx):
    return sorted((stem(r.doc), stem(r.other), r.shared, r.similarity) for r in idx.pairs())


@pytest.mark.integration
@pytest.mark.parametrize("heavy_df", [0, 4, None])
def test_auto_equals_exact_under_budget_and_informative_over(tmp_path, client, heavy_df):
    texts = template_texts(70, seed=2)
    exact = sorted(reference_rows(texts, THRESHOLD, TOP_K, heavy_df, "exact"))
    informative = sorted(reference_rows(texts, THRESHOLD, TOP_K, heavy_df, "informative"))
    if heavy_df is not None:  # the corpus tells the modes apart
        assert exact != informative
    idx = _build(tmp_path / "a", texts, client, tmp_path / "docs", heavy_df=heavy_df)
    assert _rows(idx) == exact
    heavy = idx.stats()["heavy"]
    why = heavy["auto"]
    assert heavy["mode"] == "exact" and why["kept"] is False
    assert why["pairs"] == why["open_docs"] * why["heavy_docs"] <= why["budget"]
    assert "similarity mode exact (auto: heavy-only search" in idx.stats()["similarity_mode"]
    if heavy_df is None:  # 70 short documents: all-pairs counting is cheap, nothing is heavy
        assert heavy["cutoff"] is None and why["pairs"] == 0
        return
    assert heavy["heavy_only_searched"] and why["heavy_docs"] == heavy["heavy_docs"] > 0
    assert why["open_docs"] == heavy["heavy_only_docs_searched"] > 0
    # a budget one pair short of that search: informative, the same light rows
    tight = _build(
        tmp_path / "b",
        texts,
        client,
        tmp_path / "docs",
        heavy_df=heavy_df,
        auto_budget=why["pairs"] - 1,
    )
    assert _rows(tight) == informative
    h = tight.stats()["heavy"]
    assert h["mode"] == "informative" and not h["heavy_only_searched"]
    assert h["auto"] == {**why, "budget": why["pairs"] - 1}
    assert "pairs > budget" in tight.stats()["similarity_mode"]
    # exactly at the budget: exact
    at = _build(
        tmp_path / "c",
        texts,
        client,
        tmp_path / "docs",
        heavy_df=heavy_df,
        auto_budget=why["pairs"],
    )
    assert _rows(at) == exact and at.stats()["heavy"]["mode"] == "exact"


@pytest.mark.integration
@pytest.mark.parametrize("fuse_members", [1000, 0], ids=["fused", "member-blocks"])
@pytest.mark.parametrize("decided", ["exact", "informative"])
def test_auto_decision_survives_incremental_runs(tmp_path, client, fuse_members, decided):
    """Built on 45 documents with a budget that is just enough for the exact search there
    (or just too little); after adding 15 documents a fresh build with that budget would decide
    otherwise or the same, but the incremental runs keep the build's decision, and their rows
    are what that mode gives on the final corpus (brute force)."""
    texts = template_texts(60, seed=4)
    keys = sorted(texts)
    first = {k: texts[k] for k in keys[:45]}
    probe = _build(tmp_path / "probe", first, client, tmp_path / "p", heavy_df=6)
    pairs = probe.stats()["heavy"]["auto"]["pairs"]
    assert pairs > 0
    budget = pairs if decided == "exact" else pairs - 1
    src = tmp_path / "docs"
    idx = _build(tmp_path / "i", first, client, src, heavy_df=6, auto_budget=budget)
    built = idx.stats()["heavy"]
    assert built["mode"] == decided and built["auto"]["pairs"] == pairs
    fresh = _build(
        tmp_path / "f", texts, client, tmp_path / "f-docs", heavy_df=6, auto_budget=budget
    )
    # the full corpus needs a larger search: a fresh build with this budget picks informative
    assert fresh.stats()["heavy"]["auto"]["pairs"] > budget
    assert fresh.stats()["heavy"]["mode"] == "informative"
    write_txt(texts, src)
    opts = RunOptions(fuse_members=fuse_members)
    summary = idx.update([src], client=client, options=opts)
    assert summary.added == 15
    heavy = summary.extra["heavy"]
    assert (heavy["mode"], heavy["cutoff"]) == (decided, 6)
    assert heavy["auto"] == {**built["auto"], "kept": True}
    assert "kept from the last full build" in summary.stats.heavy.describe()
    # a second incremental run (one document changed) and a run changing nothing keep it too
    (src / f"{keys[3]}.txt").write_text(texts[keys[50]] + " and then something else entirely")
    texts[keys[3]] = texts[keys[50]] + " and then something else entirely"
    for _ in range(2):
        again = idx.update([src], client=client, options=opts)
        assert again.extra["heavy"]["mode"] == decided and again.extra["heavy"]["auto"]["kept"]
    want = sorted(reference_rows(texts, THRESHOLD, TOP_K, 6, decided))
    got = _rows(idx)
    sets = {k: set(chunks(t)) for k, t in texts.items()}
    exact = {(a, b): (s, sim) for a, b, s, sim in brute_rows(sets, THRESHOLD, 10**6)}
    assert all(exact[a, b] == (s, sim) for a, b, s, sim in got)  # every value exact
    assert got == want
