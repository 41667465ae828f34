"""Bad settings and mistyped paths given to the real ``simdask`` command (issue 12 item 12):
a settings error exits 2 without a traceback, and nothing is created on the way."""

from __future__ import annotations

import pytest

from tests.helpers.cli import run

pytestmark = pytest.mark.system


@pytest.mark.parametrize("address", ["notaurl", "tcp://host:99999", "ftp://host:8786", "tcp://"])
def test_bad_scheduler_address_is_a_settings_error(tmp_path, address):
    (tmp_path / "a.txt").write_text("one two three four five six seven eight nine ten")
    p = run("update", tmp_path / "i", tmp_path / "a.txt", "--scheduler", address, check=False)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert "--scheduler: expected a scheduler address [tcp://]host:port" in p.stderr
    assert not (tmp_path / "i").exists()


def test_bad_scheduler_address_from_the_environment(tmp_path):
    import os

    (tmp_path / "a.txt").write_text("one two three four five six seven eight nine ten")
    env = {**os.environ, "SIMDASK_SCHEDULER": "notaurl"}
    p = run("update", tmp_path / "i", tmp_path / "a.txt", check=False, env=env)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and "'notaurl'" in p.stderr


def test_missing_source_creates_no_index(tmp_path):
    p = run("update", tmp_path / "i", tmp_path / "nonexistent", "--quiet", check=False)
    assert p.returncode == 1, p.stderr
    assert f"source '{tmp_path / 'nonexistent'}' not found" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "i").exists()


def test_index_naming_a_file_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("one two three four five six seven eight nine ten")
    (tmp_path / "notes").write_text("my notes")
    p = run("update", tmp_path / "notes", tmp_path / "a.txt", "--quiet", check=False)
    assert p.returncode == 1, p.stderr
    assert "is a file: expected a simdask index folder" in p.stderr
    assert "Traceback" not in p.stderr
    assert (tmp_path / "notes").read_text() == "my notes"
