"""ZIP packages of XML parts (DOCX, ODT): opening them safely and turning XML into text.

Parts are read with a size cap (a ZIP bomb stops at :data:`MAX_PART_BYTES`), parsed by the
standard library's expat-based ElementTree (which resolves no external entities and, with
expat >= 2.4.1, refuses entity-expansion bombs) and walked without recursion, so deep
nesting cannot overflow the stack.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from xml.etree import ElementTree as ET

from simdask.errors import ExtractionError

__all__ = ["MAX_PART_BYTES", "Package", "Rules", "xml_text"]

#: Largest uncompressed XML part read from a package.
MAX_PART_BYTES = 512 * 2**20
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    KeyError,
    RuntimeError,
    NotImplementedError,
    OverflowError,
)

#: How an element turns into text: ``(before, after, mode)``; mode ``skip`` leaves out the
#: element and its content (not its tail), ``text`` keeps its text, ``""`` keeps only the
#: content of its children.
Rules = dict[str, tuple[str, str, str]]


class Package:
    """An opened ZIP package; ``name``, ``fmt`` ("DOCX") and ``expected`` (a phrase naming
    what a valid file is) go into error messages."""

    def __init__(self, data: bytes, name: str, fmt: str, expected: str):
        self.name, self.fmt = name, fmt
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
            self.names = set(self.zip.namelist())
        except _ZIP_ERRORS as e:
            raise ExtractionError(
                name, "corrupt", f"expected {expected}, found {_what(data)}"
            ) from e

    def read(self, part: str) -> bytes:
        """The uncompressed bytes of one part (``corrupt`` if damaged or too large)."""
        try:
            with self.zip.open(part) as f:
                data = f.read(MAX_PART_BYTES + 1)
        except _ZIP_ERRORS as e:
            raise ExtractionError(
                self.name, "corrupt", f"expected a readable {self.fmt} part {part}, found: {e}"
            ) from e
        if len(data) > MAX_PART_BYTES:
            raise ExtractionError(
                self.name,
                "too_large",
                f"expected {self.fmt} part {part} of at most {MAX_PART_BYTES} bytes "
                "uncompressed, found more",
            )
        return data

    def parse(self, part: str) -> ET.Element:
        """One XML part, parsed (``corrupt`` if it is not well-formed XML)."""
        try:
            return ET.fromstring(self.read(part))
        except ET.ParseError as e:
            raise ExtractionError(
                self.name,
                "corrupt",
                f"expected well-formed XML in {self.fmt} part {part}, found: {e}",
            ) from e


def _what(data: bytes) -> str:
    from simdask.ingest.extract.sniff import describe

    return describe(data)


def xml_text(root: ET.Element, rules: Rules, tails: bool) -> str:
    """The text of an XML tree under ``rules`` (keyed by ``{namespace}tag``).

    ``tails``: keep the text that follows an element inside its parent (mixed content, as in
    ODF); DOCX keeps text only in ``w:t`` elements.
    """
    out: list[str] = []
    stack: list[tuple[ET.Element, bool]] = [(root, False)]
    while stack:
        el, done = stack.pop()
        before, after, mode = rules.get(el.tag, ("", "", ""))
        if done:
            out.append(after)
            if tails and el.tail:
                out.append(el.tail)
            continue
        if mode == "skip":
            if tails and el.tail:
                out.append(el.tail)
            continue
        out.append(before)
        if el.text and (tails or mode == "text"):
            out.append(el.text)
        stack.append((el, True))
        stack.extend((child, False) for child in reversed(el))
    return "".join(out)
