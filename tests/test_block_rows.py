"""The rows task of an all-pairs block decodes its counted pairs by slices (bounded memory) and
the workers' freed heap goes back to the OS (docs/scale.md, "Worker memory in the similarity
stage")."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from simdask.cluster.connect import WORKER_MALLOC_ENV
from simdask.cluster.heap import _malloc_trim
from simdask.engine import similarity_stage
from tests.helpers.components import need
from tests.test_heavy import brute_rows as brute_heavy_rows
from tests.test_heavy import kernel_rows, light_set, templated_corpus

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("rows_slice", [1, 5, 64])
@pytest.mark.parametrize("cutoff", [None, 2, 5])
@pytest.mark.parametrize("threshold", [1.0, 12.5, 50.0])
def test_rows_decoded_by_slices_equal_brute_force(monkeypatch, rows_slice, cutoff, threshold):
    """block_rows_task decodes its counted pairs ROWS_SLICE at a time (bounded temporaries):
    the rows equal brute force over every chunk, and those of one slice per block."""
    docs = templated_corpus(60, seed=3)
    whole = {k: kernel_rows(docs, cutoff, "informative", threshold, k) for k in (3, 1000)}
    monkeypatch.setattr(similarity_stage, "ROWS_SLICE", rows_slice)
    for top_k in (3, 1000):
        got = kernel_rows(docs, cutoff, "informative", threshold, top_k)
        assert got == whole[top_k]
        assert got == brute_heavy_rows(docs, threshold, top_k, light_set(docs, cutoff))


_TRIM_SCRIPT = """
import numpy as np
from simdask.cluster.heap import trim_heap
keep = [np.ones(1 << 17) for _ in range(400)]  # 400 x 1 MiB in the heap (mmap threshold 32 MiB)
last = np.ones(1 << 10)  # an allocation above them, so that the heap top stays in use
del keep
print(trim_heap())
"""


@pytest.mark.system  # starts a subprocess (the unit tier starts none)
def test_trim_heap_returns_freed_heap_under_the_workers_malloc_settings():
    """With the worker processes' settings (4 GiB trim threshold) freed heap memory stays
    resident; trim_heap gives it back."""
    need(_malloc_trim() is not None, "glibc's malloc_trim", "a glibc-based Linux")
    env = {**os.environ, **WORKER_MALLOC_ENV}
    out = subprocess.run(
        [sys.executable, "-c", _TRIM_SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    assert int(out.stdout) > 300 * 2**20  # of the 400 MiB freed
