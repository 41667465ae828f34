"""The JSON API of ``simdask serve`` (documented in the README, "Web interface").

- ``POST /api/query`` (multipart: parts ``file``, one or more; optional ``text`` pasted text,
  ``min`` least similarity either way in percent, default 1 as ``simdask query``) ->
  ``{"results": [...], "queries": [...], "unreadable": [...], "qid": ..., "seconds": ...}``;
  ``results`` holds the row objects of ``simdask query --format jsonl``, in the same order.
- ``GET /api/documents?search=S&limit=N&offset=M`` -> ``{"total", "documents"}``
- ``GET /api/similar/{key}`` -> ``{"document", "similar"}`` (both directions)
- ``GET /api/report?a=KEY&b=KEY[&exact=1]`` -> the report of ``simdask report --format json``
  (``exact=1``: of ``--exact-only``)
- ``GET /api/stats``, ``GET /api/errors``, ``GET /api/histogram``
- ``POST /api/add`` (multipart ``file`` parts; only with ``--allow-upload-to-index``) ->
  ``{"job": {...}}``; ``GET /api/jobs`` and ``GET /api/jobs/{id}`` -> the jobs and progress.
- ``GET /api/csrf`` -> ``{"csrf": token}`` of the caller's session (for scripts that use a
  cookie jar instead of a bearer token).

Errors answer ``{"error": message}`` with 400, 401, 403, 404, 408, 413, 422 or 429: every input
is checked (``min`` a finite percent in 0..100, ``limit``/``offset`` integers in range, ``text``,
``min`` and ``csrf`` form fields and ``file`` parts of the right kind: 400; more files or
bytes than the server's limits, pasted text over :data:`MAX_FIELD_BYTES`, more extracted text
than :func:`text_budget`: 413); a body that stops arriving: 408; a query none of whose
documents could be read, e.g. a decompression bomb: 422 with each document's error in
``unreadable``, as ``simdask query`` exits 3 (some documents unreadable beside readable ones:
200, listed in ``unreadable``); the server busy (every slot of :data:`FORMS_AT_ONCE` or
:data:`CHECKS_AT_ONCE` taken): 429 with ``Retry-After``.

Memory: an upload's files are spooled to disk as they arrive (Starlette keeps a part in memory
up to 1 MB), at most :data:`FORMS_AT_ONCE` forms are read at once, at most
:data:`CHECKS_AT_ONCE` checks extract and query at once, each reading at most
:func:`text_budget` characters; docs/benchmarks.md gives the server's peak RSS at these limits.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from simdask.errors import DocumentNotFoundError, ExtractionError
from simdask.evidence.pair_view import ViewOptions, index_report
from simdask.ingest.sources import read_queries
from simdask.queries import NOTE_KINDS, batch_summary, query_documents
from simdask.read.query_sources import flag_rows, query_exclusions
from simdask.web.auth import Sessions
from simdask.web.limits import BodyTimeoutError, BusyError, busy_response, slot
from simdask.web.reader import last_errors, search_documents, similar_rows, similarity_histogram
from simdask.web.uploads import TooLargeError, limited_receive, save_uploads, upload_folder

__all__ = [
    "CHECKS_AT_ONCE",
    "FORMS_AT_ONCE",
    "MAX_FIELD_BYTES",
    "MAX_OFFSET",
    "READ_ONLY",
    "BusyError",
    "check_slot",
    "csrf_ok",
    "file_parts",
    "form_slot",
    "int_arg",
    "int_param",
    "min_similarity",
    "routes",
    "server_of",
    "text_field",
]

READ_ONLY = (
    "this server is read-only: start it with --allow-upload-to-index to add documents to the index"
)
#: checks (``POST /api/query``) processed at once; another waits up to :data:`CHECK_WAIT`
#: seconds for a slot, then is answered 429
CHECKS_AT_ONCE = 2
CHECK_WAIT = 30.0
#: upload forms (``/api/query``, ``/api/add``) read at once, each holding at most ``max_files``
#: parts of 1 MB and one field of :data:`MAX_FIELD_BYTES` in memory; another waits up to
#: :data:`FORM_WAIT` seconds, then is answered 429
FORMS_AT_ONCE = 4
FORM_WAIT = 10.0
#: bytes of one plain form field (the pasted ``text``)
MAX_FIELD_BYTES = 10_000_000
#: characters of extracted text one check holds at most, whatever its files (see
#: :func:`text_budget`); with :data:`CHECKS_AT_ONCE` this bounds the server's memory
QUERY_TEXT_CAP = 50_000_000
_CSRF_MISSING = "missing or wrong CSRF token (header X-CSRF-Token or form field csrf)"
#: the pasted text of a check is queried as a document of this name
PASTED_NAME = "pasted-text.txt"


def server_of(request: Request):
    """The :class:`simdask.web.app.Server` of the application."""
    return request.app.state.server


#: the largest offset or page number a listing accepts (SQLite's integers are 64-bit)
MAX_OFFSET = 10**12


def int_param(text: str | None, default: int) -> int:
    """An integer query parameter (``default`` when absent or not a number), at most
    :data:`MAX_OFFSET` (for the HTML pages; the API refuses instead: :func:`int_arg`)."""
    try:
        return min(int(text), MAX_OFFSET) if text is not None else default
    except ValueError:
        return default


def int_arg(params, name: str, default: int, low: int = 0, high: int = MAX_OFFSET) -> int:
    """The integer parameter ``name`` of ``params`` (``default`` when absent); a
    :class:`ValueError` (answered 400) naming it when it is not an integer in low..high."""
    text = params.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"expected `{name}` to be an integer, found {text[:40]!r}") from None
    if not low <= value <= high:
        raise ValueError(f"expected `{name}` between {low} and {high}, found {value}")
    return value


def text_field(form, name: str) -> str | None:
    """The form field ``name`` as text (None when absent); a :class:`ValueError` (answered
    400) when it was sent as a file part (``curl -F name=@file``): never read as the string
    of the upload object."""
    value = form.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(
            f"expected `{name}` as a form field, found a file part (curl -F {name}=@FILE "
            f"sends a file; use -F {name}=<FILE to send its text, or send files as `file`)"
        )
    return value


def min_similarity(form, params) -> float:
    """The ``min`` of a check (form field, else query parameter; default 1): percent, a
    finite number in 0..100, else :class:`ValueError` (answered 400)."""
    text = text_field(form, "min") or params.get("min") or "1"
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"expected `min` to be a number of percent, found {text[:40]!r}") from None
    if not 0.0 <= value <= 100.0:  # also false for nan
        raise ValueError(f"expected `min` between 0 and 100 (percent), found {text[:40]!r}")
    return value


def file_parts(form) -> list:
    """The uploaded ``file`` parts; a :class:`ValueError` (answered 400) for a ``file`` sent as
    a plain form field (not silently left out)."""
    parts = form.getlist("file")
    if any(isinstance(f, str) for f in parts):
        raise ValueError("expected `file` parts holding files, found a plain form field `file`")
    return parts


def text_budget(settings) -> int:
    """Characters of extracted text one check may hold: what its files may hold (``max_files``
    of ``max_file_bytes``), at most :data:`QUERY_TEXT_CAP` (the server's memory is measured
    at that cap: docs/benchmarks.md)."""
    return min(settings.max_files * settings.max_file_bytes, QUERY_TEXT_CAP)


def read_bounded(paths: list[Path], budget: int) -> list:
    """:func:`~simdask.ingest.sources.read_queries` of ``paths`` one at a time, stopping with
    :class:`TooLargeError` as soon as the texts read exceed ``budget`` characters."""
    out: list = []
    total = 0
    for path in paths:
        for key, text in read_queries([path]):
            total += len(text) if isinstance(text, str) else 0
            if total > budget:
                raise TooLargeError(
                    f"the documents of this check hold more than {budget:,} characters of text "
                    f"(by {key}), more than the server reads for one check; send fewer files"
                )
            out.append((key, text))
    return out


def _checked(index, docs: list, min_sim: float):
    """The checked texts' matches and, per text, the indexed keys left out of its results
    (:func:`~simdask.read.query_sources.query_exclusions`), read in one committed state."""
    return query_documents(index, docs, min_sim), query_exclusions(index, docs)


def check_slot(srv):
    """One of the server's :data:`CHECKS_AT_ONCE` check slots for the block; raises
    :class:`~simdask.web.limits.BusyError` after waiting :data:`CHECK_WAIT` seconds."""
    busy = f"the server is busy with {CHECKS_AT_ONCE} checks; try again in a minute"
    return slot(srv.checks, CHECK_WAIT, busy)


def form_slot(srv):
    """One of the server's :data:`FORMS_AT_ONCE` slots for reading an upload form."""
    busy = f"the server is busy receiving {FORMS_AT_ONCE} uploads; try again shortly"
    return slot(srv.forms, FORM_WAIT, busy)


def csrf_ok(request: Request, given: str | None) -> bool:
    """Whether a state-changing request may proceed: a bearer request, or the CSRF token of
    its session (form field ``csrf`` or header ``X-CSRF-Token``)."""
    if request.scope.get("simdask_bearer"):
        return True
    given = given or request.headers.get("x-csrf-token")
    return Sessions.csrf_ok(request.scope.get("simdask_session"), given)


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status)


async def _form(request: Request, srv, extra_bytes: int = 1 << 16):
    """The multipart form, the request body bounded by ``max_files`` files of the size limit
    (files spooled to disk beyond 1 MB; a plain field at most :data:`MAX_FIELD_BYTES`).
    The caller holds a :func:`form_slot`."""
    limit = srv.settings.max_files * srv.settings.max_file_bytes + extra_bytes
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise TooLargeError(
            f"the upload is {int(length) / 1e6:.1f} MB, more than the server accepts per "
            f"request ({limit / 1e6:.1f} MB); send fewer or smaller files"
        )
    limited = Request(request.scope, limited_receive(request.receive, limit))
    try:
        return await limited.form(
            max_files=srv.settings.max_files,
            max_fields=20,
            max_part_size=min(MAX_FIELD_BYTES, srv.settings.max_file_bytes),
        )
    except HTTPException as e:  # a malformed form, too many files or fields, a part too big
        if "Too many files" in e.detail or "exceeded maximum size" in e.detail:
            raise TooLargeError(
                f"{e.detail} (the server's --max-files, --max-file-size; a plain field such "
                f"as pasted text: at most {MAX_FIELD_BYTES / 1e6:g} MB)"
            ) from None
        raise ValueError(e.detail) from None


async def query(request: Request) -> Response:
    """``POST /api/query``: check uploaded files and/or pasted text against the index (the
    form read in one of :data:`FORMS_AT_ONCE` slots, kept until one of :data:`CHECKS_AT_ONCE`
    slots is free, so that at most their sum of forms is held at once; then extracted and
    queried, reading at most :func:`text_budget` characters)."""
    srv = server_of(request)
    form = None
    try:
        async with AsyncExitStack() as checking:
            async with form_slot(srv):
                form = await _form(request, srv)
                await checking.enter_async_context(check_slot(srv))  # held past the form's
            return await _check(request, srv, form)
    except BusyError as e:
        return busy_response(e)
    except TooLargeError as e:
        return _error(str(e), 413)
    except ValueError as e:
        return _error(f"bad request: {e}", 400)
    finally:
        if form is not None:  # its spooled upload files
            await form.close()


async def _check(request: Request, srv, form) -> Response:
    started = time.perf_counter()
    try:
        files = file_parts(form)
        text = text_field(form, "text") or ""
        min_sim = min_similarity(form, request.query_params)
        if not files and not text.strip():
            return _error("nothing to check: send one or more parts named `file`, or `text`", 400)
        if len(text.encode("utf-8")) > srv.settings.max_file_bytes:
            raise TooLargeError("the pasted text is larger than the upload limit per file")
        with tempfile.TemporaryDirectory(dir=srv.tmp.name) as tmp:
            paths = await save_uploads(files, Path(tmp), srv.settings.max_file_bytes)
            if text.strip():
                (Path(tmp) / "pasted").mkdir()
                paths.append(Path(tmp) / "pasted" / PASTED_NAME)
                paths[-1].write_text(text, encoding="utf-8")
            docs = await asyncio.to_thread(read_bounded, paths, text_budget(srv.settings))
    except TooLargeError as e:
        return _error(str(e), 413)
    except ValueError as e:
        return _error(f"bad request: {e}", 400)
    unreadable = [
        {"key": e.key, "kind": e.kind, "message": str(e)}
        for _, e in docs
        if isinstance(e, ExtractionError)
    ]
    errors = [u for u in unreadable if u["kind"] not in NOTE_KINDS]
    if errors and len(errors) == len(docs):  # a scanned PDF alone is a note, as in the CLI
        first = errors[0]
        message = f"no document could be read: {first['message']}"
        return JSONResponse({"error": message, "unreadable": unreadable}, 422)
    batch, excluded = await srv.reader.run(_checked, docs, min_sim)
    qid = srv.queries.put({k: t for k, t in docs if isinstance(t, str)})
    rows = [{"query": r.key, **m.to_dict()} for r in batch.results for m in r.matches]
    rows = flag_rows(rows, excluded)  # as `simdask query` flags them
    return JSONResponse(
        {
            "results": rows,
            "queries": [
                {"key": r.key, "matches": len(r.matches), "too_short": r.too_short}
                for r in batch.results
            ],
            "unreadable": [
                {"key": e.key, "kind": e.kind, "message": str(e), "note": e.kind in NOTE_KINDS}
                for e in batch.unreadable
            ],
            "summary": batch_summary(len(docs), batch),
            "k": batch.k,
            "min": min_sim,
            "qid": qid,
            "seconds": round(time.perf_counter() - started, 4),
        }
    )


async def documents(request: Request) -> Response:
    """``GET /api/documents?search=S&limit=N&offset=M`` (limit at most 1000)."""
    q = request.query_params
    try:
        limit = int_arg(q, "limit", 100, 1, 1000)
        offset = int_arg(q, "offset", 0)
    except ValueError as e:
        return _error(f"bad request: {e}", 400)
    found = await server_of(request).reader.run(
        search_documents, q.get("search", ""), limit, offset
    )
    return JSONResponse(found)


async def similar(request: Request) -> Response:
    """``GET /api/similar/{key}``: the document and its stored matches."""
    try:
        found = await server_of(request).reader.run(similar_rows, request.path_params["key"])
    except DocumentNotFoundError as e:
        return _error(str(e), 404)
    return JSONResponse(found)


async def report(request: Request) -> Response:
    """``GET /api/report?a=KEY&b=KEY[&exact=1]``: exact similarity both ways and the
    passages (aligned; ``exact=1``: the exact 5-word evidence)."""
    a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
    options = ViewOptions(exact_only=request.query_params.get("exact") == "1")
    try:
        found = await server_of(request).reader.run(
            lambda idx: index_report(idx, a, b, options=options)
        )
    except DocumentNotFoundError as e:
        return _error(str(e), 404)
    return JSONResponse(found)


async def stats(request: Request) -> Response:
    """``GET /api/stats``: as ``simdask stats --format json``."""
    return JSONResponse(await server_of(request).reader.run(lambda idx: idx.stats()))


async def histogram(request: Request) -> Response:
    """``GET /api/histogram``: stored similarities counted in ten 10-percent bins."""
    return JSONResponse({"bins": await server_of(request).reader.run(similarity_histogram)})


async def errors(request: Request) -> Response:
    """``GET /api/errors``: the last committed run and its per-file errors."""
    return JSONResponse(await server_of(request).reader.run(last_errors))


async def add(request: Request) -> Response:
    """``POST /api/add``: queue uploaded files for indexing (keys ``uploads/<name>``, or
    ``uploads/<folder>/<name>`` with the form field or query parameter ``folder``, checked by
    :func:`~simdask.web.uploads.upload_folder`: a bad one is answered 400)."""
    srv = server_of(request)
    if srv.jobs is None:
        return _error(READ_ONLY, 403)
    header_ok = csrf_ok(request, request.headers.get("x-csrf-token"))
    folder = Path(tempfile.mkdtemp(prefix="job-", dir=srv.tmp.name))
    form = None
    try:
        async with form_slot(srv):
            form = await _form(request, srv)
        if not header_ok and not csrf_ok(request, text_field(form, "csrf")):
            _rmtree(folder)
            return _error(_CSRF_MISSING, 403)
        files = file_parts(form)
        if not files:
            raise ValueError("no parts named `file`")
        sub = upload_folder(text_field(form, "folder") or request.query_params.get("folder"))
        where = folder / "uploads" / sub if sub else folder / "uploads"
        where.mkdir(parents=True)
        paths = await save_uploads(files, where, srv.settings.max_file_bytes, True)
    except BusyError as e:
        _rmtree(folder)
        return busy_response(e)
    except BodyTimeoutError:  # answered 408 by the application's handler
        _rmtree(folder)
        raise
    except TooLargeError as e:
        _rmtree(folder)
        return _error(str(e), 413)
    except ValueError as e:
        _rmtree(folder)
        return _error(f"bad request: {e}", 400)
    finally:
        if form is not None:  # its spooled upload files, refused or saved
            await form.close()
    job = srv.jobs.submit(
        folder, [f"uploads/{sub}/{p.name}" if sub else f"uploads/{p.name}" for p in paths]
    )
    return JSONResponse({"job": job.to_dict()}, 202)


async def jobs(request: Request) -> Response:
    """``GET /api/jobs`` (all, newest first) and ``GET /api/jobs/{id}``."""
    srv = server_of(request)
    if srv.jobs is None:
        return JSONResponse({"jobs": [], "read_only": True})
    job_id = request.path_params.get("job_id")
    found = srv.jobs.status(int_param(job_id, -1) if job_id is not None else None)
    if job_id is not None and not found:
        return _error(f"no job {job_id}", 404)
    return JSONResponse({"jobs": found, "read_only": False})


async def csrf(request: Request) -> Response:
    """``GET /api/csrf``: the CSRF token of the caller's session."""
    session = request.scope.get("simdask_session")
    return JSONResponse({"csrf": session.csrf if session else ""})


def _rmtree(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def routes() -> list[Route]:
    """The API routes."""
    return [
        Route("/api/query", query, methods=["POST"]),
        Route("/api/documents", documents),
        Route("/api/similar/{key:path}", similar),
        Route("/api/report", report),
        Route("/api/stats", stats),
        Route("/api/histogram", histogram),
        Route("/api/errors", errors),
        Route("/api/add", add, methods=["POST"]),
        Route("/api/jobs", jobs),
        Route("/api/jobs/{job_id}", jobs),
        Route("/api/csrf", csrf),
    ]
