"""Issue 31 item 4 through the CLI, as real processes: with ``--exclude-quotes`` a quotation
is left out of its own document only. A quotes a passage of a source correctly, B copies
the same passage without quotation marks: B is found in A and in the source at a high
percentage, A's quotation is not A's copied text; ``check``, ``query``, ``similar --pairs``
and ``report`` say the same per direction (docs/term.md)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.cli import run

pytestmark = pytest.mark.system

PASSAGE = " ".join(f"famous{i}" for i in range(40))


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def rows(index) -> dict[tuple[str, str], dict]:
    out = run("similar", index, "--format", "jsonl").stdout.splitlines()
    return {(r["doc"], r["other"]): r for r in map(json.loads, out)}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("quoted")
    src = tmp / "src"
    src.mkdir()
    (src / "source.txt").write_text(f"{own('s', 40)} {PASSAGE} {own('t', 30)}\n")
    (src / "a.txt").write_text(f"{own('a', 15)} As the book says, “{PASSAGE}” and so on.\n")
    (src / "b.txt").write_text(f"{own('b', 10)} {PASSAGE} {own('bb', 5)}\n")
    (src / "c.txt").write_text(own("c", 80) + "\n")
    idx = tmp / "idx"
    opts = ("--workers", 1, "--quiet", "--hash-bits", 32, "--shards", 2)
    run("update", idx, src, *opts)
    before = rows(idx)
    run("update", idx, src, "--exclude-quotes", "--workers", 1, "--quiet")
    return tmp, idx, before


def test_copy_without_quotation_marks_found_against_the_quoter_and_the_source(index):
    _, idx, before = index
    assert before[("src/a.txt", "src/source.txt")]["similarity"] > 40  # quotations counted
    got = rows(idx)
    assert got[("src/b.txt", "src/a.txt")]["similarity"] > 70
    assert got[("src/b.txt", "src/source.txt")]["similarity"] > 70
    # A's quotation is not A's copied text: no row of A to B or to the source
    assert ("src/a.txt", "src/source.txt") not in got and ("src/a.txt", "src/b.txt") not in got
    # B shares more chunks with A than A counts as its own: damage to the old check, not now
    b_in_a = got[("src/b.txt", "src/a.txt")]
    assert b_in_a["shared"] > b_in_a["other_chunks"]
    assert "clean" in run("check", idx).stdout


def test_pairs_report_and_query_count_each_direction(index):
    tmp, idx, _ = index
    out = run("similar", idx, "--pairs", "--format", "jsonl").stdout.splitlines()
    pairs = {(p["a_key"], p["b_key"]): p for p in map(json.loads, out)}
    ab = pairs[("src/b.txt", "src/a.txt")]
    assert ab["a_in_b"] > 70 and ab["b_in_a"] < 10  # A's share in B leaves its quotation out

    rep = run("report", idx, "src/b.txt", "src/a.txt", "--format", "json").stdout
    rep = json.loads(rep)
    assert rep["similarity"] > 70 and rep["reverse_similarity"] < 10
    assert abs(rep["similarity"] - ab["a_in_b"]) < 5  # exact chunks against hashed ones

    (tmp / "q").mkdir(exist_ok=True)
    (tmp / "q" / "copier.txt").write_text(f"{own('q', 5)} {PASSAGE} {own('qq', 3)}\n")
    (tmp / "q" / "quoter.txt").write_text(f'{own("r", 30)} quoting "{PASSAGE}" here\n')
    out = run("query", idx, tmp / "q", "--format", "jsonl").stdout.splitlines()
    got = {(m["query"], m["key"]): m for m in map(json.loads, out)}
    m = got[("q/copier.txt", "src/a.txt")]  # the checked text copies what A quotes
    assert m["similarity"] > 70 and m["reverse_shared"] < m["shared"]
    m = got[("q/quoter.txt", "src/source.txt")]  # the checked text quotes the source
    assert m["similarity"] < 10 < m["reverse_similarity"]
    assert m["reverse_shared"] > m["shared"]
