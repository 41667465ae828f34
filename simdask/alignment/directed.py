"""A quotation left out of its own document only (issue 31 item 4, docs/term.md): the
passages counted for each side of a pair.

With quotations excluded, a text's quotation is not its copied text, but the same words
copied *without* quotation marks by the other text are the other's copied text. So each
side's passages are those of the pair aligned with that side's own quotations excluded and
the other side's quotations read as matchable text (every other exclusion, templates, the
reference list, chunks over ``max_df``, applies to both sides). Text A stays text A in both
alignments (the aligner is not symmetric); when neither text has a quotation to read, one
alignment serves both sides.
"""

from __future__ import annotations

from simdask.alignment.aligner import PreparedText, align_prepared
from simdask.alignment.config import AlignConfig
from simdask.alignment.passage import Passage

__all__ = ["align_directed"]


def align_directed(
    a_own: PreparedText,
    b_own: PreparedText,
    config: AlignConfig | None = None,
    a_open: PreparedText | None = None,
    b_open: PreparedText | None = None,
    both: list[Passage] | None = None,
) -> tuple[list[Passage], list[Passage]]:
    """``(for A, for B)``: the passages whose A side counts for text A, and those whose B
    side counts for text B. ``*_own``: a text :func:`~simdask.alignment.prepare` d with all
    its exclusions; ``*_open``: the same text prepared with its quotations read as its text
    (None: no quotation of it is excluded, ``*_own`` is used). For A:
    ``align_prepared(a_own, b_open)``; for B: ``align_prepared(a_open, b_own)``; where an
    ``*_open`` is None that is ``align_prepared(a_own, b_own)``, computed once (or given as
    ``both`` when the caller has it). Offsets as :func:`align_prepared`."""
    found = both

    def own() -> list[Passage]:
        nonlocal found
        if found is None:
            found = align_prepared(a_own, b_own, config)
        return found

    for_a = own() if b_open is None else align_prepared(a_own, b_open, config)
    for_b = own() if a_open is None else align_prepared(a_open, b_own, config)
    return for_a, for_b
