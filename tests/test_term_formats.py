"""Formats teachers still receive (issue 31, item 17): .rtf through the maintained library
striprtf (the ``rtf`` extra), old Word .doc through the Debian tool antiword where installed;
through the real CLI. The antiword wiring is also checked with a stand-in program on the PATH
(printing a known text), since no real Word 97 file can be written here without Word."""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest

from simdask.errors import ExtractionError
from simdask.ingest.extract import extract_text, rtf_text
from tests.helpers.cli import run
from tests.helpers.components import need
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

OPTS = ("--workers", 1, "--quiet", "--shards", 2)
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def to_rtf(text: str) -> bytes:
    """``text`` as an RTF document with a font table, bold runs and escaped characters
    (``\\uN?`` for each non-ASCII one, ``\\'e9`` for the final é)."""
    body = "".join(c if ord(c) < 128 else f"\\u{ord(c)}?" for c in text.replace("the", r"{\b the}"))
    head = r"{\rtf1\ansi\deff0{\fonttbl{\f0\fswiss Helvetica;}}{\colortbl;\red0\green0\blue0;}"
    return (head + r"\f0\pard " + body + r" caf\'e9\par}").encode("ascii")


def pairs(index) -> dict[tuple[str, str], float]:
    out = run("similar", index, "--format", "jsonl").stdout.splitlines()
    return {(r["doc"], r["other"]): r["similarity"] for r in map(json.loads, out)}


def test_an_rtf_essay_is_read_and_compared(tmp_path):
    essay = prose(200, seed=31)
    src = tmp_path / "src"
    src.mkdir()
    (src / "late.rtf").write_bytes(to_rtf(essay))
    (src / "copy.txt").write_text(essay + " café")
    idx = tmp_path / "idx"
    run("update", idx, src, *OPTS)
    text = run("text", idx, "src/late.rtf").stdout
    assert text.split() == (essay + " café").split()  # no control words, fonts or colours
    assert pairs(idx)[("src/late.rtf", "src/copy.txt")] == pytest.approx(100.0)


def fake_antiword(folder, text: str):
    """A program named antiword that prints ``text`` (and checks it was given a file)."""
    folder.mkdir()
    prog = folder / "antiword"
    prog.write_text(
        f'#!/bin/sh\nfor last; do :; done\ntest -f "$last" || exit 2\ncat <<"EOF"\n{text}\nEOF\n'
    )
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    return folder


def test_an_old_word_file_goes_through_antiword(tmp_path):
    essay = prose(150, seed=32)
    src = tmp_path / "src"
    src.mkdir()
    (src / "old.doc").write_bytes(OLE + b"\0" * 600)
    (src / "copy.txt").write_text(essay)
    env = {**os.environ, "PATH": f"{fake_antiword(tmp_path / 'bin', essay)}:{os.environ['PATH']}"}
    idx = tmp_path / "idx"
    run("update", idx, src, *OPTS, env=env)
    assert run("text", idx, "src/old.doc").stdout.split() == essay.split()
    assert pairs(idx)[("src/old.doc", "src/copy.txt")] == pytest.approx(100.0)

    # without antiword on the PATH: unsupported, saying what to install or do
    bare = {**os.environ, "PATH": os.path.dirname(shutil.which("python3") or "/usr/bin")}
    other = tmp_path / "idx2"
    run("update", other, src, *OPTS, env=bare)
    [err] = [json.loads(r) for r in run("errors", other, "-o", "jsonl").stdout.splitlines()]
    assert err["key"] == "src/old.doc" and err["kind"] == "unsupported"
    assert "apt install antiword" in err["message"] and "convert" in err["message"]


def test_the_real_antiword_refuses_an_ole_file_that_is_no_word_document():
    need(shutil.which("antiword") is not None, "the Debian tool antiword", ".ci/run's apt-get")
    with pytest.raises(ExtractionError) as info:
        extract_text(OLE + b"\0" * 600, "sheet.doc")
    assert info.value.kind == "unsupported"
    assert (
        "sheet.doc is not a Word Document" in info.value.message
        and "/tmp" not in info.value.message
    )


@pytest.mark.unit
def test_rtf_without_striprtf_says_what_to_install(monkeypatch):
    def missing():
        raise ImportError("striprtf")

    monkeypatch.setattr(rtf_text, "_rtf_to_text", missing)
    with pytest.raises(ExtractionError) as info:  # the reader the helper process runs
        rtf_text.read_rtf(to_rtf("some words"), "a.rtf")
    assert info.value.kind == "missing_dependency"
    assert "pip install 'simdask[rtf]'" in info.value.message
