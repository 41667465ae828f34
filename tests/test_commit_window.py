"""The commit window, interrupted at every write in turn (as SQLite tests crash safety).

For each failure point of :data:`simdask.writer.COMMIT_FAILPOINTS` — before the commit, before
each statement of the catalog transaction, around COMMIT, and before each removal of the
post-commit cleanup — a real ``simdask update`` process receives SIGINT, is SIGKILLed, or
raises there. The index must then be exactly the old state (before COMMIT) or exactly the new
one (from COMMIT on), readable by ``stats``, ``query``, ``text`` and ``report``; and the next
plain update must work and give the same index as a clean full build. The index keeps MinHash
LSH data too (its manifest is a step of the commit, its old generations a kind of garbage).

The list of points is read from the code (a new statement of the commit is a new step, hence a
new point), and one traced run checks that a run reaches every listed point, in that order.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simdask import Index, IndexConfig, RunOptions
from simdask.storage.lsh_store import LshManifest, LshStore, lsh_root
from simdask.writer import COMMIT_FAILPOINTS
from tests.helpers.compare import assert_same_index, postings_by_key
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system

DOCS = make_docs(30, seed=8)
KEYS = sorted(DOCS)
CFG = IndexConfig(hash_bits=24, shards=4, top_k=3, lsh="20x5")
NO_CACHE = RunOptions(worker_cache=False, batch_docs=8)  # as the CLI runs below
ACTIONS = ("sigint", "kill", "raise")
POINTS = COMMIT_FAILPOINTS


def cli_update(
    index: Path, src: Path, scheduler: str, env_extra: dict
) -> subprocess.CompletedProcess:
    """``simdask update INDEX SRC --delete-missing`` as a process of its own (a
    ``CompletedProcess``), on the test's cluster (its workers are not the process
    interrupted)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIMDASK_")}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "simdask.cli", "update", str(index), str(src), "--delete-missing",
         "--scheduler", scheduler, "--no-worker-cache", "--batch-docs", "8", "--quiet"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def catalog_state(idx: Index) -> dict:
    """Everything a committed state consists of, with doc IDs (timestamps and the runs table
    aside), and the postings of every current shard (read from the shard files)."""
    c = idx.catalog
    docs = [d.__dict__ for d in c.documents()]
    return {
        "documents": docs,
        "similarity": [r.to_dict() for r in idx.pairs()],
        "generation": c.generation,
        "shards": c.shard_generations(),
        "skipped": c.meta("skipped_chunks"),
        "config": c.meta("config"),
        "lsh": c.meta("lsh"),
        "postings": postings_by_key(idx),
    }


def reader_answers(idx: Index) -> dict:
    """What the read commands give: stats (bytes aside), a query, a text, a report and the
    LSH pairs."""
    stats = idx.stats()
    stats.pop("bytes_on_disk")
    stats.pop("path")
    return {
        "stats": stats,
        "query": [m.to_dict() for m in idx.query(DOCS[KEYS[5]] + " " + DOCS[KEYS[9]])],
        "text": idx.text(f"src/{KEYS[4]}.txt"),  # keys are <folder>/<path>
        "report": idx.report(f"src/{KEYS[5]}.txt", f"src/{KEYS[6]}.txt"),
        "lsh_pairs": [p.to_dict() for p in idx.lsh_pairs()],
    }


@pytest.fixture(scope="module")
def setup(tmp_path_factory, client):
    """A base index of two runs (so that the next run has an old generation and a text pack to
    collect), the source folder changed for the next run (v2), the index an uninterrupted run
    of v2 gives (traced), and a clean full build of v2."""
    tmp = tmp_path_factory.mktemp("window")
    src = write_txt(DOCS, tmp / "src")  # one folder, changed between runs: one source
    base = tmp / "base"
    with Index.create(base, CFG) as idx:
        idx.update([src], client=client, options=NO_CACHE, delete_missing=True)
        (src / "extra.txt").write_text(DOCS[KEYS[8]] + " " + DOCS[KEYS[12]])  # its own pack
        # ranges rewritten whole (not delta segments): generation 1's segments become garbage
        rewrite = dataclasses.replace(NO_CACHE, fuse_members=0)
        idx.update([src], client=client, options=rewrite, delete_missing=True)
        assert idx.store.generations() == [1, 2]
    (src / "extra.txt").unlink()  # its pack becomes garbage
    (src / f"{KEYS[0]}.txt").unlink()
    (src / f"{KEYS[1]}.txt").write_text(DOCS[KEYS[7]][:900] + " and some new words at the end")
    (src / "added.txt").write_text(DOCS[KEYS[4]] + " " + DOCS[KEYS[9]])
    (src / f"{KEYS[2]}.txt").unlink()
    (src / "later.txt").write_text(DOCS[KEYS[2]])  # same text under a new key: a recycled ID
    v2 = src
    new = tmp / "new"
    shutil.copytree(base, new)
    trace = tmp / "trace.txt"
    p = cli_update(new, v2, client.scheduler.address, {"SIMDASK_FAILPOINTS_TRACE": str(trace)})
    assert p.returncode == 0, p.stderr
    full = tmp / "full"
    with Index.create(full, CFG) as idx:
        idx.update([v2], client=client, options=NO_CACHE)
    with Index.open(base) as b, Index.open(new) as n:
        old_state, new_state = catalog_state(b), catalog_state(n)
        old_answers, new_answers = reader_answers(b), reader_answers(n)
    assert old_state["generation"] == 2 and new_state["generation"] == 3
    assert old_state["similarity"] != new_state["similarity"]
    return {
        "tmp": tmp, "base": base, "v2": v2, "new": new, "full": full, "trace": trace,
        "old": (old_state, old_answers), "committed": (new_state, new_answers),
    }  # fmt: skip


def test_a_run_reaches_every_commit_failpoint_in_order(setup):
    """The list the crash test enumerates is complete and ordered: an uninterrupted run hits
    each point (gc points once per file removed), in the listed order, and nothing else in
    between (a point missing from the list would show here)."""
    names = [n for n, _ in COMMIT_FAILPOINTS]
    lines = setup["trace"].read_text().split()
    window = lines[lines.index("before_commit") :]
    seen = [n for i, n in enumerate(window) if i == 0 or window[i - 1] != n]
    assert seen == names, f"the run reached {seen}; the list is {names}"
    # generation 1's segment of each range (generation 2's were current before: kept)
    assert window.count("gc.generation") == CFG.shards
    assert window.count("gc.pack") == 1  # extra.txt's pack
    assert window.count("gc.lsh") == 1  # LSH generation 1 (2 was read before: kept)


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize(
    "point, committed", COMMIT_FAILPOINTS, ids=[p for p, _ in COMMIT_FAILPOINTS]
)
def test_interrupted_at_every_write_of_the_commit(
    setup, client, tmp_path, point, committed, action
):
    work = tmp_path / "index"
    shutil.copytree(setup["base"], work)
    trace = tmp_path / "trace.txt"
    env = {"SIMDASK_FAILPOINTS": f"{point}:{action}", "SIMDASK_FAILPOINTS_TRACE": str(trace)}
    p = cli_update(work, setup["v2"], client.scheduler.address, env)
    reached = trace.read_text().split()
    assert point in reached, f"{point} was never reached:\n{p.stderr}"
    _check_exact_state(work, *setup["committed" if committed else "old"])
    if action == "kill":
        assert p.returncode == -9 and reached[-1] == point, p.stderr
    elif action == "sigint":
        assert p.returncode == 130 and reached[-1] == point, p.stderr
        assert "simdask: interrupted" in p.stderr
        after = "interrupted after the commit: generation 3 is committed" in p.stderr
        assert after == committed, p.stderr
    else:  # raise: an error before COMMIT fails the run; after it, it is reported, run stands
        assert p.returncode == (0 if committed else 1), p.stderr
        assert f"failpoint {point!r} raised" in p.stderr
        assert ("generation 3 is committed" in p.stderr) == committed, p.stderr
    _check_next_run(setup, client, work)


def _check_exact_state(work: Path, state: dict, answers: dict) -> None:
    with Index.open(work) as idx:
        assert catalog_state(idx) == state
        assert reader_answers(idx) == answers
        last = idx.catalog.last_run()
        assert last["generation"] == state["generation"]
        status = idx.catalog.run_status(3)
        assert (status == "committed") == (state["generation"] == 3), status


def _segment_generations(idx: Index) -> set[int]:
    """The generations of the committed segments (base and deltas of every range)."""
    return {g for segs in idx.catalog.segments().values() for g, _, _ in segs}


def _check_next_run(setup: dict, client, work: Path) -> None:
    with Index.open(work) as idx:
        before = _segment_generations(idx)
        idx.update([setup["v2"]], client=client, options=NO_CACHE, delete_missing=True)
        live = _segment_generations(idx)
        assert set(idx.store.generations()) <= live | before  # the one before: kept for readers
        assert set(idx.texts.packs()) == idx.catalog.text_packs()
        assert not (work / "work").exists()
        state = catalog_state(idx)
        with Index.open(setup["new"]) as new:
            expected = catalog_state(new)
            got, want = reader_answers(idx), reader_answers(new)
            assert got["query"] == want["query"] and got["lsh_pairs"] == want["lsh_pairs"]
        man = LshManifest.from_json(state["lsh"])  # no LSH garbage left
        assert set(LshStore(lsh_root(work)).generations()) <= man.generations() | set(man.prev)
        for name in ("documents", "similarity", "postings", "skipped", "config"):
            if name == "documents":  # the recovering run may be run 4: other pack names
                strip = [{k: v for k, v in d.items() if k != "text_pack"} for d in state[name]]
                want = [{k: v for k, v in d.items() if k != "text_pack"} for d in expected[name]]
                assert strip == want
            else:
                assert state[name] == expected[name], name
        with Index.open(setup["full"]) as full:
            assert_same_index(idx, full)
