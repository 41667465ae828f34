"""The rest of the command line as real subprocesses: index settings end to end (16-bit IDs,
--top-k, --threshold, --max-df, --rebuild), --delete-missing with relative paths, emptied
folders and several sources, export-html, remove, demo, and every documented exit status
(0, 1, 2, 3, 4, 130)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from simdask import Index, IndexConfig
from simdask.kernels.hashing import chunk_batch
from tests.helpers.cli import run
from tests.helpers.compare import assert_contract_rows, expected_table, postings_by_key
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.waiting import held_at, reached, wait_until

pytestmark = pytest.mark.system

ONE_WORKER = ("--workers", 1, "--quiet", "--dashboard-address", ":0")


def _docs() -> dict[str, str]:
    """Generated documents, one holding passages of four others, and three sharing a 30-word
    template (chunks held by 3 documents)."""
    docs = make_docs(12, seed=5)
    # a document made of passages of four others: more matches than top-k keeps
    docs["hub"] = " ".join(" ".join(docs[k].split()[:40]) for k in sorted(docs)[:4])
    template = " ".join(f"tpl{i}" for i in range(30))
    for j in range(3):
        docs[f"form{j}"] = template + " " + " ".join(f"own{j}x{i}" for i in range(40))
    return docs


def _skipped_by_brute_force(idx: Index, max_df: int) -> int:
    return sum(
        int(n > max_df)
        for s in range(idx.config.shards)
        for n in (idx.shard(s).offsets[1:] - idx.shard(s).offsets[:-1]).tolist()
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """An index of :func:`_docs` with 16-bit chunk IDs, top-k 2, threshold 2 %, max_df 2."""
    tmp = tmp_path_factory.mktemp("surface")
    docs = _docs()
    src = write_txt(docs, tmp / "docs")
    p = run(
        "update", tmp / "idx", src, "--hash-bits", 16, "--shards", 2, "--top-k", 2,
        "--threshold", 2, "--max-df", 2, *ONE_WORKER,
    )  # fmt: skip
    return tmp, docs, p


def test_settings_reach_the_index_16_bit_ids_end_to_end(built):
    tmp, docs, p = built
    with Index.open(tmp / "idx") as idx:
        assert idx.config == IndexConfig(hash_bits=16, shards=2, top_k=2, threshold=2, max_df=2)
        # postings are exactly the 16-bit chunk IDs of each document
        want: dict[int, set] = {s: set() for s in range(2)}
        width = idx.config.shard_width
        for key, text in docs.items():
            for c in chunk_batch([text], 5, 16, 0).chunk_ids.tolist():
                want[c // width].add((c, f"docs/{key}.txt"))
        assert postings_by_key(idx) == want
        # rows: exactly the contract (max_df, threshold, top-k with its tie-break)
        assert_contract_rows(idx)
        rows = idx.pairs()
        assert min(r.similarity for r in rows) >= 2.0
        per_doc = [sum(1 for r in rows if r.doc == d) for d in {r.doc for r in rows}]
        assert max(per_doc) == 2
        uncut = expected_table(idx, top_k=10**6)
        assert max(len(v) for v in uncut.values()) > 2  # the cut at 2 did remove rows
        # the template's chunks are held by 3 > max_df documents: not counted, and reported
        assert not {r.doc for r in rows if r.other.startswith("docs/form")} & {
            "docs/form0.txt",
            "docs/form1.txt",
            "docs/form2.txt",
        }
        skipped = _skipped_by_brute_force(idx, 2)
    assert skipped >= 26  # the template's 26 chunks at least
    assert f"{skipped} chunks skipped by max_df" in p.stderr


def test_changing_settings_needs_rebuild(built, tmp_path):
    tmp, docs, _ = built
    work = tmp_path / "idx"
    subprocess.run(["cp", "-r", str(tmp / "idx"), str(work)], check=True)
    p = run("update", work, tmp / "docs", "--top-k", 3, *ONE_WORKER, check=False)
    assert p.returncode == 1 and "--rebuild" in p.stderr
    run(
        "update", work, tmp / "docs", "--top-k", 3, "--max-df", 3, "--slack", 1, "--rebuild",
        *ONE_WORKER,
    )  # fmt: skip
    with Index.open(work) as idx:
        cfg = idx.config
        assert (cfg.top_k, cfg.max_df, cfg.hash_bits, cfg.slack) == (3, 3, 16, 1)
        assert cfg.stored_depth == 4
        assert_contract_rows(idx)
        # with max_df 3 the template counts again: the forms are similar to each other
        forms = {(r.doc, r.other) for r in idx.pairs() if r.doc.startswith("docs/form")}
        assert ("docs/form0.txt", "docs/form1.txt") in forms
        assert ("docs/form2.txt", "docs/form0.txt") in forms
        assert idx.stats()["documents"] == len(docs)


def test_export_html_remove_and_text(built, tmp_path):
    tmp, _, _ = built
    work = tmp_path / "idx"
    subprocess.run(["cp", "-r", str(tmp / "idx"), str(work)], check=True)
    with Index.open(work) as idx:
        n_docs = idx.stats()["documents"]
        pairs = {tuple(sorted((r.doc, r.other))) for r in idx.pairs()}
    out = tmp_path / "site"
    p = run("export-html", work, out, "--quiet")
    assert f"{n_docs} documents, {len(pairs)} pair reports" in p.stderr
    assert (out / "index.html").is_file()
    assert len(list((out / "docs").glob("*.html"))) == n_docs
    assert len(list((out / "pairs").glob("*.html"))) == len(pairs)
    p = run("export-html", work, tmp_path / "site2", "--max-pairs", 1, "--quiet")
    assert f"1 pair report ({len(pairs) - 1} more stored pairs without one" in p.stderr
    # remove: the document and its rows go, the others stay
    p = run("remove", work, "docs/form1.txt", *ONE_WORKER)
    assert "0 added, 0 modified, 1 deleted" in p.stderr
    with Index.open(work) as idx:
        assert idx.stats()["documents"] == n_docs - 1
        assert all("docs/form1.txt" not in (r.doc, r.other) for r in idx.pairs())
        assert_contract_rows(idx)
    p = run("remove", work, "docs/form1.txt", *ONE_WORKER, check=False)
    assert p.returncode == 1 and "no document with key 'docs/form1.txt'" in p.stderr
    assert run("text", work, "docs/form0.txt").stdout.startswith("tpl0 tpl1 tpl2")


def test_demo(tmp_path):
    p = run("demo", "--docs", 60, "--words", 150, "--top", 5, "--out", tmp_path, *ONE_WORKER)
    with Index.open(tmp_path / "index") as idx:
        assert idx.stats()["documents"] == 60
        best = idx.pair_list()[:5]  # one row per unordered pair (issue 18)
    assert f"the {len(best)} most similar pairs:" in p.stdout and best
    planted = re.search(r"the generator planted (\d+) reuse cases", p.stdout)
    assert planted and int(planted.group(1)) >= 1
    lines = p.stdout.split("most similar pairs:")[1].strip().splitlines()
    assert lines[0].split() == ["a_key", "b_key", "a_in_b", "b_in_a", "shared", "in_words"]
    shown = [ln.split()[:2] for ln in lines[2 : 2 + len(best)]]
    assert shown == [[r.a_key, r.b_key] for r in best]
    assert all(f"{r.b_key} holds " in ln for r, ln in zip(best, lines[2:], strict=False))
    assert lines[2 + len(best)] == ""  # nothing more in the table


def test_delete_missing_relative_paths_emptied_folder_several_sources(tmp_path):
    docs = make_docs(10, seed=2)
    keys = sorted(docs)
    write_txt({k: docs[k] for k in keys[:4]}, tmp_path / "a")
    write_txt({k: docs[k] for k in keys[4:8]}, tmp_path / "b")
    write_txt({k: docs[k] for k in keys[8:]}, tmp_path / "c")

    def update(*sources, check=True):
        return run(
            "update", "idx", *sources, "--delete-missing", *ONE_WORKER, cwd=tmp_path, check=check
        )

    def indexed():
        with Index.open(tmp_path / "idx") as idx:
            return sorted((d.key, os.path.basename(d.source)) for d in idx.catalog.documents())

    update("a", "b", "c")
    assert len(indexed()) == len(docs) == 13
    for f in (tmp_path / "a").iterdir():  # folder a emptied, one file of b gone
        f.unlink()
    (tmp_path / "b" / f"{keys[4]}.txt").unlink()
    p = update("a", "./b")  # relative paths (spelt differently); c not given: kept
    assert "0 added, 0 modified, 5 deleted, 3 unchanged" in p.stderr
    assert indexed() == sorted(
        [(f"b/{k}.txt", "b") for k in keys[5:8]] + [(f"c/{k}.txt", "c") for k in keys[8:]]
    )
    # the same folder by its absolute path: nothing more to delete
    p = update(tmp_path / "b")
    assert "0 added, 0 modified, 0 deleted, 3 unchanged" in p.stderr
    assert len(indexed()) == 3 + 5


# --------------------------------------------------------------------------------------------
# exit statuses: every documented one


def test_bad_settings_exit_2_and_create_nothing(tmp_path):
    (tmp_path / "d.txt").write_text("one two three four five six seven")
    for opt, value, message in [
        ("--hash-bits", 65, "hash_bits must be in 16..64, got 65"),
        ("--threshold", 0, "threshold must be a percentage in (0, 100], got 0.0"),
        ("--top-k", 0, "top_k must be at least 1, got 0"),
        ("--max-df", 1, "max_df must be None or an integer >= 2, got 1"),
        ("--shards", 0, "shards must be in 1..4096"),
    ]:
        p = run("update", tmp_path / "i", tmp_path / "d.txt", opt, value, check=False)
        assert p.returncode == 2 and message in p.stderr, (opt, p.stderr)
        assert "Traceback" not in p.stderr
    p = run("compare", tmp_path, tmp_path, "--hash-bits", 8, check=False)
    assert p.returncode == 2 and "hash_bits must be in 16..64, got 8" in p.stderr
    assert run("update", check=False).returncode == 2  # argparse: missing arguments
    assert not (tmp_path / "i").exists()


def test_exit_0_1_3(built, tmp_path):
    tmp, docs, _ = built
    assert run("stats", tmp / "idx").returncode == 0
    p = run("similar", tmp_path / "none", check=False)
    assert p.returncode == 1 and "no simdask index" in p.stderr
    q = tmp_path / "q.txt"
    q.write_text(docs["d003"], encoding="utf-8")
    p = run("query", tmp / "idx", q, tmp_path / "missing.txt", check=False)
    assert p.returncode == 3 and "cannot read missing.txt" in p.stderr


def test_compare_exit_4_when_the_cluster_fails(tmp_path):
    write_txt({"a": "one two three four five six seven"}, tmp_path / "A")
    write_txt({"b": "one two three four five six eight"}, tmp_path / "B")
    p = run(
        "compare", tmp_path / "A", tmp_path / "B", "--scheduler", "tcp://127.0.0.1:1",
        "--connect-timeout", 2, "--quiet", check=False,
    )  # fmt: skip
    assert p.returncode == 4, p.stderr
    assert "cannot connect to the Dask scheduler at tcp://127.0.0.1:1" in p.stderr
    assert "Traceback" not in p.stderr


def test_sigint_exits_130_and_changes_nothing(built, tmp_path):
    tmp, _, _ = built
    work = tmp_path / "idx"
    subprocess.run(["cp", "-r", str(tmp / "idx"), str(work)], check=True)
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "new.txt").write_text("a new text " * 20)
    with Index.open(work) as idx:
        before = (idx.catalog.generation, idx.stats()["documents"])
    gate = tmp_path / "never"
    env = {**os.environ, "SIMDASK_FAILPOINTS": held_at("after_chunk", gate)}
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simdask.cli",
            "update",
            work,
            tmp_path / "more",
            *map(str, ONE_WORKER),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(reached(gate).exists, "the run reaches the end of its chunk stage", proc=p)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130 and "simdask: interrupted" in err, err
    assert "Traceback" not in err
    with Index.open(work) as idx:
        assert (idx.catalog.generation, idx.stats()["documents"]) == before
        assert json.loads(json.dumps(idx.catalog.last_run()))["generation"] == before[0]
