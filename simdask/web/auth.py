"""Access control of ``simdask serve``: the secret (token or password), sessions, CSRF tokens,
the limit on guessing the secret.

- Bound to a loopback address without a secret, anyone on this machine may read; bound to any
  other address a secret is required (:func:`check_bind`).
- With a secret, a browser logs in once (``POST /login``, the secret compared in constant time
  with :func:`hmac.compare_digest`) and gets a session cookie (random, ``HttpOnly``,
  ``SameSite=Strict``); a script sends ``Authorization: Bearer SECRET`` instead.
- Every session has a CSRF token (in the page, sent back as the form field ``csrf`` or the
  header ``X-CSRF-Token``); a state-changing request made with the session cookie must carry it
  (:meth:`Sessions.csrf_ok`). A bearer request needs none (the browser never adds the header by
  itself).

Only a successful login stores anything (the logged-in sessions, at most
:data:`MAX_SESSIONS`, least recently seen dropped first; a restart logs everyone out). A
visitor who has not logged in (everyone, on a server without a secret) gets a *signed*
cookie instead: a random nonce, its time and an HMAC under a key drawn at start; its CSRF
token is another HMAC of the nonce. Nothing of it is kept by the server, so any number of
anonymous requests costs no memory and cannot evict a logged-in session.

Guessing the secret (a wrong ``POST /login`` or a wrong bearer token) is limited by
:class:`LoginLimiter`: per client address, :data:`FREE_FAILURES` guesses, then a wait that
doubles with each further failure (1 s, 2 s, 4 s ... up to :data:`MAX_WAIT`); for the whole
server, at most :data:`LOGIN_FAILURES` in :data:`LOGIN_WINDOW` seconds (many addresses at
once). Beyond either limit the answer is 429 with ``Retry-After``, and the secret is not even
compared, so a guess made too early tells nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from pathlib import Path

from simdask.errors import ConfigError

__all__ = [
    "COOKIE",
    "FREE_FAILURES",
    "LOGIN_FAILURES",
    "LOGIN_WINDOW",
    "MAX_ADDRESSES",
    "MAX_SESSIONS",
    "MAX_WAIT",
    "LoginLimiter",
    "Session",
    "Sessions",
    "check_bind",
    "is_loopback",
    "read_secret",
]

#: name of the session cookie
COOKIE = "simdask_session"
#: logged-in sessions kept (anonymous ones are signed cookies: nothing is kept)
MAX_SESSIONS = 10_000
#: failed guesses of the secret allowed in :data:`LOGIN_WINDOW` seconds, whole server
LOGIN_FAILURES = 60
LOGIN_WINDOW = 60.0
#: failed guesses of one client address before it must wait (1 s, doubling per failure)
FREE_FAILURES = 5
#: the longest wait of one address between guesses, seconds
MAX_WAIT = 300.0
#: client addresses whose failures are remembered (least recently failed forgotten first)
MAX_ADDRESSES = 10_000
_ANON = "a."
_SESSION_SECONDS = 12 * 3600


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) only accepts connections from this
    machine (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_secret(token: str | None, password_file: str | None) -> str | None:
    """The secret from ``--token`` or ``--password-file`` (its first line, stripped); None
    when neither is given. An empty secret is a :class:`ConfigError`."""
    if token is not None and password_file is not None:
        raise ConfigError("give --token or --password-file, not both")
    if password_file is not None:
        try:
            lines = Path(password_file).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise ConfigError(f"cannot read --password-file {password_file}: {e}") from e
        token = lines[0].strip() if lines else ""
    if token is not None and len(token) < 8:
        raise ConfigError(
            f"the token or password must have at least 8 characters, found {len(token)}"
        )
    return token


def check_bind(host: str, secret: str | None) -> None:
    """Refuse to serve on a non-loopback address without a secret."""
    if secret is None and not is_loopback(host):
        raise ConfigError(
            f"--host {host} accepts connections from other machines: give --token T or "
            "--password-file F (or bind to 127.0.0.1, the default)"
        )


@dataclass
class Session:
    """One browser session: its CSRF token, whether it logged in, when it was last seen."""

    csrf: str
    authenticated: bool
    seen: float = field(compare=False)


class Sessions:
    """The sessions of one server (logged-in ones stored, the others signed cookies), and the
    check of the secret. ``max_sessions``: logged-in sessions kept."""

    def __init__(self, secret: str | None, max_sessions: int | None = None):
        self.secret = secret
        self.max_sessions = max_sessions or MAX_SESSIONS
        self._key = secrets.token_bytes(32)  # signs anonymous cookies; new at every start
        self._stored: OrderedDict[str, Session] = OrderedDict()  # least recently seen first
        self._lock = threading.Lock()

    @property
    def required(self) -> bool:
        """Whether a secret must be given (a token or password was configured)."""
        return self.secret is not None

    @property
    def stored(self) -> int:
        """Sessions kept in memory (only logged-in ones)."""
        with self._lock:
            return len(self._stored)

    def secret_ok(self, given: str | None) -> bool:
        """Constant-time comparison of ``given`` with the secret (True when none is set)."""
        if self.secret is None:
            return True
        if given is None:
            return False
        return hmac.compare_digest(given.encode("utf-8"), self.secret.encode("utf-8"))

    @staticmethod
    def bearer_of(authorization: str | None) -> str | None:
        """The token of an ``Authorization: Bearer TOKEN`` header (None: no such header)."""
        scheme, _, value = (authorization or "").partition(" ")
        return value.strip() if scheme.lower() == "bearer" else None

    def bearer_ok(self, authorization: str | None) -> bool:
        """Whether an ``Authorization: Bearer SECRET`` header carries the secret."""
        token = self.bearer_of(authorization)
        return self.secret is not None and token is not None and self.secret_ok(token)

    def get(self, sid: str | None) -> Session | None:
        """The live session with this cookie value (a stored logged-in one, or a valid signed
        anonymous cookie), or None."""
        if not sid:
            return None
        now = time.time()
        if sid.startswith(_ANON):
            return self._anonymous(sid, now)
        with self._lock:
            s = self._stored.get(sid)
            if s is None:
                return None
            if now - s.seen > _SESSION_SECONDS:
                del self._stored[sid]
                return None
            s.seen = now
            self._stored.move_to_end(sid)
            return s

    def new(self, authenticated: bool) -> tuple[str, Session]:
        """A new session: logged in on a server with a secret, stored (beyond
        ``max_sessions`` the least recently seen is dropped); otherwise a signed cookie,
        nothing stored. Returns its cookie value and itself."""
        now = time.time()
        if not (authenticated and self.required):
            nonce = f"{secrets.token_urlsafe(24)}.{int(now)}"
            sid = f"{_ANON}{nonce}.{self._mac('sid', nonce)}"
            return sid, Session(self._mac("csrf", nonce), not self.required, now)
        sid = secrets.token_urlsafe(32)
        s = Session(secrets.token_urlsafe(32), True, now)
        with self._lock:
            while len(self._stored) >= self.max_sessions:
                self._stored.popitem(last=False)
            self._stored[sid] = s
        return sid, s

    def drop(self, sid: str | None) -> None:
        """Log a session out (a signed anonymous cookie holds nothing to drop)."""
        with self._lock:
            self._stored.pop(sid or "", None)

    @staticmethod
    def csrf_ok(session: Session | None, given: str | None) -> bool:
        """Whether ``given`` is the CSRF token of ``session`` (constant time)."""
        if session is None or not given:
            return False
        return hmac.compare_digest(given.encode("utf-8"), session.csrf.encode("utf-8"))

    def _mac(self, purpose: str, nonce: str) -> str:
        digest = hmac.new(self._key, f"{purpose}:{nonce}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def _anonymous(self, sid: str, now: float) -> Session | None:
        """The session of a signed anonymous cookie ``a.NONCE.TIME.MAC``, or None (forged,
        signed by an earlier run of the server, or older than the session lifetime)."""
        nonce, _, mac = sid[len(_ANON) :].rpartition(".")
        _, _, born = nonce.rpartition(".")
        expected = self._mac("sid", nonce).encode()
        if not born.isdigit() or not hmac.compare_digest(mac.encode("utf-8", "replace"), expected):
            return None
        if now - int(born) > _SESSION_SECONDS:
            return None
        return Session(self._mac("csrf", nonce), not self.required, now)


class LoginLimiter:
    """Failed guesses of the secret: per client address :data:`FREE_FAILURES` free, then a
    wait doubling from 1 s up to ``max_wait`` (an address is forgotten ``forget`` seconds
    after its last failure; at most :data:`MAX_ADDRESSES` remembered); for the whole server
    at most ``failures`` in ``window`` seconds. :meth:`wait` says how long an address must
    wait before its next guess is even compared."""

    def __init__(
        self,
        failures: int = LOGIN_FAILURES,
        window: float = LOGIN_WINDOW,
        free: int = FREE_FAILURES,
        max_wait: float = MAX_WAIT,
        forget: float = 3600.0,
    ):
        self.failures, self.window = failures, window
        self.free, self.max_wait, self.forget = free, max_wait, forget
        self._times: deque[float] = deque()
        self._by_address: OrderedDict[str, tuple[int, float]] = OrderedDict()  # (n, last)
        self._lock = threading.Lock()

    def wait(self, address: str = "", now: float | None = None) -> float:
        """Seconds until ``address`` may guess again (0: now): the longer of its own
        back-off and the server-wide limit."""
        now = time.monotonic() if now is None else now
        with self._lock:
            while self._times and now - self._times[0] > self.window:
                self._times.popleft()
            server = 0.0
            if len(self._times) >= self.failures:
                server = self.window - (now - self._times[0])
            n, last = self._by_address.get(address, (0, now))
            if n and now - last > self.forget:
                n = 0
            own = 0.0
            if n >= self.free:
                own = min(self.max_wait, 2.0 ** (n - self.free)) - (now - last)
            return max(server, own, 0.0)

    def failed(self, address: str = "", now: float | None = None) -> None:
        """Record a failed guess from ``address``."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._times.append(now)
            n, last = self._by_address.pop(address, (0, now))
            n = 0 if n and now - last > self.forget else n
            self._by_address[address] = (n + 1, now)
            while len(self._by_address) > MAX_ADDRESSES:
                self._by_address.popitem(last=False)


def cookie_header(sid: str) -> str:
    """The ``Set-Cookie`` value of a session: HttpOnly, SameSite=Strict, whole site."""
    return f"{COOKIE}={sid}; Path=/; HttpOnly; SameSite=Strict; Max-Age={_SESSION_SECONDS}"
