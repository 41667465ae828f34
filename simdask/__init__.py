"""simdask: find similar documents (text reuse, plagiarism) in a large, growing document base.

The chunk-hash inverted-index method, built and queried with Dask. See ``DESIGN.md``.
"""

from importlib import import_module
from typing import TYPE_CHECKING

from .config import FORMAT_VERSION, IndexConfig
from .errors import (
    ClusterError,
    ConfigError,
    DocumentNotFoundError,
    ExtractionError,
    IndexExistsError,
    IndexFormatError,
    IndexNotFoundError,
    SimdaskError,
    SourceError,
)

if TYPE_CHECKING:
    from .catalog import DocumentRow, PairRow
    from .chunks import chunk_batch, chunk_id, hash_chunks, word_hashes
    from .cluster_config import ClusterSpec
    from .compare import CompareResult, CrossPair, compare_groups
    from .index import Index
    from .pipeline import RunOptions
    from .progress import Callback, TqdmCallback
    from .summary import QueryMatch, RunSummary
    from .text import normalize, words

#: where each public name lives; imported on first use (PEP 562), so that reading or querying
#: an index does not import dask, distributed and zarr (about 1 s of a new process)
_LAZY = {
    "DocumentRow": "catalog",
    "PairRow": "catalog",
    "chunk_batch": "chunks",
    "chunk_id": "chunks",
    "hash_chunks": "chunks",
    "word_hashes": "chunks",
    "ClusterSpec": "cluster_config",
    "CompareResult": "compare",
    "CrossPair": "compare",
    "compare_groups": "compare",
    "Index": "index",
    "RunOptions": "pipeline",
    "Callback": "progress",
    "TqdmCallback": "progress",
    "QueryMatch": "summary",
    "RunSummary": "summary",
    "normalize": "text",
    "words": "text",
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
    "Callback",
    "ClusterError",
    "ClusterSpec",
    "CompareResult",
    "ConfigError",
    "CrossPair",
    "DocumentNotFoundError",
    "DocumentRow",
    "ExtractionError",
    "Index",
    "IndexConfig",
    "IndexExistsError",
    "IndexFormatError",
    "IndexNotFoundError",
    "PairRow",
    "QueryMatch",
    "RunOptions",
    "RunSummary",
    "SimdaskError",
    "SourceError",
    "TqdmCallback",
    "__version__",
    "chunk_batch",
    "chunk_id",
    "compare_groups",
    "hash_chunks",
    "normalize",
    "word_hashes",
    "words",
]
