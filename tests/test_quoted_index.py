"""Quotations excluded in the checked document only, wired end to end (issue 31 item 4,
docs/term.md): the stored directed lists and quoted chunks of built and incrementally
updated indexes against a brute-force reference from the texts (Python sets and Counters),
the migration of an index built before the quoted chunks were kept, and ``check``."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig
from simdask.storage.quoted_chunks import QUOTED_META
from simdask.storage.verify import check_index
from tests.helpers.compare import assert_same_index, quoted_by_key, table_by_doc
from tests.helpers.properties import examples
from tests.helpers.quote_reference import (
    brute_sets,
    quoting_corpus,
    reference_count,
    reference_lists,
)

pytestmark = pytest.mark.integration


def _write(folder, texts: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for p in folder.iterdir():
        if p.name not in texts:
            p.unlink()
    for name, text in texts.items():
        (folder / name).write_text(text)


def assert_reference(idx: Index, texts: dict[str, str]) -> None:
    """The index's lists, |U| and stored Q equal the brute force over ``texts``."""
    cfg = idx.config
    docs = {d.key: d for d in idx.catalog.documents()}
    keyed = {f"src/{k}": t for k, t in texts.items()}
    ids = {k: docs[k].doc_id for k in keyed}
    want = reference_lists(keyed, cfg, ids)
    got = {d: sorted(r, key=lambda x: (-x[0], ids[x[2]])) for d, r in table_by_doc(idx).items()}
    assert got == want
    for r in idx.pairs():  # each row's reverse count, shown by the views of pairs
        assert r.reverse_shared == reference_count(keyed, cfg, r.other, r.doc), r
    q_stored = quoted_by_key(idx)
    for k, t in keyed.items():
        u, q = brute_sets(t, cfg)
        assert docs[k].n_chunks == len(u), k
        assert q_stored.get(k, []) == (sorted(q) if u else []), k


configs = st.builds(
    IndexConfig,
    k=st.integers(2, 4),
    hash_bits=st.sampled_from([20, 24, 40]),
    shards=st.sampled_from([1, 3]),
    top_k=st.sampled_from([1, 2, 5]),
    threshold=st.sampled_from([1.0, 10.0, 30.0]),
    max_df=st.sampled_from([None, 2, 4]),
    exclude_quotes=st.just(True),
)


@settings(
    max_examples=examples(default=6, ci=15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(config=configs, seed=st.integers(0, 10**6), n=st.integers(2, 9))
def test_build_equals_brute_force(tmp_path_factory, client, config, seed, n):
    """A build's lists hold ``S + E`` per direction, cut at ``top_k``, as brute force."""
    tmp = tmp_path_factory.mktemp("qb")
    texts = quoting_corpus(seed, n)
    _write(tmp / "src", texts)
    idx = Index.create(tmp / "idx", config)
    idx.update([tmp / "src"], client=client)
    assert_reference(idx, texts)
    assert check_index(tmp / "idx").ok


def test_incremental_runs_equal_brute_force_and_full_build(tmp_path, client):
    """Adds, a quotation added and removed by a modification, a quoting document deleted, a
    copier added: after each run the lists equal the brute force, and a full build."""
    cfg = IndexConfig(k=3, hash_bits=24, shards=3, top_k=3, threshold=5.0, exclude_quotes=True)
    texts = quoting_corpus(7, 8)
    passage = " ".join(f"p{i}" for i in range(15))
    texts["d01.txt"] += f' as written "{passage}" end'
    folder = tmp_path / "src"
    idx = Index.create(tmp_path / "inc", cfg)
    steps = [
        {},  # the first build
        {"d20.txt": f"{texts['d02.txt'][:80]} {passage} mine"},  # a copier of d01's quotation
        {"d03.txt": texts["d03.txt"] + f' quoting "{passage}"'},  # a quotation added
        {"d01.txt": texts["d01.txt"].replace('"', "")},  # d01's quotation made its own text
        {"d01.txt": None, "d04.txt": None},  # deleted
    ]
    for change in steps:
        for k, v in change.items():
            if v is None:
                del texts[k]
            else:
                texts[k] = v
        _write(folder, texts)
        idx.update([folder], client=client, delete_missing=True)
        assert_reference(idx, texts)
    full = Index.create(tmp_path / "full", cfg)
    full.update([folder], client=client)
    assert_same_index(idx, full)


def test_directed_rows_found_where_the_symmetric_rule_misses(tmp_path, client):
    """The issue's example: A quotes a passage, B copies it unquoted. B's row in A holds the
    passage (its |U(A)| is smaller than what B shares with it: ``check`` stays clean); A's
    quotation is not A's copied text."""
    passage = " ".join(f"famous{i}" for i in range(40))
    texts = {
        "a.txt": f'{" ".join(f"a{i}" for i in range(20))} wrote "{passage}" so',
        "b.txt": f"{' '.join(f'b{i}' for i in range(10))} {passage} end",
        "c.txt": " ".join(f"c{i}" for i in range(50)),
    }
    _write(tmp_path / "src", texts)
    cfg = IndexConfig(k=3, hash_bits=32, shards=2, exclude_quotes=True)
    idx = Index.create(tmp_path / "idx", cfg)
    idx.update([tmp_path / "src"], client=client)
    rows = {(r.doc, r.other): r for r in idx.pairs()}
    b_in_a = rows[("src/b.txt", "src/a.txt")]
    assert b_in_a.similarity > 75 and b_in_a.shared > b_in_a.other_chunks
    assert ("src/a.txt", "src/b.txt") not in rows  # only the quotation: not A's copied text
    (pair,) = [p for p in idx.pair_list() if {p.a_key, p.b_key} == {"src/a.txt", "src/b.txt"}]
    assert (pair.a_key, pair.a_in_b) == ("src/b.txt", b_in_a.similarity)
    assert pair.b_in_a < 10  # A's own words in B: its quotation is not counted
    assert check_index(tmp_path / "idx").ok
    assert_reference(idx, texts)


def test_index_built_before_the_table_is_rechunked_once(tmp_path, client):
    """An index with ``exclude_quotes`` whose quoted chunks were never recorded (built by an
    earlier simdask) is re-chunked by its next update and then equals a full build;
    ``check`` reports the missing record first."""
    cfg = IndexConfig(k=3, hash_bits=24, shards=2, top_k=4, exclude_quotes=True)
    texts = quoting_corpus(3, 6)
    passage = " ".join(f"p{i}" for i in range(12))
    texts["d00.txt"] += f' "{passage}"'
    texts["d05.txt"] += f" {passage}"
    _write(tmp_path / "src", texts)
    idx = Index.create(tmp_path / "old", cfg)
    idx.update([tmp_path / "src"], client=client)
    idx.close()
    with sqlite3.connect(tmp_path / "old" / "catalog.sqlite") as c:  # as an earlier version
        c.execute("DROP TABLE quoted_chunks")
        c.execute("DELETE FROM meta WHERE name = ?", (QUOTED_META,))
    rep = check_index(tmp_path / "old")
    assert any("not recorded" in d.message for d in rep.damage)
    idx = Index.open(tmp_path / "old")
    s = idx.update([tmp_path / "src"], client=client)
    assert s.unchanged == len(texts)
    assert_reference(idx, texts)
    assert check_index(tmp_path / "old").ok


def test_setting_off_clears_the_table_and_check_reports_damage(tmp_path, client):
    """Turning ``exclude_quotes`` off empties the quoted chunks (the lists symmetric again);
    a quoted-chunk row of an unknown document is damage."""
    texts = quoting_corpus(11, 5)
    texts["d00.txt"] += ' "' + " ".join(f"p{i}" for i in range(12)) + '"'
    _write(tmp_path / "src", texts)
    cfg = IndexConfig(k=3, hash_bits=24, shards=2, exclude_quotes=True)
    idx = Index.create(tmp_path / "idx", cfg)
    idx.update([tmp_path / "src"], client=client)
    assert quoted_by_key(idx)
    shutil.copytree(tmp_path / "idx", tmp_path / "bad")
    with sqlite3.connect(tmp_path / "bad" / "catalog.sqlite") as c:
        c.execute("INSERT INTO quoted_chunks (doc_id, ids) VALUES (999, x'01000000')")
    assert any("does not know" in d.message for d in check_index(tmp_path / "bad").damage)
    idx.update([tmp_path / "src"], client=client, config=cfg.replace(exclude_quotes=False))
    assert quoted_by_key(idx) == {}
    assert check_index(tmp_path / "idx").ok
