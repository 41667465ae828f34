"""``simdask report`` on a pair with a very large document (issue 12 item 7: ~50 MB then): a
real CLI process under an address-space limit and a time bound, with the planted passage
found. Since session 12 a document may give at most ``ExtractLimits.text_chars`` (25 M)
characters (issue 30 item 5: bombs under a 2 GiB worker), so the document is the largest
that can be indexed, just under that limit; one over it is ``too_large``."""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time

import pytest

from simdask import Index, IndexConfig
from simdask.ingest.extract.extract_limits import ExtractLimits

pytestmark = pytest.mark.system

#: address space of the report process: ~20 bytes per character of the pair as measured,
#: plus Python/numpy; the word-tuple path needed several times this for 50 MB
LIMIT = 2 * 2**30
SECONDS = 120


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def test_report_on_the_largest_document_is_bounded(tmp_path, client):
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(50_000)]
    small = " ".join(rng.choices(vocab, k=2000))
    parts, n = [], 0
    while n < ExtractLimits().text_chars - 700_000:  # under the limit with the rest
        part = " ".join(rng.choices(vocab, k=100_000))
        parts.append(part)
        n += len(part) + 1
    parts.insert(len(parts) // 2, small[:6000])
    big = " ".join(parts)
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.txt").write_text(big)
    (src / "small.txt").write_text(small)
    with Index.create(tmp_path / "i", IndexConfig(shards=4)) as idx:
        idx.update([src], client=client)
    t = time.monotonic()
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "simdask.cli",
            "report",
            tmp_path / "i",
            "src/small.txt",
            "src/big.txt",
            "--format",
            "json",
            "--exact-only",  # as the default gives for a pair this large (said below)
        ],
        capture_output=True,
        text=True,
        timeout=SECONDS * 2,
        preexec_fn=_limit,
    )
    elapsed = time.monotonic() - t
    assert p.returncode == 0, p.stderr[-2000:]
    assert elapsed < SECONDS, elapsed
    rep = json.loads(p.stdout)
    start = big.index(small[:6000])
    longest = max(rep["passages"], key=lambda q: q["chunks"])
    assert longest["doc_start"] == 0
    assert longest["other_start"] == start
    assert big[longest["other_start"] : longest["other_end"]] == small[: longest["doc_end"]]
    assert rep["passages_truncated"] is False
    assert 0 < rep["similarity"] <= 100 and rep["reverse_similarity"] < 0.1
    t = time.monotonic()
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "simdask.cli",
            "report",
            tmp_path / "i",
            "src/big.txt",
            "src/small.txt",
            "--html",
            tmp_path / "r.html",
        ],
        capture_output=True,
        text=True,
        timeout=SECONDS * 2,
        preexec_fn=_limit,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert time.monotonic() - t < SECONDS
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "the texts are too large to align" in page  # the exact evidence, said so
    assert (tmp_path / "r.html").stat().st_size > 20_000_000  # both texts in the page
