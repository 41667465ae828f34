"""The aligner gives the same passages and scores in every process (its word IDs are xxh3,
not Python's per-process salted ``hash()``): two interpreters with different hash seeds
align the same pairs to byte-identical JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

_SCRIPT = """
import json, sys
from simdask.alignment import align
from tests.helpers.paraphrase import paraphrased_pair, verbatim_pair
p = paraphrased_pair()
a, b, *_ = verbatim_pair()
pairs = [(p.essay, p.source), (p.source, p.essay), (a, b), (b, a)]
print(json.dumps([[x.to_dict() for x in align(s, t)] for s, t in pairs]))
"""


def _run(seed: str) -> list:
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_same_passages_and_scores_whatever_the_hash_seed():
    runs = [_run(seed) for seed in ("1", "2", "3")]
    assert any(runs[0]), "the pairs must give passages, or the test shows nothing"
    assert runs[0] == runs[1] == runs[2]
