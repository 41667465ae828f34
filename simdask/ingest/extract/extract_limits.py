"""What extracting one document may cost (issue 30 item 5): :class:`ExtractLimits`.

Every extractor is bounded by what it decompresses *and* by the work of parsing, so that no
file, however small, can take a worker past its memory limit (2 GiB with 2 threads by
default) or keep it busy for long. Beyond a limit the file fails with one of three kinds:

- ``bomb``: it inflates beyond a limit and to more than :attr:`ExtractLimits.bomb_ratio`
  times its own size (a decompression bomb);
- ``too_large``: it inflates beyond a limit, but not by that ratio (a large document);
- ``too_complex``: parsing it costs too much work (elements, nesting depth, pages, CPU time).

The defaults derive from the run's --max-file-size (:meth:`ExtractLimits.for_file_size`);
docs/formats.md lists them with the measured cost of each bomb.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from simdask.errors import ConfigError, check_keys

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "NO_LIMIT_CEILING",
    "ExtractLimits",
    "as_limits",
    "kind_over",
]

#: --max-file-size by default (bytes); the inflation limits are twice it.
DEFAULT_MAX_FILE_BYTES = 100_000_000
#: What a file may inflate to when --max-file-size is 0 (no limit on files): 2 GiB.
NO_LIMIT_CEILING = 2 * 2**30


@dataclass(frozen=True)
class ExtractLimits:
    """Limits on extracting one document (validated; ``to_dict``/``from_dict``).

    - ``inflated_bytes``: bytes the XML parts of one DOCX/ODT may decompress to, all parts
      together (default twice --max-file-size);
    - ``text_chars``: characters of text one document may give, any format (DOCX/ODT and
      PDF stop reading there; chunking costs about 20 bytes per character (40 million
      characters peaked at 800 MB), so 25 million take about 500 MB: two of them fit a
      2 GiB worker with 2 threads beside its own memory);
    - ``elements``: XML elements of one DOCX/ODT, all parts together, and elements (start
      tags) of one HTML document;
    - ``depth``: levels of nesting of XML elements, HTML elements and RTF groups;
    - ``pdf_pages``: pages of one PDF;
    - ``pdf_memory_bytes``: address space of the helper process that runs PDFium (PDF
      content streams are decompressed and parsed inside PDFium, which Python cannot
      bound: a PDF that needs more is refused, the worker is untouched);
    - ``cpu_seconds``: CPU seconds of the helper process on one document (PDF, RTF, .doc):
      the PDF page loop stops there, ``RLIMIT_CPU`` kills the helper at 1.25 times it plus
      a second (RTF, a single PDF page, antiword);
    - ``bomb_ratio``: over a limit, a file inflating to more than this many times its own
      size is a ``bomb``, else ``too_large``.
    """

    inflated_bytes: int = 2 * DEFAULT_MAX_FILE_BYTES
    text_chars: int = 25_000_000
    elements: int = 1_000_000
    depth: int = 256
    pdf_pages: int = 20_000
    pdf_memory_bytes: int = 2**30
    cpu_seconds: float = 60.0
    bomb_ratio: int = 100

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            kind = (int, float) if f.name == "cpu_seconds" else (int,)
            if isinstance(value, bool) or not isinstance(value, kind) or not value > 0:
                raise ConfigError(
                    f"ExtractLimits.{f.name} must be a positive "
                    f"{'number' if f.name == 'cpu_seconds' else 'integer'}, got {value!r}"
                )
        if self.pdf_memory_bytes < 256 * 2**20:
            raise ConfigError(
                "ExtractLimits.pdf_memory_bytes must be at least 256 MiB (PDFium and Python "
                f"start in about 150 MiB of address space), got {self.pdf_memory_bytes!r}"
            )

    @classmethod
    def for_file_size(cls, max_file_bytes: int | None, **changes: Any) -> ExtractLimits:
        """The limits for a run whose --max-file-size is ``max_file_bytes`` (None: the
        default 100 MB, 0: no limit): inflated bytes twice it (:data:`NO_LIMIT_CEILING`
        without a limit); ``changes`` set others."""
        if max_file_bytes is None:
            max_file_bytes = DEFAULT_MAX_FILE_BYTES
        bound = 2 * max_file_bytes if max_file_bytes > 0 else NO_LIMIT_CEILING
        return cls(**{"inflated_bytes": bound, **changes})

    def to_dict(self) -> dict[str, Any]:
        """The limits as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExtractLimits:
        """Build from a dict written by :meth:`to_dict` (missing keys: defaults; unknown keys
        are an error)."""
        check_keys("ExtractLimits", data, (f.name for f in dataclasses.fields(cls)))
        return cls(**data)


def kind_over(limits: ExtractLimits, found: int, size: int) -> str:
    """``bomb`` when ``found`` bytes (inflated from a file of ``size`` bytes, over a limit)
    are more than ``limits.bomb_ratio`` times ``size``, else ``too_large``."""
    return "bomb" if found > limits.bomb_ratio * max(size, 1) else "too_large"


def as_limits(limits: ExtractLimits | int | None) -> ExtractLimits:
    """``limits`` as :class:`ExtractLimits`: None is the defaults; an integer (the form the
    extractors took before) is both ``inflated_bytes`` and ``text_chars``."""
    if limits is None:
        return ExtractLimits()
    if isinstance(limits, ExtractLimits):
        return limits
    return ExtractLimits(inflated_bytes=limits, text_chars=limits)
