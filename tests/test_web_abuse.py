"""``simdask serve`` under abuse (issue 30 items 6, 7, 13), a real server on 127.0.0.1 each
time, every check bounded in requests and seconds: a flood of anonymous requests logs nobody
out; guessing the secret (login form or bearer token) is slowed per client address (other
addresses are not) and answered 429 with ``Retry-After``; connections whose headers or body
trickle are closed; hostile inputs are 4xx with a message, never 500; a busy server answers
429 with ``Retry-After``; the largest upload of the issue stays within a memory bound; a
shutdown (SIGTERM, SIGINT) after or during an upload job exits 0 without leaked semaphores.

Client addresses 127.0.0.2 ... are loopback addresses too (Linux routes 127.0.0.0/8 to lo):
the server sees each as another client."""

from __future__ import annotations

import http.client
import random
import re
import signal
import socket
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

import numpy as np
import pytest

from simdask import Index
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.server import need_web, serving

pytestmark = pytest.mark.system

TOKEN = "abuse-token-for-tests"
ESSAY = "Some words of an essay to check against the index, written for this test. " * 8


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    need_web()
    tmp = tmp_path_factory.mktemp("abuse")
    write_txt(make_docs(20, seed=5), tmp / "src")
    with Index.create(tmp / "idx") as idx:  # in this process (threads): quick on a loaded machine
        idx.update([tmp / "src"])
    return tmp / "idx"


def _port(url: str) -> int:
    return urlsplit(url).port


class Client:
    """One keep-alive HTTP connection from ``source`` (a loopback address) with a cookie."""

    def __init__(self, url: str, source: str = "127.0.0.1"):
        self.conn = http.client.HTTPConnection(
            "127.0.0.1", _port(url), timeout=30, source_address=(source, 0)
        )
        self.cookie = ""

    def request(self, method: str, path: str, body=None, headers=None, keep_cookie=True):
        """(status, headers, text) of one request; remembers a cookie it is given."""
        headers = dict(headers or {})
        if self.cookie and keep_cookie:
            headers["Cookie"] = self.cookie
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        text = r.read().decode("utf-8", "replace")
        cookie = r.getheader("set-cookie")
        if cookie and keep_cookie:
            self.cookie = cookie.split(";", 1)[0]
        return r.status, r, text

    def login_form(self) -> str:
        """The CSRF token of the login page (opening a session)."""
        status, _, page = self.request("GET", "/login")
        assert status == 200
        return re.search(r'name="csrf" value="([^"]+)"', page).group(1)

    def login(self, secret: str, csrf: str):
        body = f"csrf={quote(csrf)}&secret={quote(secret)}"
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        return self.request("POST", "/login", body=body, headers=form)

    def close(self) -> None:
        self.conn.close()


def test_a_flood_of_anonymous_requests_logs_nobody_out(index):
    """10,050 anonymous requests evicted every session; anonymous sessions are now signed
    cookies that the server does not keep (here 600 requests against 20 kept sessions)."""
    with serving(index, "--token", TOKEN, "--max-sessions", "20") as (url, _):
        user = Client(url)
        csrf = user.login_form()
        status, _, _ = user.login(TOKEN, csrf)
        assert status == 303
        assert user.request("GET", "/api/stats")[0] == 200
        flood = Client(url)
        for i in range(300):  # cookie-less, and with forged cookies
            headers = {"Cookie": f"simdask_session=a.x{i}.1.forged"} if i % 2 else {}
            assert flood.request("GET", "/login", headers=headers, keep_cookie=False)[0] == 200
        assert flood.request("GET", "/api/stats", keep_cookie=False)[0] == 401
        assert user.request("GET", "/api/stats")[0] == 200, "the flood logged the user out"
    with serving(index, "--max-sessions", "20") as (url, _):  # no secret: every visitor
        user = Client(url)
        user.request("GET", "/")
        csrf = user.request("GET", "/api/csrf")[2].split('"')[3]
        flood = Client(url)
        for _ in range(300):
            assert flood.request("GET", "/api/csrf", keep_cookie=False)[0] == 200
        # the user's CSRF token still opens a state-changing request (303, not 403)
        body = f"csrf={quote(csrf)}"
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        assert user.request("POST", "/logout", body=body, headers=form)[0] == 303


def _guess_for(seconds: float, attempt) -> tuple[int, list]:
    """Call ``attempt()`` (a status and response) for ``seconds`` (at least 7 times, at most
    100); returns the number answered without 429 and the 429 responses."""
    compared, refused = 0, []
    end = time.monotonic() + seconds
    for i in range(100):
        if i >= 7 and time.monotonic() > end:
            break
        status, resp = attempt()
        if status == 429:
            refused.append(resp)
        else:
            compared += 1
    return compared, refused


def test_guessing_the_secret_is_slowed_per_address(index):
    """/login took 457 guesses a second and the bearer token any number: now an address gets
    5 free guesses, then waits 1 s, 2 s, 4 s ... (429 with Retry-After, the secret not even
    compared); another address is not held up."""
    with serving(index, "--token", TOKEN) as (url, _):
        guesser = Client(url, "127.0.0.2")
        csrf = guesser.login_form()

        def login_guess():
            status, resp, _ = guesser.login("wrong-guess-123", csrf)
            return status, resp

        compared, refused = _guess_for(6.0, login_guess)
        assert 5 <= compared <= 8, compared  # 5 free, then 1 s, 2 s (and 4 s if slow)
        assert refused and all(int(r.getheader("retry-after")) >= 1 for r in refused)
        assert guesser.login(TOKEN, csrf)[0] == 429, "the right secret too early: not compared"
        friend = Client(url, "127.0.0.3")
        assert friend.login(TOKEN, friend.login_form())[0] == 303

        bearer = Client(url, "127.0.0.4")

        def bearer_guess():
            headers = {"Authorization": "Bearer wrong-guess-123"}
            status, resp, _ = bearer.request("GET", "/api/stats", headers=headers)
            return status, resp

        compared, refused = _guess_for(6.0, bearer_guess)
        assert 5 <= compared <= 8, compared
        assert (
            "too many failed guesses"
            in bearer.request("GET", "/api/stats", headers={"Authorization": f"Bearer {TOKEN}"})[2]
        )
        script = Client(url, "127.0.0.5")
        ok = script.request("GET", "/api/stats", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok[0] == 200


def _closed_after(sock: socket.socket, trickle: bytes, limit: float) -> float:
    """Send ``trickle`` a byte every 0.25 s (then nothing) until the server closes the
    connection; the seconds it took (``limit`` + 1 if it never did)."""
    start = time.monotonic()
    sock.settimeout(0.25)
    sent = 0
    while time.monotonic() - start < limit:
        try:
            if sent < len(trickle):
                sock.send(trickle[sent : sent + 1])
                sent += 1
            if sock.recv(4096) == b"":
                return time.monotonic() - start
        except TimeoutError:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - start
    return limit + 1


def _one_response(sock: socket.socket) -> bytes:
    """Read one whole HTTP/1.1 response (head and ``Content-Length`` body) from ``sock``:
    a response may arrive in several pieces, so one ``recv`` is not enough."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(65536)
        if not piece:
            return data
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    want = int(length.group(1)) if length else 0
    while len(body) < want:
        piece = sock.recv(65536)
        if not piece:
            break
        body += piece
    return head + b"\r\n\r\n" + body


def test_slow_headers_and_bodies_are_timed_out(index):
    """Slow-header connections were never timed out: headers must be complete within
    --timeout seconds of the connection or request; a body may not stop for longer."""
    with serving(index, "--timeout", "2") as (url, _):
        port = _port(url)
        with socket.create_connection(("127.0.0.1", port)) as s:  # says nothing
            assert _closed_after(s, b"", 8) < 5
        headers = b"GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
        with socket.create_connection(("127.0.0.1", port)) as s:  # slowloris
            assert _closed_after(s, headers, 8) < 5
        with socket.create_connection(("127.0.0.1", port)) as s:  # a request, then another
            s.settimeout(10)
            request = b"GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            s.sendall(request)
            assert _one_response(s).startswith(b"HTTP/1.1 200")
            time.sleep(1.0)
            s.sendall(request[:10])
            time.sleep(1.0)  # two pieces within the deadline: served
            s.sendall(request[10:])
            assert _one_response(s).startswith(b"HTTP/1.1 200")
            assert _closed_after(s, headers, 8) < 5  # the next request's headers trickle
        with socket.create_connection(("127.0.0.1", port)) as s:  # a body that stops
            s.settimeout(10)
            head = (
                "POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: multipart/form-data; boundary=XyZ\r\n"
                "Content-Length: 100000\r\n\r\n"
            )
            s.sendall(head.encode() + b"--XyZ\r\n" + b"x" * 500)
            t = time.monotonic()
            answer = b""
            while b"}" not in answer:
                piece = s.recv(65536)
                if not piece:
                    break
                answer += piece
            assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
            assert b"stopped arriving for 2 s" in answer and time.monotonic() - t < 6
            assert s.recv(65536) == b"", "the connection is closed after a 408"


_VALUES = ["", "nan", "-nan", "inf", "-1", "0", "1e999", "99999999999999999999", "x", "%00",
           "%ff", "\u2603", "' OR 1=1 --", "../../etc/passwd", "a" * 5000, "1.5", "-0"]  # fmt: skip
_GETS = [
    "/api/documents?search={v}&limit={v}&offset={v}",
    "/api/documents?offset={v}",
    "/api/documents?limit={v}",
    "/api/similar/{v}",
    "/api/report?a={v}&b={v}&exact={v}",
    "/api/jobs/{v}",
    "/documents?search={v}&page={v}",
    "/document?key={v}&exact={v}",
    "/report?a={v}&b={v}",
    "/term?run={v}&level={v}&since={v}&until={v}&folder={v}",
    "/check/{v}/document?query={v}&min={v}",
    "/check/{v}/report?query={v}&key={v}",
]


def _multipart(parts: list[tuple[str, str | None, bytes]], boundary: str = "b0und") -> bytes:
    out = b""
    for name, filename, data in parts:
        disp = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += f"--{boundary}\r\nContent-Disposition: {disp}\r\n\r\n".encode() + data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


def test_hostile_inputs_are_4xx_with_a_message(index):
    """Out-of-range offset/page, ``min`` as a file, nan and the like gave 500 or a silently
    different answer: 300 seeded random requests over every page and API route are all
    answered below 500, every API error with a message."""
    rng = random.Random(30)
    with serving(index, "--max-files", "3", "--allow-upload-to-index") as (url, _):
        c = Client(url)
        csrf = c.request("GET", "/api/csrf")[2].split('"')[3]
        fixed = ["/term?run=99999999999999999999", "/documents?page=99999999999999999999"]
        for i in range(220):  # each parameter a value of its own
            value = lambda _: quote(rng.choice(_VALUES), safe="")  # noqa: E731
            path = fixed[i] if i < len(fixed) else re.sub(r"\{v\}", value, _GETS[i % len(_GETS)])
            status, _, text = c.request("GET", path)
            assert status < 500, (path, status, text[:300])
            if path.startswith("/api/") and status >= 400:
                assert '"error"' in text, (path, text[:300])
        kinds = [
            ("text", "t.txt", ESSAY.encode()),  # pasted text sent as a file part
            ("min", "m.txt", b"5"),
            ("min", None, b"nan"),
            ("min", None, b"1e999"),
            ("file", None, b"a field, not a file"),
            ("file", "e.txt", b""),
            ("file", "b.bin", bytes(range(256)) * 40),
            ("file", "../../x.pdf", b"%PDF-1.4 not really"),
            ("file", "a.docx", b"PK\x03\x04 broken zip"),
            ("text", None, ESSAY.encode()),
            ("csrf", "c.txt", b"x"),
        ]
        answered = set()
        for _ in range(80):
            parts = rng.sample(kinds, rng.randint(1, 5))
            route = rng.choice(["/api/query", "/api/add"])
            body = _multipart(parts)
            headers = {"Content-Type": "multipart/form-data; boundary=b0und"}
            if route == "/api/query" and rng.random() < 0.5:
                headers["X-CSRF-Token"] = csrf  # /api/add without: no indexing job starts
            if rng.random() < 0.1:
                headers["Content-Type"] = "text/plain"
            if rng.random() < 0.1:
                body = body[: len(body) // 2]  # a truncated form
            status, _, text = c.request("POST", route, body=body, headers=headers)
            assert status < 500, (route, parts, status, text[:300])
            assert status < 400 or '"error"' in text, (route, text[:300])
            answered.add(status)
        # 422: a check none of whose documents could be read (issue 30 item 5)
        assert 400 in answered and answered <= {200, 400, 403, 413, 422}, answered
        many = _multipart([("file", f"f{i}.txt", b"x") for i in range(4)])
        status, _, text = c.request(
            "POST",
            "/api/query",
            body=many,
            headers={"Content-Type": "multipart/form-data; boundary=b0und"},
        )
        assert status == 413 and "Maximum number of files is 3" in text


def test_a_busy_server_answers_429_with_retry_after(index):
    """Upload forms are read in a bounded number of slots; one more waits, then 429 with
    Retry-After instead of holding more memory. Four slow uploads hold the slots for 14 s."""
    from simdask.web import api

    with serving(index, "--timeout", "5") as (url, _):
        port, stop = _port(url), threading.Event()

        def slow_upload():
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(
                    b"POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"Content-Type: multipart/form-data; boundary=XyZ\r\n"
                    b"Content-Length: 10000000\r\n\r\n--XyZ\r\n"
                    b'Content-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n'
                )
                while not stop.is_set():  # 20 kB a second: above the minimum rate
                    s.sendall(b"word " * 400)
                    time.sleep(0.1)

        holders = [threading.Thread(target=slow_upload) for _ in range(api.FORMS_AT_ONCE)]
        for h in holders:
            h.start()
        try:
            time.sleep(1.0)
            c = Client(url)
            body = _multipart([("text", None, ESSAY.encode())])
            t = time.monotonic()
            status, resp, text = c.request(
                "POST", "/api/query", body=body,
                headers={"Content-Type": "multipart/form-data; boundary=b0und"},
            )  # fmt: skip
            assert status == 429 and "busy receiving" in text, (status, text)
            assert int(resp.getheader("retry-after")) >= 1
            assert api.FORM_WAIT - 1 < time.monotonic() - t < api.FORM_WAIT + 30
        finally:
            stop.set()
            for h in holders:
                h.join(30)
        status, _, _ = Client(url).request(
            "POST", "/api/query", body=body,
            headers={"Content-Type": "multipart/form-data; boundary=b0und"},
        )  # fmt: skip
        assert status == 200


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def test_the_issues_upload_stays_within_a_memory_bound(index, tmp_path):
    """5 files of 20 MB of text in one /api/query held 1.5 GB in the server: a check now
    reads at most QUERY_TEXT_CAP characters (413 beyond), its files spooled to disk. The
    server's peak RSS (VmHWM, reset before) grows by less than 600 MiB."""
    from simdask.web import api

    rng = np.random.default_rng(0)
    vocab = np.array([f"w{i}x" for i in range(5000)])
    files = []
    for i in range(5):
        words = vocab[rng.integers(0, len(vocab), 20_000_000 // 6)]
        files.append(("file", (f"big{i}.txt", " ".join(words).encode()[:20_000_000])))
    import requests

    with serving(index) as (url, proc):
        requests.get(url + "/api/stats", timeout=30)
        Path(f"/proc/{proc.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
        before = _status_kib(proc.pid, "VmRSS")
        r = requests.post(url + "/api/query", files=files, timeout=600)
        grown = (_status_kib(proc.pid, "VmHWM") - before) / 1024
        assert r.status_code == 413, r.text[:300]
        assert f"more than {api.QUERY_TEXT_CAP:,} characters" in r.json()["error"]
        assert grown < 600, f"the server's peak RSS grew by {grown:.0f} MiB"
        assert requests.get(url + "/api/stats", timeout=30).ok


@pytest.mark.parametrize("when", ["after", "during"])
def test_shutdown_after_an_upload_exits_0_without_leaked_semaphores(index, tmp_path, when):
    """After an upload job (or during one), SIGTERM or SIGINT: exit 0, the job's cluster
    closed (no "leaked semaphore objects" from the resource tracker), no traceback."""
    import shutil

    import requests

    idx = tmp_path / "idx"
    shutil.copytree(index, idx)
    log = tmp_path / "serve.log"
    sig = signal.SIGTERM if when == "after" else signal.SIGINT
    with serving(idx, "--allow-upload-to-index", "--workers", "1", log=log) as (url, proc):
        s = requests.Session()
        csrf = s.get(url + "/api/csrf", timeout=30).json()["csrf"]
        up = [("file", (f"up{i}.txt", (ESSAY + f" number {i} ") * 20)) for i in range(30)]
        r = s.post(url + "/api/add", files=up, headers={"X-CSRF-Token": csrf}, timeout=60)
        assert r.status_code == 202, r.text
        wanted = {"done", "failed"} if when == "after" else {"running", "done", "failed"}
        deadline = time.monotonic() + 240
        while (state := s.get(url + "/api/jobs", timeout=30).json()["jobs"][0]["state"]) not in (
            wanted
        ):
            assert time.monotonic() < deadline, state
            time.sleep(0.2)
        if when == "after":
            assert state == "done"
        proc.send_signal(sig)
        assert proc.wait(180) == 0, log.read_text()
    time.sleep(1.0)  # the resource tracker writes its warning as it exits
    err = log.read_text()
    assert "leaked semaphore" not in err and "Traceback" not in err, err
