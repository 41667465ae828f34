"""How ``simdask serve`` runs uvicorn: a deadline on request headers, and a shutdown that
exits 0 on SIGINT and SIGTERM (issue 30 items 7 and 13).

uvicorn's h11 protocol times out an idle kept-alive connection but not one that sends its
headers a byte at a time ("slowloris"): :func:`protocol_with_header_timeout` makes a subclass
that closes a connection whose request headers are not complete ``seconds`` after the
connection opened or the request began. uvicorn re-raises a captured SIGTERM after its graceful
shutdown, so the process would end killed by the signal; :class:`QuietServer` keeps the
graceful shutdown (the application's lifespan closes the upload jobs and their cluster) and
returns normally.
"""

from __future__ import annotations

import asyncio

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["QuietServer", "protocol_with_header_timeout"]


def protocol_with_header_timeout(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol closing connections whose headers take over ``seconds``."""

    class HeaderTimeoutProtocol(H11Protocol):
        header_timeout = seconds

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._header_timer: asyncio.TimerHandle | None = None
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._header_timer is None and self.conn.their_state is h11.IDLE:
                self._arm()  # a new request begins: its headers have a deadline
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()  # the headers are complete (or the connection failed)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._expired)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _expired(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderTimeoutProtocol


class QuietServer(uvicorn.Server):
    """uvicorn's server without re-raising the signal that stopped it."""

    def handle_exit(self, sig, frame) -> None:
        """Shut down gracefully; forget the signal (uvicorn would raise it again at exit)."""
        super().handle_exit(sig, frame)
        self._captured_signals.clear()
