"""What the web page's views of passages take from their URL (issue 31, item 11): ``exact=1``
(the exact 5-word evidence instead of the aligned passages) and ``min_match=N`` (leave out
matches shorter than N words, of the passages *and* the percentages, as ``--min-match`` does
in the CLI), with the link to the other kind of evidence and the form that sets N.

A bad ``min_match`` is a :class:`~simdask.errors.ConfigError` (a :class:`ValueError`; the
pages answer 400) saying what was expected and what was found. Every value put into the
form's HTML is escaped here, once.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from simdask.errors import ConfigError
from simdask.evidence.pair_view import ViewOptions

__all__ = ["MAX_MIN_MATCH", "ViewSettings", "min_match", "view_settings"]

#: the largest ``min_match`` a page takes, in words
MAX_MIN_MATCH = 10_000
_DIGITS = re.compile(r"[0-9]{1,6}")


def min_match(params: Mapping[str, str]) -> int:
    """The ``min_match`` parameter of ``params`` in words (0 when absent or empty)."""
    text = params.get("min_match", "")
    if text == "":
        return 0
    if not _DIGITS.fullmatch(text) or int(text) > MAX_MIN_MATCH:
        raise ConfigError(
            f"expected `min_match` (leave out matches shorter than N words) to be a whole "
            f"number of words from 0 to {MAX_MIN_MATCH}, found {text[:40]!r}"
        )
    return int(text)


@dataclass(frozen=True)
class ViewSettings:
    """A view's ``options``, its ``links`` (``(href, text)``: the other kind of evidence)
    and ``form`` (escaped HTML: the setting of ``min_match``, keeping the other
    parameters)."""

    options: ViewOptions
    links: tuple[tuple[str, str], ...]
    form: str


def view_settings(path: str, params: Mapping[str, str]) -> ViewSettings:
    """The settings of a view at ``path`` with query ``params``; raises
    :class:`~simdask.errors.ConfigError` for a bad ``min_match``."""
    exact = params.get("exact") == "1"
    least = min_match(params)
    toggled = {k: v for k, v in params.items() if k != "exact"}
    if not exact:
        toggled["exact"] = "1"
    text = "show the aligned passages" if exact else "show exact 5-word matches only"
    links = ((path + "?" + urlencode(toggled), text),)
    kept = "".join(
        f'<input type=hidden name="{html.escape(k)}" value="{html.escape(v)}">'
        for k, v in params.items()
        if k != "min_match"
    )
    form = (
        f'<form id=min-match-form class=min-match method=get action="{html.escape(path)}">'
        f"{kept}<label>leave out matches shorter than <input type=number name=min_match "
        f'id=min-match-input min=0 max={MAX_MIN_MATCH} step=1 value="{least}"> words '
        "(in the passages and the percentages)</label> <button type=submit>apply</button></form>"
    )
    return ViewSettings(ViewOptions(exact_only=exact, min_words=least), links, form)
