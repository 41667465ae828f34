"""A first update that cannot reach its cluster leaves no empty index behind (issue 30 item
11): the folder it created is removed, an empty folder it was given is left empty, an
existing index is untouched."""

from __future__ import annotations

import os
import socket

import pytest

from simdask import Index, IndexConfig
from simdask.storage.create import discard_uncommitted
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system


def _failing(point: str) -> dict[str, str]:
    return {**os.environ, "SIMDASK_FAILPOINTS": point}


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


def test_a_first_run_failing_after_its_merge_leaves_no_empty_index(tmp_path):
    """CI once found an empty index (generation 0, its texts and shard segments written)
    after a first run interrupted mid-way: only a catalog, a lock and no folders were
    removed. A first run that fails after its merge (texts and segments written, nothing
    committed) leaves nothing; a second run failing there leaves the committed index whole."""
    src = write_txt(make_docs(6, seed=3), tmp_path / "src")
    new = tmp_path / "new"
    p = run("update", new, src, check=False, env=_failing("after_merge:raise"))
    assert p.returncode != 0 and "after_merge" in p.stderr, p.stderr
    assert not new.exists(), sorted(x.name for x in new.iterdir())
    assert run("update", new, src).returncode == 0
    with Index.open(new) as idx:
        first = idx.stats()["documents"]
    more = write_txt({f"m{k}": v for k, v in make_docs(8, seed=4).items()}, tmp_path / "more")
    p = run("update", new, src, more, check=False, env=_failing("after_merge:raise"))
    assert p.returncode != 0, p.stderr
    with Index.open(new) as idx:
        assert idx.stats()["documents"] == first > 0


def test_a_folder_holding_anything_else_is_never_removed(tmp_path):
    """The removal takes only what simdask writes: a generation-0 index folder that also holds
    a folder of another name (not simdask's) stays as it is."""
    with Index.create(tmp_path / "idx", IndexConfig(shards=2)):
        pass
    for name in ("texts", "shards", "notes"):
        (tmp_path / "idx" / name).mkdir()
    assert not discard_uncommitted(tmp_path / "idx", made_folder=True)
    assert (tmp_path / "idx" / "notes").is_dir() and (tmp_path / "idx" / "texts").is_dir()
    (tmp_path / "idx" / "notes").rmdir()
    assert discard_uncommitted(tmp_path / "idx", made_folder=True)
    assert not (tmp_path / "idx").exists()
