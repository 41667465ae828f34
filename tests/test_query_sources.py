"""Sources left out of a checked text (issue 31 item 12): ``query`` of a file that is an
indexed document (its key's end and the same text) applies the sources the teacher left out
of that document (``mark DOC SOURCE --exclude-source``), and ``query --exclude-source KEY``
leaves a source out for one check: the row stays, flagged ``source_excluded`` as in
``similar``, and the checked text's total leaves it out; a file of the same name with
another text takes no decision of the indexed one."""

from __future__ import annotations

import json

import pytest

from tests.helpers.cli import run
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

OPTS = ("--workers", 1, "--quiet")
THESIS_PART = prose(200, seed=81)
BOOK_PART = prose(120, seed=82)


def _rows(*args) -> dict[str, dict]:
    out = run("query", *args, "--totals", "--format", "jsonl").stdout.splitlines()
    return {r["key"]: r for r in map(json.loads, out)}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("qsrc")
    src = root / "class"
    src.mkdir()
    essay = "\n\n".join([prose(150, seed=83), THESIS_PART, prose(100, seed=84), BOOK_PART])
    (src / "essay.txt").write_text(essay, encoding="utf-8")
    (src / "thesis.txt").write_text(
        "\n\n".join([prose(400, seed=85), THESIS_PART, prose(200, seed=86)]), encoding="utf-8"
    )
    (src / "book.txt").write_text(
        "\n\n".join([prose(300, seed=87), BOOK_PART, prose(200, seed=88)]), encoding="utf-8"
    )
    idx = root / "idx"
    run("update", idx, src, *OPTS)
    return root, idx, essay


def test_query_applies_the_documents_exclusions_and_its_own(corpus):
    root, idx, essay = corpus
    thesis, book, me = "class/thesis.txt", "class/book.txt", "class/essay.txt"
    before = _rows(idx, root / "class" / "essay.txt")
    # the indexed document it is: its own 100 % row is flagged, no source of its total
    assert [k for k, r in before.items() if r["source_excluded"]] == [me]
    assert before[me]["similarity"] == 100.0 and before[me]["aligned"] is None
    assert before[book]["total"] < 90
    assert before[thesis]["aligned"] > 20 and before[book]["aligned"] > 10

    run("mark", idx, me, thesis, "--exclude-source")
    after = _rows(idx, root / "class" / "essay.txt")  # the indexed file, checked again
    assert after[thesis]["source_excluded"] is True and after[book]["source_excluded"] is False
    assert after[thesis]["similarity"] == before[thesis]["similarity"]  # the measure stays
    assert after[thesis]["aligned"] is None  # not counted
    total = after[book]["total"]
    assert total == pytest.approx(after[book]["aligned"], abs=0.01)  # the book alone
    assert total < before[book]["total"] - 10
    said = run("query", idx, root / "class" / "essay.txt").stderr
    assert f"left out of {me}: {thesis}" in said or "left out of essay.txt" in said

    # a copy elsewhere with the same text is that document; an edited one is another
    other = root / "elsewhere" / "class"
    other.mkdir(parents=True)
    (other / "essay.txt").write_text(essay, encoding="utf-8")
    assert _rows(idx, other / "essay.txt")[thesis]["source_excluded"] is True
    (other / "essay.txt").write_text(essay + "\n\nOne more sentence of my own.", encoding="utf-8")
    edited = _rows(idx, other / "essay.txt")
    assert not any(r["source_excluded"] for r in edited.values())
    assert edited[thesis]["aligned"] > 20

    # --exclude-source for one check (a key's end is enough), repeatable
    both = _rows(
        idx, other / "essay.txt", "--exclude-source", "thesis.txt", "--exclude-source", book
    )
    assert both[thesis]["source_excluded"] and both[book]["source_excluded"]
    assert both[me]["aligned"] > 90  # the edited copy: the indexed essay is its source
    assert {r["total"] for r in both.values()} == {both[me]["aligned"]}
    page = root / "q.html"
    run("query", idx, other / "essay.txt", "--exclude-source", thesis, "--html", page)
    text = page.read_text(encoding="utf-8")
    assert thesis in text.split("excluded", 1)[-1]  # the view names the source left out

    missing = run("query", idx, other / "essay.txt", "--exclude-source", "nope.txt", check=False)
    assert missing.returncode == 1 and "nope.txt" in missing.stderr
