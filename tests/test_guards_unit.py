"""Fast, direct tests of guards that only the slow tiers caught (issue 34 item 4): the
per-file upload limit of ``POST /api/query`` (at exactly the limit and one byte over), the
CSRF check of ``POST /api/add``, and the DOCX/ODT decompression-bomb limit (the parts
together, at the limit and over it). The web app runs in this process (starlette's
TestClient) on an empty index."""

from __future__ import annotations

import pytest

from simdask import Index, IndexConfig
from simdask.errors import ExtractionError
from simdask.ingest.extract.docx import extract_docx
from simdask.ingest.extract.odt import extract_odt
from tests.helpers.documents import bomb_package, docx_bytes
from tests.helpers.server import need_web

pytestmark = pytest.mark.unit

LIMIT = 4096


@pytest.fixture
def app_client(tmp_path):
    need_web()
    from starlette.testclient import TestClient

    from simdask.web.app import Settings, create_app

    Index.create(tmp_path / "idx", IndexConfig(shards=2)).close()

    def make(**settings):
        app = create_app(Settings(index=tmp_path / "idx", preload=False, **settings))
        return TestClient(app, base_url="http://127.0.0.1")

    return make


def test_query_upload_limit_per_file(app_client):
    words = b"word " * (LIMIT // 5)
    at_limit = words + b"x" * (LIMIT - len(words))
    assert len(at_limit) == LIMIT
    with app_client(max_file_bytes=LIMIT) as client:
        ok = client.post("/api/query", files=[("file", ("a.txt", at_limit))])
        assert ok.status_code == 200, ok.text
        over = client.post("/api/query", files=[("file", ("b.txt", at_limit + b"y"))])
        assert over.status_code == 413, over.text
        assert "b.txt" in over.json()["error"]
        # the limit holds per file: two files each at the limit pass
        two = [("file", ("a.txt", at_limit)), ("file", ("c.txt", at_limit))]
        assert client.post("/api/query", files=two).status_code == 200
        # and pasted text over it is refused (413 by the check, or 400 by the form parser)
        pasted = client.post("/api/query", data={"text": "w " * (LIMIT // 2 + 1)})
        assert pasted.status_code in (400, 413), pasted.text


def test_add_requires_the_sessions_csrf_token(app_client):
    files = [("file", ("a.txt", b"some words to add " * 20))]
    with app_client(allow_upload=True) as client:
        missing = client.post("/api/add", files=files)
        assert missing.status_code == 403 and "CSRF" in missing.json()["error"]
        wrong = client.post("/api/add", files=files, headers={"X-CSRF-Token": "x" * 32})
        assert wrong.status_code == 403
        token = client.get("/api/csrf").json()["csrf"]
        assert token
        # the right token passes the check: an empty request is then a 400, no job is queued
        right = client.post("/api/add", data={"x": "1"}, headers={"X-CSRF-Token": token})
        assert right.status_code == 400, right.text
        assert client.get("/api/jobs").json()["jobs"] == []
    with app_client(allow_upload=True) as other:  # another session's token is not this one's
        other.get("/api/csrf")
        stolen = other.post("/api/add", files=files, headers={"X-CSRF-Token": token})
        assert stolen.status_code == 403


@pytest.mark.parametrize("fmt", ["docx", "odt"])
def test_package_bomb_limit(fmt):
    extract = extract_docx if fmt == "docx" else extract_odt
    # DOCX: ~1 MB in each of 3 parts (document and headers), 3 MB together; ODT: one part
    bomb = bomb_package(fmt, 3_000_000, split=3 if fmt == "docx" else 1)
    with pytest.raises(ExtractionError) as e:
        extract(bomb, f"b.{fmt}", 2_000_000)
    assert e.value.kind == "bomb" and "2,000,000" in str(e.value)
    # the same file under a limit above what it inflates to is read
    assert "bomb words again" in extract(bomb, f"b.{fmt}", 4_000_000)[:200]


def test_docx_too_large_not_bomb_and_a_normal_file_passes():
    doc = docx_bytes(["a paragraph of ordinary words"] * 200)
    assert "ordinary words" in extract_docx(doc, "ok.docx", 1_000_000)
    with pytest.raises(ExtractionError) as e:
        extract_docx(doc, "small-limit.docx", 1000)
    assert e.value.kind in ("too_large", "bomb")
