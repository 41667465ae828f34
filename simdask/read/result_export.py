"""Results out as data (issue 32, item 9): the stored similarity rows and the totals streamed
in batches, written as Parquet, or read as a Dask DataFrame.

Every form holds the rows ``simdask similar --format jsonl`` prints (:data:`PAIR_SCHEMA`: the
directed rows, ``doc -> other``, with ``aligned``, ``total``, ``source_excluded`` and the
teacher's ``decision`` and ``note`` on the pair), in the
same order (the largest similarity first, ties by the keys), and the totals as ``simdask
totals --format jsonl`` prints them. Rows are read from the catalog in batches of
:data:`BATCH_ROWS` (bounded memory, however large the index): :func:`iter_similar_rows`.
Parquet needs pyarrow (``pip install 'simdask[parquet]'``), the DataFrame
dask[dataframe] (``'simdask[dataframe]'``): both imported only here, when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from simdask.errors import ConfigError
from simdask.read.total_reads import excluded_by_doc, pair_aligned, read_totals
from simdask.storage.catalog import PairRow
from simdask.storage.decisions import decision_fields, decisions_by_pair
from simdask.storage.pair_rows import checked_row, doc_id_bounds, pair_batches, partition_rows

if TYPE_CHECKING:
    from simdask.index import Index

__all__ = [
    "BATCH_ROWS",
    "PAIR_SCHEMA",
    "iter_pair_rows",
    "iter_similar_rows",
    "pairs_frame",
    "write_pairs_parquet",
    "write_totals_parquet",
]

#: rows read from the catalog at a time by the streaming readers
BATCH_ROWS = 50_000

#: the columns of the pair exports and their types (those of ``similar --format jsonl``)
PAIR_SCHEMA: tuple[tuple[str, str], ...] = (
    ("doc", "string"),
    ("other", "string"),
    ("similarity", "float64"),
    ("aligned", "float64"),
    ("total", "float64"),
    ("source_excluded", "bool"),
    ("decision", "string"),
    ("note", "string"),
    ("shared", "int64"),
    ("doc_chunks", "int64"),
    ("other_chunks", "int64"),
)

#: the columns of :func:`pairs_frame` (the stored values; aligned and total are not there)
_FRAME = tuple(
    (c, t)
    for c, t in PAIR_SCHEMA
    if c not in ("aligned", "total", "source_excluded", "decision", "note")
)


def iter_pair_rows(index: Index, min_similarity: float = 0.0) -> Iterator[PairRow]:
    """Every stored directed row (:class:`~simdask.storage.catalog.PairRow`), best first,
    streamed: at most :data:`BATCH_ROWS` rows in memory. Call inside ``index.snapshot()``
    for one committed state from the first row to the last."""
    where = index.catalog.path
    for rows in pair_batches(index.catalog, min_similarity, BATCH_ROWS):
        for r in rows:
            yield PairRow(*checked_row(r, where))


def iter_similar_rows(index: Index, min_similarity: float = 0.0) -> Iterator[list[dict]]:
    """The rows of ``similar --format jsonl`` (all documents, default sort), in batches of
    at most :data:`BATCH_ROWS` dicts, each batch with its ``aligned``, ``total`` and
    ``source_excluded`` looked up once, the decisions (``decision``, ``note``) once for all.
    Call inside ``index.snapshot()``."""
    where = index.catalog.path
    marks = decisions_by_pair(index.catalog)
    for rows in pair_batches(index.catalog, min_similarity, BATCH_ROWS):
        docs = {r[0] for r in rows}
        aligned = pair_aligned(index.catalog, [(r[0], r[1]) for r in rows])
        totals = {t.doc: t.total for t in read_totals(index.catalog, docs)}
        left_out = excluded_by_doc(index.catalog, docs)
        out = []
        for r in rows:
            doc, other, sim, shared, n_doc, n_other, _ = checked_row(r, where)
            out.append(
                {
                    "doc": doc,
                    "other": other,
                    "similarity": sim,
                    "aligned": aligned.get((doc, other)),
                    "total": totals.get(doc),
                    "source_excluded": other in left_out.get(doc, ()),
                    **decision_fields(marks, doc, other),
                    "shared": shared,
                    "doc_chunks": n_doc,
                    "other_chunks": n_other,
                }
            )
        # similar's sort: rows by similarity, ties as read (the SQL order)
        yield out


def _arrow_schema():
    import pyarrow as pa  # optional (parquet extra): only an export needs it

    types = {
        "string": pa.string(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "int64": pa.int64(),
    }
    return pa.schema([(name, types[t]) for name, t in PAIR_SCHEMA])


def _pyarrow():
    try:
        import pyarrow as pa  # optional (parquet extra): only an export needs it
        import pyarrow.parquet as pq  # optional (parquet extra), as above
    except ImportError:
        raise ConfigError(
            "Parquet needs pyarrow: pip install 'simdask[parquet]' (or use --format jsonl/csv)"
        ) from None
    return pa, pq


def write_pairs_parquet(index: Index, path: str | Path, min_similarity: float = 0.0) -> int:
    """Write the stored directed rows (:data:`PAIR_SCHEMA`, best first) to the Parquet file
    ``path``, one row group per batch, from one committed state. Returns the rows written."""
    pa, pq = _pyarrow()
    schema = _arrow_schema()
    n = 0
    with index.snapshot(), pq.ParquetWriter(str(path), schema) as writer:
        for batch in iter_similar_rows(index, min_similarity):
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            n += len(batch)
        if n == 0:  # a file with the schema and no rows, not an empty file
            writer.write_table(schema.empty_table())
    return n


def write_totals_parquet(index: Index, path: str | Path) -> int:
    """Write every document's total as ``simdask totals --format jsonl`` gives it (``doc``,
    ``total`` percent, ``words``, ``sources`` as a list of ``{key, share}``,
    ``excluded_sources``) to the Parquet file ``path``. Returns the rows written."""
    pa, pq = _pyarrow()
    source = pa.struct([("key", pa.string()), ("share", pa.float64())])
    schema = pa.schema(
        [
            ("doc", pa.string()),
            ("total", pa.float64()),
            ("words", pa.int64()),
            ("sources", pa.list_(source)),
            ("excluded_sources", pa.list_(pa.string())),
        ]
    )
    # in the order of ``simdask totals``: the largest total first, then by key
    rows = [t.to_dict() for t in sorted(index.totals(), key=lambda t: (-t.total, t.doc))]
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), str(path))
    return len(rows)


def _partition(bounds: tuple[int, int], catalog: str, generation: int, min_sim: float):
    """One partition of :func:`pairs_frame`: the rows of the documents with doc IDs in
    ``bounds`` (``[lo, hi)``), read from the catalog file ``catalog`` (a task; a pandas
    DataFrame)."""
    import pandas as pd  # optional (dataframe extra): only a DataFrame needs it

    rows = [r[:6] for r in partition_rows(catalog, generation, bounds, min_sim, BATCH_ROWS)]
    cols = [c for c, _ in _FRAME]
    return pd.DataFrame(rows, columns=cols).astype(dict(_FRAME))


def pairs_frame(index: Index, min_similarity: float = 0.0, partitions: int | None = None):
    """The stored directed rows as a lazy Dask DataFrame (``doc``, ``other``,
    ``similarity``, ``shared``, ``doc_chunks``, ``other_chunks``), one partition per range
    of doc IDs (``partitions``; None: about one per 200,000 rows). Each partition reads the
    catalog file when computed (the workers must see it: one machine or a shared
    filesystem), and refuses to if the index was updated since (:class:`ConfigError`).
    Within a partition, rows are best first."""
    try:
        import dask.dataframe as dd  # optional (dataframe extra): only a DataFrame needs it
    except ImportError:
        raise ConfigError(
            "pairs_frame() needs dask[dataframe]: pip install 'simdask[dataframe]'"
        ) from None
    top, rows = doc_id_bounds(index.catalog)
    n = partitions or max(1, -(-rows // 200_000))
    if n < 1:
        raise ConfigError(f"expected partitions >= 1, found {n}")
    step = -(-top // n)
    bounds = [(lo, min(top, lo + step)) for lo in range(0, top, step)] or [(0, 1)]
    path, gen = str(index.catalog.path), index.catalog.generation
    meta = _partition_meta()
    return dd.from_map(
        _partition, bounds, catalog=path, generation=gen, min_sim=min_similarity, meta=meta
    )


def _partition_meta():
    import pandas as pd  # optional (dataframe extra): only a DataFrame needs it

    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _FRAME})
