"""Text alignment: the passages of one text taken from another, verbatim, paraphrased or
summarised (seed, extend, filter; see ``docs/alignment.md``), and PAN's measures to score it.
Pure numpy: no I/O, no dask."""

from simdask.alignment.aligner import PreparedText, align, align_prepared, prepare
from simdask.alignment.config import AlignConfig
from simdask.alignment.coverage import aligned_coverage
from simdask.alignment.directed import align_directed
from simdask.alignment.passage import KINDS, Passage

__all__ = [
    "KINDS",
    "AlignConfig",
    "Passage",
    "PreparedText",
    "align",
    "align_directed",
    "align_prepared",
    "aligned_coverage",
    "prepare",
]
