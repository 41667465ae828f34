"""A first update that cannot reach its cluster leaves no empty index behind (issue 30 item
11): the folder it created is removed, an empty folder it was given is left empty, an
existing index is untouched."""

from __future__ import annotations

import socket

import pytest

from simdask import Index, IndexConfig
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system


def _closed_port() -> int:
    with socket.socket() as s:  # bound, never listening: connections are refused
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _update(index, src):
    addr = f"tcp://127.0.0.1:{_closed_port()}"
    return run("update", index, src, "--scheduler", addr, "--connect-timeout", 2, check=False)


def test_an_unreachable_scheduler_leaves_no_empty_index(tmp_path):
    src = write_txt(make_docs(6, seed=2), tmp_path / "src")
    new = tmp_path / "new"
    p = _update(new, src)
    assert p.returncode == 4 and "cannot connect to the Dask scheduler" in p.stderr, p.stderr
    assert not new.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _update(empty, src).returncode == 4
    assert empty.is_dir() and list(empty.iterdir()) == []
    with Index.create(tmp_path / "old", IndexConfig(shards=2)):
        pass  # an index that exists (generation 0): not this command's to remove
    assert _update(tmp_path / "old", src).returncode == 4
    assert (tmp_path / "old" / "catalog.sqlite").exists()
