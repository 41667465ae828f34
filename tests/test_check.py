"""``simdask check INDEX`` and damaged indexes (issue 12 item 6): checksums recorded at commit,
a clean index checks clean (exit 0), each kind of damage is reported (exit 5) and no command
answers from a damaged index (no traceback, no similarity above 100 %)."""

from __future__ import annotations

import os
import shutil
import sqlite3

import numpy as np
import pytest

from simdask import Index, IndexConfig
from simdask.errors import IndexDamagedError
from simdask.storage import checksums
from simdask.storage.verify import check_index
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system

DOCS = make_docs(24, seed=12)


@pytest.fixture(scope="module")
def built(tmp_path_factory, client):
    tmp = tmp_path_factory.mktemp("check")
    src = write_txt(DOCS, tmp / "src")
    with Index.create(tmp / "base", IndexConfig(hash_bits=28, shards=4)) as idx:
        idx.update([src], client=client)
    return tmp / "base", src


def _copy(built, tmp_path):
    work = tmp_path / "i"
    shutil.copytree(built[0], work)
    return work


def _recorded(path):
    with sqlite3.connect(path / "catalog.sqlite") as c:
        return checksums.recorded(c)


def test_checksums_of_every_file_are_recorded(built):
    base, _ = built
    rec = _recorded(base)
    on_disk = {
        p.relative_to(base).as_posix()
        for sub in ("shards", "texts")
        for p in (base / sub).rglob("*")
        if p.is_file()
    }
    assert set(rec) == on_disk
    for name, (size, xxh3) in rec.items():
        assert checksums.digest(base / name) == (size, xxh3)


def test_clean_index_checks_clean(built):
    p = run("check", built[0])
    assert p.returncode == 0
    n = len(_recorded(built[0]))
    assert p.stdout.splitlines()[-1].startswith(f"{built[0]}: clean ({n} files, ")


def test_truncated_catalog(built, tmp_path):
    work = _copy(built, tmp_path)
    cat = work / "catalog.sqlite"
    with open(cat, "r+b") as f:
        f.truncate(cat.stat().st_size // 3)
    rep = check_index(work)
    assert [d.kind for d in rep.damage] == ["catalog"]
    p = run("check", work, check=False)
    assert p.returncode == 5 and "DAMAGED catalog: catalog.sqlite" in p.stdout
    assert "--rebuild" in p.stderr
    for cmd in (("stats", work), ("similar", work), ("text", work, "doc00")):
        p = run(*cmd, check=False)
        assert p.returncode == 5, (cmd, p.stderr)
        assert "Traceback" not in p.stderr
        assert f"the catalog {cat} is damaged" in p.stderr and "simdask check" in p.stderr


def _biggest_doc_ids(work):
    """The largest ``doc_ids`` data file of a committed segment (the catalog's own list, not
    whatever lies under ``shards/``: a segment write never put in place, e.g. a worker's
    attempt that lost to a retry under load, leaves a folder ``.tmp-shard-NNNN-XXXXXXXX``
    with a copy of the same size, which no reader opens; damaging that one made
    `test_shard_doc_ids_beyond_catalog` fail, docs/testing.md)."""
    names = [n for n in _recorded(work) if n.endswith("/doc_ids/c/0")]
    return max((work / n for n in sorted(names)), key=lambda p: p.stat().st_size)


def test_shard_doc_ids_overwritten(built, tmp_path):
    """The doc IDs of a shard overwritten in place (same size), every posting naming the
    document with the fewest chunks: `check` names the file; a query is refused instead of
    answering with similarities above 100 % (it cannot see a plausible-looking overwrite:
    that is what `check`'s full hashes are for)."""
    work = _copy(built, tmp_path)
    target = _biggest_doc_ids(work)
    n = target.stat().st_size // 4
    with Index.open(work) as idx:
        smallest = min(idx.catalog.documents(), key=lambda d: d.n_chunks).doc_id
    target.write_bytes(np.full(n, smallest, dtype="<u4").tobytes())
    name = target.relative_to(work).as_posix()
    rep = check_index(work)
    kinds = {(d.kind, d.name) for d in rep.damage}
    assert ("checksum", name) in kinds
    p = run("check", work, check=False)
    assert p.returncode == 5 and f"DAMAGED checksum: {name}: expected xxh3" in p.stdout
    query = tmp_path / "q.txt"
    query.write_text(DOCS[sorted(DOCS)[5]])
    p = run("query", work, query, check=False)
    assert p.returncode == 5, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "simdask check" in p.stderr
    assert p.stdout == ""


def test_key_sample_overwritten(built, tmp_path):
    """A segment's key sample (what a cold query searches first) overwritten in place: its
    checksum and its values (not ``chunk_keys[::step]``) are both reported."""
    work = _copy(built, tmp_path)
    target = max((work / "shards").rglob("key_sample/c/0"), key=lambda p: p.stat().st_size)
    target.write_bytes(bytes(target.stat().st_size))
    rep = check_index(work)
    kinds = {d.kind for d in rep.damage}
    msgs = [d.message for d in rep.damage if d.kind == "shard"]
    assert "checksum" in kinds and any("key_sample differs" in m for m in msgs), rep.damage


def test_shard_doc_ids_beyond_catalog(built, tmp_path):
    work = _copy(built, tmp_path)
    target = _biggest_doc_ids(work)
    n = target.stat().st_size // 4
    target.write_bytes(np.full(n, 4_000_000, dtype="<u4").tobytes())
    rep = check_index(work)
    msgs = [d.message for d in rep.damage if d.kind == "shard"]
    assert any("doc IDs the catalog does not know" in m for m in msgs), (target, rep.damage)
    # the reader hashes the segment's files before it opens them (issue 30 item 3)
    with Index.open(work) as idx, pytest.raises(IndexDamagedError) as raised:
        idx.query(DOCS[sorted(DOCS)[5]])
    assert "other contents" in str(raised.value), (target, str(raised.value))


def test_shard_file_truncated_is_caught_by_the_size_check(built, tmp_path):
    work = _copy(built, tmp_path)
    target = _biggest_doc_ids(work)
    with open(target, "r+b") as f:
        f.truncate(4)
    with Index.open(work) as idx, pytest.raises(IndexDamagedError, match="bytes, expected"):
        idx.query(DOCS[sorted(DOCS)[5]])
    assert ("size", target.relative_to(work).as_posix()) in {
        (d.kind, d.name) for d in check_index(work).damage
    }


def test_text_pack_missing(built, tmp_path):
    work = _copy(built, tmp_path)
    packs = sorted((work / "texts").glob("*.pack"))
    packs[0].unlink()
    name = f"texts/{packs[0].name}"
    p = run("check", work, check=False)
    assert p.returncode == 5 and f"DAMAGED missing: {name}: expected a file of" in p.stdout
    with Index.open(work) as idx:
        key = next(d.key for d in idx.catalog.documents() if d.text_pack == packs[0].name)
    p = run("text", work, key, check=False)
    assert p.returncode == 5 and "Traceback" not in p.stderr and "--rebuild" in p.stderr


def test_impossible_similarity_row_is_never_output(built, tmp_path):
    work = _copy(built, tmp_path)
    with sqlite3.connect(work / "catalog.sqlite") as c:
        c.execute(
            "UPDATE similarity SET similarity = 140.0 WHERE rowid IN "
            "(SELECT rowid FROM similarity LIMIT 1)"
        ) if False else c.execute(
            "UPDATE similarity SET similarity = 140.0 WHERE (doc, other) IN "
            "(SELECT doc, other FROM similarity LIMIT 1)"
        )
    p = run("similar", work, check=False)
    assert p.returncode == 5 and "140.0 %" in p.stderr and "140" not in p.stdout
    assert any(d.kind == "similarity" for d in check_index(work).damage)


def test_damaged_update_commits_nothing(built, tmp_path):
    """An update over a shard whose doc IDs were overwritten: refused (exit 5), the index
    stays at its generation."""
    work = _copy(built, tmp_path)
    target = _biggest_doc_ids(work)
    target.write_bytes(np.full(target.stat().st_size // 4, 3, dtype="<u4").tobytes())
    with Index.open(work) as idx:
        gen = idx.catalog.generation
    extra = tmp_path / "more"
    write_txt({"new": DOCS[sorted(DOCS)[2]] + " " + DOCS[sorted(DOCS)[4]]}, extra)
    env = {**os.environ, "SIMDASK_CONFIG": ""}
    p = run(
        "update",
        work,
        extra,
        "--quiet",
        "--workers",
        1,
        "--dashboard-address",
        ":0",
        check=False,
        env=env,
    )
    assert "Traceback" not in p.stderr
    with Index.open(work) as idx:
        if p.returncode == 0:  # the run did not read the damaged postings: values valid
            assert all(0 <= r.similarity <= 100 for r in idx.pairs())
        else:
            assert p.returncode == 5, p.stderr
            assert idx.catalog.generation == gen


def _flip(path, old: bytes, new: bytes) -> None:
    """Overwrite the first ``old`` in the file with ``new`` (same length): one damaged spot."""
    data = path.read_bytes()
    at = data.index(old)
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(new)


def _damage_is_reported(work, where: str, *readers) -> None:
    """``check`` names the damage (exit 5), and the reading commands stop with exit 5."""
    rep = check_index(work)
    assert any(d.kind == "catalog" and where in d.name for d in rep.damage), rep.damage
    p = run("check", work, check=False)
    assert p.returncode == 5 and "DAMAGED catalog" in p.stdout, (p.stdout, p.stderr)
    assert "clean" not in p.stdout
    for cmd in readers:
        p = run(*cmd, check=False)
        assert p.returncode == 5, (cmd, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr and "simdask check" in p.stderr


@pytest.mark.parametrize(
    ("flips", "why"),
    [
        ([(b"TABLE files (", b"TABLE filfs (")], "cannot be read"),  # one byte: bad schema
        (  # the table renamed throughout its schema rows: "no such table"
            [
                (b"tablefilesfiles", b"tablefilfsfilfs"),
                (b"TABLE files (", b"TABLE filfs ("),
                (b"sqlite_autoindex_files_1files", b"sqlite_autoindex_filfs_1filfs"),
            ],
            "is missing",
        ),
    ],
)
def test_a_checksum_table_that_cannot_be_read_is_damage_not_an_old_index(
    built, tmp_path, flips, why
):
    """Issue 30 item 2: an unreadable table was taken for an index written before checksums:
    `check` said clean and readers lost their size checks."""
    work = _copy(built, tmp_path)
    for old, new in flips:
        _flip(work / "catalog.sqlite", old, new)
    with pytest.raises(IndexDamagedError, match=f"table of file checksums {why}"):
        _recorded(work)
    _damage_is_reported(work, "", ("stats", work), ("query", work, built[1] / "d001.txt"))


def test_a_changed_checksum_row_is_caught_by_the_tables_own_checksum(built, tmp_path):
    work = _copy(built, tmp_path)
    with sqlite3.connect(work / "catalog.sqlite") as c:  # a digit of one size flipped
        c.execute("UPDATE files SET size = size + 1 WHERE name LIKE 'texts/%'")
    with pytest.raises(IndexDamagedError, match="differs from the checksum recorded for it"):
        _recorded(work)
    _damage_is_reported(work, "files", ("stats", work))


def test_malformed_json_in_the_catalog_is_damage(built, tmp_path):
    work = _copy(built, tmp_path)
    with sqlite3.connect(work / "catalog.sqlite") as c:
        c.execute("UPDATE runs SET summary = substr(summary, 2) WHERE run_id = 1")
    _damage_is_reported(work, "runs.summary")
    work = _copy(built, tmp_path / "b")
    with sqlite3.connect(work / "catalog.sqlite") as c:
        c.execute("UPDATE meta SET value = 'x' || value WHERE name = 'generation'")
    _damage_is_reported(work, "meta.generation")
