"""Aligned coverage and per-document totals (issue 29 item 2): the kernels against Python
sets, the stored totals against a brute-force reference (every required pair aligned again),
and incremental runs, deletions and exclusion changes against a full build."""

from __future__ import annotations

import shutil
from unittest import mock

import pytest

from simdask import Index, IndexConfig, RunOptions
from simdask.alignment.segment import word_spans
from simdask.engine import totals as engine_totals
from simdask.kernels.partner_rule import PartnerRule
from simdask.read.total_reads import pair_aligned, source_spans, status
from simdask.storage.aligned_tables import DEFAULT_RULE, compute_start
from simdask.storage.candidate_store import rule_partners
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.totals import (
    assert_totals_close,
    chosen_by_rule,
    reference_totals,
    stored_totals,
)

pytestmark = pytest.mark.integration

CFG = IndexConfig(hash_bits=24, shards=2, top_k=3)
DOCS = make_docs(24, seed=5)
KEYS = sorted(DOCS)


# --- the index --------------------------------------------------------------------------------
def _names(totals: dict) -> dict:
    """Stored totals with keys and source keys without their folder (indexes compared)."""

    def name(k):
        return k.split("/", 1)[1]

    return {name(k): (t, {name(s): v for s, v in src.items()}) for k, (t, src) in totals.items()}


def _index(tmp_path, name, keys, client, totals="all", exclude=None, config=CFG):
    folder = tmp_path / f"{name}-src"
    shutil.rmtree(folder, ignore_errors=True)
    write_txt({k: DOCS[k] for k in keys}, folder)
    idx = Index.create(tmp_path / name, config)
    idx.update([folder], client=client, options=RunOptions(totals=totals), exclude=exclude)
    return idx, folder


def test_stored_totals_equal_the_brute_force_union(tmp_path, client):
    idx, _ = _index(tmp_path, "all", KEYS, client)
    got = stored_totals(idx)
    assert len(got) == idx.stats()["documents"]
    assert_totals_close(got, reference_totals(idx))
    assert any(t > 20 for t, _ in got.values())  # the planted copies are found
    # a source's share is the pair's aligned coverage, as similar --format jsonl prints it
    pairs = [(d, s) for d, (_, src) in got.items() for s in src]
    aligned = pair_aligned(idx.catalog, pairs)
    assert {p: aligned[p] for p in pairs} == pytest.approx({(d, s): got[d][1][s] for d, s in pairs})


def test_compute_totals_equals_update_align_and_resumes(tmp_path, client):
    a, _ = _index(tmp_path, "a", KEYS, client, totals="off")
    assert a.totals() == []  # a first build tracks nothing unless asked
    out = a.compute_totals(client=client, batch_jobs=3)
    assert out["aligned"] > 0 and out["documents"] == a.stats()["documents"]
    b, _ = _index(tmp_path, "b", KEYS, client, totals="all")
    assert _names(stored_totals(a)) == _names(stored_totals(b))
    again = a.compute_totals(client=client)
    assert again["aligned"] == 0  # every required pair is stored: nothing aligned again
    assert _names(stored_totals(a)) == _names(stored_totals(b))


def test_an_incremental_run_gives_its_new_documents_totals(tmp_path, client):
    copier = "copier"
    DOCS_PLUS = {copier: DOCS[KEYS[0]][:1500] + " " + DOCS[KEYS[1]][:600]}
    idx, folder = _index(tmp_path, "inc", KEYS[:12], client, totals="off")
    idx.compute_totals(client=client)  # the archive
    before = idx.total(f"{folder.name}/{KEYS[0]}.txt")
    write_txt(DOCS_PLUS, folder)
    idx.update([folder], client=client)  # the default: the new essay gets its total
    new = idx.total(f"{folder.name}/{copier}.txt")
    assert new is not None and new.total > 50
    assert {s.key for s in new.sources} >= {f"{folder.name}/{KEYS[0]}.txt"}
    after = idx.total(f"{folder.name}/{KEYS[0]}.txt")
    assert after.total > before.total  # the copied essay's total rises too
    assert_totals_close(stored_totals(idx), reference_totals(idx))


def test_deleting_a_source_lowers_the_total_as_a_full_build(tmp_path, client):
    idx, folder = _index(tmp_path, "del", KEYS, client)
    name = f"{folder.name}/near_dup.txt"
    assert idx.total(name).total > 90
    (folder / f"{KEYS[3]}.txt").unlink()  # near_dup's source
    idx.update([folder], client=client, delete_missing=True)
    assert idx.total(name).total < 50
    full, _ = _index(tmp_path, "full", [k for k in KEYS if k != KEYS[3]], client)
    assert_totals_close(_names(stored_totals(idx)), _names(stored_totals(full)))
    assert_totals_close(stored_totals(idx), reference_totals(idx))


def test_excluding_a_template_realigns_what_it_touches(tmp_path, client):
    idx, folder = _index(tmp_path, "ex", KEYS, client)
    tpl = tmp_path / "template.txt"
    tpl.write_text(DOCS[KEYS[3]])  # near_dup's source becomes excluded text
    idx.update([folder], client=client, exclude=[tpl])
    name = f"{folder.name}/near_dup.txt"
    assert idx.total(name).total < 50
    assert_totals_close(stored_totals(idx), reference_totals(idx))


def test_a_source_copied_by_many_counts_every_copier(tmp_path, client):
    """With one candidate per document, the copiers each name the source, the source names
    one of them: the source's total still covers what every copier took (and follows an
    added copier and a deleted one)."""
    src = DOCS[KEYS[5]]
    third = len(src) // 3
    copiers = {
        f"c{i}": DOCS[KEYS[10 + i]][:700] + " " + src[i * third : (i + 1) * third] for i in range(3)
    }
    folder = write_txt({"source": src, "c0": copiers["c0"], "c1": copiers["c1"]}, tmp_path / "src")
    idx = Index.create(tmp_path / "hub", CFG)
    idx.update([folder], client=client, options=RunOptions(totals="off"))
    idx.compute_totals(client=client, top=1)
    assert_totals_close(stored_totals(idx), reference_totals(idx, top=1))
    write_txt({"c2": copiers["c2"]}, folder)
    idx.update([folder], client=client)
    got = stored_totals(idx)
    assert_totals_close(got, reference_totals(idx, top=1))
    assert len(got["src/source.txt"][1]) == 3 and got["src/source.txt"][0] > 80
    (folder / "c0.txt").unlink()
    idx.update([folder], client=client, delete_missing=True)
    got = stored_totals(idx)
    assert_totals_close(got, reference_totals(idx, top=1))
    assert set(got["src/source.txt"][1]) == {"src/c1.txt", "src/c2.txt"}


def test_modifying_a_document_realigns_its_pairs(tmp_path, client):
    idx, folder = _index(tmp_path, "mod", KEYS, client)
    name = f"{folder.name}/near_dup.txt"
    assert idx.total(name).total > 90
    fresh = make_docs(6, seed=99)["d004"]  # text found nowhere else
    half = DOCS["near_dup"][: len(DOCS["near_dup"]) // 2] + " " + fresh
    (folder / "near_dup.txt").write_text(half)
    idx.update([folder], client=client)
    assert idx.total(name).total < 70  # was 99 %
    full, full_src = _index(tmp_path, "full", [], client)
    write_txt({**{k: DOCS[k] for k in KEYS}, "near_dup": half}, full_src)
    full.update([full_src], client=client, options=RunOptions(totals="all"))
    assert_totals_close(_names(stored_totals(idx)), _names(stored_totals(full)))


def test_a_pair_too_long_to_align_leaves_its_documents_without_a_total(tmp_path, client):
    with mock.patch.object(engine_totals, "MAX_PAIR_CHARS", 10):  # every pair is too long
        idx, folder = _index(tmp_path, "long", KEYS, client, totals="off")
        idx.compute_totals()  # in this process: the patched limit applies
    got = stored_totals(idx)
    assert f"{folder.name}/near_dup.txt" not in got  # never a stale or partial total
    assert got and all(v == (0.0, {}) for v in got.values())  # those without candidates
    assert len(got) < idx.stats()["documents"]


def test_source_spans_mark_the_words_taken_from_each_source(tmp_path, client):
    idx, folder = _index(tmp_path, "spans", KEYS, client)
    name = f"{folder.name}/near_dup.txt"
    text = idx.text(name)
    got = source_spans(idx.catalog, name, text)
    total = idx.total(name)
    assert [s for s, _ in got] == [s.key for s in total.sources]
    starts, ends, _ = word_spans(text)
    for (_, spans), src in zip(got, total.sources, strict=True):
        inside = sum(
            any(a <= s and e <= b for a, b in spans) for s, e in zip(starts, ends, strict=True)
        )
        assert 100.0 * inside / len(starts) == pytest.approx(src.share)
    assert source_spans(idx.catalog, "no/such.txt", "") == []


def test_texts_sent_through_dask_align_as_read_from_the_packs(tmp_path, client):
    """Workers that do not share the client's filesystem get the texts with their batch."""
    idx, _ = _index(tmp_path, "ship", KEYS, client, totals="off")
    _, _, jobs, _ = compute_start(idx.catalog, 5)
    settings = engine_totals.AlignSettings(str(tmp_path / "ship" / "texts"))
    runs = []
    for ship in (True, False):
        found = engine_totals.align_jobs(jobs, settings, client=client, ship_texts=ship)
        got = sorted((r for b in found for r in b), key=lambda r: (r.a, r.b))
        runs.append([(r.a, r.b, r.a_words, r.a_spans.tolist(), r.b_spans.tolist()) for r in got])
    assert len(runs[0]) == len(jobs) > 0 and runs[0] == runs[1]
    assert any(row[3] for row in runs[0])  # passages found


def test_the_partner_rule_chooses_the_candidates_aligned(tmp_path, client):
    """With candidates stored, ``totals --compute`` aligns the candidates a PartnerRule
    chooses (not a fixed top k) and ``update --align`` those of the default rule: each
    total equals the brute-force union of the passages of the pairs the rule chooses
    (chosen in plain Python from the stored scores), and the rules' choices differ from a
    fixed top k, so that a rule ignored would fail here."""
    cfg = IndexConfig(hash_bits=24, shards=2, top_k=3, candidates=True)
    a, _ = _index(tmp_path, "rule", KEYS, client, totals="off", config=cfg)
    rule = PartnerRule(floor=0.5, cap=4, least=1)
    a.compute_totals(client=client, rule=rule)
    assert_totals_close(stored_totals(a), reference_totals(a, rule=rule))
    conn = a.catalog.conn
    ids = [int(d) for (d,) in conn.execute("SELECT doc_id FROM documents")]
    chosen = chosen_by_rule(conn, ids, rule)
    assert chosen == rule_partners(conn, ids, rule)
    sizes = {len(v) for v in chosen.values()}
    assert 1 in sizes and max(sizes) > 1  # the floor cuts some lists, not all to one
    assert status(conn)["rule"] == rule.to_dict()
    b, _ = _index(tmp_path, "align", KEYS, client, totals="all", config=cfg)
    assert_totals_close(stored_totals(b), reference_totals(b))
    conn = b.catalog.conn
    ids = [int(d) for (d,) in conn.execute("SELECT doc_id FROM documents")]
    default = chosen_by_rule(conn, ids, DEFAULT_RULE)
    assert {len(v) for v in default.values()} - {DEFAULT_RULE.least}  # not a fixed top 5
    assert status(conn)["rule"] == DEFAULT_RULE.to_dict()
