"""Access control of ``simdask serve``: the secret (token or password), sessions, CSRF tokens.

- Bound to a loopback address without a secret, anyone on this machine may read; bound to any
  other address a secret is required (:func:`check_bind`).
- With a secret, a browser logs in once (``POST /login``, the secret compared in constant time
  with :func:`hmac.compare_digest`) and gets a session cookie (random, ``HttpOnly``,
  ``SameSite=Strict``); a script sends ``Authorization: Bearer SECRET`` instead.
- Every session has a CSRF token (in the page, sent back as the form field ``csrf`` or the
  header ``X-CSRF-Token``); a state-changing request made with the session cookie must carry it
  (:meth:`Sessions.csrf_ok`). A bearer request needs none (the browser never adds the header by
  itself).

Sessions live in the server's memory: a restart logs everyone out. Sessions that logged in
and those that did not are kept apart, each at most :data:`MAX_SESSIONS` (least recently
seen dropped first), so anonymous traffic never evicts a logged-in session. Failed logins are
limited for the whole server (:class:`LoginLimiter`): beyond :data:`LOGIN_FAILURES` in
:data:`LOGIN_WINDOW` seconds, every login is refused (429) until the window has passed.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from pathlib import Path

from simdask.errors import ConfigError

__all__ = [
    "COOKIE",
    "LOGIN_FAILURES",
    "LOGIN_WINDOW",
    "MAX_SESSIONS",
    "LoginLimiter",
    "Session",
    "Sessions",
    "check_bind",
    "is_loopback",
    "read_secret",
]

#: name of the session cookie
COOKIE = "simdask_session"
#: sessions kept of each kind (logged in; not logged in)
MAX_SESSIONS = 10_000
#: failed logins allowed in :data:`LOGIN_WINDOW` seconds, for the whole server
LOGIN_FAILURES = 20
LOGIN_WINDOW = 60.0
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
    seen: float


class Sessions:
    """The sessions of one server, and the check of the secret."""

    def __init__(self, secret: str | None):
        self.secret = secret
        # logged in / not: kept apart, least recently seen first
        self._pools: dict[bool, OrderedDict[str, Session]] = {
            True: OrderedDict(),
            False: OrderedDict(),
        }
        self._lock = threading.Lock()

    @property
    def required(self) -> bool:
        """Whether a secret must be given (a token or password was configured)."""
        return self.secret is not None

    def secret_ok(self, given: str | None) -> bool:
        """Constant-time comparison of ``given`` with the secret (True when none is set)."""
        if self.secret is None:
            return True
        if given is None:
            return False
        return hmac.compare_digest(given.encode("utf-8"), self.secret.encode("utf-8"))

    def bearer_ok(self, authorization: str | None) -> bool:
        """Whether an ``Authorization: Bearer SECRET`` header carries the secret."""
        if self.secret is None or not authorization:
            return False
        scheme, _, value = authorization.partition(" ")
        return scheme.lower() == "bearer" and self.secret_ok(value.strip())

    def get(self, sid: str | None) -> Session | None:
        """The live session with this cookie value, or None."""
        if not sid:
            return None
        with self._lock:
            pool = next((p for p in self._pools.values() if sid in p), None)
            if pool is None:
                return None
            s = pool[sid]
            now = time.time()
            if now - s.seen > _SESSION_SECONDS:
                del pool[sid]
                return None
            s.seen = now
            pool.move_to_end(sid)
            return s

    def new(self, authenticated: bool) -> tuple[str, Session]:
        """A new session; beyond :data:`MAX_SESSIONS` of its kind (logged in or not) the least
        recently seen of that kind is dropped. Returns its id and itself."""
        sid = secrets.token_urlsafe(32)
        s = Session(secrets.token_urlsafe(32), authenticated, time.time())
        with self._lock:
            pool = self._pools[authenticated]
            while len(pool) >= MAX_SESSIONS:
                pool.popitem(last=False)
            pool[sid] = s
        return sid, s

    def drop(self, sid: str | None) -> None:
        """Log a session out."""
        with self._lock:
            for pool in self._pools.values():
                pool.pop(sid or "", None)

    @staticmethod
    def csrf_ok(session: Session | None, given: str | None) -> bool:
        """Whether ``given`` is the CSRF token of ``session`` (constant time)."""
        if session is None or not given:
            return False
        return hmac.compare_digest(given.encode("utf-8"), session.csrf.encode("utf-8"))


class LoginLimiter:
    """Failed logins of the whole server: at most ``failures`` in ``window`` seconds; beyond,
    :meth:`wait` says how long every login is refused (a guesser gets ``failures`` tries a
    window, not hundreds a second)."""

    def __init__(self, failures: int = LOGIN_FAILURES, window: float = LOGIN_WINDOW):
        self.failures, self.window = failures, window
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def wait(self, now: float | None = None) -> float:
        """Seconds until a login may be tried again (0: now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            while self._times and now - self._times[0] > self.window:
                self._times.popleft()
            if len(self._times) < self.failures:
                return 0.0
            return self.window - (now - self._times[0])

    def failed(self, now: float | None = None) -> None:
        """Record a failed login."""
        with self._lock:
            self._times.append(time.monotonic() if now is None else now)


def cookie_header(sid: str) -> str:
    """The ``Set-Cookie`` value of a session: HttpOnly, SameSite=Strict, whole site."""
    return f"{COOKIE}={sid}; Path=/; HttpOnly; SameSite=Strict; Max-Age={_SESSION_SECONDS}"
