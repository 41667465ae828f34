"""The README's "Use" examples, run as written (issue 12): every command of that block, in
order, in a folder holding the files it names, must exit 0. Only the program name is replaced
(``simdask`` -> ``python -m simdask.cli``, the same entry point) and the cluster is one worker.
``serve`` runs until stopped; it is tested against a running server in tests/test_web.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.documents import prose

pytestmark = pytest.mark.system

README = Path(__file__).resolve().parents[1] / "README.md"
#: commands that run until stopped (a server)
LONG_RUNNING = {"serve"}


def use_commands() -> list[str]:
    """The commands of the first ```bash block after '## Use' (comments and blanks dropped)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Use") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    if block is None:
        raise AssertionError("README: no ```bash block under '## Use'")
    lines = [ln.strip() for ln in block.group(1).splitlines()]
    return [ln for ln in lines if ln and not ln.startswith("#")]


def test_use_block_names_the_documented_commands():
    cmds = use_commands()
    assert all(c.startswith("simdask ") for c in cmds), cmds
    verbs = [c.split()[1] for c in cmds]
    for verb in ("update", "similar", "query", "remove", "text", "report", "export-html", "stats",
                 "align", "export", "runs", "backup"):  # fmt: skip
        assert verb in verbs, verb


def _corpus(tmp_path: Path) -> dict[str, str]:
    """The files the README's examples name, in ``tmp_path``; returns the environment of the
    commands (one worker)."""
    essays = tmp_path / "essays"
    essays.mkdir()
    shared = prose(300, seed=11)
    (essays / "smith.txt").write_text(shared + " " + prose(150, seed=12), encoding="utf-8")
    (essays / "jones.txt").write_text(prose(120, seed=13) + " " + shared, encoding="utf-8")
    # a third copy of the start of the shared passage: `repeats --min-count 3` finds it
    (essays / "old.txt").write_text(prose(200, seed=14) + " " + shared[:800], encoding="utf-8")
    with (tmp_path / "theses.jsonl").open("w", encoding="utf-8") as f:
        for i in range(3):
            f.write(json.dumps({"id": f"thesis-{i}", "text": prose(400, seed=20 + i)}) + "\n")
    (tmp_path / "new-essay.txt").write_text(shared[:1500], encoding="utf-8")
    (tmp_path / "template.txt").write_text(shared[:600], encoding="utf-8")  # --exclude
    (tmp_path / "pairs.tsv").write_text("essays/jones.txt\tessays/smith.txt\n", encoding="utf-8")
    (tmp_path / "cluster.toml").write_text("[cluster]\nworkers = 1\n", encoding="utf-8")
    (tmp_path / "essay.txt").write_text(shared[:2000], encoding="utf-8")  # align(essay, ...)
    (tmp_path / "source.txt").write_text(prose(100, seed=15) + shared, encoding="utf-8")
    return {**os.environ, "SIMDASK_CONFIG": str(tmp_path / "cluster.toml")}


def _run(cmd: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """One README command (``simdask`` -> this Python's ``-m simdask.cli``), exit 0 asserted."""
    line = re.sub(r"(^|\s)simdask ", rf"\1{sys.executable} -m simdask.cli ", cmd)
    proc = subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"{cmd}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.mark.timeout(1800)  # some 40 commands, each a new process (and a few a cluster)
def test_readme_use_examples_run_as_written(tmp_path):
    env = _corpus(tmp_path)
    for cmd in use_commands():
        if cmd.split()[1] in LONG_RUNNING:
            continue
        _run(cmd, tmp_path, env)
    # what the block promises, checked on its results
    rows = (tmp_path / "pairs.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("doc,other,similarity")
    assert (tmp_path / "smith-jones.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (tmp_path / "site" / "index.html").exists()
    from simdask import Index

    with Index.open(tmp_path / "my-index") as idx:  # the exclusions are stored
        assert [t.name for t in idx.templates()] == ["template.txt"]
        assert idx.config.exclude_quotes and idx.config.exclude_bibliography
    [aligned] = [json.loads(x) for x in (tmp_path / "passages.jsonl").read_text().splitlines()]
    assert (aligned["a"], aligned["b"]) == ("essays/jones.txt", "essays/smith.txt")
    assert aligned["passages"]  # the shared 300 words
    repeats = [json.loads(x) for x in (tmp_path / "repeats.jsonl").read_text().splitlines()]
    assert repeats and all(r["count"] >= 3 for r in repeats)
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "pairs.parquet").num_rows > 0  # simdask export
    assert json.loads((tmp_path / "run.json").read_text())["run_id"] > 1  # --summary-json
    assert (tmp_path / "my-index-backup" / "catalog.sqlite").is_file()  # simdask backup


def blocks(language: str) -> list[str]:
    """Every ```<language> block of the README, in order."""
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_readme_python_examples_run_as_written(tmp_path):
    """Every Python block of the README, as written, in order, in a folder holding the files
    they name and an index made by the `update` of the Use block (issue 32, item 7)."""
    env = _corpus(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(README.parent), *filter(None, [env.get("PYTHONPATH")])]
    )
    code = blocks("python")
    assert len(code) >= 4 and any('idx.similar("smith.txt")' in c for c in code)
    _run("simdask update my-index essays/ theses.jsonl", tmp_path, env)
    for i, block in enumerate(code):
        proc = subprocess.run(  # as typed into `python` (a script: see the README's note)
            [sys.executable, "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"block {i}:\n{block}\n{proc.stdout}\n{proc.stderr}"
        if 'idx.similar("smith.txt")' in block:  # the end of a key, resolved
            assert "essays/jones.txt" in proc.stdout, proc.stdout


def _cluster_commands() -> list[str]:
    """The commands of the README's block that names `--scheduler tcp://127.0.0.1:8786`."""
    [block] = [b for b in blocks("bash") if "tcp://127.0.0.1:8786" in b]
    return [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]


def test_readme_scheduler_commands_run_as_written(tmp_path):
    """The `--scheduler` / `DASK_SCHEDULER_ADDRESS` block, against a `dask scheduler` on the
    port it names and one `dask worker`; the runs' tasks went to that scheduler."""
    from distributed import Client

    from tests.helpers.cluster import start_scheduler, start_worker, stop, wait_for_workers

    env = _corpus(tmp_path)
    sched, address = start_scheduler(tmp_path, port=8786)
    procs = [sched]
    try:
        procs.append(start_worker(address))
        wait_for_workers(address, 1)
        for cmd in _cluster_commands():
            proc = _run(cmd, tmp_path, env)
            assert "using the Dask scheduler at tcp://127.0.0.1:8786" in proc.stderr
        with Client(address, set_as_default=False) as c:
            assert c.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter)
    finally:
        stop(procs)
