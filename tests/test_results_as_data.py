"""Results out as data (issue 32, item 9) and the command-line details of item 8.

Parquet and Dask DataFrame exports equal ``similar --format jsonl`` (and ``totals --format
jsonl``); the streaming iterator equals the list; ``--summary-json``; ``simdask runs``;
``--log-file`` holds simdask's own lines, also of a failed run; ``simdask backup`` during a
running update gives an index ``simdask check`` finds clean.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from simdask import DocumentNotFoundError, Index, IndexConfig
from simdask.cli._common import print_summary
from simdask.cli.main import main
from simdask.cluster import listen
from simdask.storage.verify import check_index
from simdask.summary import CacheCounts, RunStats, RunSummary
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration

CONFIG = IndexConfig(shards=4, hash_bits=32)
_CLI = (sys.executable, "-m", "simdask.cli")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """An index of two folders with totals computed (so ``aligned`` and ``total`` are set)."""
    tmp = tmp_path_factory.mktemp("built")
    write_txt(make_docs(40, seed=31), tmp / "docs")
    write_txt(make_docs(12, seed=32), tmp / "more")
    with Index.create(tmp / "idx", CONFIG) as idx:
        idx.update([tmp / "docs"])
        idx.update([tmp / "more"])
        idx.compute_totals()
        assert len(idx.pairs()) > 20 and idx.totals()
    return tmp


def _cli_json(capsys, *argv: str) -> list[dict]:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_parquet_pairs_equal_similar_jsonl(built, capsys, tmp_path):
    idx = str(built / "idx")
    want = _cli_json(capsys, "similar", idx, "--format", "jsonl")
    assert want and any(r["aligned"] is not None for r in want)
    assert main(["export", idx, str(tmp_path / "p.parquet")]) == 0
    got = pq.read_table(tmp_path / "p.parquet").to_pylist()
    assert got == want  # the same rows, columns, values and order
    assert main(["export", idx, str(tmp_path / "m.parquet"), "--min", "50"]) == 0
    assert pq.read_table(tmp_path / "m.parquet").to_pylist() == [
        r for r in want if r["similarity"] >= 50
    ]


def test_parquet_totals_equal_totals_jsonl(built, capsys, tmp_path):
    idx = str(built / "idx")
    want = _cli_json(capsys, "totals", idx, "--format", "jsonl")
    assert want
    assert main(["export", idx, str(tmp_path / "t.parquet"), "--totals"]) == 0
    got = pq.read_table(tmp_path / "t.parquet").to_pylist()
    assert got == want


def test_dataframe_and_iterator_equal_similar_jsonl(built, capsys):
    want = _cli_json(capsys, "similar", str(built / "idx"), "--format", "jsonl")
    cols = ["doc", "other", "similarity", "shared", "doc_chunks", "other_chunks"]
    expected = sorted(tuple(r[c] for c in cols) for r in want)
    with Index.open(built / "idx") as idx:
        frame = idx.pairs_frame(partitions=3)
        assert frame.npartitions == 3 and list(frame.columns) == cols
        df = frame.compute(scheduler="sync")
        got = sorted(tuple(row) for row in df[cols].itertuples(index=False, name=None))
        assert got == expected
        streamed = list(idx.iter_pairs())
        assert streamed == idx.pairs()
        assert [(p.doc, p.other, p.similarity) for p in streamed] == [
            (r["doc"], r["other"], r["similarity"]) for r in want
        ]
        stale = idx.pairs_frame()
    with Index.open(built / "idx") as idx:  # a frame of an index changed since: refused
        idx.remove(["more/d000.txt"])
    with pytest.raises(Exception, match="updated after pairs_frame"):
        stale.compute(scheduler="sync")


def test_api_resolves_keys_like_the_cli(built):
    with Index.open(built / "idx") as idx:
        assert idx.similar("d030.txt") == idx.similar("docs/d030.txt")  # only in docs/
        assert idx.text("docs/d030.txt") == idx.text("d030.txt")
        with pytest.raises(DocumentNotFoundError, match="end of several keys") as e:
            idx.similar("d001.txt")  # docs/d001.txt and more/d001.txt
        assert "'docs/d001.txt'" in str(e.value) and "'more/d001.txt'" in str(e.value)
        with pytest.raises(DocumentNotFoundError, match="did you mean"):
            idx.similar("docs/d0003.txt")


def test_summary_json_runs_history_and_log_file(tmp_path, capsys):
    write_txt(make_docs(20, seed=41), tmp_path / "docs")
    write_txt(make_docs(5, seed=42), tmp_path / "new")
    idx, log = str(tmp_path / "idx"), str(tmp_path / "run.log")
    args = ["--log-file", log, "update", idx]
    assert main([*args, str(tmp_path / "docs"), "--summary-json", str(tmp_path / "s.json")]) == 0
    summary = json.loads((tmp_path / "s.json").read_text())
    n = len(make_docs(20, seed=41))
    assert summary["added"] == n and summary["run_id"] == 1
    assert set(summary["seconds"]) >= {"scan", "chunk", "commit", "total"}
    assert summary["extra"]["incidents"] == {"worker_deaths": 0, "retried_tasks": 0}
    assert len(summary["changed"]["added"]) == n
    text = Path(log).read_text()
    assert f"run 1 committed generation 1: {n} added" in text  # the summary, with its time
    # a run that fails: its error line is in the log too
    env = {**os.environ, "SIMDASK_FAILPOINTS": "before_commit:enospc"}
    proc = subprocess.run(
        [*_CLI, *args, str(tmp_path / "new")], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 1, proc.stderr
    failed = Path(log).read_text()[len(text) :]
    assert "simdask: error:" in failed and "simdask: error:" in proc.stderr
    assert main(["update", idx, str(tmp_path / "new"), "--quiet"]) == 0
    assert main(["compact", idx, "--force", "--data-transfer", "dask", "--quiet"]) == 0
    rows = _cli_json(capsys, "runs", idx, "--format", "jsonl")
    assert [(r["run"], r["status"], r["kind"]) for r in rows] == [
        (1, "committed", "update"),
        (2, "failed", None),
        (3, "committed", "update"),
        (4, "committed", "compaction"),
    ]
    assert rows[0]["added"] == n and rows[0]["worker_deaths"] == 0
    assert rows[0]["stage_seconds"]["chunk"] == pytest.approx(summary["seconds"]["chunk"], abs=1e-3)
    assert "No space left" in rows[1]["error"] or "ENOSPC" in rows[1]["error"].upper()
    assert rows[0]["started"].startswith(time.strftime("%Y-", time.gmtime()))


def test_backup_during_a_running_update_is_clean(tmp_path):
    write_txt(make_docs(30, seed=51), tmp_path / "docs")
    write_txt(make_docs(8, seed=52), tmp_path / "new")
    idx = tmp_path / "idx"
    assert main(["update", str(idx), str(tmp_path / "docs"), "--quiet"]) == 0
    with Index.open(idx) as i:
        before = i.catalog.n_documents()
    release = tmp_path / "release"
    env = {**os.environ, "SIMDASK_FAILPOINTS": f"before_commit:wait:{release}"}
    with (tmp_path / "run.err").open("w") as err:  # the child keeps its own copy
        run = subprocess.Popen(
            [*_CLI, "update", str(idx), str(tmp_path / "new"), "--quiet"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.time() + 600
        while not Path(f"{release}.reached").exists():  # the run wrote its files, holds
            assert run.poll() is None and time.time() < deadline, (tmp_path / "run.err").read_text()
            time.sleep(0.2)
        assert main(["backup", str(idx), str(tmp_path / "bk1")]) == 0
        release.touch()
        while run.poll() is None:  # back up again and again while the run commits and collects
            n = len(list(tmp_path.glob("bk-*")))
            assert main(["backup", str(idx), str(tmp_path / f"bk-{n}")]) == 0
        assert run.returncode == 0, (tmp_path / "run.err").read_text()
    finally:
        release.touch()
        run.wait(timeout=600)
    assert main(["backup", str(idx), str(tmp_path / "bk-last")]) == 0
    with Index.open(idx) as i:
        after = i.catalog.n_documents()
    assert after > before
    for dest in [tmp_path / "bk1", *sorted(tmp_path.glob("bk-*"))]:
        report = check_index(dest)
        assert not report.damage, (dest, report.damage)
        with Index.open(dest) as copy:
            assert copy.catalog.n_documents() in (before, after)
            assert copy.similar(copy.catalog.documents()[0].key) is not None
    with Index.open(tmp_path / "bk1") as copy:
        assert copy.catalog.n_documents() == before  # the generation committed then
    with Index.open(tmp_path / "bk-last") as copy, Index.open(idx) as live:
        assert copy.pairs() == live.pairs()
    assert main(["backup", str(idx), str(tmp_path / "bk1")]) == 1  # DEST holds files


def test_cache_line_only_when_it_applied(capsys):
    def summary(cache):
        stats = RunStats(transfer="dask", worker_cache=cache)
        return RunSummary(1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 10, stats=stats)

    print_summary(summary(CacheCounts(0, 0, 0)))
    assert "worker shard cache" not in capsys.readouterr().err
    print_summary(summary(CacheCounts(3, 1, 100)))
    assert "worker shard cache: 3 hits, 1 misses" in capsys.readouterr().err


def test_dashboard_line_says_how_to_get_bokeh(monkeypatch):
    link = "http://127.0.0.1:8787/status"
    assert listen.dashboard_line(link) == f"Dask dashboard: {link}"  # bokeh installed (test extra)
    monkeypatch.setattr(listen.importlib.util, "find_spec", lambda name: None)
    line = listen.dashboard_line(link)
    assert "simdask[dashboard]" in line and link not in line
    assert listen.dashboard_line(None) is None


def test_compact_help_is_plain_text_with_placement_options(capsys):
    with pytest.raises(SystemExit):
        main(["compact", "--help"])
    out = capsys.readouterr().out
    assert "``" not in out and ":func:" not in out
    assert "--data-transfer" in out and "--worker-cache" in out
