"""The web application of ``simdask serve`` (Starlette; pages from Jinja2 templates with
autoescaping, so every key and text is escaped exactly once).

Pages: ``/`` check documents (upload or paste; the table is filled from ``POST /api/query``),
``/documents`` search by key, ``/document?key=K`` a document's stored matches, ``/report?a=&b=``
the side-by-side report of two indexed documents, ``/check/{qid}/report?query=&key=`` that of
a checked document and an indexed one, ``/stats`` statistics and the similarity histogram,
``/errors`` the last run's per-file errors, ``/add`` uploads to the index (only with
``allow_upload``). The JSON API is in :mod:`simdask.web.api`; access control in
:mod:`simdask.web.auth` (enforced by :class:`Guard` for every request).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import tempfile
from contextlib import asynccontextmanager
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from simdask.errors import ConfigError, DocumentNotFoundError
from simdask.evidence import report_html
from simdask.evidence.doc_html import VIEW_CSS, VIEW_JS
from simdask.evidence.pair_view import index_report
from simdask.evidence.report_html import render_pair_html
from simdask.evidence.site import histogram_bars
from simdask.read.batch import GROUP_LEVEL
from simdask.web import api
from simdask.web.api import MAX_OFFSET, csrf_ok, int_arg, int_param, server_of
from simdask.web.auth import (
    COOKIE,
    MAX_SESSIONS,
    LoginLimiter,
    Sessions,
    cookie_header,
    is_loopback,
)
from simdask.web.jobs import Jobs
from simdask.web.limits import BodyTimeoutError, body_timeout_response, timed_receive
from simdask.web.reader import (
    QueryStore,
    Reader,
    last_errors,
    search_documents,
    similarity_histogram,
)
from simdask.web.view_settings import view_settings
from simdask.web.views import checked_document, document_with_view, term_overview

__all__ = ["Settings", "create_app"]

_HERE = Path(__file__).parent
_FORGOTTEN = "this checked document is no longer kept by the server: check it again"
_PAGE_SIZE = 100


@dataclass(frozen=True)
class Settings:
    """How the server runs: the index, the address it is bound to (for the Host check), the
    secret (None: none), uploads (``max_file_bytes`` per file, ``max_files`` per request),
    whether uploads may be added to the index, and the cluster spec for those runs;
    ``timeout``: seconds a client may take for its request headers or stay silent while
    sending a body; ``max_sessions``: logged-in sessions kept."""

    index: Path
    host: str = "127.0.0.1"
    secret: str | None = None
    max_file_bytes: int = 100_000_000
    max_files: int = 50
    allow_upload: bool = False
    cluster: Any = None
    preload: bool = True
    retry_lock: float = 2.0
    timeout: float = 15.0
    max_sessions: int = MAX_SESSIONS


class Server:
    """What the routes share: settings, reader, sessions, query texts, jobs, templates."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.reader = Reader(settings.index, settings.preload)
        self.sessions = Sessions(settings.secret, settings.max_sessions)
        self.logins = LoginLimiter()  # failed guesses of the secret, per address and in all
        self.queries = QueryStore()
        self.checks = asyncio.Semaphore(api.CHECKS_AT_ONCE)  # checks processed at once
        self.forms = asyncio.Semaphore(api.FORMS_AT_ONCE)  # upload forms read at once
        self.tmp = tempfile.TemporaryDirectory(prefix="simdask-serve-")
        self.jobs = (
            Jobs(settings.index, settings.cluster, settings.max_file_bytes, settings.retry_lock)
            if settings.allow_upload
            else None
        )
        self.env = Environment(
            loader=PackageLoader("simdask.web", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )

    def page(self, request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        """A template rendered with the session's CSRF token and the navigation flags."""
        session = request.scope.get("simdask_session")
        html = self.env.get_template(name).render(
            csrf=session.csrf if session else "",
            allow_upload=self.settings.allow_upload,
            auth=self.sessions.required,
            **ctx,
        )
        return HTMLResponse(html, status)

    def close(self) -> None:
        """Stop the jobs thread and the reader; remove the temporary folder."""
        if self.jobs is not None:
            self.jobs.close()
        self.reader.close()
        self.tmp.cleanup()


# --- access control -------------------------------------------------------------------------
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(report_html._JS.encode()).digest()).decode()
_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (
        b"content-security-policy",
        (
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
            f"script-src 'self' 'sha256-{_SCRIPT_HASH}'; form-action 'self'; "
            "frame-ancestors 'none'; base-uri 'none'"
        ).encode(),
    ),
]
_OPEN_PATHS = ("/login", "/static/")


class Guard:
    """ASGI middleware: the Host check (against DNS rebinding), the session cookie (a signed
    one on first visit), the secret (pages redirect to ``/login``, the API answers 401; a
    wrong bearer token counts as a failed guess, see :class:`LoginLimiter`), the deadline
    on the request body, security headers. Sets ``scope["simdask_session"]`` and
    ``scope["simdask_bearer"]``."""

    def __init__(self, app, server: Server):
        self.app = app
        self.server = server

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        path = scope["path"]
        if not self._host_ok(headers.get("host", "")):
            resp = Response("unexpected Host header", 400, media_type="text/plain")
            return await resp(scope, receive, send)
        sessions = self.server.sessions
        cookie = SimpleCookie(headers.get("cookie", ""))
        sid = cookie[COOKIE].value if COOKIE in cookie else None
        session = sessions.get(sid)
        bearer, wait = self._bearer(headers.get("authorization"), client_address(scope))
        if wait > 0:
            resp = too_many_guesses(wait)
            return await resp(scope, receive, send)
        receive = timed_receive(receive, self.server.settings.timeout)
        new_cookie = None
        if session is None and not bearer:  # a script with the bearer token needs none
            sid, session = sessions.new(authenticated=not sessions.required)
            new_cookie = cookie_header(sid)
        scope["simdask_session"], scope["simdask_sid"] = session, sid
        scope["simdask_bearer"] = bearer
        allowed = bearer or session.authenticated or path.startswith(_OPEN_PATHS)
        if not allowed:
            if path.startswith("/api/"):
                resp = JSONResponse(
                    {"error": "authentication required: send Authorization: Bearer TOKEN"}, 401
                )
            else:
                resp = RedirectResponse("/login", 303)
        else:
            resp = self.app

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                extra = list(_HEADERS)
                if new_cookie:
                    extra.append((b"set-cookie", new_cookie.encode("latin-1")))
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        await resp(scope, receive, send_with_headers)

    def _bearer(self, authorization: str | None, address: str) -> tuple[bool, float]:
        """Whether the request carries the secret as a bearer token, and the seconds its
        address must wait before a token is even compared (0: none)."""
        sessions, logins = self.server.sessions, self.server.logins
        token = sessions.bearer_of(authorization)
        if token is None or not sessions.required:
            return False, 0.0
        wait = logins.wait(address)
        if wait > 0:
            return False, wait
        if sessions.secret_ok(token):
            return True, 0.0
        logins.failed(address)
        return False, 0.0

    def _host_ok(self, host: str) -> bool:
        if self.server.sessions.required or not is_loopback(self.server.settings.host):
            return True  # a secret protects it; any name may reach it
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.strip("[]") in {"localhost", "127.0.0.1", "::1", self.server.settings.host}


def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such route: 404, wrong method: 405): under ``/api/`` as
    ``{"error": message}`` like every other API error, elsewhere as plain text."""
    status = getattr(exc, "status_code", 500)
    detail = f"{getattr(exc, 'detail', '')}: {request.method} {request.url.path}"
    headers = getattr(exc, "headers", None)
    if status in (204, 304):  # no body allowed
        return Response(status_code=status, headers=headers)
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": detail}, status, headers=headers)
    return Response(detail, status, headers=headers, media_type="text/plain")


def client_address(scope) -> str:
    """The client's address as the server sees it (behind a reverse proxy: the proxy's)."""
    client = scope.get("client")
    return str(client[0]) if client else ""


def too_many_guesses(wait: float) -> Response:
    """429 for a guess of the secret made before its address's wait has passed."""
    return JSONResponse(
        {"error": f"too many failed guesses of the token: try again in {math.ceil(wait)} s"},
        429,
        headers={"retry-after": str(math.ceil(wait))},
    )


# --- pages ----------------------------------------------------------------------------------
async def check_page(request: Request) -> Response:
    """``GET /``: the check page (the table is filled by ``static/check.js``)."""
    srv = server_of(request)
    return srv.page(
        request,
        "check.html",
        max_file_bytes=srv.settings.max_file_bytes,
        max_files=srv.settings.max_files,
    )


async def documents_page(request: Request) -> Response:
    """``GET /documents?search=S&page=N``: documents whose key contains S, 100 a page."""
    search = request.query_params.get("search", "")
    page = max(0, int_param(request.query_params.get("page"), 0))
    found = await server_of(request).reader.run(
        search_documents, search, _PAGE_SIZE, page * _PAGE_SIZE
    )
    return server_of(request).page(
        request,
        "documents.html",
        search=search,
        page=page,
        size=_PAGE_SIZE,
        view_css=VIEW_CSS,
        **found,
    )


async def document_page(request: Request) -> Response:
    """``GET /document?key=K[&exact=1][&min_match=N]``: a document with the total first, its
    sources and their passages marked in its text, and its stored matches both ways."""
    key = request.query_params.get("key", "")
    try:
        view = view_settings(request.url.path, request.query_params)
        found = await server_of(request).reader.run(document_with_view, key, view.options)
    except ConfigError as e:
        return _bad(request, e)
    except DocumentNotFoundError as e:
        return server_of(request).page(request, "message.html", 404, title="Not found", text=str(e))
    srv = server_of(request)
    return srv.page(request, "document.html", view_css=VIEW_CSS, view_form=view.form, **found)


async def check_document_page(request: Request) -> Response:
    """``GET /check/{qid}/document?query=Q[&min=PCT][&exact=1][&min_match=N]``: a checked
    document with its total (computed from the passages of its sources) first, its sources
    and its text marked."""
    srv = server_of(request)
    qid, qkey = request.path_params["qid"], request.query_params.get("query", "")
    text = srv.queries.get(qid, qkey)
    if text is None:
        return srv.page(request, "message.html", 404, title="Not found", text=_FORGOTTEN)
    try:
        min_sim = api.min_similarity({}, request.query_params)
        view = view_settings(request.url.path, request.query_params)
    except ValueError as e:
        return _bad(request, e)
    found = await srv.reader.run(checked_document, qid, qkey, text, min_sim, view.options)
    return srv.page(request, "checked.html", view_css=VIEW_CSS, view_form=view.form, **found)


async def term_page(request: Request) -> Response:
    """``GET /term[?run=N][&folder=F][&since=YYYY-MM-DD][&until=YYYY-MM-DD][&level=PCT]``:
    the batch overview (the last run's documents by default), the largest total first, and
    the groups of documents that share text."""
    q = request.query_params
    srv = server_of(request)
    try:
        run = int_arg(q, "run", 0, 0, MAX_OFFSET) if q.get("run") else None  # no overflow
        level = float(q["level"]) if q.get("level") else GROUP_LEVEL
        found = await srv.reader.run(
            term_overview, run, q.get("folder") or None, q.get("since") or None,
            q.get("until") or None, level,
        )  # fmt: skip
    except (ValueError, ConfigError) as e:
        return srv.page(request, "message.html", 400, title="Bad request", text=str(e))
    form = {k: q.get(k, "") for k in ("run", "folder", "since", "until", "level")}
    return srv.page(request, "term.html", view_css=VIEW_CSS, form=form, **found)


async def view_js(request: Request) -> Response:
    """``GET /view.js``: the behaviour of the document views and sortable tables."""
    return Response(VIEW_JS, media_type="text/javascript")


def _bad(request: Request, e: Exception) -> Response:
    """A 400 page saying what was wrong with the request."""
    return server_of(request).page(request, "message.html", 400, title="Bad request", text=str(e))


async def report_page(request: Request) -> Response:
    """``GET /report?a=KEY&b=KEY[&exact=1][&min_match=N]``: the side-by-side report of two
    indexed documents (the aligned passages; ``exact=1``: the exact 5-word evidence;
    ``min_match``: matches shorter than N words left out, :mod:`simdask.web.view_settings`)."""
    a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
    try:
        view = view_settings(request.url.path, request.query_params)
    except ConfigError as e:
        return _bad(request, e)

    def render(idx):
        rep = index_report(idx, a, b, options=view.options)
        return render_pair_html(rep, idx.text(a), idx.text(b), view.links, controls=view.form)

    try:
        return HTMLResponse(await server_of(request).reader.run(render))
    except DocumentNotFoundError as e:
        return server_of(request).page(request, "message.html", 404, title="Not found", text=str(e))


async def check_report_page(request: Request) -> Response:
    """``GET /check/{qid}/report?query=Q&key=K``: a checked document beside an indexed one."""
    srv = server_of(request)
    qid = request.path_params["qid"]
    qkey, key = request.query_params.get("query", ""), request.query_params.get("key", "")
    text = srv.queries.get(qid, qkey)
    if text is None:
        return srv.page(
            request,
            "message.html",
            404,
            title="Not found",
            text=_FORGOTTEN,
        )

    try:
        view = view_settings(request.url.path, request.query_params)
    except ConfigError as e:
        return _bad(request, e)

    def render(idx):
        rep = index_report(idx, qkey, key, text=text, options=view.options)
        return render_pair_html(rep, text, idx.text(key), view.links, controls=view.form)

    try:
        return HTMLResponse(await srv.reader.run(render))
    except DocumentNotFoundError as e:
        return srv.page(request, "message.html", 404, title="Not found", text=str(e))


async def stats_page(request: Request) -> Response:
    """``GET /stats``: index statistics and the histogram of stored similarities."""
    reader = server_of(request).reader
    stats = await reader.run(lambda idx: idx.stats())
    counts = await reader.run(similarity_histogram)
    return server_of(request).page(
        request, "stats.html", stats=stats, bars=histogram_bars(counts), counts=counts
    )


async def errors_page(request: Request) -> Response:
    """``GET /errors``: the last committed run's per-file errors."""
    found = await server_of(request).reader.run(last_errors)
    return server_of(request).page(request, "errors.html", **found)


async def add_page(request: Request) -> Response:
    """``GET /add``: the upload form and the jobs (403 on a read-only server)."""
    srv = server_of(request)
    if srv.jobs is None:
        return srv.page(request, "message.html", 403, title="Read-only", text=api.READ_ONLY)
    return srv.page(request, "add.html", jobs=srv.jobs.status())


async def login_page(request: Request) -> Response:
    """``GET/POST /login``: the secret, checked in constant time, opens a new session."""
    srv = server_of(request)
    if request.method == "GET":
        return srv.page(request, "login.html", error="")
    address = client_address(request.scope)
    wait = srv.logins.wait(address)
    if wait > 0:
        error = f"too many failed logins: try again in {math.ceil(wait)} s"
        page = srv.page(request, "login.html", 429, error=error)
        page.headers["retry-after"] = str(math.ceil(wait))
        return page
    form = await request.form(max_files=0, max_fields=4)
    if not csrf_ok(request, form.get("csrf")):
        return srv.page(request, "login.html", 403, error="the form expired: try again")
    if not srv.sessions.secret_ok(str(form.get("secret", ""))):
        srv.logins.failed(address)
        return srv.page(request, "login.html", 403, error="wrong token or password")
    srv.sessions.drop(request.scope.get("simdask_sid"))
    sid, _ = srv.sessions.new(authenticated=True)
    resp = RedirectResponse("/", 303)
    resp.headers.append("set-cookie", cookie_header(sid))
    return resp


async def logout(request: Request) -> Response:
    """``POST /logout`` (with the CSRF token): drop the session."""
    form = await request.form(max_files=0, max_fields=4)
    if not csrf_ok(request, form.get("csrf")):
        return JSONResponse({"error": "missing or wrong CSRF token"}, 403)
    sessions = server_of(request).sessions
    sessions.drop(request.scope.get("simdask_sid"))
    resp = RedirectResponse("/login" if sessions.required else "/", 303)
    resp.headers.append("set-cookie", cookie_header(sessions.new(authenticated=False)[0]))
    return resp


def create_app(settings: Settings) -> Starlette:
    """The application for ``settings`` (opens the index now; closed on shutdown)."""
    server = Server(settings)
    routes = [
        Route("/", check_page),
        Route("/documents", documents_page),
        Route("/document", document_page),
        Route("/report", report_page),
        Route("/check/{qid}/report", check_report_page),
        Route("/check/{qid}/document", check_document_page),
        Route("/term", term_page),
        Route("/view.js", view_js),
        Route("/stats", stats_page),
        Route("/errors", errors_page),
        Route("/add", add_page),
        Route("/login", login_page, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        *api.routes(),
        Mount("/static", StaticFiles(directory=_HERE / "static"), name="static"),
    ]

    @asynccontextmanager
    async def lifespan(app):
        yield
        server.close()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            BodyTimeoutError: body_timeout_response,
            HTTPException: http_error,
        },
    )
    app.state.server = server
    app.add_middleware(Guard, server=server)
    return app
