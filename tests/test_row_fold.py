"""The driver folds the blocks' rows as they arrive (``similarity_stage.RowFold``): the best
``top_k`` per document of any split of the rows into blocks and any fold size equals the best
``top_k`` of all rows at once, and a full build folding after every block stores the same
table as one folding once at the end."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig, RunOptions
from simdask.engine import similarity_stage
from simdask.engine.similarity_stage import RowFold, fold_min_rows
from simdask.kernels.similarity import top_k_rows
from tests.helpers.corpus import make_docs, rel, write_txt

pytestmark = pytest.mark.unit


def _rows(pairs: list[tuple[int, int, int]], n_chunks: int = 40) -> tuple:
    doc = np.array([d for d, _, _ in pairs], np.uint32)
    other = np.array([o for _, o, _ in pairs], np.uint32)
    shared = np.array([s for _, _, s in pairs], np.uint32)
    return doc, other, shared, 100.0 * shared.astype(np.float64) / n_chunks


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.tuples(st.integers(0, 12), st.integers(0, 30)), st.integers(1, 9), max_size=120
    ),
    st.lists(st.integers(0, 6), min_size=1, max_size=8),
    st.integers(1, 6),
    st.integers(1, 200),
)
def test_folded_rows_equal_the_best_of_all_rows(rows, cuts, top_k, min_rows):
    pairs = [(d, o, s) for (d, o), s in rows.items() if d != o]
    blocks = np.array_split(np.array(pairs, np.int64).reshape(-1, 3), len(cuts))
    fold = RowFold(top_k, min_rows)
    for block in blocks:
        fold.add(_rows([tuple(r) for r in block.tolist()]))
    got = fold.result()
    want = top_k_rows(*_rows(pairs), top_k)
    if not len(want[0]):
        assert got == [] or not len(got[0][0])
        return
    (got,) = got
    for g, w in zip(got, want, strict=True):
        assert g.tolist() == w.tolist()
    assert fold.folds >= 1


def test_fold_waits_for_a_quarter_list_a_document():
    assert fold_min_rows(1000, 117) == 29_250
    assert fold_min_rows(0, 5) == 1
    fold = RowFold(2, 10)
    fold.add(_rows([(0, 1, 3), (0, 2, 4)]))
    assert fold.folds == 0 and fold.n_waiting == 2  # fewer than min_rows: kept waiting
    fold.add(_rows([(0, 3, 5)] + [(1, k, 1) for k in range(2, 10)]))
    assert fold.folds == 1 and fold.n_waiting == 0
    assert fold.kept[0].tolist() == [0, 0, 1, 1] and fold.kept[1].tolist() == [3, 2, 2, 3]


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

    def counted(self):
        out = real_result(self)
        folds.append(self.folds)
        return out

    monkeypatch.setattr(similarity_stage, "fold_min_rows", lambda n_docs, top_k: 1)
    monkeypatch.setattr(RowFold, "result", counted)
    every = table("every")
    assert folds and folds[0] > 3  # folded block by block, not once
    assert every == once and len(once) >= 15
