"""Block quotes the format shows (issue 16) in the index: DOCX, ODT and HTML files with planted
block quotes; with ``exclude_quotes`` their chunks do not count and reports show them as
excluded text, without it they count; body text shared between documents counts either way.
Checked against a brute force over the planted words (not the detector)."""

from __future__ import annotations

import pytest

from simdask import Index, IndexConfig
from tests.helpers.compare import table_by_doc
from tests.helpers.quoted_docs import QUOTE_KINDS, WRITERS

pytestmark = pytest.mark.integration

K = 5
CFG = IndexConfig(k=K, hash_bits=32, shards=2, top_k=10)


def own(tag: str, n: int) -> list[str]:
    return [f"{tag}w{i}" for i in range(n)]


QUOTE = own("quoted", 30)  # the same block quote in a, b and c
SHARED = own("shared", 25)  # body text a and b share
DOCS = {
    "a.docx": [("body", own("a", 60)), ("quote", QUOTE), ("body", SHARED + own("a2", 20))],
    "b.html": [("body", own("b", 40) + SHARED), ("quote", QUOTE), ("body", own("b2", 30))],
    "c.odt": [("body", own("c", 50)), ("indent", QUOTE), ("body", own("c2", 50))],
    "d.docx": [("body", own("d", 50)), ("localised", QUOTE), ("body", own("d2", 50))],
    "e.docx": [("body", own("e", 50) + QUOTE + own("e2", 50))],  # the same words, unquoted
}


def write(folder) -> None:
    folder.mkdir()
    for name, paras in DOCS.items():
        (folder / name).write_bytes(WRITERS[name.rsplit(".", 1)[1]](paras))


def brute_table(quotes: bool) -> dict:
    """Per document: sorted ``(similarity, shared, other)``, from the planted words: a window
    of ``K`` words all in a block quote is left out of its own document when ``quotes``, and
    still counts as found in it for the others (issue 31 item 4: ``|U(a) ∩ (U(b) ∪ Q(b))|``
    of ``|U(a)|``)."""
    sets, quoted = {}, {}
    for name, paras in DOCS.items():
        ws = [(w.lower(), kind in QUOTE_KINDS) for kind, words in paras for w in words]
        wins = [
            (tuple(sorted(w for w, _ in ws[i : i + K])), all(q for _, q in ws[i : i + K]))
            for i in range(len(ws) - K + 1)
        ]
        sets[f"src/{name}"] = {c for c, q in wins if not (quotes and q)}
        quoted[f"src/{name}"] = {c for c, _ in wins} - sets[f"src/{name}"]
    out = {}
    for a, sa in sets.items():
        found = {b: sa & (sb | quoted[b]) for b, sb in sets.items()}
        rows = [
            (round(100.0 * len(f) / len(sa), 9), len(f), b)
            for b, f in found.items()
            if a != b and f and 100.0 * len(f) / len(sa) >= CFG.threshold
        ]
        if rows:
            out[a] = sorted(rows)
    return out


def stored_table(idx: Index) -> dict:
    return {d: sorted(r) for d, r in table_by_doc(idx).items()}


def test_block_quotes_count_only_without_exclude_quotes(tmp_path, client):
    src = tmp_path / "src"
    write(src)
    idx = Index.create(tmp_path / "idx", CFG)
    idx.update([src], client=client)
    plain = brute_table(False)
    assert stored_table(idx) == plain
    assert "src/c.odt" in {o for _, _, o in plain["src/a.docx"]}  # they share the quote

    idx.update([src], client=client, config=CFG.replace(exclude_quotes=True))
    want = brute_table(True)
    assert stored_table(idx) == want
    others = {o for _, _, o in want["src/a.docx"]}
    assert "src/b.html" in others and "src/c.odt" not in others and "src/d.docx" not in others
    # e holds the quoted words unquoted: found in every document quoting them, while their
    # quotations are not their copied text (issue 31 item 4)
    assert len(want["src/e.docx"]) == len(plain["src/e.docx"]) == 4
    assert all("src/e.docx" not in {o for _, _, o in want[d]} for d in want if d != "src/e.docx")
    full = Index.create(tmp_path / "full", CFG.replace(exclude_quotes=True))
    full.update([src], client=client)
    assert stored_table(full) == want

    rep = idx.report("src/a.docx", "src/b.html")
    text_a, text_b = idx.text("src/a.docx"), idx.text("src/b.html")
    for side, text in (("doc", text_a), ("other", text_b)):
        quoted = [text[x["start"] : x["end"]] for x in rep["excluded"][side]]
        assert [x["kind"] for x in rep["excluded"][side]] == ["quote"]
        assert " ".join(quoted[0].replace(">", " ").split()) == " ".join(QUOTE)
    stored = {o: s for s, _, o in want["src/a.docx"]}
    assert rep["similarity"] == pytest.approx(stored["src/b.html"])
    rep_c = idx.report("src/a.docx", "src/c.odt")
    assert rep_c["passages"] == [] and rep_c["excluded"]["other"][0]["kind"] == "quote"
