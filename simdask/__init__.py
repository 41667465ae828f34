"""simdask: find similar documents (text reuse, plagiarism) in a large, growing document base.

The chunk-hash inverted-index method, built and queried with Dask. See ``DESIGN.md``.
"""

from .catalog import DocumentRow, PairRow
from .chunks import chunk_batch, chunk_id, hash_chunks, word_hashes
from .cluster_config import ClusterSpec
from .compare import CompareResult, CrossPair, compare_groups
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
from .index import Index, QueryMatch, RunSummary
from .pipeline import RunOptions
from .progress import Callback, TqdmCallback
from .text import normalize, words

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
