"""Checking a Dask scheduler address given as a setting (no import of dask or distributed)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["scheduler_address"]

_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(\d{1,5})$")


def scheduler_address(value: Any) -> str:
    """A scheduler address: ``[scheme://]host:port`` (scheme tcp, tls, ws, wss, ucx; IPv6
    hosts in brackets) or ``inproc://...``; checked here so that a bad one is a settings error
    (exit status 2), not a failure of the connection."""
    expected = "a scheduler address [tcp://]host:port, e.g. tcp://10.0.0.5:8786"
    text = value.strip() if isinstance(value, str) and value.strip() else None
    if text is None:
        raise ValueError(expected)
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme not in _SCHEMES:
        raise ValueError(f"{expected} (scheme one of {', '.join(_SCHEMES)})")
    if scheme == "inproc":
        return text
    m = _HOST_PORT.match(rest)
    if not m or not 0 < int(m.group(2)) < 65536:
        raise ValueError(expected)
    return text
