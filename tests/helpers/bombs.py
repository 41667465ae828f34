"""Bombs of every supported format, small on disk, written on the fly (issue 30 item 5).

Each function returns the bytes of one file that costs far more to extract than its size
says: decompression bombs (ZIP XML parts, PDF flate streams), work bombs (millions of tiny
elements, deep nesting, thousands of pages, entity expansion) and input-size bombs (one huge
line). :data:`BOMBS` names them with the file name they are written under and the error kind
the extractor must report (None: the file must be indexed within the limits).
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import subprocess
import tempfile
import time
import zipfile
import zlib

import psutil

_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_ODF = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
)


def zip_xml(fmt: str, head: bytes, block: bytes, repeat: int, tail: bytes) -> bytes:
    """A DOCX (``fmt`` "docx") or ODT ("odt") whose main XML part is ``head``, ``block``
    ``repeat`` times, ``tail``: written piece by piece, never held inflated."""
    part = "word/document.xml" if fmt == "docx" else "content.xml"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        if fmt == "odt":
            z.writestr("mimetype", b"application/vnd.oasis.opendocument.text", zipfile.ZIP_STORED)
        else:
            z.writestr("[Content_Types].xml", b"<Types/>")
        with z.open(part, "w", force_zip64=True) as f:
            f.write(head)
            chunk = block * max(1, (1 << 20) // max(1, len(block)))
            n = len(chunk) // len(block)
            for _ in range(repeat // n):
                f.write(chunk)
            f.write(block * (repeat % n))
            f.write(tail)
    return out.getvalue()


def docx_empty_paragraphs(inflated: int = 400_000_000) -> bytes:
    """The issue's DOCX: ``word/document.xml`` of ``inflated`` bytes of ``<w:p/>``."""
    head = f'<w:document xmlns:w="{_W_NS}"><w:body>'.encode()
    return zip_xml("docx", head, b"<w:p/>", inflated // 6, b"</w:body></w:document>")


def docx_nested(depth: int = 1_000_000) -> bytes:
    """A DOCX of elements nested ``depth`` deep (a few 10 kB)."""
    head = f'<w:document xmlns:w="{_W_NS}"><w:body>'.encode()
    return zip_xml("docx", head + b"<w:p>" * depth, b"</w:p>", depth, b"</w:body></w:document>")


def odt_text(inflated: int = 400_000_000) -> bytes:
    """An ODT whose ``content.xml`` inflates to ``inflated`` bytes of text paragraphs."""
    head = f"<office:document-content {_ODF}><office:body><office:text>".encode()
    tail = b"</office:text></office:body></office:document-content>"
    para = b"<text:p>bomb words again and again</text:p>"
    return zip_xml("odt", head, para, inflated // len(para), tail)


def docx_laughs(levels: int = 10) -> bytes:
    """A DOCX with an internal-entity expansion bomb (billion laughs) in its DTD."""
    ents = ['<!ENTITY l0 "lol lol lol lol lol lol lol lol lol lol">']
    ents += [f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels)]
    head = (
        f"<!DOCTYPE w:document [{''.join(ents)}]>"
        f'<w:document xmlns:w="{_W_NS}"><w:body><w:p><w:r><w:t>'
    ).encode()
    return zip_xml(
        "docx", head, f"&l{levels - 1};".encode(), 1, b"</w:t></w:r></w:p></w:body></w:document>"
    )


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (object i + 1 is ``objects[i]``; 1 is the catalog)."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    packed = zlib.compress(data, 9)
    return (
        b"<< /Length %d /Filter /FlateDecode %s>>\nstream\n" % (len(packed), extra)
        + packed
        + b"\nendstream"
    )


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def pdf_pages(content: bytes, pages: int) -> bytes:
    """A PDF of ``pages`` pages that all draw one shared content stream ``content``."""
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        _FONT,
        _stream(content),
    ]
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 3 0 R >> >> >>"
    )
    objects += [page] * pages
    return _pdf(objects)


def pdf_flate(inflated: int = 400_000_000) -> bytes:
    """A one-page PDF whose content stream inflates to ``inflated`` bytes of text drawing."""
    op = b"BT /F1 12 Tf 72 700 Td (bomb words again and again) Tj ET\n"
    return pdf_pages(op * (inflated // len(op)), 1)


def pdf_many_pages(pages: int = 19_000, words: int = 20_000) -> bytes:
    """A PDF of ``pages`` pages each drawing the same ``words`` words (one shared stream)."""
    line = b"(bomb words again and again here) Tj T*\n"
    body = b"BT /F1 8 Tf 10 TL 20 780 Td\n" + line * (words // 6) + b"ET\n"
    return pdf_pages(body, pages)


def html_nested(depth: int = 2_000_000) -> bytes:
    """HTML of ``depth`` nested ``div`` elements with a word inside."""
    return b"<html><body>" + b"<div>" * depth + b"deep" + b"</div>" * depth + b"</body></html>"


def html_hidden_nested(depth: int = 300_000) -> bytes:
    """HTML nesting ``depth`` elements inside a hidden one, closed by end tags of elements
    that are not open (each costs a search of the open elements)."""
    return b"<p>word</p><div hidden>" + b"<span>" * depth + b"</b>" * depth + b"</div>"


def rtf_nested(depth: int = 2_000_000) -> bytes:
    """RTF of ``depth`` nested groups."""
    return b"{\\rtf1\\ansi " + b"{" * depth + b"deep" + b"}" * depth + b"}"


def rtf_fonts(count: int = 300_000) -> bytes:
    """RTF of ``count`` ``\\f1`` control words on one line: the RTF library's font-table
    regular expression scans to the line's end from each (quadratic time)."""
    return b"{\\rtf1\\ansi " + b"\\f1 " * count + b"x}"


def pdf_too_many_pages(pages: int = 25_000) -> bytes:
    """A PDF of ``pages`` pages drawing one word each (one shared stream)."""
    return pdf_pages(b"BT /F1 12 Tf 72 700 Td (word) Tj ET\n", pages)


def plain_line(n_bytes: int = 90_000_000) -> bytes:
    """Plain text of one line of ``n_bytes`` bytes of words without a line break."""
    word = b"line words again and again "
    return word * (n_bytes // len(word))


def run_measured(args: list[str], timeout: float, env=None, cap: int | None = None):
    """Run ``args``; ``(exit status, output, peak RSS of the process tree in MiB (sampled
    sum every 0.1 s), peak RSS of its largest process in MiB (``wait4``: it and every
    descendant it reaped), CPU seconds of it and its reaped descendants, wall seconds)``.
    ``cap``: an address-space limit (bytes) of the process; past ``timeout`` it is killed
    (status -9)."""

    def limit() -> None:
        if cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    began = time.perf_counter()
    with open(os.devnull, "rb") as null, _Output() as out:
        proc = subprocess.Popen(
            args,
            stdin=null,
            stdout=out.file,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=limit,
        )
        tree, usage, status = 0.0, None, 0
        while usage is None:
            pid, status, got = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                usage = got
                break
            tree = max(tree, _tree_rss(proc.pid))
            if time.perf_counter() - began > timeout:
                _kill_tree(proc.pid)
            time.sleep(0.1)
        proc.returncode = os.waitstatus_to_exitcode(status)
        text = out.read()
    wall = time.perf_counter() - began
    cpu = usage.ru_utime + usage.ru_stime
    return proc.returncode, text, tree / 2**20, usage.ru_maxrss / 1024, cpu, wall


class _Output:
    """A temporary file for a child's output."""

    def __enter__(self):
        self.file = tempfile.TemporaryFile("w+")
        return self

    def read(self) -> str:
        self.file.seek(0)
        return self.file.read()

    def __exit__(self, *exc) -> None:
        self.file.close()


def _tree_rss(pid: int) -> float:
    """Bytes of RSS of ``pid`` and its descendants now (0 for those gone)."""
    total = 0.0
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
    except psutil.Error:
        pass
    return total


def _kill_tree(pid: int) -> None:
    try:
        root = psutil.Process(pid)
        for p in [*root.children(recursive=True), root]:
            p.kill()
    except psutil.Error:
        pass
