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
    assert s.get(sid) is sess and s.get("forged") is None and s.get(None) is None
    assert Sessions.csrf_ok(sess, sess.csrf)
    assert not Sessions.csrf_ok(sess, sess.csrf[:-1]) and not Sessions.csrf_ok(sess, None)
    assert not Sessions.csrf_ok(None, sess.csrf)
    other_sid, other = s.new(authenticated=True)
    assert not Sessions.csrf_ok(sess, other.csrf), "a token is tied to its session"
    s.drop(sid)
    assert s.get(sid) is None and s.get(other_sid) is other
    open_server = Sessions(None)
    assert not open_server.required and open_server.secret_ok(None)
    assert not open_server.bearer_ok("Bearer x")


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
    assert api.text_budget(cfg) == api.QUERY_TEXT_CAP == 200_000_000  # a 4 GB laptop
    assert api.text_budget(SimpleNamespace(max_files=2, max_file_bytes=10)) == 20
    for i in range(3):
        (tmp_path / f"{i}.txt").write_text("word " * 200, encoding="utf-8")  # 1,000 chars
    paths = sorted(tmp_path.glob("*.txt"))
    assert len(api.read_bounded(paths, 3000)) == 3
    with pytest.raises(TooLargeError, match=r"more than 2,999 characters of text \(by 2.txt\)"):
        api.read_bounded(paths, 2999)


def test_anonymous_traffic_never_evicts_a_logged_in_session(monkeypatch):
    """Issue 30 item 7: 10,050 anonymous requests logged every user out."""
    from simdask.web import auth

    monkeypatch.setattr(auth, "MAX_SESSIONS", 50)
    s = Sessions("the-secret")
    sid, mine = s.new(authenticated=True)
    first_anon, _ = s.new(authenticated=False)
    for _ in range(3 * auth.MAX_SESSIONS):  # a flood of cookie-less requests
        s.new(authenticated=False)
    assert s.get(sid) is mine and mine.authenticated
    assert s.get(first_anon) is None  # anonymous ones go, least recently seen first
    kept = [s.new(authenticated=True)[0] for _ in range(auth.MAX_SESSIONS - 1)]
    assert s.get(sid) is mine  # seen recently: the next logged-in one evicts another
    s.new(authenticated=True)
    assert s.get(sid) is mine and s.get(kept[0]) is None


def test_failed_logins_are_limited_for_the_whole_server():
    from simdask.web.auth import LoginLimiter

    lim = LoginLimiter(failures=3, window=60.0)
    for t in (0.0, 1.0, 2.0):
        assert lim.wait(now=t) == 0.0
        lim.failed(now=t)
    assert lim.wait(now=3.0) == pytest.approx(57.0)  # the 4th guess waits for the window
    assert lim.wait(now=60.5) == 0.0  # the first failure left the window
