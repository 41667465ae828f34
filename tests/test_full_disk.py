"""A full disk (issue 30 item 10), on a size-limited tmpfs: every command says so in one line
naming the path and the space needed; nothing is called damaged; the index is unchanged and
checks clean once there is room again."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from simdask import Index, IndexConfig
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system

DOCS = make_docs(30, seed=5)


@pytest.fixture(scope="module")
def built(tmp_path_factory, client):
    """An index of 20 documents plus a delta of 10 (something to compact)."""
    tmp = tmp_path_factory.mktemp("full")
    keys = sorted(DOCS)
    src = write_txt({k: DOCS[k] for k in keys[:20]}, tmp / "src")
    with Index.create(tmp / "base", IndexConfig(hash_bits=28, shards=4)) as idx:
        idx.update([src], client=client)
        write_txt({k: DOCS[k] for k in keys[20:]}, src)
        idx.update([src], client=client)
    return tmp / "base", src


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs (skipped where this process may not mount one; CI runs as root)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True
    )
    if r.returncode != 0:
        if os.environ.get("CI") == "true" and os.geteuid() == 0:
            pytest.fail("CI runs as root: mounting a tmpfs must work")
        pytest.skip("cannot mount a tmpfs here")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(mnt, leave: int) -> None:
    """Fill the filesystem of ``mnt`` but ``leave`` bytes."""
    free = shutil.disk_usage(mnt).free
    with open(mnt / "filler", "wb") as f:
        f.write(bytes(max(0, free - leave)))


def _one_line(p) -> str:
    lines = p.stderr.strip().splitlines()
    assert "Traceback" not in p.stderr, p.stderr
    errors = [ln for ln in lines if ln.startswith("simdask: error:")]
    assert len(errors) == 1, p.stderr
    return errors[0]


def _state(path):
    with Index.open(path) as idx:
        return idx.catalog.generation, sorted(d.key for d in idx.catalog.documents())


def test_a_full_disk_is_reported_as_such_never_as_damage(built, small_disk):
    work = small_disk / "index"
    shutil.copytree(built[0], work)
    before = _state(work)
    _fill(small_disk, 0)
    cat = work / "catalog.sqlite"
    query = built[1] / f"{sorted(DOCS)[3]}.txt"
    for cmd in (("check", work), ("stats", work), ("query", work, query), ("similar", work)):
        p = run(*cmd, check=False)
        line = _one_line(p)
        assert p.returncode == 1, (cmd, p.stderr)
        assert line.startswith(f"simdask: error: disk full: SQLite cannot use the catalog {cat}")
        assert "needs about 1.0 MiB free there" in line and "damaged" not in p.stderr
        assert "DAMAGED" not in p.stdout
    (small_disk / "filler").unlink()
    p = run("check", work)
    assert p.stdout.splitlines()[-1].startswith(f"{work}: clean (")
    assert _state(work) == before


def test_a_compaction_that_fills_the_disk(built, small_disk):
    """It ended in a 37-line OSError traceback (issue 30 items 10, 11)."""
    work = small_disk / "index"
    shutil.copytree(built[0], work)
    before = _state(work)
    _fill(small_disk, 150 * 1024)
    p = run("compact", work, "--force", "--workers", 1, "--dashboard-address", ":0", check=False)
    line = _one_line(p)
    assert p.returncode == 1, p.stderr
    assert line.startswith(f"simdask: error: disk full writing {work}"), line
    assert "free on the filesystem of" in line and "needs" in line
    assert f"the index is unchanged (generation {before[0]})" in line
    (small_disk / "filler").unlink()
    assert run("check", work).returncode == 0
    assert _state(work) == before
    p = run("compact", work, "--force", "--workers", 1, "--dashboard-address", ":0")
    assert _state(work)[1] == before[1] and run("check", work).returncode == 0
