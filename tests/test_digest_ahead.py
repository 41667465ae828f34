"""Checksums hashed ahead of the commit (storage/digest_ahead): the same digests as hashing
at the commit, and a file changed after it was hashed is hashed again (issue 32 item 1)."""

from __future__ import annotations

import os

import pytest

from simdask.storage.checksums import digest
from simdask.storage.digest_ahead import DigestsAhead

pytestmark = pytest.mark.unit


def test_digests_ahead_equal_digests_and_follow_changes(tmp_path):
    paths = []
    for i in range(5):
        p = tmp_path / f"f{i}"
        p.write_bytes(os.urandom(1000 + 3_000_000 * (i == 2)))
        paths.append(p)
    ahead = DigestsAhead()
    ahead.add(paths)
    ahead.add(paths[:2])  # added twice: hashed once
    assert [ahead.digest(p) for p in paths] == [digest(p) for p in paths]
    assert ahead.hits == 5
    # changed after it was hashed (same size, newer mtime): hashed again, the new digest
    paths[1].write_bytes(os.urandom(1000))
    st = os.stat(paths[1])
    os.utime(paths[1], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert ahead.digest(paths[1]) == digest(paths[1])
    assert ahead.hits == 5
    # gone before it could be hashed: the commit's own read says so, as before
    missing = tmp_path / "gone"
    ahead.add([missing])
    with pytest.raises(FileNotFoundError):
        ahead.digest(missing)
    # never added: hashed on the spot
    other = tmp_path / "other"
    other.write_bytes(b"x")
    assert ahead.digest(other) == digest(other)
