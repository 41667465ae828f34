"""Evidence for a hearing (issue 31, item 14): ``simdask report INDEX A B --pdf FILE`` prints
the side-by-side page with a headless Chromium. The PDF is read back with pypdfium2 (its
text) and rendered to PNG (its pixels): both keys, both documents' dates, the decision and
note, the settings and exclusions, the legend and the numbered passages are in it, the
passage colour is drawn in both halves of a page (side by side), and excluded text is not
inside a passage. A missing or failing browser is a clear error with exit status 1."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest

from simdask.errors import RenderError
from simdask.evidence.pdf import html_to_pdf
from tests.helpers.cli import run
from tests.helpers.documents import prose

pytestmark = pytest.mark.system

SHEET = prose(70, seed=31)  # the assignment sheet, in every essay: excluded
COPIED = prose(220, seed=32)
#: the first passage's colour (simdask.evidence.report_html._PALETTE[0]) as RGB
PASSAGE_RGB = (0xFF, 0xE0, 0x8A)


def _chromium_or_skip():
    from tests.helpers.browser import chromium_driver  # skips (fails with CI=true) without it

    chromium_driver().quit()


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    _chromium_or_skip()
    root = tmp_path_factory.mktemp("pdf")
    src = root / "class"
    src.mkdir()
    (src / "scott.txt").write_text(
        "\n\n".join([SHEET, prose(150, seed=33), COPIED, prose(120, seed=34)]), encoding="utf-8"
    )
    (src / "thesis.txt").write_text(
        "\n\n".join([prose(400, seed=35), COPIED, prose(300, seed=36)]), encoding="utf-8"
    )
    (src / "other.txt").write_text(SHEET + "\n\n" + prose(250, seed=37), encoding="utf-8")
    (root / "sheet.txt").write_text(SHEET, encoding="utf-8")
    idx = root / "idx"
    run("update", idx, src, "--exclude", root / "sheet.txt", "--workers", 1, "--quiet")
    run("mark", idx, "scott.txt", "thesis.txt", "confirmed", "--note", "heard on 20 November")
    pdf = root / "scott-thesis.pdf"
    out = run("report", idx, "scott.txt", "thesis.txt", "--pdf", pdf, "--format", "json")
    return root, json.loads(out.stdout), pdf


def _pages(pdf):
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        texts = [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
        pages = [doc[i] for i in range(len(doc))]
        images = [np.asarray(p.render(scale=1.5).to_pil().convert("RGB")) for p in pages]
    finally:
        doc.close()
    return texts, images


def _find(pdf, words: str) -> list[tuple[int, float]]:
    """``(page, left x in points)`` of each place the PDF's text holds ``words``."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    found = []
    try:
        for i in range(len(doc)):
            tp = doc[i].get_textpage()
            searcher = tp.search(words)
            while (hit := searcher.get_next()) is not None:
                found.append((i, tp.get_charbox(hit[0])[0], doc[i].get_size()[0]))
    finally:
        doc.close()
    return found


def _near(img: np.ndarray, rgb: tuple[int, int, int], tol: int = 6) -> np.ndarray:
    return (np.abs(img.astype(int) - np.array(rgb)) <= tol).all(axis=2)


def test_pdf_holds_the_evidence(printed):
    root, rep, pdf = printed
    texts, images = _pages(pdf)
    assert pdf.read_bytes().startswith(b"%PDF-")
    assert 2 <= len(texts) <= 6, len(texts)  # A4: the evidence, then the texts side by side
    whole = " ".join(" ".join(t.split()) for t in texts)
    a, b = rep["doc"], rep["other"]
    assert (a, b) == ("class/scott.txt", "class/thesis.txt")
    for want in (
        f"{a} and {b}",
        "Documents and dates",
        rep["review"]["a_first_indexed"],
        rep["review"]["b_modified"],
        "Decision on this pair: confirmed: heard on 20 November",
        "template texts excluded: sheet.txt",
        "quotations excluded: no",
        "Legend",
        "Passages matched across the two texts (1)",
        "1 verbatim",  # the passage's number and kind, at its start in both texts
    ):
        assert want in whole, want
    assert whole.count(a) >= 3 and whole.count(b) >= 3  # header, dates, table, texts
    [p] = rep["passages"]
    scott = (root / "class" / "scott.txt").read_text(encoding="utf-8")
    # the passage is the copied text, not the excluded sheet before it
    assert scott[p["doc_start"] : p["doc_end"]].split()[:5] == COPIED.split()[:5]
    assert " ".join(COPIED.split()[:8]) in whole
    # pixels: the passage's colour is drawn, on the left and on the right half of a page
    # (the matched passages and the texts are side by side), and on every page with text
    sides = []
    for img in images:
        hit = _near(img, PASSAGE_RGB)
        half = img.shape[1] // 2
        sides.append((hit[:, :half].sum(), hit[:, half:].sum()))
    assert any(left > 2000 and right > 2000 for left, right in sides), sides
    # the two texts side by side: the start of each (scott's begins with the excluded
    # sheet, shown greyed out) on one page, scott's in the left half, the thesis's in the right
    [(page_a, x_a, width)] = _find(pdf, " ".join(SHEET.split()[:4]))
    thesis = (root / "class" / "thesis.txt").read_text(encoding="utf-8")
    [(page_b, x_b, _)] = _find(pdf, " ".join(thesis.split()[:4]))
    assert page_a == page_b >= 1 and x_a < width / 2 < x_b, (page_a, x_a, page_b, x_b)


def test_pdf_png_for_a_person(printed, tmp_path):
    """The first page rendered to PNG (kept in the test's folder to be looked at)."""
    import pypdfium2 as pdfium

    _, _, pdf = printed
    doc = pdfium.PdfDocument(str(pdf))
    try:
        png = tmp_path / "page1.png"
        doc[0].render(scale=1.5).to_pil().save(png)
        width, height = doc[0].get_size()
    finally:
        doc.close()
    assert round(width) == 595 and round(height) == 842  # A4 in points
    assert png.stat().st_size > 20_000


def _fake_browser(tmp_path, body: str):
    exe = tmp_path / "fake-chrome"
    exe.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def test_a_failing_or_missing_browser_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("SIMDASK_BROWSER", raising=False)
    with pytest.raises(RenderError, match="found no such program"):
        html_to_pdf("<p>x</p>", tmp_path / "x.pdf", browser=str(tmp_path / "none"))
    bad = _fake_browser(tmp_path, 'echo "cannot open display" >&2; exit 3')
    with pytest.raises(RenderError, match="exit status 3 and no PDF: cannot open display"):
        html_to_pdf("<p>x</p>", tmp_path / "x.pdf", browser=bad)
    assert not (tmp_path / "x.pdf").exists()
    # none on PATH nor installed: says what to install
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr("simdask.evidence.pdf._INSTALLED", ())
    with pytest.raises(RenderError, match="apt install chromium"):
        html_to_pdf("<p>x</p>", tmp_path / "x.pdf")
    # a browser that writes the PDF it is asked for: the file is moved to the target
    good = _fake_browser(
        tmp_path,
        'for a in "$@"; do case "$a" in --print-to-pdf=*) printf "%%PDF-1.4" > "${a#*=}";; esac;'
        " done",
    )
    out = html_to_pdf("<p>x</p>", tmp_path / "sub" / "y.pdf", browser=good)
    assert out.read_bytes() == b"%PDF-1.4"


def test_cli_says_what_to_install(printed):
    root, _, _ = printed
    env = {**os.environ, "SIMDASK_BROWSER": str(root / "no-such-browser")}
    proc = run("report", root / "idx", "scott.txt", "thesis.txt", "--pdf", root / "n.pdf",
               check=False, env=env)  # fmt: skip
    assert proc.returncode == 1 and "found no such program" in proc.stderr
    assert not (root / "n.pdf").exists()
