"""Test documents generated on the fly (no binary fixtures in the repository).

PDFs are written with fpdf2, DOCX with python-docx and ODT with odfpy: independent writers,
so the extractors are tested against files they did not produce themselves.
"""

from __future__ import annotations

import io
import random
import re
from html import escape

CZECH = (
    "Příliš žluťoučký kůň úpěl ďábelské ódy. Šťastný Šimon žil v Žatci a ťukal do dveří. "
    "Vysoké učení technické v Brně je veřejná vysoká škola; studenti píší diplomové práce."
)
_VOCAB = (  # noqa: SIM905
    "analysis method result data thesis chapter student model system corpus text reuse "
    "index query shard chunk word sentence paragraph evidence passage review teacher archive "
    "document similarity measure value table figure section source library cluster worker "
    "café naïve façade résumé"
).split()


def prose(n_words: int, seed: int = 0) -> str:
    """Random sentences of lower-case words (a few Latin-1 accents) with punctuation."""
    rng = random.Random(seed)
    out, sentence = [], []
    for i in range(n_words):
        sentence.append(rng.choice(_VOCAB) + (str(i % 97) if i % 17 == 0 else ""))
        if len(sentence) >= rng.randint(6, 14) or i == n_words - 1:
            out.append(" ".join(sentence).capitalize() + ".")
            sentence = []
    return " ".join(out)


def wrap(text: str, width: int = 70, hyphenate_every: int = 0) -> list[str]:
    """Lines of at most about ``width`` characters; every ``hyphenate_every``-th line ends in
    a word split by a hyphen (``exam-`` / ``ple``), as typeset text does."""
    lines, line = [], ""
    for word in text.split():
        if len(line) + len(word) + 1 > width:
            n = len(lines) + 1
            if hyphenate_every and n % hyphenate_every == 0 and len(word) >= 6 and word.isalpha():
                cut = len(word) // 2
                lines.append(f"{line} {word[:cut]}-".strip())
                line = word[cut:]
                continue
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line)
    return lines


def pdf_bytes(pages: list[list[str]], *, font: str | None = None, password: str | None = None):
    """A PDF with a text layer: one list of lines per page (Helvetica, or a TTF ``font``)."""
    from fpdf import FPDF

    pdf = FPDF()
    if font:
        pdf.add_font("uni", fname=font)
    for lines in pages:
        pdf.add_page()
        pdf.set_font("uni" if font else "Helvetica", size=11)
        for i, line in enumerate(lines):
            pdf.text(15, 20 + 6 * i, line)
    if password:
        pdf.set_encryption(owner_password="owner-" + password, user_password=password)
    return bytes(pdf.output())


def text_pdf(text: str, lines_per_page: int = 40, hyphenate_every: int = 0) -> bytes:
    """``text`` typeset as a PDF of as many pages as it needs."""
    lines = wrap(text, hyphenate_every=hyphenate_every)
    pages = [lines[i : i + lines_per_page] for i in range(0, len(lines), lines_per_page)]
    return pdf_bytes(pages)


def image_pdf(pages: int = 2) -> bytes:
    """A 'scanned' PDF: each page holds only an image, no text layer."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw

    pdf = FPDF()
    for i in range(pages):
        img = Image.new("L", (400, 200), 255)
        ImageDraw.Draw(img).rectangle((20, 20 + 10 * i, 380, 60 + 10 * i), fill=0)
        pdf.add_page()
        pdf.image(img, x=10, y=10, w=180)
    return bytes(pdf.output())


def docx_bytes(
    paragraphs: list[str],
    table: list[list[str]] | None = None,
    header: str | None = None,
    footer: str | None = None,
) -> bytes:
    """A DOCX: paragraphs, then a table (rows of cells), a header and a footer."""
    import docx

    doc = docx.Document()
    for p in paragraphs:
        doc.add_paragraph(p)
    if table:
        t = doc.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                t.cell(r, c).text = cell
    if header:
        doc.sections[0].header.paragraphs[0].text = header
    if footer:
        doc.sections[0].footer.paragraphs[0].text = footer
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def odt_bytes(
    paragraphs: list[str],
    heading: str | None = None,
    table: list[list[str]] | None = None,
    note: str | None = None,
    header: str | None = None,
) -> bytes:
    """An ODT: a heading, paragraphs (the first split into spans, with a footnote ``note`` at
    its end and extra spaces as ``text:s``), a table and a page header."""
    from odf.opendocument import OpenDocumentText
    from odf.style import Header, MasterPage, PageLayout
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, Note, NoteBody, NoteCitation, P, S, Span

    doc = OpenDocumentText()
    if heading:
        doc.text.addElement(H(outlinelevel=1, text=heading))
    for i, para in enumerate(paragraphs):
        p = P()
        if i == 0:
            first, _, rest = para.partition(" ")
            p.addElement(Span(text=first))
            p.addElement(S(c=3))
            p.addText(rest)
            if note:
                n = Note(noteclass="footnote", id="ftn1")
                n.addElement(NoteCitation(text="1"))
                body = NoteBody()
                body.addElement(P(text=note))
                n.addElement(body)
                p.addElement(n)
        else:
            p.addText(para)
        doc.text.addElement(p)
    if table:
        t = Table(name="T1")
        t.addElement(TableColumn(numbercolumnsrepeated=len(table[0])))
        for row in table:
            tr = TableRow()
            for cell in row:
                tc = TableCell()
                tc.addElement(P(text=cell))
                tr.addElement(tc)
            t.addElement(tr)
        doc.text.addElement(t)
    if header:
        layout = PageLayout(name="pm1")
        doc.automaticstyles.addElement(layout)
        page = MasterPage(name="Standard", pagelayoutname=layout)
        h = Header()
        h.addElement(P(text=header))
        page.addElement(h)
        doc.masterstyles.addElement(page)
    out = io.BytesIO()
    doc.write(out)
    return out.getvalue()


def html_bytes(paragraphs: list[str], encoding: str = "utf-8", noise: bool = True) -> bytes:
    """An HTML page of ``paragraphs`` (escaped); with ``noise``, a title, style, script,
    template, noscript and a hidden element whose words must not come out."""
    head = f'<meta charset="{encoding}">'
    body = "".join(f"<p>{escape(p)}</p>\n" for p in paragraphs)
    if noise:
        head += (
            "<title>Title words hidden</title><style>p { color: red } /* stylewords */</style>"
            '<script>var scriptwords = "<p>not text</p>";</script>'
        )
        body = (
            "<template><p>templatewords</p></template><noscript>noscriptwords</noscript>"
            + body
            + "<div hidden>hiddenwords</div><script>more()</script>"
        )
    page = f"<!DOCTYPE html>\n<html><head>{head}</head><body>\n{body}</body></html>\n"
    return page.encode(encoding, "xmlcharrefreplace")  # what the code page lacks: &#NNN;


_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_ODF = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
)


def bomb_package(fmt: str, inflated: int, split: int = 1) -> bytes:
    """A DOCX or ODT whose XML inflates to about ``inflated`` bytes (a decompression bomb:
    deflate squeezes the repeated paragraphs ~1000 times). ``split`` > 1 spreads the bytes over
    that many parts (DOCX headers), each under the per-file total, to test that the limit
    counts all parts together. Written piece by piece: the test never holds the XML."""
    import zipfile

    if fmt == "docx":
        head = f'<w:document xmlns:w="{_W_NS}"><w:body>'.encode()
        para = b"<w:p><w:r><w:t>bomb words again and again</w:t></w:r></w:p>"
        tail = b"</w:body></w:document>"
        parts = ["word/document.xml"] + [f"word/header{i}.xml" for i in range(1, split)]
        extra = {"[Content_Types].xml": b"<Types/>"}
    elif fmt == "odt":
        head = f"<office:document-content {_ODF}><office:body><office:text>".encode()
        para = b"<text:p>bomb words again and again</text:p>"
        tail = b"</office:text></office:body></office:document-content>"
        parts = ["content.xml"] + [f"part{i}.xml" for i in range(1, split)]
        extra = {"mimetype": b"application/vnd.oasis.opendocument.text"}
    else:
        raise ValueError(f"expected docx or odt, found {fmt!r}")
    out = io.BytesIO()
    block = para * (1 << 14)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in extra.items():
            z.writestr(name, data, compress_type=zipfile.ZIP_STORED)
        per_part = inflated // split
        for name in parts:
            if fmt == "odt" and name != "content.xml":
                name = "styles.xml" if name == "part1.xml" else name
            with z.open(name, "w", force_zip64=True) as f:
                f.write(head)
                for _ in range(max(1, per_part // len(block))):
                    f.write(block)
                f.write(tail)
    return out.getvalue()


def outside_evidence(page: str) -> str:
    """An HTML report without its folded evidence block (``<details id=evidence>``: the
    passage table and legend repeat the marks), so that marks and excluded spans are counted
    in the two texts only."""
    start = page.find("<details id=evidence")
    if start < 0:
        return page
    end = page.find("</details>", start)
    # the block may hold nested details: cut to the closing tag that balances it
    depth = 0
    for m in re.finditer(r"<details\b|</details>", page[start:]):
        depth += 1 if m.group(0).startswith("<details") else -1
        if depth == 0:
            end = start + m.end()
            break
    return page[:start] + page[end:]
