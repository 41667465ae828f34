"""simdask: find similar documents (text reuse, plagiarism) in a large, growing document base.

The chunk-hash inverted-index method, built and queried with Dask. See ``docs/design.md``.
"""

from importlib import import_module
from typing import TYPE_CHECKING

from simdask.errors import (
    ClusterError,
    ConfigError,
    DocumentNotFoundError,
    ExtractionError,
    IndexExistsError,
    IndexFormatError,
    IndexNotFoundError,
    NotAnIndexError,
    SimdaskError,
    SourceError,
)

if TYPE_CHECKING:
    from simdask.alignment import AlignConfig, Passage, align, aligned_coverage
    from simdask.cluster.spec import ClusterSpec
    from simdask.comparison import CompareResult, CrossPair, compare_groups
    from simdask.config import FORMAT_VERSION, IndexConfig
    from simdask.engine.run import RunOptions
    from simdask.index import Index
    from simdask.kernels.hashing import chunk_batch, chunk_id, hash_chunks, word_hashes
    from simdask.kernels.words import normalize, words
    from simdask.progress import Callback, TqdmCallback
    from simdask.read.total_reads import DocTotal, TotalSource
    from simdask.storage.catalog import DocumentRow, PairRow
    from simdask.summary import QueryMatch, RunSummary
    from simdask.writer import Writer

#: where each public name lives; imported on first use (PEP 562), so that reading or querying
#: an index does not import dask, distributed and zarr (about 1 s of a new process), and that
#: ``import simdask`` itself imports nothing heavy (not even numpy): the ``simdask`` command
#: turns a Ctrl-C during its imports into one line and exit status 130 only once its own
#: code runs (:func:`simdask.cli.main`)
_LAZY = {
    "FORMAT_VERSION": "config",
    "IndexConfig": "config",
    "AlignConfig": "alignment",
    "Passage": "alignment",
    "align": "alignment",
    "aligned_coverage": "alignment",
    "DocumentRow": "storage.catalog",
    "PairRow": "storage.catalog",
    "chunk_batch": "kernels.hashing",
    "chunk_id": "kernels.hashing",
    "hash_chunks": "kernels.hashing",
    "word_hashes": "kernels.hashing",
    "ClusterSpec": "cluster.spec",
    "CompareResult": "comparison",
    "CrossPair": "comparison",
    "compare_groups": "comparison",
    "Index": "index",
    "RunOptions": "engine.run",
    "Callback": "progress",
    "TqdmCallback": "progress",
    "QueryMatch": "summary",
    "DocTotal": "read.total_reads",
    "TotalSource": "read.total_reads",
    "RunSummary": "summary",
    "Writer": "writer",
    "normalize": "kernels.words",
    "words": "kernels.words",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    "FORMAT_VERSION",
    "AlignConfig",
    "Callback",
    "ClusterError",
    "ClusterSpec",
    "CompareResult",
    "ConfigError",
    "CrossPair",
    "DocTotal",
    "DocumentNotFoundError",
    "DocumentRow",
    "ExtractionError",
    "Index",
    "IndexConfig",
    "IndexExistsError",
    "IndexFormatError",
    "IndexNotFoundError",
    "NotAnIndexError",
    "PairRow",
    "Passage",
    "QueryMatch",
    "RunOptions",
    "RunSummary",
    "SimdaskError",
    "SourceError",
    "TotalSource",
    "TqdmCallback",
    "Writer",
    "__version__",
    "align",
    "aligned_coverage",
    "chunk_batch",
    "chunk_id",
    "compare_groups",
    "hash_chunks",
    "normalize",
    "word_hashes",
    "words",
]
