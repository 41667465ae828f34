"""A teacher's folder of essays with planted cases (issue 18): a copy, a reordered copy, a
shared template, a resubmission from last year, and files simdask does not read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.helpers.documents import prose

#: a two-paragraph template every student of one class started from
TEMPLATE = prose(60, seed=900)


@dataclass(frozen=True)
class Essays:
    """Where the planted corpus was written and what it holds."""

    essays: Path  # this year's folder
    last_year: Path  # last year's folder
    brown: str  # the original of the copy case
    bailey: str  # copied most of brown's essay into a longer one of her own
    unsupported: tuple[str, ...]  # keys of the files simdask cannot read


def write_essays(root: Path) -> Essays:
    """Write ``root/essays`` (this year) and ``root/last-year``; returns what they hold.

    - ``bailey.txt`` holds 3/4 of ``brown.txt`` plus text of her own twice as long: brown's
      essay is mostly found in bailey's (``brown`` is the larger share of the pair).
    - ``reorder.txt`` is ``carter.txt`` with its halves swapped.
    - ``tpl1.txt``, ``tpl2.txt`` start with the same :data:`TEMPLATE`.
    - ``last-year/evans.txt`` is ``essays/evans.txt`` resubmitted.
    - ``old.wpd`` (WordPerfect), ``notes.pages`` (Apple Pages) and ``scan.png`` are not read
      (.doc and .rtf are, since issue 31: tests/test_term_formats.py).
    """
    essays, last = root / "essays", root / "last-year"
    essays.mkdir(parents=True)
    last.mkdir()
    brown = prose(400, seed=101)
    (essays / "brown.txt").write_text(brown, encoding="utf-8")
    bailey = prose(450, seed=102) + " " + brown[: len(brown) * 3 // 4] + " " + prose(350, seed=103)
    (essays / "bailey.txt").write_text(bailey, encoding="utf-8")
    carter = prose(300, seed=104)
    (essays / "carter.txt").write_text(carter, encoding="utf-8")
    half = len(carter) // 2
    cut = carter.index(". ", half) + 2
    (essays / "reorder.txt").write_text(carter[cut:] + " " + carter[:cut], encoding="utf-8")
    (essays / "tpl1.txt").write_text(TEMPLATE + " " + prose(250, seed=105), encoding="utf-8")
    (essays / "tpl2.txt").write_text(TEMPLATE + " " + prose(250, seed=106), encoding="utf-8")
    evans = prose(300, seed=107)
    (essays / "evans.txt").write_text(evans, encoding="utf-8")
    (last / "evans.txt").write_text(evans, encoding="utf-8")
    (last / "fisher.txt").write_text(prose(300, seed=108), encoding="utf-8")
    (essays / "alone.txt").write_text(prose(300, seed=109), encoding="utf-8")
    (essays / "old.wpd").write_bytes(b"\xffWPC" + b"\0" * 600)
    (essays / "notes.pages").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    (essays / "scan.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    return Essays(
        essays,
        last,
        "essays/brown.txt",
        "essays/bailey.txt",
        ("essays/notes.pages", "essays/old.wpd", "essays/scan.png"),
    )
