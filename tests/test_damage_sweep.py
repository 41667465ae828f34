"""The damage sweep (issue 30, "How it is checked"; items 3 and 9): one byte flipped in every
kind of index file (each shard array and its metadata, of a base and of a delta segment, key
samples, text packs, LSH files) or one value damaged in the catalog (checksum table, JSON
columns, integers), then every reading command run on the damaged copy: each exits 0 with the
undamaged answer or exits 5 naming ``simdask check``, never a traceback nor another answer; and
``simdask check`` reports every flip (exit 5).

The commands run in this process (``simdask.cli.main.main``), one damaged copy after another,
as a long-running process would meet them (its caches of verified files and maps included)."""

from __future__ import annotations

import contextlib
import io
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from simdask import Index, IndexConfig
from simdask.cli.main import main
from tests.helpers.corpus import make_docs, write_txt

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DOCS = make_docs(30, seed=21)
KEYS = sorted(DOCS)


def _build(tmp: Path, client, shard_store: str | None = None) -> tuple[Path, Path]:
    """An index of 20 documents, then 10 more (a delta segment per range, a second text
    pack), with LSH data; a query file of two documents' passages."""
    src = tmp / "src"
    write_txt({k: DOCS[k] for k in KEYS[:20]}, src)
    cfg = IndexConfig(hash_bits=28, shards=4, lsh="8x2")
    with Index.create(tmp / "base", cfg, shard_store=shard_store) as idx:
        idx.update([src], client=client)
        write_txt({k: DOCS[k] for k in KEYS[20:]}, src)
        idx.update([src], client=client)
        assert len(idx.catalog.segments()[0]) == 2  # base + delta
    q = tmp / "q.txt"
    q.write_text(DOCS[KEYS[3]][:3000] + "\n\n" + DOCS[KEYS[25]][1000:4000], encoding="utf-8")
    return tmp / "base", q


@pytest.fixture(scope="module")
def built(tmp_path_factory, client):
    return _build(tmp_path_factory.mktemp("sweep"), client)


@pytest.fixture(scope="module")
def built_url(tmp_path_factory, client):
    """The same index with its shards under a ``file://`` URL (``--shard-store``: the
    compressed layout, uploaded files and a completion marker)."""
    tmp = tmp_path_factory.mktemp("sweep-url")
    return _build(tmp, client, f"file://{tmp}/url-shards")


def _copy(built, work: Path) -> Path:
    """A copy of the built index at ``work`` (with a copy of its URL shards, if any, at
    ``work-url``, which the copy's catalog names); returns the folder holding the copy's
    shards."""
    shutil.copytree(built[0], work)
    url = Path(str(built[0].parent / "url-shards"))
    if not url.exists():
        return work / "shards"
    shutil.copytree(url, f"{work}-url")
    with sqlite3.connect(work / "catalog.sqlite") as c:
        c.execute("UPDATE meta SET value = ? WHERE name = 'shard_store'", (f"file://{work}-url",))
    c.close()
    return Path(f"{work}-url")


def _commands(index: Path, q: Path, out: Path) -> list[list[str]]:
    i = str(index)
    return [
        ["query", i, str(q)],
        ["query", i, str(q), "--min", "0"],
        ["similar", i],
        ["stats", i],
        ["boilerplate", i],
        ["text", i, f"src/{KEYS[3]}.txt"],
        ["text", i, f"src/{KEYS[25]}.txt"],
        ["report", i, f"src/{KEYS[3]}.txt", f"src/{KEYS[4]}.txt"],
        ["list", i],
        ["errors", i],
        ["lsh", "pairs", i],
        ["lsh", "query", i, str(q)],
        ["export-html", i, str(out)],
    ]


def _run(argv: list[str]) -> tuple[int, str, str]:
    """``simdask ARGV`` in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _answers(index: Path, q: Path, site: Path) -> list[tuple[int, str, str]]:
    """Each reading command's exit status, answer (stdout with the index path replaced, and
    the files export-html wrote) and stderr."""
    res = []
    for argv in _commands(index, q, site):
        shutil.rmtree(site, ignore_errors=True)
        rc, stdout, err = _run(argv)
        files = sorted(
            (p.relative_to(site).as_posix(), p.read_bytes()) for p in site.rglob("*") if p.is_file()
        )
        res.append((rc, stdout.replace(str(index), "INDEX") + repr(files), err))
    return res


def _flip_file(target: Path, rng: random.Random) -> None:
    """Flip one byte (XOR 0xFF) at a random position of the file ``target``."""
    data = bytearray(target.read_bytes())
    at = rng.randrange(len(data))
    data[at] ^= 0xFF
    target.write_bytes(bytes(data))


def _segment_file(gen_rank: int, array: str, part: str):
    """A file of range 1's base (``gen_rank`` 0) or delta (1) segment under a shard folder:
    ``array`` ("" for the group) and ``part`` (``c/0`` data, ``zarr.json`` metadata)."""

    def pick(shards: Path) -> Path:
        gens = sorted(shards.glob("gen-*/shard-0001"))
        seg = gens[gen_rank]
        return seg / array / part if array else seg / part

    return pick


def _largest(pattern: str):
    def pick(work: Path) -> Path:
        return max(sorted(work.glob(pattern)), key=lambda p: p.stat().st_size)

    return pick


SEGMENT_KINDS = {
    f"{rank}-{array or 'group'}-{part}": _segment_file(r, array, part)
    for r, rank in enumerate(("base", "delta"))
    for array in ("chunk_keys", "offsets", "doc_ids", "key_sample", "")
    for part in (("c/0", "zarr.json") if array else ("zarr.json",))
}
OTHER_KINDS = {
    "text-pack": _largest("texts/*.pack"),
    "lsh-signatures": _largest("lsh/gen-*/sig-*.npy"),
    "lsh-band-keys": _largest("lsh/gen-*/bkey-*.npy"),
    "lsh-band-docs": _largest("lsh/gen-*/bdoc-*.npy"),
}
#: a URL store's segments hold no key sample (the compressed layout)
URL_KINDS = {k: v for k, v in SEGMENT_KINDS.items() if "key_sample" not in k}

#: catalog values damaged in place: (name, SQL)
CATALOG_DAMAGE = {
    "checksum-row": "UPDATE files SET xxh3 = substr(xxh3, 2) || '0' WHERE name IN "
    "(SELECT name FROM files WHERE name LIKE 'shards/%' ORDER BY name LIMIT 1)",
    "checksum-size": "UPDATE files SET size = size + 1 WHERE name IN "
    "(SELECT name FROM files WHERE name LIKE 'texts/%' LIMIT 1)",
    "config-json": "UPDATE meta SET value = substr(value, 2) WHERE name = 'config'",
    "lsh-json": "UPDATE meta SET value = substr(value, 1, length(value) - 3) WHERE name = 'lsh'",
    "generation-int": "UPDATE meta SET value = 'x' || value WHERE name = 'generation'",
    "key-scheme-int": "UPDATE meta SET value = value || '?' WHERE name = 'key_scheme'",
    "list-floors-int": "UPDATE meta SET value = '1e' WHERE name = 'list_floors'",
    "skipped-chunks-int": "UPDATE meta SET value = '-' WHERE name = 'skipped_chunks'",
    "run-summary": "UPDATE runs SET summary = substr(summary, 2) WHERE run_id = 1",
}


def _sweep(work: Path, built, base_answers, tmp_path) -> None:
    """``check`` reports damage; every reading command exits 0 with the undamaged answer or
    exits 5 pointing to ``simdask check``."""
    rc, out, err = _run(["check", str(work)])
    assert rc == 5 and "DAMAGED" in out, (out, err)
    got = _answers(work, built[1], tmp_path / "site")
    for argv, (want_rc, want_out, _), (rc, out, err) in zip(
        _commands(work, built[1], tmp_path / "site"), base_answers, got, strict=True
    ):
        assert want_rc == 0
        if rc == 0:
            assert out == want_out, f"{argv[0]}: exit 0 with another answer"
        else:
            assert rc == 5, (argv, rc, err)
            assert "simdask check" in err and "Traceback" not in err, (argv, err)


def _baseline(built, tmp_path_factory):
    """The answers of the undamaged index (copied to another path, as the damaged ones)."""
    work = tmp_path_factory.mktemp("clean") / "i"
    _copy(built, work)
    res = _answers(work, built[1], work.parent / "site")
    assert all(rc == 0 for rc, _, _ in res), res
    return res


@pytest.fixture(scope="module")
def base_answers(built, tmp_path_factory):
    return _baseline(built, tmp_path_factory)


@pytest.fixture(scope="module")
def url_answers(built_url, tmp_path_factory):
    return _baseline(built_url, tmp_path_factory)


@pytest.mark.parametrize("kind", sorted(SEGMENT_KINDS) + sorted(OTHER_KINDS))
@pytest.mark.parametrize("seed", [1, 2])
def test_a_flipped_byte_in_any_index_file(built, base_answers, tmp_path, kind, seed):
    work = tmp_path / "i"
    shards = _copy(built, work)
    target = SEGMENT_KINDS[kind](shards) if kind in SEGMENT_KINDS else OTHER_KINDS[kind](work)
    _flip_file(target, random.Random(f"{kind}-{seed}"))
    _sweep(work, built, base_answers, tmp_path)


@pytest.mark.parametrize("kind", sorted(URL_KINDS))
@pytest.mark.parametrize("seed", [1, 2])
def test_a_flipped_byte_in_a_url_shard_file(built_url, url_answers, tmp_path, kind, seed):
    """Issue 30 item 9: shards under a --shard-store URL (compressed; no hashing on read):
    a damaged chunk fails its zstd checksum, damaged metadata does not parse or declares
    other sizes than the catalog; `check` hashes them against the checksums recorded at
    the commit."""
    work = tmp_path / "i"
    shards = _copy(built_url, work)
    _flip_file(URL_KINDS[kind](shards), random.Random(f"{kind}-{seed}"))
    _sweep(work, built_url, url_answers, tmp_path)


@pytest.mark.parametrize("kind", sorted(CATALOG_DAMAGE))
def test_a_damaged_catalog_value(built, base_answers, tmp_path, kind):
    work = tmp_path / "i"
    _copy(built, work)
    with sqlite3.connect(work / "catalog.sqlite") as c:
        assert c.execute(CATALOG_DAMAGE[kind]).rowcount == 1
    c.close()
    _sweep(work, built, base_answers, tmp_path)
