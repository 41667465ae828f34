"""Lists kept deeper than shown (reserve rows and floors, :mod:`simdask.storage.lists`).

Corpora where every document has many partners (each document is a random handful of a
few shared paragraphs): with ``top_k`` 3 almost every list is full and every deletion or
modification eats into lists. After every run of adds, modifications and deletions through
the real update path, the shown rows must be exactly the brute-force top-k (Python Counters
over the postings, :func:`~tests.helpers.compare.expected_table`), the stored rows must
keep the floor invariant against the brute-force complete lists, and at the end the index
must equal one full build (shown rows compared; the reserve may differ after deletions).
"""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.kernels.similarity import split_lists
from simdask.storage.lists import list_problems
from tests.helpers.compare import assert_contract_rows, assert_same_index, expected_table
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration

PARAS = [t[:700] for t in make_docs(14, seed=5).values()]


def _doc(rng: random.Random) -> str:
    return " ".join(rng.sample(PARAS, rng.randint(2, 5)))


# --- the kernel ------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 9), st.integers(1, 6)),
        max_size=40,
        unique_by=lambda r: (r[0], r[1]),
    ),
    st.integers(1, 4),
    st.integers(0, 3),
)
def test_split_lists_matches_brute_force(rows, top_k, slack):
    depth = top_k + slack
    rows = [(d, o, s) for d, o, s in rows if d != o]
    doc = np.array([r[0] for r in rows], np.int64)
    other = np.array([r[1] for r in rows], np.int64)
    shared = np.array([r[2] for r in rows], np.int64)
    sim = 100.0 * shared / 7
    shown, reserve, floors = split_lists(doc, other, shared, sim, top_k, depth)
    want_shown, want_reserve, want_floor = set(), set(), {}
    for d in {r[0] for r in rows}:
        lst = sorted((r for r in rows if r[0] == d), key=lambda r: (-r[2], r[1]))
        want_shown |= {(d, o, s) for _, o, s in lst[:top_k]}
        want_reserve |= {(d, o, s) for _, o, s in lst[top_k:depth]}
        if len(lst) > depth:
            want_floor[d] = (100.0 * lst[depth][2] / 7, lst[depth][1])
    assert set(zip(*map(np.ndarray.tolist, shown[:3]), strict=True)) == want_shown
    assert set(zip(*map(np.ndarray.tolist, reserve[:3]), strict=True)) == want_reserve
    got_floor = {d: (s, o) for d, s, o in zip(*map(np.ndarray.tolist, floors), strict=True)}
    assert got_floor == want_floor


def _rebalanced(state, docs, top_k, depth):
    """Brute force of :func:`~simdask.storage.lists.rebalance` on ``state`` (``shown`` and
    ``reserve`` sets of ``(doc, other, shared, sim)``, ``floors`` ``{doc: (sim, other)}``)."""
    shown, reserve, floors = (set(state[0]), set(state[1]), dict(state[2]))
    for d in docs:
        if d in floors:
            fs, fo = floors[d]
            shown = {r for r in shown if r[0] != d or not (r[3] < fs or (r[3] == fs and r[1] > fo))}
        rows = sorted((r for r in shown | reserve if r[0] == d), key=lambda r: (-r[3], r[1]))
        shown = {r for r in shown if r[0] != d} | set(rows[:top_k])
        reserve = {r for r in reserve if r[0] != d} | set(rows[top_k:depth])
        if len(rows) > depth:
            floors[d] = (rows[depth][3], rows[depth][1])
    return shown, reserve, floors


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 9), st.integers(1, 4), st.booleans()),
        max_size=40,
        unique_by=lambda r: (r[0], r[1]),
    ),
    st.dictionaries(st.integers(0, 3), st.tuples(st.integers(1, 4), st.integers(0, 9)), max_size=2),
    st.sets(st.integers(0, 4)),
    st.integers(1, 4),
    st.integers(0, 3),
    st.booleans(),
)
# a list one row too long, in place otherwise; a shown row after a reserve row; one too deep
@example([(0, 1, 2, False), (0, 2, 3, False)], {}, {0}, 1, 1, False)
@example([(0, 1, 2, False), (0, 2, 3, True)], {}, {0}, 1, 1, False)
@example([(0, 1, 2, False), (0, 2, 1, True), (0, 3, 1, True)], {}, {0}, 1, 1, True)
def test_rebalance_matches_brute_force(rows, floors, docs, top_k, slack, ranked):
    """Any lists (shown rows, reserve rows, floors; sims with ties) ranked again for any set
    of documents: what the brute force gives, lists in place or not, the others untouched.
    ``ranked``: each list's first ``top_k`` rows shown and all others in reserve (in place
    but possibly deeper than ``top_k + slack``)."""
    from simdask.storage.catalog import Catalog
    from simdask.storage.commit import temp_ids
    from simdask.storage.lists import rebalance

    depth = top_k + slack
    shown = {(d, o, s, s / 4) for d, o, s, res in rows if not res}
    reserve = {(d, o, s, s / 4) for d, o, s, res in rows if res}
    if ranked:
        lists = {}
        for r in sorted(shown | reserve, key=lambda r: (r[0], -r[3], r[1])):
            lists.setdefault(r[0], []).append(r)
        shown = {r for rs in lists.values() for r in rs[:top_k]}
        reserve = {r for rs in lists.values() for r in rs[top_k:]}
    floors = {d: (s / 4, o) for d, (s, o) in floors.items()}
    cat = Catalog(":memory:", create=True)
    c = cat.conn
    for table, rs in (("similarity", shown), ("reserve", reserve)):
        c.executemany(
            f"INSERT INTO {table} (doc, other, shared, similarity) VALUES (?, ?, ?, ?)", rs
        )
    c.executemany(
        "INSERT INTO floors (doc, similarity, other) VALUES (?, ?, ?)",
        [(d, s, o) for d, (s, o) in floors.items()],
    )
    temp_ids(c, "t_docs", sorted(docs))
    rebalance(c, "t_docs", top_k, depth)
    got = (
        set(c.execute("SELECT doc, other, shared, similarity FROM similarity")),
        set(c.execute("SELECT doc, other, shared, similarity FROM reserve")),
        {d: (s, o) for d, s, o in c.execute("SELECT doc, similarity, other FROM floors")},
    )
    assert got == _rebalanced((shown, reserve, floors), docs, top_k, depth)
    cat.close()


# --- through the update path -----------------------------------------------------------------
def _stored(idx: Index):
    """Shown and reserve rows and floors of ``idx``, by key."""
    c = idx.catalog.conn
    names = {d.doc_id: d.key for d in idx.catalog.documents()}
    shown, reserve = {}, {}
    for table, out in (("similarity", shown), ("reserve", reserve)):
        for d, o, s, sim in c.execute(f"SELECT doc, other, shared, similarity FROM {table}"):
            out.setdefault(names[d], set()).add((round(sim, 9), s, names[o]))
    floors = {
        names[d]: (round(s, 9), names.get(o), o)  # a boundary: its document may be gone
        for d, s, o in c.execute("SELECT doc, similarity, other FROM floors")
    }
    return shown, reserve, floors


def assert_floor_invariant(idx: Index) -> None:
    """Per document: at most ``stored_depth`` rows stored, each a true row; every partner
    ranking before the floor stored (no floor: every partner); the shown rows the stored
    ones' first ``top_k`` (ranked by similarity desc, then ``other`` doc ID asc)."""
    full = expected_table(idx, top_k=10**9)
    ids = {d.key: d.doc_id for d in idx.catalog.documents()}
    shown, reserve, floors = _stored(idx)
    cfg = idx.config
    for doc in set(full) | set(shown) | set(reserve) | set(floors):
        want = full.get(doc, [])
        stored = shown.get(doc, set()) | reserve.get(doc, set())
        assert stored <= set(want), (doc, stored - set(want))
        assert len(stored) <= cfg.stored_depth
        floor = floors.get(doc)
        for sim, n, other in want:
            before = floor is None or (-sim, ids[other]) < (-floor[0], floor[2])
            if before:
                assert (sim, n, other) in stored, (doc, other, floor)
        ranked = sorted(stored, key=lambda r: (-r[0], ids[r[2]]))
        assert shown.get(doc, set()) == set(ranked[: cfg.top_k]), doc
    # the check `simdask check` runs finds nothing wrong either
    assert list_problems(idx.catalog, cfg.top_k, cfg.stored_depth) == []


def _old_rule(idx: Index, dropped_keys: list[str]) -> int:
    """Lists the rule before reserves recomputed: full shown lists holding a dropped one."""
    shown, _, _ = _stored(idx)
    cfg = idx.config
    return sum(
        1
        for doc, rows in shown.items()
        if doc not in dropped_keys
        and len(rows) >= cfg.top_k
        and any(o in dropped_keys for _, _, o in rows)
    )


@pytest.mark.parametrize("seed,slack", [(1, 2), (2, 2), (3, 1)])
def test_many_partners_adds_modifies_deletes(tmp_path, client, seed, slack):
    rng = random.Random(seed)
    docs = {f"d{i:02d}": _doc(rng) for i in range(14)}
    folder = write_txt(docs, tmp_path / "src")
    cfg = IndexConfig(hash_bits=24, shards=3, top_k=3, slack=slack)
    idx = Index.create(tmp_path / "inc", cfg)
    idx.update([folder], client=client)
    assert_floor_invariant(idx)
    refilled = old_rule = 0
    n = len(docs)
    for step in range(6):
        keys = sorted(docs)
        gone = rng.sample(keys, rng.randint(1, 4))
        changed = rng.sample([k for k in keys if k not in gone], rng.randint(0, 2))
        for k in gone:
            (folder / f"{k}.txt").unlink()
            del docs[k]
        for k in changed:
            docs[k] = _doc(rng)
            (folder / f"{k}.txt").write_text(docs[k])
        for _ in range(rng.randint(1, 3)):
            docs[f"d{n:02d}"] = _doc(rng)
            (folder / f"d{n:02d}.txt").write_text(docs[f"d{n:02d}"])
            n += 1
        old_rule += _old_rule(idx, [f"src/{k}.txt" for k in gone + changed])
        fuse = RunOptions(fuse_members=0 if step % 2 else 1000)
        s = idx.update([folder], client=client, delete_missing=True, options=fuse)
        refilled += s.extra["refilled"]
        assert_contract_rows(idx)
        assert_floor_invariant(idx)
    shutil.rmtree(tmp_path / "full", ignore_errors=True)
    full = Index.create(tmp_path / "full", cfg)
    full.update([folder], client=client)
    assert_floor_invariant(full)
    assert_same_index(idx, full)
    # the reserve saved recomputations: fewer than the old rule's (every touched full list)
    print("refilled", refilled, "old rule", old_rule)
    assert old_rule > 0 and refilled < old_rule, (refilled, old_rule)


def test_index_written_before_reserves_keeps_the_old_rule(tmp_path, client):
    """An index without reserve tables, floors or ``slack`` in its config (as written before
    them) opens, gets floors on its first incremental run (the last row of each full list)
    and refills touched full lists as before; its rows equal a full build's."""
    rng = random.Random(7)
    docs = {f"d{i:02d}": _doc(rng) for i in range(10)}
    folder = write_txt(docs, tmp_path / "src")
    cfg = IndexConfig(hash_bits=24, shards=3, top_k=3, slack=0)
    idx = Index.create(tmp_path / "old", cfg)
    idx.update([folder], client=client)
    c = idx.catalog.conn
    raw = json.loads(idx.catalog.meta("config"))
    del raw["slack"]
    c.execute("UPDATE meta SET value = ? WHERE name = 'config'", (json.dumps(raw),))
    c.execute("DELETE FROM meta WHERE name = 'list_floors'")
    c.execute("UPDATE meta SET value = '2' WHERE name = 'format_version'")
    c.execute("DROP TABLE reserve")
    c.execute("DROP TABLE floors")
    idx.close()
    idx = Index.open(tmp_path / "old")
    assert idx.config.slack == 0 and idx.config.stored_depth == 3
    gone = sorted(docs)[:2]
    for k in gone:
        (folder / f"{k}.txt").unlink()
    before = _old_rule(idx, [f"src/{k}.txt" for k in gone])
    s = idx.update([folder], client=client, delete_missing=True)
    assert before > 0 and s.extra["refilled"] == before
    assert idx.catalog.meta("list_floors") == "1"
    assert idx.catalog.meta("format_version") == "3"
    assert_floor_invariant(idx)
    full = Index.create(tmp_path / "full", cfg)
    full.update([folder], client=client)
    assert_same_index(idx, full)


def test_check_reports_broken_lists(tmp_path, client):
    """``simdask check`` (:func:`~simdask.storage.lists.list_problems`) reports each broken
    invariant of the stored lists: a reserve row ranking within the shown ones, a shown row
    pushed into the reserve, a row after the floor, a list longer than the stored depth."""
    from simdask.storage.verify import check_index

    rng = random.Random(11)
    docs = {f"d{i:02d}": _doc(rng) for i in range(12)}
    folder = write_txt(docs, tmp_path / "src")
    cfg = IndexConfig(hash_bits=24, shards=3, top_k=3, slack=1)
    with Index.create(tmp_path / "base", cfg) as idx:
        idx.update([folder], client=client)
        c = idx.catalog.conn
        doc = c.execute("SELECT doc FROM floors ORDER BY doc LIMIT 1").fetchone()[0]
    assert check_index(tmp_path / "base").ok

    def broken(name, *statements):
        work = tmp_path / name
        shutil.copytree(tmp_path / "base", work)
        with Index.open(work) as i:
            for q in statements:
                i.catalog.conn.execute(q)
            i.catalog.conn.commit()
        report = check_index(work)
        return [p.message for p in report.damage if p.kind == "similarity"]

    best = f"(SELECT MIN(other) FROM similarity WHERE doc = {doc})"
    # the best shown row moved to the reserve: out of place, and the list shows 2 < top_k
    moved = broken(
        "moved",
        f"INSERT INTO reserve SELECT * FROM similarity WHERE doc = {doc} AND other = {best}",
        f"DELETE FROM similarity WHERE doc = {doc} AND other = {best}",
    )
    assert any("out of place" in m and f"doc {doc}," in m for m in moved), moved
    assert any("showing fewer than 3" in m for m in moved), moved
    # the floor raised above a stored row: rows after the floor
    raised = broken("raised", f"UPDATE floors SET similarity = 100.0 WHERE doc = {doc}")
    assert any("after their document's floor" in m for m in raised), raised
    # a row both shown and in reserve
    both = broken("both", f"INSERT INTO reserve SELECT * FROM similarity WHERE doc = {doc} LIMIT 1")
    assert any("both shown and in reserve" in m for m in both), both
