"""The web server's pieces without a server: safe upload names (any string), the secret and
bind checks, sessions and CSRF tokens, the bounded store of checked texts, the histogram in SQL
against a Python count."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask.errors import ConfigError
from simdask.web.auth import Sessions, check_bind, is_loopback, read_secret
from simdask.web.reader import QueryStore
from simdask.web.uploads import TooLargeError, safe_name, save_uploads

pytestmark = pytest.mark.unit


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_safe_name_never_leaves_its_folder(name):
    folder = Path("/srv/uploads/7")
    safe = safe_name(name)
    assert safe and "/" not in safe and "\\" not in safe and "\0" not in safe
    assert not safe.startswith(".") and len(safe) <= 150
    assert (folder / safe).resolve().parent == folder


@pytest.mark.parametrize(
    ("given_name", "expected"),
    [
        ("../../escape.txt", "escape.txt"),
        ("/etc/passwd", "passwd"),
        ("..\\..\\win.txt", "win.txt"),
        ("a/../../b.txt", "b.txt"),
        ("..", "upload.txt"),
        ("", "upload.txt"),
        (None, "upload.txt"),
        (".bashrc", "bashrc"),
        ("essay <1> & 'x'.docx", "essay _1_ _ _x_.docx"),
        ("Übung 3.pdf", "Übung 3.pdf"),
        ("x" * 300 + ".txt", "x" * 146 + ".txt"),
    ],
)
def test_safe_name_examples(given_name, expected):
    assert safe_name(given_name) == expected


class _Upload:
    def __init__(self, name, data):
        self.filename, self.size, self._f = name, None, io.BytesIO(data)

    async def read(self, n):
        return self._f.read(n)


def test_save_uploads_bounded_and_inside(tmp_path):
    files = [_Upload("../a.txt", b"one"), _Upload("../a.txt", b"two")]
    paths = asyncio.run(save_uploads(files, tmp_path, 10))
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == ["0/a.txt", "1/a.txt"]
    flat = tmp_path / "flat"
    flat.mkdir()
    files = [_Upload("../a.txt", b"one"), _Upload("a.txt", b"two"), _Upload("a", b"3")]
    paths = asyncio.run(save_uploads(files, flat, 10, flat=True))
    assert [p.name for p in paths] == ["a.txt", "a-2.txt", "a"]
    assert [p.read_bytes() for p in paths] == [b"one", b"two", b"3"]
    big = tmp_path / "big"
    big.mkdir()
    with pytest.raises(TooLargeError, match=r"x\.txt is over 11 bytes, larger than the upload"):
        asyncio.run(save_uploads([_Upload("x.txt", b"y" * 11)], big, 10))
    assert not any(p.is_file() for p in big.rglob("*")), "the partial file was removed"


def test_secret_and_bind(tmp_path):
    assert read_secret(None, None) is None
    assert read_secret("12345678", None) == "12345678"
    pw = tmp_path / "pw"
    pw.write_text("  long-password \nsecond line\n", encoding="utf-8")
    assert read_secret(None, str(pw)) == "long-password"
    with pytest.raises(ConfigError, match="at least 8 characters, found 3"):
        read_secret("abc", None)
    with pytest.raises(ConfigError, match="cannot read --password-file"):
        read_secret(None, str(tmp_path / "missing"))
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert is_loopback(host)
        check_bind(host, None)
    for host in ("0.0.0.0", "::", "192.168.1.4", "example.org"):
        assert not is_loopback(host)
        with pytest.raises(ConfigError, match="--token"):
            check_bind(host, None)
        check_bind(host, "a-secret-of-8")


def test_sessions_and_csrf():
    s = Sessions("the-secret")
    assert s.required and s.secret_ok("the-secret") and not s.secret_ok("the-secreT")
    assert not s.secret_ok(None) and not s.secret_ok("")
    assert s.bearer_ok("Bearer the-secret") and s.bearer_ok("bearer  the-secret ")
    assert not s.bearer_ok("Basic the-secret") and not s.bearer_ok(None)
    sid, sess = s.new(authenticated=False)
    assert s.get(sid) == sess and not sess.authenticated  # a signed cookie: the same session
    assert s.get("forged") is None and s.get(None) is None
    assert Sessions.csrf_ok(sess, sess.csrf)
    assert not Sessions.csrf_ok(sess, sess.csrf[:-1]) and not Sessions.csrf_ok(sess, None)
    assert not Sessions.csrf_ok(None, sess.csrf)
    other_sid, other = s.new(authenticated=True)
    assert not Sessions.csrf_ok(sess, other.csrf), "a token is tied to its session"
    s.drop(other_sid)
    assert s.get(other_sid) is None and s.get(sid) == sess
    open_server = Sessions(None)
    assert not open_server.required and open_server.secret_ok(None)
    assert not open_server.bearer_ok("Bearer x")
    open_sid, visitor = open_server.new(authenticated=True)
    assert visitor.authenticated and open_server.get(open_sid) == visitor
    assert open_server.stored == 0  # no secret: nothing is ever stored


def test_anonymous_cookies_cannot_be_forged():
    """A signed cookie changed anywhere, signed by another run of the server (another key),
    older than the session lifetime, or not ASCII, opens no session."""
    from simdask.web import auth

    s, other = Sessions("the-secret"), Sessions("the-secret")
    sid, sess = s.new(authenticated=False)
    assert other.get(sid) is None  # another start of the server: another key
    nonce, _, mac = sid.rpartition(".")
    for bad in (
        nonce + "." + mac[:-1] + ("A" if mac[-1] != "A" else "B"),
        nonce.replace(".", ".1", 1) + "." + mac,
        sid + "x",
        "a." + sid,
        "a.x.1.ü",
        "a...",
        "a.",
    ):
        assert s.get(bad) is None, bad
    assert s.get(sid) == sess
    born = int(nonce.rpartition(".")[2])
    old = Sessions("the-secret")
    old_sid, _ = old.new(authenticated=False)
    assert old.get(old_sid) is not None
    real_time = auth.time.time
    try:
        auth.time.time = lambda: born + auth._SESSION_SECONDS + 10  # twelve hours later
        assert old.get(old_sid) is None
    finally:
        auth.time.time = real_time


def test_query_store_bounded():
    store = QueryStore(max_queries=3, max_bytes=25)
    ids = [store.put({f"k{i}": "t" * 10}) for i in range(3)]
    # 30 characters > 25: the oldest is forgotten
    assert store.get(ids[0], "k0") is None
    assert store.get(ids[1], "k1") == "t" * 10 and store.get(ids[2], "k2") == "t" * 10
    more = [store.put({"x": "u"}) for _ in range(3)]
    assert [store.get(q, "x") for q in more] == ["u"] * 3
    assert store.get(ids[1], "k1") is None  # at most three queries
    assert store.get("unknown", "x") is None


def test_pair_report_escapes_keys_once():
    """Issue 12 item 14: the summary escaped keys twice (``a&b`` showed as ``a&amp;b``)."""
    from simdask.evidence.passages import compare_texts
    from simdask.evidence.report_html import render_pair_html

    text = "one two three four five six seven eight nine ten"
    ev = compare_texts(text, text)
    a, b = 'a&b <i>"x"</i>', "c'd"
    page = render_pair_html(ev.report(a, b, ev.similarity), text, text)
    esc_a, esc_b = "a&amp;b &lt;i&gt;&quot;x&quot;&lt;/i&gt;", "c&#x27;d"
    assert f"<td>{esc_a} → {esc_b}</td>" in page
    assert f"<h1>{esc_a} and {esc_b}</h1>" in page
    assert "&amp;amp;" not in page and "&amp;lt;" not in page and "&amp;#x27;" not in page
    assert "<i>" not in page


def test_checks_at_once_are_bounded_and_the_next_is_told_busy(monkeypatch):
    """Issue 30 item 6: at most CHECKS_AT_ONCE checks hold memory at a time; another waits
    CHECK_WAIT seconds for a slot, then is answered 429 (BusyError)."""
    from types import SimpleNamespace

    from simdask.web import api

    monkeypatch.setattr(api, "CHECK_WAIT", 0.2)

    async def scenario():
        srv = SimpleNamespace(checks=asyncio.Semaphore(api.CHECKS_AT_ONCE))
        release = asyncio.Event()
        inside = []

        async def hold():
            async with api.check_slot(srv):
                inside.append(1)
                await release.wait()

        holders = [asyncio.create_task(hold()) for _ in range(api.CHECKS_AT_ONCE)]
        while len(inside) < api.CHECKS_AT_ONCE:
            await asyncio.sleep(0.01)
        with pytest.raises(api.BusyError, match="busy"):
            async with api.check_slot(srv):
                pass
        release.set()
        await asyncio.gather(*holders)
        async with api.check_slot(srv):  # free again
            return True

    assert asyncio.run(scenario())


def test_text_budget_of_a_check(tmp_path):
    from types import SimpleNamespace

    from simdask.web import api

    cfg = SimpleNamespace(max_files=50, max_file_bytes=100_000_000)
    assert api.text_budget(cfg) == api.QUERY_TEXT_CAP == 50_000_000  # a 4 GB laptop
    assert api.text_budget(SimpleNamespace(max_files=2, max_file_bytes=10)) == 20
    for i in range(3):
        (tmp_path / f"{i}.txt").write_text("word " * 200, encoding="utf-8")  # 1,000 chars
    paths = sorted(tmp_path.glob("*.txt"))
    assert len(api.read_bounded(paths, 3000)) == 3
    with pytest.raises(TooLargeError, match=r"more than 2,999 characters of text \(by 2.txt\)"):
        api.read_bounded(paths, 2999)


@pytest.mark.parametrize("secret", ["the-secret", None])
def test_anonymous_traffic_never_evicts_a_session(secret):
    """Issue 30 item 7: 10,050 anonymous requests logged every user out. Anonymous
    sessions are signed cookies: a flood stores nothing, every earlier session stays."""
    s = Sessions(secret, max_sessions=50)
    sid, mine = s.new(authenticated=True)
    first_anon, anon = s.new(authenticated=False)
    for _ in range(300):  # a flood of cookie-less requests
        s.new(authenticated=not s.required)
    assert s.get(sid) == mine and mine.authenticated
    assert s.get(first_anon) == anon and s.stored == (1 if secret else 0)
    if secret:  # logged-in ones: bounded, least recently seen dropped first
        kept = [s.new(authenticated=True)[0] for _ in range(49)]
        assert s.get(sid) is mine  # seen recently: the next logged-in one evicts another
        s.new(authenticated=True)
        assert s.get(sid) is mine and s.get(kept[0]) is None and s.stored == 50


def test_failed_logins_are_limited_for_the_whole_server():
    from simdask.web.auth import LoginLimiter

    lim = LoginLimiter(failures=3, window=60.0)
    for t, address in ((0.0, "a"), (1.0, "b"), (2.0, "c")):
        assert lim.wait(address, now=t) == 0.0
        lim.failed(address, now=t)
    assert lim.wait("d", now=3.0) == pytest.approx(57.0)  # the 4th guess waits for the window
    assert lim.wait("d", now=60.5) == 0.0  # the first failure left the window


def test_failed_logins_of_one_address_back_off():
    """Per address: FREE free guesses, then a wait doubling from 1 s up to max_wait; other
    addresses are not held up; an address is forgotten after ``forget`` seconds."""
    from simdask.web.auth import LoginLimiter

    lim = LoginLimiter(failures=10**6, window=60.0, free=3, max_wait=8.0, forget=1000.0)
    t = 0.0
    for _ in range(3):
        assert lim.wait("1.2.3.4", now=t) == 0.0
        lim.failed("1.2.3.4", now=t)
    waits = []
    for _ in range(6):
        wait = lim.wait("1.2.3.4", now=t)
        waits.append(wait)
        assert lim.wait("5.6.7.8", now=t) == 0.0  # another address is not held up
        t += wait
        assert lim.wait("1.2.3.4", now=t) == 0.0
        lim.failed("1.2.3.4", now=t)
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert lim.wait("1.2.3.4", now=t + 1) == pytest.approx(7.0)
    assert lim.wait("1.2.3.4", now=t + 1001) == 0.0  # forgotten
    guesses = 0  # a guesser as fast as it can, for ten minutes: a few dozen guesses
    lim = LoginLimiter(failures=10**6, window=60.0)
    for step in range(60_000):
        if lim.wait("x", now=step / 100) == 0.0:
            lim.failed("x", now=step / 100)
            guesses += 1
    assert guesses < 20, guesses


def test_a_body_that_stops_or_trickles_times_out():
    from simdask.web.limits import BodyTimeoutError, timed_receive

    async def scenario(pieces, delay, idle, min_rate):
        async def receive():
            await asyncio.sleep(delay)
            more = pieces.pop(0) if pieces else None
            return {"type": "http.request", "body": more or b"", "more_body": bool(pieces)}

        timed = timed_receive(receive, idle, min_rate)
        got = b""
        while True:
            message = await timed()
            got += message["body"]
            if not message["more_body"]:
                return got

    assert asyncio.run(scenario([b"ab", b"cd"], 0.01, 1.0, 1.0)) == b"abcd"
    with pytest.raises(BodyTimeoutError, match=r"stopped arriving for 0\.05 s"):
        asyncio.run(scenario([b"ab", b"cd"], 0.2, 0.05, 1.0))
    with pytest.raises(BodyTimeoutError, match="slower than the 1,000"):  # 1 byte / 20 ms
        asyncio.run(scenario([b"x"] * 30, 0.02, 0.1, 1000.0))
