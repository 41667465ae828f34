"""Sources and keys through the command line, as real processes (issue 12): a folder that
really cannot be read (permissions enforced, also for root: the command runs without the
capabilities that bypass them), the README's key examples as written, file names that are
not UTF-8 through `query -o jsonl`, and a decompression bomb next to a good file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import run
from tests.helpers.components import need
from tests.helpers.documents import bomb_package, prose

pytestmark = pytest.mark.system

CLUSTER = ("--workers", "1", "--threads-per-worker", "1", "--quiet")


def _env() -> dict[str, str]:
    return {**os.environ, "SIMDASK_CONFIG": ""}


def _as_unprivileged() -> list[str]:
    """A command prefix under which file permissions hold: nothing for an ordinary user; for
    root, setpriv dropping the capabilities that bypass them."""
    if os.geteuid() != 0:
        return []
    need(
        shutil.which("setpriv") is not None,
        "setpriv, as the tests run as root (file permissions are enforced only without the "
        "capabilities that bypass them)",
        "Debian's util-linux",
    )
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def test_an_unreadable_folder_is_reported_and_its_documents_kept(tmp_path):
    essays = _write(
        tmp_path / "essays",
        {"a.txt": prose(120, 1), "sub/b.txt": prose(120, 2), "sub/c.txt": prose(120, 3)},
    )
    run("update", tmp_path / "idx", essays, *CLUSTER, env=_env(), cwd=tmp_path)
    (essays / "a.txt").unlink()
    os.chmod(essays / "sub", 0)
    try:
        proc = subprocess.run(
            [
                *_as_unprivileged(),
                *(sys.executable, "-m", "simdask.cli", "update", tmp_path / "idx", essays),
                *("--delete-missing", *CLUSTER),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=_env(),
            cwd=tmp_path,
        )
    finally:
        os.chmod(essays / "sub", 0o755)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    errors = run("errors", tmp_path / "idx", "--format", "jsonl", env=_env()).stdout
    [row] = [json.loads(line) for line in errors.splitlines()]
    assert (row["key"], row["kind"]) == ("essays/sub/", "unreadable")
    assert "Permission denied" in row["message"] and str(essays / "sub") in row["message"]
    text = run("text", tmp_path / "idx", "essays/sub/b.txt", env=_env()).stdout
    assert text.split() == prose(120, 2).split()
    keys = run("similar", tmp_path / "idx", "--format", "jsonl", "--min", "0", env=_env())
    assert "essays/a.txt" not in keys.stdout
    # readable again: c.txt gone, b.txt kept
    (essays / "sub" / "c.txt").unlink()
    run("update", tmp_path / "idx", essays, "--delete-missing", *CLUSTER, env=_env())
    run("text", tmp_path / "idx", "essays/sub/b.txt", env=_env())
    gone = run("text", tmp_path / "idx", "essays/sub/c.txt", env=_env(), check=False)
    assert gone.returncode == 1 and "essays/sub/c.txt" in gone.stderr


def test_readme_key_examples_run_as_written(tmp_path):
    essay = prose(300, seed=5)
    _write(
        tmp_path / "essays",
        {"smith.txt": essay, "jones.txt": essay, "old.txt": prose(200, seed=6)},
    )
    _write(tmp_path / "y2025", {"smith.txt": prose(250, seed=7)})
    _write(tmp_path / "y2026", {"smith.txt": prose(250, seed=7)})
    env = _env()

    def sh(*args, check=True):
        return run(*args, env=env, cwd=tmp_path, check=check)

    sh("update", "my-index", "essays/", *CLUSTER)
    similar = sh("similar", "my-index", "essays/smith.txt", "--format", "jsonl").stdout
    rows = [json.loads(line) for line in similar.splitlines()]
    assert [(r["doc"], r["other"], r["similarity"]) for r in rows] == [
        ("essays/smith.txt", "essays/jones.txt", 100.0)
    ]
    assert sh("text", "my-index", "essays/smith.txt").stdout.split() == essay.split()
    sh("report", "my-index", "essays/smith.txt", "essays/jones.txt")
    sh("remove", "my-index", "essays/old.txt", *CLUSTER)
    assert sh("text", "my-index", "essays/old.txt", check=False).returncode == 1
    # two years, one file name each: two documents, the copy found
    sh("update", "my-index", "y2025/", *CLUSTER)
    out = sh("update", "my-index", "y2026/", *CLUSTER)
    assert "modified" not in (out.stdout + out.stderr).replace("0 modified", "")
    similar = sh("similar", "my-index", "y2026/smith.txt", "--format", "jsonl").stdout
    assert json.loads(similar.splitlines()[0])["other"] == "y2025/smith.txt"


def test_query_jsonl_with_file_names_that_are_not_utf8(tmp_path):
    essays = _write(tmp_path / "essays", {"good.txt": prose(150, 8)})
    run("update", tmp_path / "idx", essays, *CLUSTER, env=_env())
    queries = tmp_path / "queries"
    queries.mkdir()
    with open(os.fsencode(queries) + b"/\xff\xfe.txt", "wb") as f:
        f.write(prose(150, 8).encode())
    for fmt in ("table", "csv"):
        out = run("query", tmp_path / "idx", queries, "--format", fmt, env=_env()).stdout
        assert "queries/\\xff\\xfe.txt" in out and "essays/good.txt" in out
    [row] = [
        json.loads(x)
        for x in run(
            "query", tmp_path / "idx", queries, "--format", "jsonl", env=_env()
        ).stdout.splitlines()
    ]
    assert (row["query"], row["key"], row["similarity"]) == (
        "queries/\\xff\\xfe.txt",
        "essays/good.txt",
        100.0,
    )


def test_a_bomb_next_to_a_good_file_under_a_worker_memory_limit(tmp_path):
    """The issue's case: a 1 MB DOCX inflating to 400 MB of XML next to a good file, one
    worker limited to 600 MiB: the bomb is reported, the good file indexed, every run."""
    src = _write(tmp_path / "src", {"good.txt": prose(200, 9)})
    (src / "bomb.docx").write_bytes(bomb_package("docx", 400_000_000))
    args = ("update", tmp_path / "idx", src, "--workers", "1", "--memory-limit", "600MiB")
    for _ in range(2):
        proc = run(*args, "--quiet", "--max-file-size", "20MB", env=_env(), timeout=600)
        errors = run("errors", tmp_path / "idx", "--format", "jsonl", env=_env()).stdout
        [row] = [json.loads(line) for line in errors.splitlines()]
        assert (row["key"], row["kind"]) == ("src/bomb.docx", "bomb"), proc.stderr
        assert "decompression bomb" in row["message"]
        run("text", tmp_path / "idx", "src/good.txt", env=_env())
