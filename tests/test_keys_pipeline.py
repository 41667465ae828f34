"""Keys and sources through the real pipeline (Index.update on a LocalCluster with worker
processes; issue 12): two folders holding the same file names, collisions between sources,
--delete-missing whatever the spelling of the source, an unreadable subfolder, file names
that are not UTF-8, JSONL ids, and an index keyed the old way."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from simdask import Index, IndexConfig
from simdask.errors import KeyCollisionError
from simdask.kernels.words import words
from simdask.progress import Callback
from tests.helpers.corpus import make_docs
from tests.helpers.documents import prose

pytestmark = pytest.mark.integration


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def _errors(summary) -> dict[str, tuple[str, str]]:
    return {k: (kind, msg) for k, kind, msg in summary.errors}


def test_two_folders_with_the_same_file_names_are_two_documents(tmp_path, client):
    essay = prose(300, seed=1)
    y25 = _write(tmp_path / "y2025", {"smith.txt": essay, "jones.txt": prose(200, seed=2)})
    y26 = _write(tmp_path / "y2026", {"smith.txt": essay})
    with Index.create(tmp_path / "idx", IndexConfig(shards=2)) as idx:
        first = idx.update([y25], client=client)
        second = idx.update([y26], client=client)
        assert (first.added, second.added, second.modified) == (2, 1, 0)
        keys = {d.key for d in idx.catalog.documents()}
        assert keys == {"y2025/smith.txt", "y2025/jones.txt", "y2026/smith.txt"}
        [pair] = idx.similar("y2026/smith.txt")
        assert (pair.other, pair.similarity) == ("y2025/smith.txt", 100.0)
        # both sources again, in one run: nothing changes
        third = idx.update([y25, y26], client=client, delete_missing=True)
        assert (third.unchanged, third.added, third.deleted, third.failed) == (3, 0, 0, 0)


def test_a_key_from_two_sources_is_an_error_never_a_replacement(tmp_path, client):
    a = _write(tmp_path / "a" / "essays", {"smith.txt": prose(200, seed=3)})
    b = _write(tmp_path / "b" / "essays", {"smith.txt": prose(200, seed=4)})
    with Index.create(tmp_path / "idx", IndexConfig(shards=2)) as idx:
        # both in one run: refused before the run, nothing indexed (issue 31, item 2)
        with pytest.raises(KeyCollisionError, match=f"also given by {a.resolve()}"):
            idx.update([a, b], client=client)
        assert idx.catalog.n_documents() == 0
        run = idx.update([a], client=client)
        doc = idx.catalog.document("essays/smith.txt")
        assert run.added == 1 and doc.source == str(a.resolve())
        # later, alone: the key belongs to a's document, which stays as it was
        with pytest.raises(KeyCollisionError, match=f"already indexed from {a.resolve()}"):
            idx.update([b], client=client)
        assert idx.catalog.document("essays/smith.txt") == doc
        assert words(idx.text("essays/smith.txt")) == words(prose(200, seed=3))
        # a JSONL id equal to a file's key: known once the line is read, reported per line
        j = tmp_path / "more.jsonl"
        j.write_text(json.dumps({"id": "essays/smith.txt", "text": prose(50, 5)}) + "\n")
        third = idx.update([j], client=client)
        assert _errors(third)["essays/smith.txt"][0] == "duplicate_key"
        assert idx.catalog.document("essays/smith.txt") == doc
        # a key prefix keeps them apart
        kept = idx.update([b], client=client, key_prefix="b")
        assert kept.added == 1 and idx.catalog.document("b/essays/smith.txt")
        # removing the owner in the same run frees the key for the other source
        moved = idx.update([b], client=client, remove=["essays/smith.txt"])
        assert (moved.modified, moved.failed) == (1, 0)
        assert moved.identical == [("essays/smith.txt", "b/essays/smith.txt")]
        assert idx.catalog.document("essays/smith.txt").source == str(b.resolve())


@pytest.mark.parametrize("second", ["relative", "absolute", "dot"])
def test_delete_missing_does_not_depend_on_the_spelling(tmp_path, client, monkeypatch, second):
    essays = _write(tmp_path / "essays", {"a.txt": prose(100, 6), "b.txt": prose(100, 7)})
    monkeypatch.chdir(tmp_path)
    with Index.create(tmp_path / "idx", IndexConfig(shards=2)) as idx:
        idx.update(["essays"], client=client)
        (essays / "b.txt").unlink()
        (essays / "a.txt").unlink()  # the folder is now empty: no item names the source
        spelling = {"relative": "essays/", "absolute": str(essays), "dot": "."}[second]
        if second == "dot":
            monkeypatch.chdir(essays)
        run = idx.update([spelling], client=client, delete_missing=True)
        assert run.deleted == 2 and idx.catalog.counts()["documents"] == 0


def test_an_unreadable_subfolder_is_reported_and_its_documents_kept(tmp_path, client, monkeypatch):
    essays = _write(
        tmp_path / "essays",
        {"a.txt": prose(100, 8), "sub/b.txt": prose(100, 9), "sub/deep/c.txt": prose(100, 10)},
    )
    with Index.create(tmp_path / "idx", IndexConfig(shards=2)) as idx:
        idx.update([essays], client=client)
        before = {d.key: d for d in idx.catalog.documents()}
        real, blocked = os.scandir, str(essays / "sub")

        def scandir(path="."):  # listing runs in this process (the system test does it for real)
            if not isinstance(path, int) and os.fspath(path) == blocked:
                raise PermissionError(13, "Permission denied", blocked)
            return real(path)

        monkeypatch.setattr(os, "scandir", scandir)
        (essays / "a.txt").unlink()
        run = idx.update([essays], client=client, delete_missing=True)
        kind, msg = _errors(run)["essays/sub/"]
        assert kind == "unreadable" and "Permission denied" in msg and blocked in msg
        assert (run.deleted, run.failed) == (1, 1)
        now = {d.key: d for d in idx.catalog.documents()}
        assert now == {k: v for k, v in before.items() if k != "essays/a.txt"}
        monkeypatch.setattr(os, "scandir", real)
        (essays / "sub" / "deep" / "c.txt").unlink()
        run = idx.update([essays], client=client, delete_missing=True)
        assert run.deleted == 1 and {d.key for d in idx.catalog.documents()} == {"essays/sub/b.txt"}


def test_file_names_that_are_not_utf8_are_indexed_with_escaped_keys(tmp_path, client):
    folder = _write(tmp_path / "essays", {"good.txt": prose(120, 11)})
    with open(os.fsencode(folder) + b"/caf\xe9.txt", "wb") as f:
        f.write(prose(120, 11).encode())
    with Index.create(tmp_path / "idx", IndexConfig(shards=2)) as idx:
        run = idx.update([folder], client=client)
        assert (run.added, run.failed) == (2, 0)
        [pair] = idx.similar("essays/caf\\xe9.txt")
        assert (pair.other, pair.similarity) == ("essays/good.txt", 100.0)
        again = idx.update([folder], client=client, delete_missing=True)
        assert (again.unchanged, again.deleted) == (2, 0)


def test_jsonl_ids_integers_and_strings_and_bad_ids(tmp_path, client):
    docs = make_docs(4, seed=12)
    lines = [
        {"id": 1, "text": docs["d000"]},
        {"id": "1", "text": docs["d001"]},  # the same key as the integer 1
        {"id": None, "text": docs["d002"]},
        {"id": "\ud800x", "text": docs["d003"]},
        {"id": "ok", "text": docs["d003"]},
    ]
    p = tmp_path / "docs.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in lines) + "\n   \n")
    with Index.create(tmp_path / "idx", IndexConfig(shards=2)) as idx:
        run = idx.update([p], client=client)
        errors = _errors(run)
        assert {d.key for d in idx.catalog.documents()} == {"1", "ok"}
        assert errors["1"][0] == "duplicate_key"
        assert errors[f"{p}:3"] == (
            "jsonl",
            'expected an "id" that is a string or an integer, found null',
        )
        assert errors[f"{p}:4"][0] == "jsonl" and "lone surrogate" in errors[f"{p}:4"][1]
        assert len(errors) == 3  # the whitespace-only last line is skipped


def test_an_index_keyed_the_old_way_is_migrated_without_recomputing(tmp_path, client):
    essays = _write(tmp_path / "essays", {"a.txt": prose(150, 13), "sub/b.txt": prose(150, 13)})
    with Index.create(tmp_path / "idx", IndexConfig(shards=2)) as idx:
        idx.update([essays], client=client)
        pairs = {(r.doc, r.other, r.similarity) for r in idx.pairs()}
        # as an older simdask wrote it: keys relative to the folder, no key_scheme
        with idx.catalog.transaction() as c:
            c.execute("UPDATE documents SET key = substr(key, length('essays/') + 1)")
            c.execute("DELETE FROM meta WHERE name = 'key_scheme'")
        assert {d.key for d in idx.catalog.documents()} == {"a.txt", "sub/b.txt"}
    messages = []

    class Note(Callback):
        def message(self, text: str) -> None:
            messages.append(text)

    with Index.open(tmp_path / "idx") as idx:
        run = idx.update([essays], client=client, callback=Note())
        assert (run.unchanged, run.added, run.modified) == (2, 0, 0)
        assert "keys of 2 documents renamed to <folder name>/<path>" in messages
        assert {(r.doc, r.other, r.similarity) for r in idx.pairs()} == pairs
