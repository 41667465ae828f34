"""ZIP packages of XML parts (DOCX, ODT): opening them safely and turning XML into text.

Bounded by what is decompressed and by the work of parsing, under an
:class:`~simdask.ingest.extract.extract_limits.ExtractLimits`: the parts read from one file may
inflate to at most ``inflated_bytes`` *together* (twice the run's --max-file-size, 200 MB by
default), counted as they are decompressed, and the text they give may not exceed
``text_chars`` (expat expands internal entities). Beyond it the file fails with kind
``bomb`` (more than ``bomb_ratio`` times the file's own size, by what was decompressed or by
the sizes the ZIP declares: a decompression bomb) or ``too_large``.
Parts are parsed by expat as a stream of pieces (:data:`PIECE` bytes) straight from the
decompressor: no tree is built, memory stays the text extracted plus a piece, and deep
nesting cannot overflow the stack. expat resolves no external entities and (>= 2.4.1)
refuses entity-expansion bombs. The work of parsing is bounded too: at most ``elements``
elements in all parts together and ``depth`` levels of nesting, beyond which the file fails
with kind ``too_complex`` (a small file of millions of empty paragraphs, or of elements
nested thousands deep, costs minutes of CPU and gigabytes).
"""

from __future__ import annotations

import io
import zipfile
import zlib
from xml.parsers import expat

from simdask.errors import ExtractionError
from simdask.ingest.extract.extract_limits import (
    NO_LIMIT_CEILING,
    ExtractLimits,
    as_limits,
    kind_over,
)
from simdask.ingest.extract.sniff import describe

__all__ = [
    "DEFAULT_UNCOMPRESSED_LIMIT",
    "NO_LIMIT_CEILING",
    "PIECE",
    "Package",
    "Rules",
    "uncompressed_limit",
]

#: Uncompressed bytes of the XML parts of one file, all parts together, when the run's
#: --max-file-size is the default 100 MB (twice it).
DEFAULT_UNCOMPRESSED_LIMIT = ExtractLimits().inflated_bytes
#: Bytes decompressed and parsed at a time.
PIECE = 1 << 20
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
_NO_RULE = ("", "", "")
#: expat's error code for a document whose entities amplify its input beyond expat's limit
#: (100 times by default: a billion-laughs bomb), None with an expat before 2.4
_AMPLIFICATION = expat.errors.codes.get(
    "limit on input amplification factor (from DTD and entities) breached"
)

#: How an element turns into text: ``(before, after, mode)``; mode ``skip`` leaves out the
#: element and its content (not its tail), ``text`` keeps its text, ``""`` keeps only the
#: content of its children.
Rules = dict[str, tuple[str, str, str]]


def uncompressed_limit(max_file_bytes: int | None) -> int:
    """Bytes the XML parts of one package may inflate to, together: twice the run's
    ``max_file_bytes`` (--max-file-size); :data:`NO_LIMIT_CEILING` when that is 0 (no
    limit); :data:`DEFAULT_UNCOMPRESSED_LIMIT` when None."""
    if max_file_bytes is None:
        return DEFAULT_UNCOMPRESSED_LIMIT
    return 2 * max_file_bytes if max_file_bytes > 0 else NO_LIMIT_CEILING


class _Capture:
    """The text of one subtree being collected (``depth``: of its root element)."""

    __slots__ = ("depth", "out", "skip", "tag")

    def __init__(self, tag: str, depth: int, before: str, skip: bool):
        self.tag, self.depth, self.skip = tag, depth, int(skip)
        self.out = [] if skip else [before]


class _TextStream:
    """expat handlers turning XML into text under ``rules`` (keyed by ``{namespace}tag``),
    one text per element whose tag is in ``roots`` (None: the document's root element).

    ``tails``: keep the text that follows an element inside its parent (mixed content, as in
    ODF); DOCX keeps text only in ``w:t`` elements (mode ``text``). A root captured inside
    another capture's skipped element (an ODF note body) is still captured. ``hook``: sees
    every element (``hook.start(tag, attrs) -> str``, added after the rule's ``before``;
    ``hook.end(tag)``) and cleans the text (``hook.clean(text) -> str``), e.g.
    :class:`~simdask.ingest.extract.blockquote.QuoteParagraphs`.
    """

    def __init__(
        self, rules: Rules, tails: bool, roots: set[str] | None, spend, hook=None, count=None
    ):
        self.rules, self.tails, self.roots, self.spend = rules, tails, roots, spend
        self.hook, self.count = hook, count  # count(depth): one more element at that depth
        self.frames: list[list] = []  # [tag, mode, has a child yet] per open element
        self.active: list[_Capture] = []
        self.done: list[tuple[str, str]] = []

    def start(self, name: str, _attrs) -> None:
        tag = "{" + name if "}" in name else name
        if self.count is not None:
            self.count(len(self.frames) + 1)
        if self.frames:
            self.frames[-1][2] = True
        before, _, mode = self.rules.get(tag, _NO_RULE)
        if self.hook is not None:
            before += self.hook.start(tag, _attrs)
        for cap in self.active:
            if cap.skip:
                cap.skip += 1
            elif mode == "skip":
                cap.skip = 1
            elif before:
                cap.out.append(before)
        if (tag in self.roots) if self.roots is not None else not self.frames:
            self.active.append(_Capture(tag, len(self.frames), before, mode == "skip"))
        self.frames.append([tag, mode, False])

    def end(self, _name: str) -> None:
        tag, _, _ = self.frames.pop()
        if self.hook is not None:
            self.hook.end(tag)
        after = self.rules.get(tag, _NO_RULE)[1]
        for cap in list(self.active):
            if cap.skip:
                cap.skip -= 1
            elif after:
                cap.out.append(after)
            if cap.depth == len(self.frames):
                self.active.remove(cap)
                self.done.append((cap.tag, "".join(cap.out)))

    def data(self, text: str) -> None:
        if not self.frames or not self.active:
            return
        _, mode, has_child = self.frames[-1]
        if not (self.tails or (mode == "text" and not has_child)):
            return
        if self.hook is not None:
            text = self.hook.clean(text)
        for cap in self.active:
            if not cap.skip:
                self.spend(len(text))
                cap.out.append(text)


class Package:
    """An opened ZIP package; ``name``, ``fmt`` ("DOCX") and ``expected`` (a phrase naming
    what a valid file is) go into error messages. ``limit``: uncompressed bytes all parts
    read may inflate to together (see the module docstring)."""

    def __init__(
        self,
        data: bytes,
        name: str,
        fmt: str,
        expected: str,
        limits: ExtractLimits | int | None = None,
    ):
        self.name, self.fmt, self.size = name, fmt, len(data)
        self.limits = as_limits(limits)
        self.limit = self.limits.inflated_bytes
        self.used, self.made, self.elements = 0, 0, 0
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
            self.names = set(self.zip.namelist())
            self.declared = sum(i.file_size for i in self.zip.infolist())
        except _ZIP_ERRORS as e:
            raise ExtractionError(
                name, "corrupt", f"expected {expected}, found {_what(data)}"
            ) from e

    def _made(self, n: int, part: str) -> None:
        """Count ``n`` more characters of text made from ``part`` (entities can expand)."""
        self.made += n
        if self.made > self.limits.text_chars:
            self._over(self.made, f"{part}'s text", self.limits.text_chars, "characters")

    def _spend(self, n: int, part: str) -> None:
        """Count ``n`` more bytes decompressed from ``part``."""
        self.used += n
        if self.used > self.limit:
            self._over(self.used, part)

    def _count(self, depth: int, part: str) -> None:
        """One more element, ``depth`` levels deep, in ``part``: ``too_complex`` beyond
        ``limits.elements`` in all or ``limits.depth`` levels."""
        self.elements += 1
        lim = self.limits
        if self.elements > lim.elements or depth > lim.depth:
            if self.declared > self.limit:  # its parts say they inflate beyond the limit
                self._over(self.declared, part)
            what = (
                f"at most {lim.depth} levels of nested elements"
                if depth > lim.depth
                else f"at most {lim.elements:,} XML elements in all"
            )
            raise ExtractionError(
                self.name,
                "too_complex",
                f"expected {what} in this {self.size:,}-byte {self.fmt} file, found more in "
                f"{part} (parsing it would cost minutes of CPU and gigabytes of memory)",
            )

    def _over(self, used: int, where: str, limit: int | None = None, unit: str = "bytes"):
        """Fail: ``used`` (or the declared sizes) over ``limit`` (the inflation limit)."""
        limit = self.limit if limit is None else limit
        kind = kind_over(self.limits, max(used, self.declared), self.size)
        raise ExtractionError(
            self.name,
            kind,
            f"expected the XML parts of this {self.size:,}-byte {self.fmt} file to inflate to "
            f"at most {limit:,} {unit} together"
            + (" (twice the run's --max-file-size)" if unit == "bytes" else "")
            + ", found "
            f"more by {where}" + (" (a decompression bomb)" if kind == "bomb" else ""),
        )

    def texts(
        self, part: str, rules: Rules, tails: bool, roots: set[str] | None = None, hook=None
    ) -> list[tuple[str, str]]:
        """``(tag, text)`` of each element of ``part`` whose tag is in ``roots`` (None: the
        root element), in document order of their ends; the part is decompressed and parsed
        piece by piece. ``corrupt`` if it is damaged or not well-formed XML. ``hook``: see
        :class:`_TextStream`."""
        stream = _TextStream(
            rules, tails, roots, lambda n: self._made(n, part), hook, lambda d: self._count(d, part)
        )
        parser = expat.ParserCreate(namespace_separator="}")
        parser.buffer_text = True
        parser.StartElementHandler = stream.start
        parser.EndElementHandler = stream.end
        parser.CharacterDataHandler = stream.data
        try:
            with self.zip.open(part) as f:
                while piece := f.read(PIECE):
                    self._spend(len(piece), part)
                    parser.Parse(piece, False)
            parser.Parse(b"", True)
        except ExtractionError:
            raise
        except expat.ExpatError as e:
            if e.code == _AMPLIFICATION:
                raise ExtractionError(
                    self.name,
                    "bomb",
                    f"expected XML whose entities expand it at most 100 times in {self.fmt} "
                    f"part {part}, found more (an entity expansion bomb): {e}",
                ) from e
            raise ExtractionError(
                self.name,
                "corrupt",
                f"expected well-formed XML in {self.fmt} part {part}, found: {e}",
            ) from e
        except _ZIP_ERRORS as e:
            raise ExtractionError(
                self.name, "corrupt", f"expected a readable {self.fmt} part {part}, found: {e}"
            ) from e
        return stream.done


def _what(data: bytes) -> str:
    """What ``data`` is, said for a ZIP package that did not open: a file that starts as a
    ZIP archive but does not open is damaged or cut off (a truncated upload, a copy stopped
    half-way), which is what a teacher needs to hear, not that it is "a ZIP archive"."""
    if data.startswith(b"PK\x03\x04"):
        return (
            f"a damaged or truncated file ({len(data):,} bytes that start like one but do not "
            "open: it may have been cut off while copying or uploading; ask for it again)"
        )
    return describe(data)
