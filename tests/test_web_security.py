"""``simdask serve`` is safe by default: a secret beyond loopback (the test binds 127.0.0.2 and
refuses 0.0.0.0: no traffic leaves this machine), sessions and CSRF, the Host check, upload
limits with a clear message, upload names that never leave the temporary folder, read-only
unless allowed, and uploads added to the index while another writer holds it (queued, retried,
nothing corrupted)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
import time

import pytest

from simdask.storage.lock import WriterLock
from tests.helpers.browser import chromium_driver
from tests.helpers.cli import run
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.server import need_web, serving

pytestmark = pytest.mark.system

TOKEN = "s3cret-token-for-tests"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    need_web()
    tmp = tmp_path_factory.mktemp("websec")
    docs = make_docs(20, seed=4)
    write_txt(docs, tmp / "src")
    run("update", tmp / "idx", tmp / "src", "--workers", "1", "--quiet")
    return tmp / "idx"


def _serve_fails(index, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "simdask.cli", "serve", str(index), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_no_secret_no_other_host(index):
    for host in ("0.0.0.0", "::"):
        p = _serve_fails(index, "--host", host, "--port", "1")
        assert p.returncode == 2, p.stderr
        assert "--token" in p.stderr and "--password-file" in p.stderr
    short = _serve_fails(index, "--host", "0.0.0.0", "--token", "short", "--port", "1")
    assert short.returncode == 2 and "at least 8 characters" in short.stderr


def test_token_required_beyond_localhost(index, tmp_path):
    import requests

    secret_file = tmp_path / "password"
    secret_file.write_text(TOKEN + "\n", encoding="utf-8")
    with serving(index, "--password-file", str(secret_file), host="127.0.0.2") as (url, _):
        assert requests.get(url + "/api/stats", timeout=30).status_code == 401
        wrong = {"Authorization": "Bearer " + TOKEN[:-1] + "x"}
        assert requests.get(url + "/api/stats", headers=wrong, timeout=30).status_code == 401
        ok = requests.get(url + "/api/stats", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and ok.json()["documents"] == 23
        page = requests.get(url + "/documents", allow_redirects=False, timeout=30)
        assert page.status_code == 303 and page.headers["location"] == "/login"
        files = {"file": ("q.txt", b"some words to check against the index now")}
        assert requests.post(url + "/api/query", files=files, timeout=30).status_code == 401
        # a browser session: the login form carries the session's CSRF token
        s = requests.Session()
        login = s.get(url + "/login", timeout=30)
        csrf = re.search(r'name="csrf" value="([^"]+)"', login.text).group(1)
        assert s.post(url + "/login", data={"secret": TOKEN}, timeout=30).status_code == 403
        bad = s.post(url + "/login", data={"secret": "wrong-secret", "csrf": csrf}, timeout=30)
        assert bad.status_code == 403 and "wrong token or password" in bad.text
        good = s.post(url + "/login", data={"secret": TOKEN, "csrf": csrf}, timeout=30)
        cookie = good.history[0].headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert s.get(url + "/api/stats", timeout=30).status_code == 200
        assert s.get(url + "/documents", timeout=30).url.endswith("/documents")
        # the same in Chromium: the login page, then the pages
        driver = chromium_driver()
        from selenium.webdriver.support.wait import WebDriverWait

        try:
            driver.get(url + "/stats")
            assert driver.current_url.endswith("/login")
            driver.find_element("id", "secret").send_keys(TOKEN)
            driver.find_element("id", "login").click()
            # the click submits the form: wait for its redirect (the session cookie) first
            WebDriverWait(driver, 30).until(lambda d: not d.current_url.endswith("/login"))
            driver.get(url + "/stats")
            stat = driver.find_element("css selector", "[data-stat=documents]")
            assert stat.text == "23"
        finally:
            driver.quit()


def test_host_header_checked_on_loopback(index):
    import requests

    with serving(index) as (url, _):
        assert requests.get(url + "/api/stats", timeout=30).status_code == 200
        evil = requests.get(url + "/api/stats", headers={"Host": "evil.example"}, timeout=30)
        assert evil.status_code == 400  # DNS rebinding: another site's name for 127.0.0.1


def test_oversized_upload_refused(index):
    import requests

    with serving(index, "--max-file-size", "10kB", "--max-files", "2") as (url, _):
        big = b"word " * 2500  # 12.5 kB
        r = requests.post(url + "/api/query", files={"file": ("big.txt", big)}, timeout=30)
        assert r.status_code == 413
        assert r.json()["error"] == (
            "big.txt is 12.5 kB, larger than the upload limit of 10.0 kB per file "
            "(the server's --max-file-size)"
        )
        # the whole request is bounded (2 files of 10 kB and 64 KiB of form fields)
        many = [("file", (f"f{i}.txt", b"w " * 4000)) for i in range(12)]  # 96 kB in all
        r = requests.post(url + "/api/query", files=many, timeout=30)
        assert r.status_code == 413 and "more than the server accepts" in r.json()["error"]
        three = [("file", (f"f{i}.txt", b"w " * 100)) for i in range(3)]
        r = requests.post(url + "/api/query", files=three, timeout=30)
        assert r.status_code == 413 and "Maximum number of files is 2" in r.json()["error"]
        small = requests.post(url + "/api/query", files={"file": ("s.txt", b"word " * 100)})
        assert small.status_code == 200
        driver = chromium_driver()
        try:
            path = index.parent / "big.txt"
            path.write_bytes(big)
            driver.get(url + "/")
            box = driver.find_element("id", "files")
            driver.execute_script("arguments[0].hidden=false", box)
            box.send_keys(str(path))
            driver.find_element("id", "check").click()
            deadline = time.time() + 30
            err = driver.find_element("id", "check-error")
            while not err.is_displayed() and time.time() < deadline:
                time.sleep(0.1)
            assert "larger than the upload limit of 10.0 kB" in err.text
        finally:
            driver.quit()


PATHLIKE = ["../../escape.txt", "/etc/simdask-evil.txt", "..\\..\\win.txt", "a/../../b.txt", ".."]


def test_uploads_stay_in_temp_folder_and_index_while_locked(index, tmp_path):
    """Path-like names are cut to a plain name; uploads to the index while another writer
    holds the lock wait, then commit; queries answer meanwhile."""
    import requests

    idx = tmp_path / "idx"
    shutil.copytree(index, idx)
    work = tmp_path / "servertmp"
    work.mkdir()
    env_tmp = {"TMPDIR": str(work)}
    args = ("--allow-upload-to-index", "--workers", "1")
    with serving(idx, *args, env=env_tmp) as (url, _):
        s = requests.Session()
        csrf = s.get(url + "/api/csrf", timeout=30).json()["csrf"]
        text = " ".join(f"unique{i}z" for i in range(200))
        files = [("file", (name, text.encode())) for name in PATHLIKE]
        q = s.post(url + "/api/query", files=files, timeout=30).json()
        assert [x["key"] for x in q["queries"]] == [
            "escape.txt",
            "simdask-evil.txt",
            "win.txt",
            "b.txt",
            "upload.txt",
        ]
        # no CSRF token with the cookie session: refused
        assert s.post(url + "/api/add", files=files[:1], timeout=30).status_code == 403
        lock = WriterLock(idx)
        lock.__enter__()  # another writer holds the index
        try:
            answers = []

            def add(i):
                data = [("file", (name, f"{text} part{i} {name}".encode())) for name in PATHLIKE]
                r = s.post(url + "/api/add", files=data, headers={"X-CSRF-Token": csrf})
                answers.append(r.status_code)

            threads = [threading.Thread(target=add, args=(i,)) for i in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert answers == [202, 202]
            _until(
                lambda: (
                    s.get(url + "/api/jobs/1").json()["jobs"][0]["state"]
                    == "waiting for the writer lock"
                )
            )
            t0 = time.perf_counter()
            stats = s.get(url + "/api/stats", timeout=30)
            assert stats.status_code == 200 and stats.json()["documents"] == 23
            assert time.perf_counter() - t0 < 5  # readers are not blocked by the writer
        finally:
            lock.__exit__(None, None, None)
        _until(
            lambda: all(j["state"] == "done" for j in s.get(url + "/api/jobs").json()["jobs"]),
            timeout=240,
        )
        jobs = sorted(s.get(url + "/api/jobs").json()["jobs"], key=lambda j: j["id"])
        # the same five safe names twice: the second job replaces the first's documents
        assert [(j["summary"]["added"], j["summary"]["modified"]) for j in jobs] == [(5, 0), (0, 5)]
        found = s.get(url + "/api/documents?search=uploads/").json()["documents"]
        names = ["b", "escape", "simdask-evil", "upload", "win"]
        assert [d["key"] for d in found] == [f"uploads/{n}.txt" for n in names]
        q = s.post(url + "/api/query", files=[("file", ("q.txt", text.encode()))]).json()
        assert {r["key"] for r in q["results"]} == {f"uploads/{n}.txt" for n in names}
    assert not (tmp_path.parent / "escape.txt").exists()
    assert not (tmp_path / "escape.txt").exists()
    assert not any(work.rglob("*.txt")), "the server's temporary folder was cleaned up"
    check = run("stats", idx)
    assert check.returncode == 0


def _until(cond, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s")
        time.sleep(0.2)


def test_read_only_by_default(index):
    import requests

    with serving(index) as (url, _):
        s = requests.Session()
        csrf = s.get(url + "/api/csrf", timeout=30).json()["csrf"]
        r = s.post(
            url + "/api/add",
            files={"file": ("a.txt", b"x y z")},
            headers={"X-CSRF-Token": csrf},
            timeout=30,
        )
        assert r.status_code == 403 and "--allow-upload-to-index" in r.json()["error"]
        assert s.get(url + "/add", timeout=30).status_code == 403


def test_api_inputs_of_the_wrong_type_or_range_are_4xx_with_a_message(index):
    """Issue 30 items 4 and 7: never a silently different question, never a 500."""
    import requests

    with serving(index, "--max-files", "2", "--allow-upload-to-index") as (url, _):
        q = url + "/api/query"
        essay = b"Some words of an essay to check against the index " * 5

        def bad(status: int, fragment: str, **kw) -> None:
            r = requests.post(q, timeout=30, **kw) if "files" in kw or "data" in kw else None
            r = r if r is not None else requests.get(url + kw["get"], timeout=30)
            assert r.status_code == status, (kw, r.status_code, r.text)
            assert fragment in r.json()["error"], (kw, r.text)

        # pasted text sent as a file part (curl -F text=@file) was checked as "UploadFile(...)"
        bad(400, "expected `text` as a form field, found a file part", files={"text": essay})
        bad(400, "expected `min` as a form field", files={"file": ("a.txt", essay), "min": b"5"})
        for value in ("nan", "inf", "-1", "100.5", "five"):
            bad(400, "expected `min`", data={"text": essay.decode(), "min": value})
        bad(400, "expected `file` parts holding files", data={"file": "not a file"})
        many = [("file", (f"f{i}.txt", essay)) for i in range(3)]
        bad(413, "Maximum number of files is 2", files=many)
        for query in ("offset=-1", "offset=99999999999999999999", "limit=0", "limit=x"):
            bad(400, "bad request: expected `", get=f"/api/documents?{query}")
        ok = requests.post(q, data={"text": essay.decode(), "min": "0"}, timeout=30)
        assert ok.status_code == 200 and ok.json()["queries"][0]["key"] == "pasted-text.txt"
        # pages clamp instead: no 500 for a page number beyond any integer SQLite holds
        assert requests.get(url + "/documents?page=99999999999999999999", timeout=30).ok
        # /api/add: the documented form field `csrf` is honoured, like the header
        s = requests.Session()
        csrf = s.get(url + "/api/csrf", timeout=30).json()["csrf"]
        up = {"file": ("added.txt", essay)}
        r = s.post(url + "/api/add", files=up, data={"csrf": "wrong"}, timeout=30)
        assert r.status_code == 403 and "CSRF" in r.json()["error"]
        r = s.post(url + "/api/add", files=up, data={"csrf": csrf}, timeout=30)
        assert r.status_code == 202, r.text
