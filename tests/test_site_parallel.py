"""The static site's pair reports on all cores and each text's own part computed once
(issue 31 item 7): the same site, byte for byte, as one process computing every pair anew."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdask.evidence.site_pool as site_pool
from simdask import Index, IndexConfig
from simdask.evidence.excluded import PairExclusions
from simdask.evidence.pair_view import ViewOptions, index_report
from simdask.evidence.passages import compare_texts
from simdask.evidence.site import export_site
from simdask.evidence.site_reports import SiteReports
from simdask.evidence.text_cache import TextCache
from simdask.ingest.synth import generate_corpus, write_corpus

pytestmark = pytest.mark.integration

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def index(tmp_path_factory, client):
    root = tmp_path_factory.mktemp("sitepar")
    corpus = generate_corpus(36, mean_words=250, seed=11, reuse_fraction=0.4)
    src = write_corpus(corpus, root / "c.jsonl", fmt="jsonl")
    idx = Index.create(root / "i", IndexConfig(hash_bits=32, shards=2, exclude_quotes=True))
    idx.update([src], client=client)
    yield idx
    idx.close()


@pytest.mark.integration
def test_parallel_cached_site_is_the_serial_one(index, tmp_path, monkeypatch):
    monkeypatch.setattr(site_pool, "MIN_PARALLEL", 0)  # a pool even for a small site
    with index.snapshot():
        serial = export_site(index, tmp_path / "serial", workers=1, cache=False)
        cached = export_site(index, tmp_path / "cached", workers=1)
        pooled = export_site(index, tmp_path / "pooled", workers=2)
    assert serial == cached == pooled and serial["pairs"] > 0
    a = _files(tmp_path / "serial")
    # front, pair.html, documents, pairs, data/site.js and one data file per distinct text
    assert len(a) == 1 + 1 + 36 + serial["pairs"] + 1 + serial["data_texts"]
    assert _files(tmp_path / "cached") == a
    assert _files(tmp_path / "pooled") == a


@pytest.mark.integration
def test_workers_compute_the_reports_the_caller_would(index, monkeypatch):
    monkeypatch.setattr(site_pool, "MIN_PARALLEL", 0)
    with index.snapshot():
        keys = [d.key for d in index.catalog.documents()]
        pairs = [(r.doc, r.other) for r in index.pairs()][:30]
        here = TextCache()
        reports = SiteReports(index, ViewOptions(), here)
        n = site_pool.compute_reports(index, reports, pairs, workers=2)
        assert reports.missing(pairs) == [] and n > 0  # every pair is now known
        assert here.misses == 0  # the caller computed none: its workers did
        for key, other in pairs:
            assert reports(index, key, other) == index_report(index, key, other)
        gen = index.catalog.generation
        opts = ViewOptions().to_dict()
        assert site_pool.report_batch(str(index.path), gen + 1, opts, pairs[:1]) is None
        assert site_pool.report_batch(str(index.path), gen, opts, [(keys[0], keys[1])]) == [
            index_report(index, keys[0], keys[1])
        ]


def _text(ids: list[int]) -> str:
    return " ".join(WORDS[i] for i in ids) + '. "beta gamma delta eps zeta" she said.'


@pytest.mark.unit
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 9), min_size=0, max_size=40), min_size=2, max_size=4),
    st.booleans(),
    st.integers(0, 3),
)
def test_cached_sides_give_the_same_comparison(texts, quotes, min_words):
    """Every ordered pair compared with one cache, in order, twice: each result is that of
    compare_texts without a cache."""
    docs = [_text(t) for t in texts]
    excl = PairExclusions(quotes=quotes)
    cache = TextCache()
    for _ in range(2):
        for a in docs:
            for b in docs:
                got = compare_texts(a, b, 3, 1, min_words, exclusions=excl, cache=cache)
                assert got == compare_texts(a, b, 3, 1, min_words, exclusions=excl)
    assert cache.hits > 0


@pytest.mark.unit
def test_cache_keeps_at_most_its_bound():
    cache = TextCache(max_chars=100)
    texts = [f"{w} " * 8 for w in WORDS]  # each about 40-50 characters
    for t in texts:
        cache.side(t, 3, None)
        cache.aligned(t, None, ())
    assert cache.misses == 2 * len(texts) and cache.hits == 0
    cache.side(texts[-1], 3, None)  # the most recent is kept
    assert cache.hits == 1
    cache.side(texts[0], 3, None)  # the oldest went
    assert cache.misses == 2 * len(texts) + 1
    with pytest.raises(ValueError, match="max_chars"):
        TextCache(max_chars=-1)
