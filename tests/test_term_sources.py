"""A term's sources (issue 31, items 2 and 3), through the real CLI: two years with the same
sub-folder names collide unless a ``--key-prefix`` keeps them apart (refused with status 1
and a suggestion, nothing indexed); the same files through a parent and a child folder are
refused ("already indexed as ..."); an identical copy under another key is said in the run
summary."""

from __future__ import annotations

import json

import pytest

from simdask.errors import ConfigError, KeyCollisionError, SourceOverlapError
from simdask.kernels.keys import key_prefix
from simdask.write.collisions import suggested_prefix
from tests.helpers.cli import run
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

OPTS = ("--workers", 1, "--quiet", "--shards", 2)


def keys(index) -> set[str]:
    out = run("list", index, "--format", "jsonl").stdout.splitlines()
    return {json.loads(r)["key"] for r in out}


def pairs(index) -> dict[tuple[str, str], float]:
    out = run("similar", index, "--format", "jsonl").stdout.splitlines()
    return {(r["doc"], r["other"]): r["similarity"] for r in map(json.loads, out)}


def write(folder, files: dict[str, str]):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_the_same_subfolder_in_two_years_is_refused_then_kept_apart(tmp_path):
    smith25 = prose(300, seed=1)
    y25 = write(
        tmp_path / "alt/2025/submissions", {"smith.txt": smith25, "jones.txt": prose(200, 2)}
    )
    y26 = write(
        tmp_path / "alt/2026/submissions",
        {"smith.txt": smith25 + " " + prose(60, 3), "brown.txt": prose(200, 4)},
    )
    idx = tmp_path / "idx"
    run("update", idx, y25, *OPTS)
    before = keys(idx)
    assert before == {"submissions/smith.txt", "submissions/jones.txt"}

    bad = run("update", idx, y26, *OPTS, check=False)
    assert bad.returncode == 1, bad.stderr
    assert "'submissions/smith.txt'" in bad.stderr
    assert f"already indexed from {y25.resolve()}" in bad.stderr
    assert "--key-prefix 2026/" in bad.stderr and "'2026/submissions/smith.txt'" in bad.stderr
    assert keys(idx) == before  # nothing indexed, not even brown.txt

    run("update", idx, y26, "--key-prefix", "2026", *OPTS)
    assert keys(idx) == before | {"2026/submissions/smith.txt", "2026/submissions/brown.txt"}
    got = pairs(idx)
    assert got[("submissions/smith.txt", "2026/submissions/smith.txt")] == pytest.approx(100.0)
    # stable across runs: the same prefix again changes nothing
    again = run("update", idx, y26, "--key-prefix", "2026/", *OPTS)
    assert "0 added, 0 modified" in again.stderr
    # forgetting the prefix next time is refused again, not a silent skip
    assert run("update", idx, y26, *OPTS, check=False).returncode == 1


def test_two_folders_of_one_name_in_one_run_are_refused(tmp_path):
    a = write(tmp_path / "2025/submissions", {"smith.txt": prose(200, 5)})
    b = write(tmp_path / "2026/submissions", {"smith.txt": prose(200, 6)})
    idx = tmp_path / "idx"
    bad = run("update", idx, a, b, *OPTS, check=False)
    assert bad.returncode == 1
    assert f"also given by {a.resolve()}" in bad.stderr and "--key-prefix 2026/" in bad.stderr


def test_a_child_of_an_indexed_folder_is_refused_with_the_key_it_has(tmp_path):
    archive = tmp_path / "archive"
    write(archive / "2025", {"adams.txt": prose(200, 7)})
    child = write(archive / "2026", {"bell.txt": prose(200, 8), "cole.txt": prose(200, 9)})
    idx = tmp_path / "idx"
    run("update", idx, archive, *OPTS)
    before = keys(idx)
    bad = run("update", idx, child, *OPTS, check=False)
    assert bad.returncode == 1, bad.stderr
    assert "already indexed as 'archive/2026/bell.txt'" in bad.stderr
    assert f"simdask update INDEX {archive.resolve()}" in bad.stderr
    assert keys(idx) == before
    assert not any(v == pytest.approx(100.0) for v in pairs(idx).values())


def test_a_parent_of_an_indexed_folder_is_refused(tmp_path):
    archive = tmp_path / "archive"
    child = write(archive / "2026", {"bell.txt": prose(200, 10)})
    write(archive / "2025", {"adams.txt": prose(200, 11)})
    idx = tmp_path / "idx"
    run("update", idx, child, *OPTS)
    bad = run("update", idx, archive, *OPTS, check=False)
    assert bad.returncode == 1
    assert f"holds {child.resolve()}" in bad.stderr and "'2026/bell.txt'" in bad.stderr
    assert keys(idx) == {"2026/bell.txt"}
    # a parent and its child in one run: the same files twice
    other = tmp_path / "idx2"
    both = run("update", other, archive, child, *OPTS, check=False)
    assert both.returncode == 1 and "lies inside" in both.stderr


def test_a_jsonl_file_inside_a_folder_is_no_overlap(tmp_path):
    folder = write(tmp_path / "data", {"a.txt": prose(200, 12)})
    (folder / "more.jsonl").write_text(json.dumps({"id": "x", "text": prose(200, 13)}) + "\n")
    idx = tmp_path / "idx"
    run("update", idx, folder / "more.jsonl", *OPTS)
    run("update", idx, folder, *OPTS)  # folders list no .jsonl: nothing indexed twice
    assert keys(idx) == {"x", "data/a.txt"}


def test_an_identical_copy_under_another_key_is_said(tmp_path):
    text = prose(250, seed=14)
    a = write(tmp_path / "term1", {"bell.txt": text})
    b = write(tmp_path / "backup", {"bell-copy.txt": text, "other.txt": prose(200, 15)})
    idx = tmp_path / "idx"
    run("update", idx, a, *OPTS)
    out = run("update", idx, b, *OPTS)
    assert "identical copies of indexed documents" in out.stderr
    assert "backup/bell-copy.txt = term1/bell.txt" in out.stderr
    assert "other.txt =" not in out.stderr


@pytest.mark.unit
@pytest.mark.parametrize(
    ("given", "want"), [("2026", "2026/"), ("2026/", "2026/"), ("t/2026", "t/2026/"), ("", "")]
)
def test_key_prefix_is_normalised(given, want):
    assert key_prefix(given) == want


@pytest.mark.unit
@pytest.mark.parametrize("bad", ["/2026", "a//b", "../x", "a/./b", "//"])
def test_key_prefix_rejects_paths_that_are_not_folder_names(bad):
    with pytest.raises(ConfigError, match="expected a key prefix"):
        key_prefix(bad)


@pytest.mark.unit
def test_the_suggested_prefix_is_the_folder_above_the_source():
    assert suggested_prefix("/home/ann/alt/2026/submissions") == "2026/"
    assert suggested_prefix("/submissions") == ""
    assert issubclass(KeyCollisionError, ValueError) and issubclass(SourceOverlapError, ValueError)
