"""The static site of `simdask export-html`: front page, histogram, document pages, links."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simdask import Index, IndexConfig
from simdask.evidence.site import PER_DOCUMENT, SiteLimits, export_site, histogram_svg
from simdask.ingest.synth import generate_corpus, write_corpus
from simdask.progress import Callback

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
    unordered = {tuple(sorted((r.doc, r.other))) for r in rows}
    # the site counts unordered pairs, not stored directed rows (issue 18)
    assert sum(int(c) for c in re.findall(r'data-count="(\d+)"', front)) == len(unordered)
    assert f"{len(unordered)} similar pairs" in front
    docs_table = front.split("<table id=docs")[1].split("</table>")[0]
    assert "<input id=q" in front and docs_table.count('<tr data-key="') == 80
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


class _StopAfter(Callback):
    """Raises KeyboardInterrupt once ``n`` pair reports are written (as Ctrl-C would)."""

    def __init__(self, n: int):
        self.n, self.stage_name, self.done = n, "", 0

    def stage(self, name, total):
        self.stage_name = name

    def advance(self, k=1):
        if self.stage_name == "pairs":
            self.done += k
            if self.done == self.n:
                raise KeyboardInterrupt


def _linked(site) -> set[str]:
    links = set()
    for page in (site / "docs").glob("*.html"):
        links |= set(re.findall(r'href="\.\./pairs/([\d-]+\.html)"', page.read_text()))
    return links


def test_export_limits_and_interrupt(tmp_path, client):
    corpus = generate_corpus(60, mean_words=300, seed=6, reuse_fraction=0.4)
    src = write_corpus(corpus, tmp_path / "c.jsonl", fmt="jsonl")
    idx = Index.create(tmp_path / "i", IndexConfig(hash_bits=32, shards=2))
    idx.update([src], client=client)
    rows = idx.pairs()
    ids = {d.key: d.doc_id for d in idx.catalog.documents()}
    best: dict[tuple[int, int], float] = {}
    for r in rows:
        p = tuple(sorted((ids[r.doc], ids[r.other])))
        best[p] = max(best.get(p, 0.0), r.similarity)
    # per document: a pair is kept iff it is among the best 1 of one of its documents
    n = export_site(idx, tmp_path / "one", limits=SiteLimits(per_document=1))
    order = sorted(best, key=lambda p: (-best[p], p))
    rank: dict[int, int] = {}
    expected = set()
    for a, b in order:
        if rank.get(a, 0) < 1 or rank.get(b, 0) < 1:
            expected.add(f"{a}-{b}.html")
        rank[a], rank[b] = rank.get(a, 0) + 1, rank.get(b, 0) + 1
    assert _linked(tmp_path / "one") == expected
    assert {p.name for p in (tmp_path / "one" / "pairs").iterdir()} == expected
    assert n["pairs"] == len(expected) < len(best)
    # listed pairs only, and a least similarity
    chosen = sorted(best)[:3]
    keys = {v: k for k, v in ids.items()}
    listed = tuple((keys[a], keys[b]) for a, b in chosen)
    n = export_site(idx, tmp_path / "listed", limits=SiteLimits(pairs=listed))
    assert _linked(tmp_path / "listed") == {f"{a}-{b}.html" for a, b in chosen}
    high = export_site(idx, tmp_path / "high", limits=SiteLimits(50.0, per_document=None))
    assert high["pairs"] == sum(1 for s in best.values() if s >= 50.0)
    # interrupted after 3 reports: front page, document pages, and links to those 3 only
    with pytest.raises(KeyboardInterrupt):
        export_site(idx, tmp_path / "cut", callback=_StopAfter(3))
    site = tmp_path / "cut"
    written = {p.name for p in (site / "pairs").iterdir()}
    assert len(written) == 3 and _linked(site) == written
    assert (site / "index.html").exists() and len(list((site / "docs").iterdir())) == 60
    assert not list(site.rglob(".*.tmp"))


def _broken_links(site: Path) -> list[str]:
    """Every relative href of every page of the site that names no file."""
    broken = []
    for page in site.rglob("*.html"):
        for href in re.findall(r'href="([^"#]*)(?:#[^"]*)?"', page.read_text(encoding="utf-8")):
            external = href.startswith(("http:", "https:"))
            if href and not external and not (page.parent / href).is_file():
                broken.append(f"{page.relative_to(site)} -> {href}")
    return broken


def test_default_site_is_bounded_by_documents_and_links_resolve(tmp_path, client):
    """30 documents sharing one paragraph: every pair is stored (435), the default site has
    pair pages for each document's PER_DOCUMENT best partners only, every other pair links
    to pair.html (rendered in the browser), and no link is broken; --all-pairs (everything)
    writes them all."""
    shared = " ".join(f"common{i} paragraph text" for i in range(40))
    src = tmp_path / "c"
    src.mkdir()
    for i in range(30):
        own = " ".join(f"d{i}w{j} unique" for j in range(60))
        (src / f"doc{i:02d}.txt").write_text(f"{own} {shared} {own[::-1]}", encoding="utf-8")
    idx = Index.create(tmp_path / "i", IndexConfig(hash_bits=32, shards=2, top_k=100))
    idx.update([src], client=client)
    stored = len(idx.pair_list())
    assert stored == 435
    site = tmp_path / "site"
    n = export_site(idx, site)
    pages = list((site / "pairs").iterdir())
    assert len(pages) == n["pairs"] <= PER_DOCUMENT * 30 and n["pairs_skipped"] == stored - len(
        pages
    )
    assert n["reports_computed"] <= 30 * 8  # each document's shown sources, once per pair of texts
    text = "".join(p.read_text(encoding="utf-8") for p in (site / "docs").iterdir())
    assert text.count('href="../pair.html#') >= n["pairs_skipped"]
    assert (site / "data" / "site.js").is_file() and n["data_texts"] == 30
    assert _broken_links(site) == []
    everything = export_site(idx, tmp_path / "all", limits=SiteLimits.everything())
    assert everything["pairs"] == stored and everything["pairs_skipped"] == 0
    assert "pair.html#" not in "".join(
        p.read_text(encoding="utf-8") for p in (tmp_path / "all" / "docs").iterdir()
    )
