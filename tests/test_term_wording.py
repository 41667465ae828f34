"""Small wording a teacher meets (issue 31, item 18), through the real CLI: counts in the
number they take ("1 shared chunk"), a query with no match says so instead of printing a bare
table header, and a truncated .docx is called damaged or truncated, not "a ZIP archive"."""

from __future__ import annotations

import io
import zipfile

import pytest

from simdask.read.undirected_pairs import counted
from tests.helpers.cli import run

pytestmark = pytest.mark.system

OPTS = ("--workers", 1, "--quiet", "--shards", 2)


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def docx_bytes(text: str) -> bytes:
    ns = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = f'<w:document xmlns:w="{ns}"><w:body><w:p><w:r><w:t>{text}</w:t></w:r></w:p>'
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", body + "</w:body></w:document>")
    return buf.getvalue()


def test_counts_no_match_and_a_truncated_docx(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text(f"{own('a', 40)} one shared run here now {own('c', 40)}")
    (src / "b.txt").write_text(f"{own('b', 40)} one shared run here now {own('d', 40)}")
    whole = docx_bytes(own("w", 300))
    (src / "late.docx").write_bytes(whole[: len(whole) - 40])  # cut off while uploading
    idx = tmp_path / "idx"
    run("update", idx, src, *OPTS)

    rep = run("report", idx, "src/a.txt", "src/b.txt", "--exact-only").stdout
    assert "1 shared chunk (" in rep and "1 shared chunks" not in rep

    errors = run("errors", idx).stdout
    assert "damaged or truncated" in errors and "found a ZIP archive" not in errors

    q = tmp_path / "q.txt"
    q.write_text(own("zz", 50))
    out = run("query", idx, q).stdout
    want = "no match: no indexed document shares text 1.0 % or more either way with the 1 checked"
    assert out.strip() == want + " document"


@pytest.mark.unit
def test_counted_takes_the_number():
    assert counted(1, "shared chunk") == "1 shared chunk"
    assert counted(0, "checked document") == "0 checked documents"
    assert counted(2_000, "match", "matches") == "2,000 matches"
