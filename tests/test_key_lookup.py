"""find_keys_sampled (kernels/key_lookup.py) against a set brute force and find_keys."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.kernels.key_lookup import find_keys_sampled, key_sample
from simdask.kernels.postings import find_keys

pytestmark = pytest.mark.unit


def brute(keys: np.ndarray, ids: np.ndarray):
    where = {int(k): i for i, k in enumerate(keys.tolist())}
    hits = [(int(i), where[int(i)]) for i in ids.tolist() if int(i) in where]
    return [h[0] for h in hits], [h[1] for h in hits]


@settings(max_examples=400, deadline=None)
@given(
    st.sets(st.integers(0, 2**64 - 1), max_size=300),
    st.lists(st.integers(0, 2**64 - 1), max_size=60),
    st.sampled_from([1, 2, 4, 8, 16, 128]),
    st.sampled_from([np.uint32, np.uint64]),
    st.booleans(),
)
def test_find_keys_sampled_equals_brute_force(keys, probes, step, dtype, reuse):
    top = np.iinfo(dtype).max
    keys = np.array(sorted(k % (int(top) + 1) for k in keys), dtype)
    keys = np.unique(keys)
    probes = [p % (int(top) + 1) for p in probes]
    if reuse and len(keys):  # some IDs present, among them the first and last keys
        probes += [int(keys[0]), int(keys[-1]), *keys[:: max(1, len(keys) // 20)].tolist()]
    ids = np.unique(np.array(probes, dtype))
    sample = key_sample(keys, step)
    present, pos = find_keys_sampled(keys, sample, step, ids)
    want_ids, want_pos = brute(keys, ids)
    assert present.tolist() == want_ids
    assert pos.tolist() == want_pos
    assert pos.dtype == np.int64
    ref = find_keys(keys, ids)
    assert present.tolist() == ref[0].tolist() and pos.tolist() == ref[1].tolist()


def test_find_keys_sampled_dense_and_at_window_edges():
    keys = np.arange(0, 4000, 3, dtype=np.uint64)  # 1334 keys, windows of 64
    sample = key_sample(keys, 64)
    ids = np.arange(0, 4010, dtype=np.uint64)  # every key, every gap, past the end
    present, pos = find_keys_sampled(keys, sample, 64, ids)
    assert present.tolist() == keys.tolist()
    assert pos.tolist() == list(range(len(keys)))


def test_find_keys_sampled_rejects_a_step_not_a_power_of_two():
    keys = np.arange(10, dtype=np.uint32)
    with pytest.raises(ValueError, match="power of two"):
        find_keys_sampled(keys, key_sample(keys, 3), 3, keys)
