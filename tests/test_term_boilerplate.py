"""Boilerplate for a teacher (issue 31, item 8), through the real CLI: a passage most
documents share is listed once (not once per variant with a word more or less at an end),
``--save`` writes it as a template file that ``--exclude`` takes, the run summary points to
both, and the help speaks without internal references."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from simdask.kernels.words import words
from simdask.read.boilerplate_passages import SharedPassage, once, trim_ends
from tests.helpers.cli import run
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

SHEET = prose(60, seed=900)  # the assignment sheet every essay starts from


def write_essays(folder, n: int = 8) -> None:
    """``n`` essays holding :data:`SHEET`; two put "dear reader" before it, two "to whom"
    before it and two "kind regards" after it (each such variant held by two essays)."""
    rng = random.Random(1)
    vocab = [f"v{i}" for i in range(5000)]
    folder.mkdir()
    for i in range(n):
        before = ["dear reader", "dear reader", "to whom", "to whom"][i] if i < 4 else ""
        after = "kind regards" if 4 <= i < 6 else ""
        own = " ".join(rng.choices(vocab, k=150))
        tail = " ".join(rng.choices(vocab, k=50))
        (folder / f"e{i}.txt").write_text(f"{own} {before} {SHEET} {after} {tail}\n")


def test_a_shared_sheet_is_listed_once_saved_and_pointed_to(tmp_path):
    src = tmp_path / "essays"
    write_essays(src)
    idx = tmp_path / "idx"
    out = run("update", idx, src, "--shards", 2, "--quiet").stderr
    first = " ".join(words(SHEET)[:12])
    assert f'a passage of 60 words is shared by 8 of 8 documents ("{first} ...")' in out
    assert "simdask boilerplate INDEX --save template.txt" in out

    got = run("boilerplate", idx, "--format", "jsonl").stdout.splitlines()
    rows = [json.loads(r) for r in got]
    assert rows[0] == {"documents": 8, "words": 60, "passage": " ".join(words(SHEET))}
    sheet_words = set(words(SHEET))
    # no other row is a variant of the sheet (a word or two more at an end)
    assert all(len(set(r["passage"].split()) & sheet_words) < 10 for r in rows[1:]), rows

    saved = tmp_path / "template.txt"
    run("boilerplate", idx, "--top", 1, "--save", saved)
    assert saved.read_text() == " ".join(words(SHEET)) + "\n"
    run("update", idx, "--exclude", saved, "--quiet")
    similar = run("similar", idx, "--format", "jsonl").stdout.splitlines()
    assert similar == []  # the essays shared only the sheet (and its two-essay variants' words)
    again = run("update", idx, src, "--quiet").stderr
    assert "is shared by" not in again


def test_no_pointer_without_a_passage_most_documents_share(tmp_path):
    src = tmp_path / "essays"
    src.mkdir()
    for i in range(4):
        (src / f"e{i}.txt").write_text(prose(150, seed=i))
    (src / "copy.txt").write_text(prose(150, seed=0))  # a copy: 2 of 5, not most
    out = run("update", tmp_path / "idx", src, "--shards", 2, "--quiet").stderr
    assert "is shared by" not in out


def test_the_help_speaks_without_internal_references():
    text = run("boilerplate", "--help").stdout
    assert "DESIGN" not in text and "§" not in text and "chunks)" not in text
    assert "--save" in text and "--exclude FILE" in text


@pytest.mark.unit
def test_trim_ends_drops_ends_fewer_documents_hold():
    post = {1: np.arange(2), 2: np.arange(8), 3: np.arange(8), 4: np.arange(8), 5: np.arange(3)}
    ids = np.array([1, 1, 2, 3, 4, 5])
    assert trim_ends(ids, 0, 5, post) == (2, 4)
    # a middle held by fewer documents stays: one document changed a word of the sheet
    post = {1: np.arange(6), 2: np.arange(5), 3: np.arange(6)}
    assert trim_ends(np.array([1, 2, 2, 3]), 0, 3, post) == (0, 3)


@pytest.mark.unit
def test_once_keeps_a_chunk_in_one_passage():
    a, b, c = (SharedPassage(t, d, 5) for t, d in (("a", 8), ("b", 2), ("c", 2)))
    got = once([(b, frozenset({1, 2})), (a, frozenset({2, 3})), (c, frozenset({7}))])
    assert got == [a, c]
