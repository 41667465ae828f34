"""The check both corpus generators (``ingest/prose.py``, ``ingest/phrases.py``) share: each
block plants its share of copied passages, and every passage's words in the target are the
source's words at the positions the truth records."""

from __future__ import annotations

from collections.abc import Sequence

from simdask.ingest.prose import BLOCK_DOCS, ProseParams
from simdask.ingest.synth import Reuse, SynthDoc
from simdask.kernels.words import words

__all__ = ["assert_planted_where_truth_says"]


def assert_planted_where_truth_says(
    docs: Sequence[SynthDoc], reuse: Sequence[Reuse], params: ProseParams
) -> None:
    """Fail unless ``reuse`` holds one block's planted passages (``params.reuse_fraction`` of
    its documents), no document is both a source and a target, each passage is 20-400 words,
    and the target's words equal the source's at the recorded word positions."""
    assert len(reuse) == round(BLOCK_DOCS * params.reuse_fraction)
    text = {d.key: words(d.text) for d in docs}
    assert not {r.source for r in reuse} & {r.target for r in reuse}
    for r in reuse:
        assert 20 <= r.source_end - r.source_start <= 400
        assert (
            text[r.target][r.target_start : r.target_end]
            == text[r.source][r.source_start : r.source_end]
        )
