"""Durability of whole runs (issue 30 item 14): at every catalog COMMIT of create, update (with
LSH), remove and compact, every file of the index's stores and its directory entries were
fsynced (the recorder of :mod:`tests.test_durability`; the run's workers are threads of this
process, so the wrappers see their I/O)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simdask import Index, IndexConfig
from tests.helpers.durability import SyncRecorder, install_commit_checks, store_files

pytestmark = pytest.mark.integration


@pytest.fixture
def commit_checks(monkeypatch):
    return install_commit_checks(monkeypatch, SyncRecorder(monkeypatch))


def _write_docs(path: Path, docs: dict[str, str]) -> None:
    path.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in docs.items()))


def _docs(seed: int, n: int) -> dict[str, str]:
    rng = np.random.default_rng(seed)
    shared = [f"s{int(x)}" for x in rng.integers(0, 400, 60)]
    return {
        f"d{seed}-{i}": " ".join(
            shared[: 10 + 5 * i] + [f"w{int(x)}" for x in rng.integers(0, 9999, 80)]
        )
        for i in range(n)
    }


def test_every_commit_of_update_remove_compact_finds_its_files_durable(tmp_path, commit_checks):
    """Whole runs (workers are threads of this process, so the wrappers see their I/O):
    create, two updates (with LSH), a removal and a forced compaction."""
    src = tmp_path / "a.jsonl"
    _write_docs(src, _docs(1, 6))
    cfg = IndexConfig(hash_bits=24, shards=3, top_k=3, lsh="8x2")
    with Index.create(tmp_path / "idx", cfg) as idx:
        idx.update([src])
        _write_docs(src, {**_docs(1, 4), **_docs(2, 5)})
        idx.update([src], delete_missing=True)
        idx.remove(["d2-0"])
        idx.compact(force=True)
    assert commit_checks["faults"] == []
    assert commit_checks["commits"] >= 5
    assert commit_checks["files"] > 50  # the checks looked at real segments, packs, parts
    kinds = {p.parent.parent.name for p in store_files(tmp_path / "idx")}
    assert len(kinds) > 1
