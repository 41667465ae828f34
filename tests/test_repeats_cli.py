"""``simdask repeats`` as a real CLI subprocess."""

from __future__ import annotations

import json

import pytest

from tests.helpers.cli import run
from tests.test_repeats import brute_force

pytestmark = pytest.mark.system


def test_cli_repeats_jsonl(tmp_path):
    docs = {
        "a": "The quick brown fox jumps. Over the lazy dog!",
        "b": "A quick brown fox jumps over everything.",
        "c": "the QUICK brown fox, jumps over the lazy dog",
        "tiny": "fox",
    }
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in docs.items()))
    out = tmp_path / "rep.jsonl"
    p = run("repeats", src, "--n", 3, "--min-count", 2, "--out", out, "--tmp", tmp_path,
            "--workers", 1, "--quiet")  # fmt: skip
    rows = sorted((json.loads(x) for x in out.read_text().splitlines()), key=lambda r: r["ngram"])
    assert rows == brute_force(docs, 3, 2)
    assert rows[0] == {
        "ngram": "brown fox jumps",
        "count": 3,
        "documents": 3,
        "locations": [["a", 2], ["b", 2], ["c", 2]],
    }
    assert "repeated 3-grams" in p.stderr
    bad = run("repeats", src, "--out", tmp_path / "x.csv", "--workers", 1, "--quiet", check=False)
    assert bad.returncode == 1
    assert ".jsonl or .parquet" in bad.stderr
