"""The parsers of cluster setting values (:data:`simdask.cluster.spec.SETTINGS`): each takes a
value from the command line, the environment or the config file and returns it parsed, or
raises :class:`BadValue` saying what would fit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simdask.cluster.addresses import scheduler_address

__all__ = [
    "BadValue",
    "address_value",
    "describe_value",
    "flag_value",
    "hosts_value",
    "int_value",
    "kind_value",
    "memory_value",
    "seconds_value",
    "text_value",
]


class BadValue(Exception):
    """A value does not fit: ``expected`` says what would."""

    def __init__(self, expected: str):
        super().__init__(expected)
        self.expected = expected


def describe_value(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def text_value(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadValue("a non-empty string")
    return value.strip()


def address_value(value: Any) -> str:
    try:
        return scheduler_address(value)
    except ValueError as e:
        raise BadValue(str(e)) from None


def kind_value(kinds: tuple[str, ...]) -> Callable[[Any], str]:
    """The parser of a cluster kind: one of ``kinds``."""

    def parse(value: Any) -> str:
        if value not in kinds:
            raise BadValue("one of " + ", ".join(repr(k) for k in kinds))
        return value

    return parse


def int_value(lo: int, hi: int | None = None) -> Callable[[Any], int]:
    what = f"an integer in {lo}..{hi}" if hi else f"an integer >= {lo}"

    def parse(value: Any) -> int:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise BadValue(what)
        if value < lo or (hi is not None and value > hi):
            raise BadValue(what)
        return value

    return parse


def seconds_value(value: Any) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise BadValue("a number of seconds > 0") from None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise BadValue("a number of seconds > 0")
    return float(value)


def hosts_value(value: Any) -> tuple[str, ...]:
    what = "host names, comma-separated (a string) or a list of strings"
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(h, str) and h.strip() for h in value
    ):
        raise BadValue(what)
    return tuple(h.strip() for h in value)


def memory_value(value: Any) -> str:
    """``auto``, a byte count (``4GiB``, ``500MB``, an integer) or a fraction of RAM (0, 1]."""
    from dask.utils import parse_bytes  # loads dask: only when a run needs it

    what = "'auto', a size such as '4GiB', a fraction of the machine's memory in (0, 1] or 0"
    if isinstance(value, bool):
        raise BadValue(what)
    if isinstance(value, (int, float)):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise BadValue(what)
    value = value.strip()
    if value in ("auto", "0"):
        return value
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is not None:
        if 0 < number <= 1 or (number > 1 and number.is_integer()):
            return value
        raise BadValue(what)
    try:
        if parse_bytes(value) > 0:
            return value
    except ValueError:
        pass
    raise BadValue(what)


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def flag_value(value: Any) -> bool:
    """A yes/no setting: a bool, or one of 1/0, true/false, yes/no, on/off."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise BadValue("yes or no (true/false, on/off, 1/0)")
