"""Documents of every format and bad input through the real pipeline (Index.update on a
LocalCluster with worker processes), and the command line's exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simdask import Index, IndexConfig, RunOptions
from simdask.kernels.words import chunks, words
from simdask.progress import Callback
from tests.helpers.corpus import make_docs, rel, write_txt
from tests.helpers.documents import (
    docx_bytes,
    html_bytes,
    image_pdf,
    odt_bytes,
    pdf_bytes,
    prose,
    text_pdf,
)

pytestmark = pytest.mark.integration


LIMIT = 20_000  # max_file_bytes of the bad-input run


class DeleteWhenChunking(Callback):
    """Deletes a file for real after the sources were listed, before the tasks read them
    (the run announces the chunk stage between the two)."""

    def __init__(self, path: Path):
        self.path = path

    def stage(self, name: str, total: int | None) -> None:
        if name == "chunk":
            self.path.unlink()


def _table(idx: Index) -> set[tuple[str, str, int, float]]:
    return {(r.doc, r.other, r.shared, r.similarity) for r in idx.pairs()}


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory, client):
    """Run 1 indexes good documents; run 2 adds every kind of bad input next to new good ones
    (and damages one indexed document), with a size limit and a file deleted mid-run."""
    tmp = tmp_path_factory.mktemp("bad")
    src = write_txt(make_docs(12, seed=21), tmp / "src")
    idx = Index.create(tmp / "idx", IndexConfig(hash_bits=32, shards=2))
    first = idx.update([src], client=client)
    before = {
        "docs": {d.key: d for d in idx.catalog.documents()},
        "texts": {d.key: idx.text(d.key) for d in idx.catalog.documents()},
        "table": _table(idx),
    }
    rng = np.random.default_rng(5)
    twin = prose(150, seed=22)
    files = {
        "empty.txt": b"",
        "garbage.txt": rng.integers(0, 256, 5000, dtype=np.uint8).tobytes(),
        "corrupt.pdf": text_pdf(prose(200, seed=23))[:900],
        "encrypted.pdf": pdf_bytes([["a secret thesis text"]], password="pw"),
        "scanned.pdf": image_pdf(2),
        "invalid.txt": b" ".join(
            b"w" + rng.integers(0x80, 0x100, 3, dtype=np.uint8).tobytes() + b"x" for _ in range(300)
        ),
        "big.txt": (prose(200, seed=24) + "\n").encode() * 20,
        "short.txt": b"only four words here",
        "twin_a.txt": twin.encode(),
        "twin_b.txt": twin.encode(),
        "new.pdf": text_pdf(prose(300, seed=25), hyphenate_every=4),
        "vanishing.txt": prose(100, seed=26).encode(),
        "d001.txt": rng.integers(0, 256, 3000, dtype=np.uint8).tobytes(),  # was indexed
    }
    for name, data in files.items():
        (src / name).write_bytes(data)
    assert len(files["big.txt"]) > LIMIT > max(len(d) for n, d in files.items() if n != "big.txt")
    deleter = DeleteWhenChunking(src / "vanishing.txt")
    second = idx.update([src], client=client, max_file_bytes=LIMIT, callback=deleter)
    return idx, first, second, before, twin


EXPECTED_ERRORS = {
    "empty.txt": ("empty", "found an empty file (0 bytes)"),
    "garbage.txt": ("binary", "expected text, found binary data"),
    "corrupt.pdf": ("corrupt", "expected a valid PDF"),
    "encrypted.pdf": ("encrypted", "encrypted with a password"),
    "scanned.pdf": ("image_only", "the PDF appears to be scanned images without a text layer"),
    "invalid.txt": ("encoding", "no encoding decodes to plausible text"),
    "big.txt": ("too_large", "expected at most 20.0 kB"),
    "vanishing.txt": ("unreadable", "No such file or directory"),
    "d001.txt": ("binary", "NUL bytes"),
    "short.txt": ("too_short", "4 words"),
}


@pytest.mark.parametrize("key", sorted(EXPECTED_ERRORS))
def test_bad_input_has_its_error_row(bad_run, key):
    idx, _, second, _, _ = bad_run
    rows = {rel(k): (kind, msg) for k, kind, msg in idx.catalog.errors_of_run(second.run_id)}
    kind, fragment = EXPECTED_ERRORS[key]
    assert rows[key][0] == kind
    assert fragment in rows[key][1]


def test_error_rows_are_exactly_the_bad_inputs(bad_run):
    idx, _, second, _, _ = bad_run
    rows = idx.catalog.errors_of_run(second.run_id)
    assert rows == second.errors
    assert sorted(k for k, _, _ in rows) == sorted(f"src/{k}" for k in EXPECTED_ERRORS)
    assert second.failed == len(EXPECTED_ERRORS) - 1  # too_short is indexed, counted apart


def test_the_rest_of_the_run_committed(bad_run):
    idx, first, second, before, _ = bad_run
    assert idx.catalog.last_run()["run_id"] == second.run_id
    assert idx.catalog.generation == second.generation > first.generation
    keys = {d.key for d in idx.catalog.documents()}
    new = {"src/twin_a.txt", "src/twin_b.txt", "src/new.pdf", "src/short.txt"}
    assert keys == set(before["docs"]) | new
    assert second.added == 4 and second.modified == 0 and second.too_short == 1
    assert words(idx.text("src/new.pdf")) == words(prose(300, seed=25))
    assert idx.catalog.document("src/short.txt").n_chunks == 0


def test_earlier_documents_are_untouched(bad_run):
    idx, _, _, before, _ = bad_run
    now = {d.key: d for d in idx.catalog.documents()}
    for key, doc in before["docs"].items():
        assert now[key] == doc  # same doc ID, content hash (d001 keeps its old one), text pack
        assert idx.text(key) == before["texts"][key]
    old = set(before["docs"])
    assert {r for r in _table(idx) if r[0] in old and r[1] in old} == before["table"]


def test_same_content_under_two_keys_is_100_percent_both_ways(bad_run):
    idx, _, _, _, twin = bad_run
    a, b = idx.similar("src/twin_a.txt"), idx.similar("src/twin_b.txt")
    assert (a[0].other, a[0].similarity) == ("src/twin_b.txt", 100.0)
    assert (b[0].other, b[0].similarity) == ("src/twin_a.txt", 100.0)
    assert a[0].shared == a[0].doc_chunks == len(set(chunks(twin)))


@pytest.mark.parametrize("transfer", ["shared", "dask"])
def test_same_text_in_every_format_is_mutually_100_percent(tmp_path, client, monkeypatch, transfer):
    """One text as .txt, .pdf (two pages, hyphenated line ends), .docx, .odt and .html, read
    by the workers (``shared``) or by the driver and sent as bytes (``dask``).

    Extraction must give each the same words; then their chunk sets are identical, so every
    pair is exactly 100 % (identical sets hash to identical chunk IDs, collisions or not).
    """
    text = prose(700, seed=31)
    paras = [text[: len(text) // 2].rsplit(" ", 1)[0], ""]
    paras[1] = text[len(paras[0]) :].strip()
    src = tmp_path / "src"
    src.mkdir()
    (src / "t.txt").write_text(text, encoding="utf-8")
    (src / "t.pdf").write_bytes(text_pdf(text, lines_per_page=40, hyphenate_every=3))
    (src / "t.docx").write_bytes(docx_bytes(paras))
    (src / "t.odt").write_bytes(odt_bytes(paras))
    (src / "t.HTML").write_bytes(html_bytes(paras, "windows-1250"))
    (src / "other.txt").write_text(prose(300, seed=32), encoding="utf-8")

    def not_here(*_):
        raise AssertionError("extraction must run in the chunking tasks, not on the driver")

    monkeypatch.setattr("simdask.ingest.sources.extract_text", not_here)  # the driver process only
    idx = Index.create(tmp_path / "idx", IndexConfig(hash_bits=32, shards=3))
    summary = idx.update([src], client=client, options=RunOptions(transfer=transfer))
    assert summary.errors == [] and summary.added == 6 and summary.extra["transfer"] == transfer
    fmts = ["src/t.txt", "src/t.pdf", "src/t.docx", "src/t.odt", "src/t.HTML"]
    for key in fmts:
        assert words(idx.text(key)) == words(text), key
    n = len(set(chunks(text)))
    rows = {(r.doc, r.other): r for r in idx.pairs() if r.doc in fmts and r.other in fmts}
    assert len(rows) == 20
    for r in rows.values():
        assert r.similarity == 100.0 and r.shared == r.doc_chunks == r.other_chunks == n


def test_bad_input_when_the_driver_sends_the_bytes(tmp_path, client):
    """transfer='dask': the driver fetches (size limit, vanished file), workers extract."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "ok.pdf").write_bytes(text_pdf(prose(120, seed=51)))
    (src / "big.txt").write_bytes(prose(800, seed=52).encode())
    (src / "scan.pdf").write_bytes(image_pdf(1))
    (src / "gone.txt").write_bytes(b"soon gone")
    assert (src / "ok.pdf").stat().st_size < 4000 < (src / "big.txt").stat().st_size
    idx = Index.create(tmp_path / "idx", IndexConfig(hash_bits=32, shards=2))
    summary = idx.update(
        [src],
        client=client,
        options=RunOptions(transfer="dask", max_file_bytes=4000),
        callback=DeleteWhenChunking(src / "gone.txt"),
    )
    kinds = {k: kind for k, kind, _ in summary.errors}
    assert kinds == {
        "src/big.txt": "too_large",
        "src/scan.pdf": "image_only",
        "src/gone.txt": "unreadable",
    }
    assert [d.key for d in idx.catalog.documents()] == ["src/ok.pdf"]
    assert words(idx.text("src/ok.pdf")) == words(prose(120, seed=51))


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "simdask.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.system
def test_cli_exit_status_0_with_failed_files_and_max_file_size(tmp_path):
    src = write_txt({f"d{i}": prose(80, seed=40 + i) for i in range(4)}, tmp_path / "src")
    (src / "empty.txt").write_bytes(b"")
    (src / "broken.pdf").write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 8)
    (src / "large.txt").write_text(prose(600, seed=42), encoding="utf-8")
    assert (src / "large.txt").stat().st_size > 2500 > (src / "d0.txt").stat().st_size
    p = _cli("update", tmp_path / "idx", src, "--max-file-size", "2.5KB", "--workers", 1)
    assert p.returncode == 0, p.stderr
    assert "committed generation" in p.stderr and "failed" in p.stderr
    out = _cli("errors", tmp_path / "idx", "--format", "jsonl")
    errors = {e["key"]: e for e in map(json.loads, out.stdout.splitlines())}
    assert errors["src/empty.txt"]["kind"] == "empty"
    assert errors["src/broken.pdf"]["kind"] == "corrupt"
    assert errors["src/large.txt"]["kind"] == "too_large"
    assert "expected at most 2.5 kB" in errors["src/large.txt"]["message"]
    wrong = _cli("update", tmp_path / "idx", src, "--max-file-size", "lots")
    assert wrong.returncode == 2 and "expected a size such as 50MB" in wrong.stderr
