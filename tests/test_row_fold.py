"""The driver folds the blocks' rows as they arrive (``kernels.top_rows.RowFold``): the best
``top_k`` per document of any split of the rows into blocks, any fold size and any part size
equals the best ``top_k`` of all rows at once (rows, order and dtypes; ties included), rows
below a full list's bar are dropped on arrival, and a full build folding after every block
in parts of 4 documents stores the same table as one folding once at the end."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.engine import similarity_stage
from simdask.engine.similarity_stage import fold_min_rows
from simdask.kernels import top_rows
from simdask.kernels.top_rows import RowFold, narrow, top_k_rows
from tests.helpers.corpus import make_docs, rel, write_txt

pytestmark = pytest.mark.unit


def _rows(pairs: list[tuple[int, int, int]], n_chunks: int = 40) -> tuple:
    doc = np.array([d for d, _, _ in pairs], np.int64)
    other = np.array([o for _, o, _ in pairs], np.int64)
    shared = np.array([s for _, _, s in pairs], np.int64)
    return doc, other, shared, 100.0 * shared.astype(np.float64) / n_chunks


def _brute(rows: list[tuple[int, int, int, float]], k: int) -> list[tuple]:
    """Each document's best ``k`` rows by (highest similarity, lowest other), in Python."""
    out: list[tuple] = []
    for d in sorted({r[0] for r in rows}):
        mine = sorted((r for r in rows if r[0] == d), key=lambda r: (-r[3], r[1]))
        out += mine[:k]
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.tuples(st.integers(0, 40), st.integers(0, 30)), st.integers(1, 9), max_size=150
    ),
    st.lists(st.integers(1, 9), min_size=41, max_size=41),
    st.sampled_from(["counted", "free"]),
    st.lists(st.integers(0, 6), min_size=1, max_size=8),
    st.integers(1, 6),
    st.integers(1, 60),
    st.sampled_from([1, 2, 3, 8, 64]),
    st.randoms(use_true_random=False),
)
def test_folded_rows_equal_the_best_of_all_rows(
    rows, sizes, kind, cuts, top_k, min_rows, part_docs, rnd
):
    """Any split into blocks (rows in any order within a block), any fold size and part size:
    the rows, their order and dtypes are :func:`top_k_rows` of all rows, which is the Python
    ranking. ``counted``: similarity is containment(shared, |doc|) (the packed-key sort);
    ``free``: few similarity values unrelated to ``shared`` (many ties; the lexsort)."""
    pairs = [(d, o, s) for (d, o), s in rows.items() if d != o]
    rnd.shuffle(pairs)
    doc, other, shared, _ = _rows(pairs)
    if kind == "counted":
        sim = 100.0 * shared / np.array(sizes, np.float64)[doc]
    else:
        sim = np.array([(5.0, 2.5, 1.0)[(d * 7 + o) % 3] for d, o, _ in pairs], np.float64)
    cols = (doc, other, shared, sim.reshape(-1))
    fold = RowFold(top_k, min_rows, part_docs)
    for idx in np.array_split(np.arange(len(pairs)), len(cuts)):
        fold.add(tuple(c[idx] for c in cols))
        for p in fold.parts.values():  # bounded: kept <= top_k a document, waiting folds
            assert p.n_waiting < max(min_rows, p.n_kept // 2) or not p.waiting
            assert p.n_kept <= top_k * part_docs
    got = fold.result()
    want = top_k_rows(*cols, top_k)
    assert [g.dtype for g in got] == [narrow(w).dtype for w in want]  # uint32, float64
    for g, w in zip(got, want, strict=True):
        assert g.tolist() == w.tolist()
    assert list(zip(*[c.tolist() for c in got], strict=True)) == _brute(
        list(zip(*[c.tolist() for c in cols], strict=True)), top_k
    )
    assert fold.parts == {}  # result() empties the fold


def test_bars_drop_rows_that_cannot_enter_a_full_list():
    """Once a document holds ``top_k`` rows, a row ranking below its ``top_k``-th is dropped
    on arrival; one ranking above it (higher similarity, or equal and a lower ``other``)
    waits; a document without a full list takes every row."""
    fold = RowFold(2, 1, part_docs=1)
    fold.add(_rows([(0, 5, 8), (0, 6, 4), (1, 2, 1)]))  # doc 0: list full, bar (10 %, 6)
    assert fold.folds == 2 and fold.dropped == 0
    assert fold.bar_sim[:2].tolist() == [10.0, -np.inf] and fold.bar_other[0] == 6
    fold.add(_rows([(0, 7, 4), (0, 9, 3), (0, 3, 4), (1, 9, 1)]))
    assert fold.dropped == 2  # (0, 7): ties the bar, higher other; (0, 9): lower similarity
    got = fold.result()
    assert list(zip(got[0].tolist(), got[1].tolist(), strict=True)) == [
        (0, 5),
        (0, 3),  # ties (0, 6) at 10 %, lower other
        (1, 2),
        (1, 9),
    ]


def test_fold_sorts_one_part_at_a_time_in_narrow_columns(monkeypatch):
    """A fold sorts the rows of one part (documents ``part_docs`` apart), held as uint32
    integer columns, as the result is; columns that do not fit stay as they came."""
    sorted_docs: list[list[int]] = []
    real = top_rows.top_k_rows

    def spy(doc, other, shared, sim, k):
        sorted_docs.append(sorted(set(doc.tolist())))
        assert doc.dtype == other.dtype == shared.dtype == np.uint32
        return real(doc, other, shared, sim, k)

    monkeypatch.setattr(top_rows, "top_k_rows", spy)
    fold = RowFold(3, 2, part_docs=10)
    fold.add(_rows([(d, d + 1, 2) for d in range(0, 40, 3)]))
    assert all(max(d) // 10 == min(d) // 10 for d in sorted_docs) and len(sorted_docs) == 4
    released: list[int] = []
    got = fold.result(release=lambda: released.append(fold.n_kept))
    assert released == [0, 0, 0, 0]  # called once a column, the parts already gone
    assert [c.dtype for c in got] == [np.uint32, np.uint32, np.uint32, np.float64]
    assert got[0].tolist() == list(range(0, 40, 3))
    monkeypatch.undo()
    wide = RowFold(3, 1)
    wide.add((np.array([1, 2]), np.array([-1, 2**40]), np.array([5, 5]), np.array([1.0, 1.0])))
    got = wide.result()
    assert [c.dtype for c in got] == [np.uint32, np.int64, np.uint32, np.float64]
    assert got[1].tolist() == [-1, 2**40]


def test_waiting_rows_stay_under_half_the_kept_ones():
    """Rows that all enter their lists (rising similarity): a part folds once its waiting
    rows reach half its kept rows, so it never holds more than 1.5 times its kept rows plus
    one block, and it does not fold at every block."""
    fold = RowFold(4, 1, part_docs=100)
    n = 0
    for b in range(60):
        block = [((b * 10 + j) % 50, 1000 + n + j, n + j + 1) for j in range(10)]
        n += 10
        fold.add(_rows(block, n_chunks=10_000))
        (p,) = fold.parts.values()
        assert p.n_waiting < max(1, p.n_kept // 2) or not p.waiting
        assert p.n_kept + p.n_waiting <= 1.5 * 200 + 10
    assert fold.dropped == 0 and 10 < fold.folds < 30
    assert fold.result()[0].tolist() == [d for d in range(50) for _ in range(4)]


def test_fold_waits_for_a_quarter_list_a_document():
    assert fold_min_rows(1000, 117) == 29_250
    assert fold_min_rows(0, 5) == 1
    fold = RowFold(2, 10)
    fold.add(_rows([(0, 1, 3), (0, 2, 4)]))
    assert fold.folds == 0 and fold.n_waiting == 2  # fewer than min_rows: kept waiting
    fold.add(_rows([(0, 3, 5)] + [(1, k, 1) for k in range(2, 10)]))
    assert fold.folds == 1 and fold.n_waiting == 0 and fold.n_kept == 4
    (p,) = fold.parts.values()
    assert p.kept[0].tolist() == [0, 0, 1, 1] and p.kept[1].tolist() == [3, 2, 2, 3]
    assert RowFold(2, 10).result() is None


@pytest.mark.integration
def test_build_folding_after_every_block_stores_the_same_table(tmp_path, client, monkeypatch):
    docs = make_docs(40, seed=4)
    src = write_txt(docs, tmp_path / "docs")

    def table(name: str):
        with Index.create(tmp_path / name, IndexConfig(top_k=3, shards=4)) as idx:
            s = idx.update([src], client=client, options=RunOptions(block_pairs=50))
            assert s.extra["blocks"] > 3
            return sorted((rel(r.doc), rel(r.other), r.shared, r.similarity) for r in idx.pairs())

    once = table("once")
    folds: list[int] = []
    real_result = RowFold.result

    def counted(self, release=None):
        assert release is not None  # the driver gives the parts' heap back
        out = real_result(self, release)
        folds.append(self.folds)
        return out

    monkeypatch.setattr(similarity_stage, "fold_min_rows", lambda n_docs, top_k: 1)
    monkeypatch.setattr(similarity_stage, "PART_DOCS", 4)  # ten parts of 4 documents
    monkeypatch.setattr(RowFold, "result", counted)
    every = table("every")
    assert folds and folds[0] > 3  # folded block by block, not once
    assert every == once and len(once) >= 15
