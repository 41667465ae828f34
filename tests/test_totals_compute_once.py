"""``totals --compute`` chooses every document's partners once (issue 29, the totals' cost:
choosing them at 100k documents is ~30 CPU s, done at the start and again at the end before
session 16): the totals it stores are still the brute-force reference's."""

from __future__ import annotations

import pytest

import simdask.storage.aligned_tables as aligned_tables
from simdask import Index, IndexConfig, RunOptions
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.totals import assert_totals_close, reference_totals, stored_totals

pytestmark = pytest.mark.integration


def test_compute_chooses_the_partners_once_and_stores_the_reference_totals(
    tmp_path, client, monkeypatch
):
    docs = make_docs(16, seed=7)
    write_txt(docs, tmp_path / "src")
    idx = Index.create(tmp_path / "idx", IndexConfig(hash_bits=24, shards=2, top_k=3))
    idx.update([tmp_path / "src"], client=client, options=RunOptions(totals="off"))
    calls = []
    real = aligned_tables.rule_partners

    def counted(conn, ids, rule):
        ids = list(ids)
        calls.append(len(ids))
        return real(conn, ids, rule)

    monkeypatch.setattr(aligned_tables, "rule_partners", counted)
    out = idx.compute_totals(client=client, batch_jobs=2)
    assert calls == [len(docs)]  # every document's partners, chosen once
    assert out["aligned"] > 0 and out["documents"] == len(docs)
    got = stored_totals(idx)
    assert len(got) == len(docs)
    assert_totals_close(got, reference_totals(idx))
    assert any(t > 20 for t, _ in got.values())
