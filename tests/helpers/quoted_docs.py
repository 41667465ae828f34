"""DOCX, ODT and HTML documents with planted block quotes, written by independent libraries
(python-docx, odfpy) or by hand (HTML), for the block-quote tests (issue 16).

A document is a list of paragraphs ``(kind, words)``; :data:`QUOTE_KINDS` are the kinds the
format shows as block quotes, the others are body text, lists, tables, hanging or small
indents that are not.
"""

from __future__ import annotations

import html
import io

#: paragraph kinds that are block quotes
QUOTE_KINDS = frozenset({"quote", "intense", "based_on_quote", "indent", "localised"})
#: kinds each format can write
DOCX_KINDS = (
    "body",
    "quote",
    "intense",
    "based_on_quote",
    "indent",
    "localised",
    "hanging",
    "list",
    "small",
    "table",
)
ODT_KINDS = ("body", "quote", "based_on_quote", "indent", "hanging", "list", "small", "table")
HTML_KINDS = ("body", "quote", "list", "table")


def docx_document(paragraphs: list[tuple[str, list[str]]]) -> bytes:
    """A DOCX file of the paragraphs (python-docx). ``localised``: a quotation style whose ID
    is localised (``Citace``, its name stays ``Quote`` as in a Czech Word)."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.shared import Cm

    d = docx.Document()
    mine = d.styles.add_style("My Quote", WD_STYLE_TYPE.PARAGRAPH)
    mine.base_style = d.styles["Quote"]
    local = None
    for kind, ws in paragraphs:
        text = " ".join(ws)
        if kind == "table":
            cell = d.add_table(rows=1, cols=1).cell(0, 0)
            cell.paragraphs[0].text = text
            cell.paragraphs[0].paragraph_format.left_indent = Cm(2)
            continue
        if kind == "localised" and local is None:
            local = d.styles.add_style("LocalQuote", WD_STYLE_TYPE.PARAGRAPH)
            local.name = "Quote"  # the built-in name, kept in every language
            local.style_id = "Citace"
        style = {
            "quote": "Quote",
            "intense": "Intense Quote",
            "based_on_quote": mine,
            "list": "List Bullet",
            "localised": local,
        }.get(kind)
        p = d.add_paragraph(text, style=style)
        fmt = p.paragraph_format
        if kind == "indent":
            fmt.left_indent, fmt.right_indent = Cm(1.5), Cm(1)
        elif kind == "hanging":
            fmt.left_indent, fmt.first_line_indent = Cm(1.5), Cm(-1.5)
        elif kind == "small":
            fmt.left_indent = Cm(0.5)
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def odt_document(paragraphs: list[tuple[str, list[str]]]) -> bytes:
    """An ODT file of the paragraphs (odfpy): LibreOffice's ``Quotations`` style, an automatic
    style based on it, margins for indents."""
    from odf.opendocument import OpenDocumentText
    from odf.style import ParagraphProperties, Style
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import List, ListItem, P

    doc = OpenDocumentText()

    def style(name, auto, parent=None, **props):
        s = Style(name=name, family="paragraph", **({"parentstylename": parent} if parent else {}))
        if props:
            s.addElement(ParagraphProperties(**props))
        (doc.automaticstyles if auto else doc.styles).addElement(s)
        return s

    quotes = style("Quotations", False, marginleft="1cm", marginright="1cm")
    styles = {
        "quote": quotes,
        "based_on_quote": style("P1", True, parent="Quotations"),
        "indent": style("P2", True, marginleft="2cm"),
        "hanging": style("P3", True, marginleft="2cm", textindent="-2cm"),
        "small": style("P4", True, marginleft="0.4cm"),
        "list": style("P5", True, marginleft="2cm"),
        "table": style("P6", True, marginleft="2cm"),
    }
    for kind, ws in paragraphs:
        p = P(text=" ".join(ws), **({"stylename": styles[kind]} if kind in styles else {}))
        if kind == "list":
            item = ListItem()
            item.addElement(p)
            lst = List()
            lst.addElement(item)
            doc.text.addElement(lst)
        elif kind == "table":
            t = Table()
            t.addElement(TableColumn())
            row, cell = TableRow(), TableCell()
            cell.addElement(p)
            row.addElement(cell)
            t.addElement(row)
            doc.text.addElement(t)
        else:
            doc.text.addElement(p)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def html_document(paragraphs: list[tuple[str, list[str]]]) -> bytes:
    """An HTML page of the paragraphs: ``quote`` in a ``blockquote`` of two ``p`` (split in
    the middle, one with an ``em``), source lines indented and broken as an editor writes
    them."""
    body = []
    for kind, ws in paragraphs:
        text = html.escape(" ".join(ws))
        if kind == "quote":
            h = len(ws) // 2
            first = " ".join(ws[:h])
            rest = ws[h:]
            second = f"<em>{rest[0]}</em>\n      " + " ".join(rest[1:]) if rest else ""
            body.append(f"<blockquote>\n  <p>{first}</p>\n  <p>{second}</p>\n</blockquote>")
        elif kind == "list":
            body.append(f"<ul><li>{text}</li></ul>")
        elif kind == "table":
            body.append(f"<table><tr><td>{text}</td></tr></table>")
        else:
            body.append(f"<p>{text}</p>")
    return ("<html><body>\n" + "\n".join(body) + "\n</body></html>").encode()


WRITERS = {"docx": docx_document, "odt": odt_document, "html": html_document}
KINDS = {"docx": DOCX_KINDS, "odt": ODT_KINDS, "html": HTML_KINDS}
