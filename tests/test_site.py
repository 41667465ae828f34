"""The static site of `simdask export-html`: front page, histogram, document pages, links."""

from __future__ import annotations

import re

import pytest

from simdask import Index, IndexConfig
from simdask.evidence.site import export_site, histogram_svg
from simdask.ingest.synth import generate_corpus, write_corpus

pytestmark = pytest.mark.integration


def test_histogram_counts():
    svg = histogram_svg([0.5, 5, 9.99, 10, 55, 100, 100])
    counts = [int(c) for c in re.findall(r'data-count="(\d+)"', svg)]
    assert counts == [3, 1, 0, 0, 0, 1, 0, 0, 0, 2]


def test_export_site(tmp_path, client):
    corpus = generate_corpus(80, mean_words=300, seed=5, reuse_fraction=0.3)
    src = write_corpus(corpus, tmp_path / "c.jsonl", fmt="jsonl")
    idx = Index.create(tmp_path / "i", IndexConfig(hash_bits=32, shards=2))
    idx.update([src], client=client)
    rows = idx.pairs()
    assert rows
    n = export_site(idx, tmp_path / "site", max_pairs=5)
    front = (tmp_path / "site" / "index.html").read_text()
    assert sum(int(c) for c in re.findall(r'data-count="(\d+)"', front)) == len(rows)
    assert "<input id=q" in front and front.count('<tr data-key="') == 80
    assert n["pairs"] == 5 and n["pairs"] + n["pairs_skipped"] == len(
        {tuple(sorted((r.doc, r.other))) for r in rows}
    )
    links = set()
    for page in (tmp_path / "site" / "docs").glob("*.html"):
        links |= set(re.findall(r'href="\.\./pairs/([\d-]+\.html)"', page.read_text()))
    assert len(links) == 5
    for name in links:
        pair_page = (tmp_path / "site" / "pairs" / name).read_text()
        assert "<mark " in pair_page and "data-twin" in pair_page
    best = max(rows, key=lambda r: r.similarity)
    doc_id = idx.catalog.document(best.doc).doc_id
    assert best.other in (tmp_path / "site" / "docs" / f"{doc_id}.html").read_text()
