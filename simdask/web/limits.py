"""What one client may cost ``simdask serve``: slots for the expensive work, a deadline on
request bodies, the answers beyond the limits (issue 30 items 6 and 7).

- :func:`slot`: one of a fixed number of places for a kind of work (reading an upload's form,
  checking documents); a request that finds none free within its wait is refused with
  :class:`BusyError` (answered 429 with ``Retry-After``), so the work held in memory at once is
  bounded whatever the number of clients.
- :func:`timed_receive`: the request body must keep arriving: at most ``idle`` seconds
  between two pieces, and after the first ``idle`` seconds at least :data:`MIN_BODY_RATE`
  bytes a second on average; otherwise :class:`BodyTimeoutError` (answered 408 and the
  connection closed). The deadline on the request *headers* is set in the HTTP protocol
  (:mod:`simdask.web.protocol`), where they are read.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from starlette.requests import Request
from starlette.responses import JSONResponse

from simdask.errors import SimdaskError

__all__ = [
    "MIN_BODY_RATE",
    "BodyTimeoutError",
    "BusyError",
    "body_timeout_response",
    "busy_response",
    "slot",
    "timed_receive",
]

#: bytes a second a request body must average once its first ``idle`` seconds have passed
MIN_BODY_RATE = 1_000


class BusyError(SimdaskError, RuntimeError):
    """Every slot of a kind of work stayed taken for the wait allowed (answered 429);
    ``retry`` is the suggested wait in seconds."""

    def __init__(self, message: str, retry: float):
        super().__init__(message)
        self.retry = retry


class BodyTimeoutError(SimdaskError, TimeoutError):
    """A request body stopped arriving or arrived too slowly (answered 408)."""


@asynccontextmanager
async def slot(sem: asyncio.Semaphore, wait: float, busy: str) -> AsyncIterator[None]:
    """Hold one place of ``sem`` for the block; :class:`BusyError` with the message ``busy``
    when none is free within ``wait`` seconds."""
    try:
        await asyncio.wait_for(sem.acquire(), wait)
    except asyncio.TimeoutError:  # not the builtin before Python 3.11
        raise BusyError(busy, max(wait, 1.0)) from None
    try:
        yield
    finally:
        sem.release()


def busy_response(e: BusyError) -> JSONResponse:
    """429 with the message and ``Retry-After`` (whole seconds)."""
    return JSONResponse({"error": str(e)}, 429, headers={"retry-after": str(math.ceil(e.retry))})


def body_timeout_response(request: Request, e: Exception) -> JSONResponse:
    """408 with the message; the connection is closed after it (the rest of the body is
    never read)."""
    return JSONResponse({"error": str(e)}, 408, headers={"connection": "close"})


def timed_receive(
    receive: Callable[[], Awaitable[dict]], idle: float, min_rate: float = MIN_BODY_RATE
) -> Callable[[], Awaitable[dict]]:
    """An ASGI ``receive`` that raises :class:`BodyTimeoutError` when the next piece of the
    request body takes more than ``idle`` seconds, or when, ``idle`` seconds after the body
    began, it has averaged fewer than ``min_rate`` bytes a second. Once the body is complete
    it passes messages through (waiting for a disconnect is not limited)."""
    done = False
    started: float | None = None
    seen = 0

    async def wrapped() -> dict:
        nonlocal done, started, seen
        if done:
            return await receive()
        now = time.monotonic()
        started = now if started is None else started
        try:
            message = await asyncio.wait_for(receive(), idle)
        except asyncio.TimeoutError:
            raise BodyTimeoutError(
                f"the request body stopped arriving for {idle:g} s; the server closed it"
            ) from None
        seen += len(message.get("body", b""))
        elapsed = time.monotonic() - started
        if message.get("type") != "http.request" or not message.get("more_body"):
            done = True
        elif elapsed > idle and seen < min_rate * elapsed:
            raise BodyTimeoutError(
                f"the request body arrives at {seen / elapsed:,.0f} bytes a second, slower "
                f"than the {min_rate:,.0f} the server waits for; the server closed it"
            )
        return message

    return wrapped
