"""What a run tells a teacher (issue 31, item 5), through the real CLI: a change of the
exclusions given with SOURCEs starts one cluster (its lines said once) and the summary says
what the re-chunk changed: documents, similarity rows and chunks counted, before and after."""

from __future__ import annotations

import json
import re

import pytest

from simdask.summary import ExclusionChange
from tests.helpers.cli import run
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

TEMPLATE = prose(80, seed=99)


def stats(index) -> dict:
    return json.loads(run("stats", index, "--format", "json").stdout)


def test_a_change_of_the_exclusions_says_what_it_changed_once(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(5):
        (src / f"s{i}.txt").write_text(f"{TEMPLATE}\n{prose(200, seed=i)}\n")
    tpl = tmp_path / "tpl.txt"
    tpl.write_text(TEMPLATE)
    idx = tmp_path / "idx"
    run("update", idx, src, "--shards", 2, "--quiet")
    before = stats(idx)
    (src / "late.txt").write_text(prose(200, seed=40))

    out = run("update", idx, src, "--exclude", tpl).stderr
    after = stats(idx)
    assert out.count("using in-process Dask workers") == 1, out
    assert out.count("Dask dashboard") <= 1 and out.count("data transfer: shared (") == 1
    m = re.search(
        r"exclusions changed: 5 documents \(every document\) re-chunked from their stored "
        r"texts; similarity rows ([\d,]+) -> ([\d,]+); chunks counted ([\d,]+) -> ([\d,]+) "
        r"\((\d+) % fewer: text now excluded\)",
        out,
    )
    assert m is not None, out
    rows_before, rows_after, chunks_before, chunks_after, pct = (
        int(g.replace(",", "")) for g in m.groups()
    )
    assert rows_before == before["similarity_rows"] == 20  # 5 documents, all pairs both ways
    assert rows_after == 0  # only the template was shared
    assert chunks_before == before["postings"]
    assert chunks_after < chunks_before
    assert pct == round((chunks_before - chunks_after) / chunks_before * 100)
    # the late essay's own run follows: its summary is the last line block
    assert "1 added" in out and after["documents"] == 6


@pytest.mark.unit
def test_the_description_says_more_when_text_is_no_longer_excluded():
    c = ExclusionChange(3, False, 10, 12, 100, 150)
    text = c.describe()
    assert "3 documents (those holding newly excluded text)" in text
    assert "similarity rows 10 -> 12" in text and "(50 % more: text no longer excluded)" in text
