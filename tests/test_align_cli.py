"""``simdask align PAIRS_FILE`` as a real CLI subprocess on a LocalCluster of worker processes:
a verbatim copy planted at known offsets is found with exact spans (checked against the
words of the planted copy), offsets are code points into each file's decoded text (a byte
order mark is not a character, CRLF line ends are kept), the JSONL schema, a file that cannot
be read is reported and the other pairs are aligned (exit status 3)."""

from __future__ import annotations

import json

import pytest

from simdask.kernels.words import WORD_PATTERN
from tests.helpers.cli import run
from tests.helpers.paraphrase import paraphrased_pair, verbatim_pair

pytestmark = pytest.mark.system

PASSAGE_KEYS = ["a_start", "a_end", "b_start", "b_end", "kind", "score"]


def _word_extent(text: str, lo: int, hi: int) -> tuple[int, int]:
    """From the first word's start to the last word's end inside ``text[lo:hi]``."""
    found = list(WORD_PATTERN.finditer(text, lo, hi))
    return found[0].start(), found[-1].end()


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    root = tmp_path_factory.mktemp("align")
    (root / "docs").mkdir()
    essay, source, span_a, span_b = verbatim_pair()
    (root / "docs" / "essay.txt").write_text(essay, encoding="utf-8")
    (root / "docs" / "source.txt").write_text(source, encoding="utf-8")
    # the same essay behind a BOM, with CRLF line ends and non-ASCII text before the copy
    crlf = "Ünïcödé façade — naïve café.\n" + essay
    crlf = crlf.replace("\n", "\r\n")
    (root / "docs" / "crlf.txt").write_bytes(b"\xef\xbb\xbf" + crlf.encode("utf-8"))
    para = paraphrased_pair()
    (root / "docs" / "para.txt").write_text(para.essay, encoding="utf-8")
    (root / "docs" / "para-src.txt").write_text(para.source, encoding="utf-8")
    (root / "docs" / "binary.txt").write_bytes(b"\0\1\2\3" * 200)
    lines = [
        "docs/essay.txt\tdocs/source.txt",
        "docs/crlf.txt\tdocs/source.txt",
        "docs/missing.txt\tdocs/source.txt",
        "",
        "docs/para.txt\tdocs/para-src.txt",
        "docs/essay.txt\tdocs/binary.txt",
        "docs/source.txt\tdocs/para.txt",
    ]
    (root / "pairs.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root, essay, source, crlf, span_a, span_b, para


@pytest.fixture(scope="module")
def aligned(pairs):
    root = pairs[0]
    out = root / "out.jsonl"
    p = run("align", root / "pairs.tsv", "--out", out, "--workers", 2, "--batch-pairs", 2,
            "--quiet", check=False, cwd=root / "docs")  # fmt: skip
    return p, [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]


def test_one_line_per_pair_in_order_with_the_schema(aligned):
    p, rows = aligned
    assert p.returncode == 3, p.stderr  # some files could not be read
    assert [(r["a"], r["b"]) for r in rows] == [
        ("docs/essay.txt", "docs/source.txt"),
        ("docs/crlf.txt", "docs/source.txt"),
        ("docs/missing.txt", "docs/source.txt"),
        ("docs/para.txt", "docs/para-src.txt"),
        ("docs/essay.txt", "docs/binary.txt"),
        ("docs/source.txt", "docs/para.txt"),
    ]
    for r in rows:
        if "error" in r:
            assert list(r) == ["a", "b", "error"]
            continue
        assert list(r) == ["a", "b", "passages"]
        for q in r["passages"]:
            assert list(q) == PASSAGE_KEYS
            assert q["kind"] in ("verbatim", "paraphrased", "summarised")
            assert 0.0 <= q["score"] <= 1.0
    assert "aligned 4 of 6 pairs" in p.stderr


def test_a_verbatim_copy_is_found_with_exact_spans(pairs, aligned):
    _, essay, source, _, span_a, span_b, _ = pairs
    [q] = aligned[1][0]["passages"]
    assert q["kind"] == "verbatim"
    assert (q["a_start"], q["a_end"]) == _word_extent(essay, *span_a)
    assert (q["b_start"], q["b_end"]) == _word_extent(source, *span_b)
    assert essay[q["a_start"] : q["a_end"]] == source[q["b_start"] : q["b_end"]]


def test_offsets_are_code_points_of_the_decoded_text(pairs, aligned):
    root, _, source, crlf, _, span_b, _ = pairs
    text = (root / "docs" / "crlf.txt").read_bytes().decode("utf-8-sig")
    assert text == crlf  # decoded, unchanged: CRLF kept, the BOM is no character
    [q] = aligned[1][1]["passages"]
    copy = source[slice(*_word_extent(source, *span_b))]
    start = crlf.index(copy[:40])
    assert (q["a_start"], q["a_end"]) == _word_extent(crlf, start, start + len(copy))
    assert text[q["a_start"] : q["a_end"]] == copy  # one paragraph: no line end inside


def test_paraphrased_sections_are_one_passage_each(pairs, aligned):
    para = pairs[6]
    got = aligned[1][3]["passages"]
    assert len(got) == 2
    for q, (a0, a1), (b0, b1) in zip(got, para.spans_a, para.spans_b, strict=True):
        assert q["kind"] == "paraphrased"
        assert a0 <= q["a_start"] < q["a_end"] <= a1 and q["a_end"] - q["a_start"] > 0.9 * (a1 - a0)
        assert b0 <= q["b_start"] < q["b_end"] <= b1


def test_unreadable_files_are_named_with_their_reason(aligned):
    p, rows = aligned
    assert rows[2]["error"].startswith("docs/missing.txt: missing: expected a document file")
    assert rows[4]["error"].startswith("docs/binary.txt: binary: expected text")
    assert "simdask: error: pair docs/missing.txt / docs/source.txt: docs/missing.txt" in p.stderr


def test_stdout_without_out_and_a_bad_pairs_file(pairs, aligned, tmp_path):
    root = pairs[0]
    one = tmp_path / "one.tsv"
    one.write_text(f"{root / 'docs' / 'essay.txt'}\t{root / 'docs' / 'source.txt'}\n")
    p = run("align", one, "--workers", 1, "--quiet")
    [got] = [json.loads(x) for x in p.stdout.splitlines()]
    assert (got["a"], got["b"]) == (
        str(root / "docs" / "essay.txt"),
        str(root / "docs" / "source.txt"),
    )
    want = aligned[1][0]["passages"]
    assert got["passages"] == [{**q, "score": pytest.approx(q["score"])} for q in want]
    bad = tmp_path / "bad.tsv"
    bad.write_text("a.txt\tb.txt\nonly-one-path.txt\n")
    p = run("align", bad, "--workers", 1, "--quiet", check=False)
    assert p.returncode == 1, p.stderr  # a simdask error, before any cluster starts
    assert "bad.tsv line 2: expected two file paths separated by a tab, found 1 field" in p.stderr
