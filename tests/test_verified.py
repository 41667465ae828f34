"""Readers verify the contents of what they open (issue 30 item 3): each file hashed against
its recorded checksum the first time a process opens it, then remembered while unchanged
(simdask/storage/verified.py)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.storage import checksums, verified

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _fresh():
    verified.forget()
    yield
    verified.forget()


def _rows(root, *names):
    return [(n, *checksums.digest(root / n)) for n in names]


@settings(max_examples=30, deadline=None)
@given(data=st.binary(max_size=20_000))
def test_file_xxh3_is_the_recorded_checksum(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("x") / "f"
    p.write_bytes(data)
    assert verified.file_xxh3(p) == checksums.digest(p)[1]


def test_each_kind_of_damage_is_named(tmp_path):
    for name, data in (("a", b"x" * 5000), ("b", b"y" * 10), ("c", b"z" * 7)):
        (tmp_path / name).write_bytes(data)
    rows = _rows(tmp_path, "a", "b", "c")
    assert verified.verify_problems(tmp_path, rows) == []
    with open(tmp_path / "a", "r+b") as f:  # one byte, same size: in-range damage
        f.seek(4321)
        f.write(b"w")
    (tmp_path / "b").write_bytes(b"y" * 11)
    (tmp_path / "c").unlink()
    problems = verified.verify_problems(tmp_path, rows)
    assert len(problems) == 3
    assert problems[0].startswith("a has other contents than recorded (xxh3 ")
    assert problems[1] == "b has 11 bytes, expected 10"
    assert problems[2] == "c is missing (expected 7 bytes)"


def _counting(monkeypatch) -> list:
    calls: list = []
    real = verified.file_xxh3

    def counted(path):
        calls.append(path)
        return real(path)

    monkeypatch.setattr(verified, "file_xxh3", counted)
    return calls


def test_a_verified_file_is_hashed_once_while_unchanged(tmp_path, monkeypatch):
    (tmp_path / "a").write_bytes(os.urandom(100_000))
    rows = _rows(tmp_path, "a")
    calls = _counting(monkeypatch)
    for _ in range(3):
        assert verified.verify_problems(tmp_path, rows) == []
    assert len(calls) == 1 and verified.remembered() == 1


def test_a_file_changed_in_place_with_its_mtime_put_back_is_hashed_again(tmp_path, monkeypatch):
    """The change time cannot be set back: an edit that restores the modification time (as
    `touch -d`, rsync or a careless script would) is still seen."""
    p = tmp_path / "a"
    p.write_bytes(b"\x00" * 65536)
    rows = _rows(tmp_path, "a")
    assert verified.verify_problems(tmp_path, rows) == []
    st = p.stat()
    with open(p, "r+b") as f:
        f.seek(1000)
        f.write(b"\x01")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_mtime_ns == st.st_mtime_ns
    calls = _counting(monkeypatch)
    problems = verified.verify_problems(tmp_path, rows)
    assert len(calls) == 1 and problems and "other contents" in problems[0]
    # a damaged file is never remembered: every open hashes it and refuses it again
    assert verified.verify_problems(tmp_path, rows) == problems and len(calls) == 2


def test_a_file_replaced_by_a_good_copy_is_verified_again(tmp_path, monkeypatch):
    p = tmp_path / "a"
    p.write_bytes(b"abc" * 1000)
    rows = _rows(tmp_path, "a")
    assert verified.verify_problems(tmp_path, rows) == []
    (tmp_path / "b").write_bytes(b"abc" * 1000)
    os.replace(tmp_path / "b", p)  # another inode, same contents
    calls = _counting(monkeypatch)
    assert verified.verify_problems(tmp_path, rows) == [] and len(calls) == 1


def test_what_is_remembered_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(verified, "MAX_REMEMBERED", 4)
    for i in range(10):
        (tmp_path / str(i)).write_bytes(bytes([i]) * 10)
    assert verified.verify_problems(tmp_path, _rows(tmp_path, *map(str, range(10)))) == []
    assert 1 <= verified.remembered() <= 4
