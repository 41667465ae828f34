"""The web check's wording (issue 31 item 18): how many documents were sent, compared, not
compared (a note: a scanned PDF, as in the CLI) and unreadable, in the number they take; a
scanned PDF alone is a note, not an error; uploads go to a folder the teacher names, checked.
The web app runs in this process (starlette's TestClient)."""

from __future__ import annotations

import pytest

from simdask import Index, IndexConfig
from simdask.errors import ConfigError, ExtractionError
from simdask.queries import QueryBatch, QueryResult, batch_summary
from simdask.summary import QueryMatch
from simdask.web.uploads import upload_folder
from tests.helpers.documents import docx_bytes, image_pdf, prose
from tests.helpers.server import need_web

pytestmark = pytest.mark.unit


@pytest.fixture
def web(tmp_path):
    need_web()
    from starlette.testclient import TestClient

    from simdask.web.app import Settings, create_app

    Index.create(tmp_path / "idx", IndexConfig(shards=2)).close()
    app = create_app(Settings(index=tmp_path / "idx", preload=False, allow_upload=True))
    # the writer lock held: an upload job is queued and waits (no run, no cluster here)
    with (
        Index.open(tmp_path / "idx") as idx,
        idx.writer(0),
        TestClient(app, base_url="http://127.0.0.1") as c,
    ):
        yield c


def _match(key: str) -> QueryMatch:
    return QueryMatch(key, 50.0, 40.0, 3, 6, 8, 3)


def test_batch_summary_counts_in_words():
    one = QueryBatch([QueryResult("a.txt", [_match("x")], False)], [], 5)
    assert batch_summary(1, one) == "1 document sent: 1 compared; 1 match"
    scan = ExtractionError("scan.pdf", "image_only", "scanned")
    bad = [ExtractionError(f"b{i}.docx", "corrupt", "cut off") for i in range(3)]
    results = [
        QueryResult("a.txt", [_match("x"), _match("y")], False),
        QueryResult("c.txt", [_match("x")], False),
        QueryResult("tiny.txt", [], True),
    ]
    mixed = QueryBatch(results, [scan, *bad], 5)
    assert batch_summary(7, mixed) == (
        "7 documents sent: 2 compared, 2 not compared (see the notes), 3 unreadable; 3 matches"
    )


@pytest.mark.integration  # a PDF is read in a helper process
def test_check_says_what_was_sent_and_a_scan_is_a_note(web):
    whole = docx_bytes([prose(200, seed=1)])
    files = [
        ("file", ("essay.txt", prose(120, seed=2).encode())),
        ("file", ("scan.pdf", image_pdf(2))),
        ("file", ("late.docx", whole[: len(whole) // 2])),
    ]
    got = web.post("/api/query", files=files)
    assert got.status_code == 200, got.text
    data = got.json()
    assert data["summary"] == (
        "3 documents sent: 1 compared, 1 not compared (see the notes), 1 unreadable; 0 matches"
    )
    notes = {u["key"].rsplit("/", 1)[-1]: u["note"] for u in data["unreadable"]}
    assert notes == {"scan.pdf": True, "late.docx": False}
    # a scanned PDF alone is a note (200), as `simdask query` says it; a damaged file an error
    alone = web.post("/api/query", files=[("file", ("scan.pdf", image_pdf(1)))])
    assert alone.status_code == 200, alone.text
    assert alone.json()["summary"].startswith("1 document sent: 0 compared, 1 not compared")
    damaged = web.post("/api/query", files=[("file", ("late.docx", whole[:200]))])
    assert damaged.status_code == 422


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, ""),
        ("  ", ""),
        ("2026/essays", "2026/essays"),
        ("Klasse 7b/Aufsätze", "Klasse 7b/Aufsätze"),
        ("v1.2", "v1.2"),
    ],
)
def test_upload_folder_accepts(given, expected):
    assert upload_folder(given) == expected


@pytest.mark.parametrize(
    "given",
    ["../x", "a/../b", "/etc", "a//b", "a/", ".hidden", "a\\b", "a/b/c/d/e/f", "x" * 101, "a /b"],
)
def test_upload_folder_refuses(given):
    with pytest.raises(ConfigError, match="expected a folder inside uploads/"):
        upload_folder(given)


def test_uploads_go_to_the_folder_named(web):
    token = web.get("/api/csrf").json()["csrf"]
    files = [("file", ("smith.txt", prose(80, seed=3).encode()))]
    head = {"X-CSRF-Token": token}
    refused = web.post("/api/add", files=files, data={"folder": "../up"}, headers=head)
    assert refused.status_code == 400 and "expected a folder" in refused.json()["error"]
    ok = web.post("/api/add", files=files, data={"folder": "2026/essays"}, headers=head)
    assert ok.status_code == 202, ok.text
    assert ok.json()["job"]["files"] == ["uploads/2026/essays/smith.txt"]
    plain = web.post("/api/add", files=files, headers=head)
    assert plain.json()["job"]["files"] == ["uploads/smith.txt"]
