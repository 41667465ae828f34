"""Text with a few stray control bytes is text (issue 29 item 3): the NUL bytes are dropped,
the document indexed, and `simdask errors` lists a warning while that version is indexed."""

from __future__ import annotations

import json

import pytest

from simdask import Index
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system


def _errors(idx) -> dict[str, dict]:
    out = run("errors", idx, "-o", "jsonl").stdout
    rows = {r["key"]: r for r in map(json.loads, out.splitlines())}
    return {k: r for k, r in rows.items() if r["kind"] != "too_short"}  # make_docs' tiny one


def test_text_with_stray_nul_bytes_is_indexed_with_a_warning(tmp_path):
    docs = make_docs(4, seed=3)
    src = write_txt(docs, tmp_path / "src")
    text = docs["d001"]
    (src / "web.txt").write_bytes(text[:500].encode() + b"\x00" + text[500:].encode() + b"\x00")
    (src / "blob.txt").write_bytes(bytes(range(256)) * 8)  # binary: still rejected
    idx = tmp_path / "idx"
    run("update", idx, src, "--hash-bits", 24, "--shards", 2, "--quiet")
    errors = _errors(idx)
    assert set(errors) == {"src/web.txt", "src/blob.txt"}
    assert errors["src/blob.txt"]["kind"] == "binary"
    web = errors["src/web.txt"]
    assert web["kind"] == "control_bytes" and web["kept"] is True
    assert "warning: dropped 2 stray control bytes (2 NUL)" in web["message"]
    table = run("errors", idx).stdout
    assert "indexed (warning)" in table
    with Index.open(idx) as x:
        assert x.text("src/web.txt") == text  # indexed, without the NUL bytes
        rows = {r.other: r.similarity for r in x.similar("src/web.txt")}
        assert rows["src/d001.txt"] == 100.0
    assert json.loads(run("stats", idx, "--format", "json").stdout)["failed"] == 1  # blob
    # an unchanged file is not read again: the warning stays with its version
    run("update", idx, src, "--quiet")
    assert set(_errors(idx)) == {"src/web.txt", "src/blob.txt"}
    # a clean version replaces it: no warning
    (src / "web.txt").write_text(text, encoding="utf-8")
    run("update", idx, src, "--quiet")
    assert set(_errors(idx)) == {"src/blob.txt"}
