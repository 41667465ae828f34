"""Where an index and its shards may be (issue 30 item 12): INDEX given as a ``file://`` URL
is that folder (it created ``./file:/...`` and then reported "catalog damaged"); another URL
as INDEX, and a ``--shard-store`` that lives in one process (``memory://``), are refused as
bad usage before anything is created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simdask import ConfigError, Index
from simdask.storage.remote import index_folder, require_lasting
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.system


def test_index_given_as_a_file_url_is_that_folder(tmp_path):
    docs = make_docs(6, seed=1)
    src = write_txt(docs, tmp_path / "src")
    url = (tmp_path / "my idx").as_uri()  # file:///.../my%20idx
    run("update", url, src, "--quiet", cwd=tmp_path)
    assert (tmp_path / "my idx" / "catalog.sqlite").is_file()
    assert not (tmp_path / "file:").exists()
    stats = json.loads(run("stats", url, "--format", "json", cwd=tmp_path).stdout)
    assert stats["documents"] == len(docs) and stats["path"] == str(tmp_path / "my idx")
    assert run("check", url).returncode == 0
    with Index.open(url) as idx:  # the Python API too
        assert idx.path == tmp_path / "my idx"


def test_other_urls_as_index_and_process_local_shard_stores_are_refused(tmp_path):
    src = write_txt(make_docs(4, seed=2), tmp_path / "src")
    p = run("update", tmp_path / "idx", src, "--shard-store", "memory://x/s", check=False)
    assert p.returncode == 2 and "lives in one process only" in p.stderr, p.stderr
    assert not (tmp_path / "idx").exists()
    p = run("stats", "s3://bucket/idx", check=False, cwd=tmp_path)
    assert p.returncode == 2 and "INDEX must be a local folder" in p.stderr, p.stderr
    assert list(tmp_path.iterdir()) == [tmp_path / "src"]
    assert index_folder("file://localhost/srv/i") == Path("/srv/i")
    assert index_folder("rel/i") == Path("rel/i")
    with pytest.raises(ConfigError, match="INDEX must be a local folder"):
        index_folder("file://otherhost/srv/i")
    assert require_lasting("s3://b/p") == "s3://b/p"
