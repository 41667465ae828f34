"""Boilerplate control in the index (issue 16): templates, quotations and reference lists left
out of every count, changed later, queried and reported; on a real LocalCluster."""

from __future__ import annotations

import shutil

import pytest

from simdask import Index, IndexConfig
from simdask.errors import ConfigError, SourceError
from simdask.kernels.exclusions import excluded_spans, merge_spans
from simdask.kernels.words import WORD_PATTERN, chunks
from simdask.write import rechunk
from tests.helpers.compare import assert_same_index, table_by_doc
from tests.helpers.corpus import make_docs, write_txt

pytestmark = pytest.mark.integration

CFG = IndexConfig(hash_bits=32, shards=3, top_k=10)
TEMPLATE = (
    "Declaration. I hereby declare that I wrote this thesis on my own and that I cited "
    "every source I used; the thesis template of the faculty of arts, version three."
)
POOL = list(make_docs(12, seed=5).values())


def own(j: int, n: int = 60) -> str:
    return " ".join(f"own{j}w{i}" for i in range(n))


def true_chunks(text: str, k: int, quotes: bool, bib: bool, template: str | None):
    """Brute force: the true string chunks with a word outside the excluded spans, minus the
    template's chunks (ASCII words: positions are those of the text)."""
    ws = [(m.group().lower(), m.start(), m.end()) for m in WORD_PATTERN.finditer(text)]
    spans = merge_spans([(s, e) for s, e, _ in excluded_spans(text, quotes, bib)])
    inside = [any(s <= a and b <= e for s, e in spans) for _, a, b in ws]
    out = {
        tuple(sorted(w for w, _, _ in ws[i : i + k]))
        for i in range(len(ws) - k + 1)
        if not all(inside[i : i + k])
    }
    return out - (set(chunks(template, k)) if template else set())


def brute_table(docs: dict[str, str], k, quotes, bib, template, threshold) -> dict:
    sets = {key: true_chunks(t, k, quotes, bib, template) for key, t in docs.items()}
    out = {}
    for a, sa in sets.items():
        rows = []
        for b, sb in sets.items():
            n = len(sa & sb)
            if a != b and n and 100.0 * n / len(sa) >= threshold:
                rows.append((round(100.0 * n / len(sa), 9), n, b))
        if rows:
            out[a] = sorted(rows)
    return out


def stored_table(idx: Index) -> dict:
    return {d: sorted(r) for d, r in table_by_doc(idx).items()}


def full_build(tmp_path, folder, client, config, exclude=None) -> Index:
    path = tmp_path / "full"
    shutil.rmtree(path, ignore_errors=True)
    idx = Index.create(path, config)
    idx.update([folder], client=client, exclude=exclude)
    return idx


def test_documents_sharing_only_a_template_drop_to_their_own_text(tmp_path, client):
    """Two documents that share only the template: 0 % once it is excluded; a third sharing a
    passage keeps exactly what brute force over true chunks minus the template's gives."""
    (tmp_path / "template.txt").write_text(TEMPLATE)
    docs = {
        "a": TEMPLATE + " " + own(1),
        "b": own(2, 30) + " " + TEMPLATE + " " + own(2, 50),
        "c": TEMPLATE + " " + own(3, 40) + " " + own(1, 25),
    }
    folder = write_txt(docs, tmp_path / "src")
    idx = Index.create(tmp_path / "idx", CFG)
    idx.update([folder], client=client)
    keyed = {f"src/{k}.txt": t for k, t in docs.items()}
    before = stored_table(idx)
    assert before == brute_table(keyed, 5, False, False, None, CFG.threshold)
    assert [r.other for r in idx.similar("src/a.txt")] == ["src/c.txt", "src/b.txt"]

    s = idx.update([folder], client=client, exclude=[tmp_path / "template.txt"])
    assert (s.added, s.modified, s.unchanged) == (0, 0, 3)  # content hashes kept
    after = stored_table(idx)
    assert after == brute_table(keyed, 5, False, False, TEMPLATE, CFG.threshold)
    assert [r.other for r in idx.similar("src/a.txt")] == ["src/c.txt"]  # b: template only
    assert "src/b.txt" not in after
    n_tpl = len(set(chunks(TEMPLATE, 5)))
    doc_a = idx.catalog.document("src/a.txt")
    assert doc_a.n_chunks == len(true_chunks(docs["a"], 5, False, False, None)) - n_tpl
    st = idx.stats()
    assert [t["name"] for t in st["excluded_templates"]] == ["template.txt"]
    assert st["excluded_template_chunks"] == n_tpl
    assert_same_index(idx, full_build(tmp_path, folder, client, CFG, [tmp_path / "template.txt"]))

    # the report applies the same exclusions as the stored similarities, and marks them
    rep = idx.report("src/a.txt", "src/c.txt")
    assert rep["similarity"] == pytest.approx(after["src/a.txt"][0][0])
    assert rep["hashed_similarity"] == pytest.approx(rep["similarity"])
    end = TEMPLATE.rindex("three") + len("three")  # the last template word's end
    assert rep["excluded"]["doc"] == [{"start": 0, "end": end, "kind": "template"}]
    assert all(p["doc_start"] >= len(TEMPLATE) for p in rep["passages"])
    # a query: the template counts neither in the shared chunks nor in |query|
    q = TEMPLATE + " " + own(1, 30)
    qs = true_chunks(q, 5, False, False, TEMPLATE)
    want = {k: len(qs & true_chunks(t, 5, False, False, TEMPLATE)) for k, t in keyed.items()}
    got = {m.key: (m.shared, m.query_chunks) for m in idx.query(q)}
    assert got == {k: (n, len(qs)) for k, n in want.items() if n}
    assert set(got) == {"src/a.txt", "src/c.txt"}
    assert idx.query(TEMPLATE) == []

    idx.update([], client=client, exclude=[])  # cleared: as built without
    assert stored_table(idx) == before
    assert idx.stats()["excluded_templates"] == []


def test_added_templates_recompute_only_the_documents_holding_them(tmp_path, client, monkeypatch):
    """Templates added (quote settings kept): only the documents holding one of the newly
    excluded chunks are re-chunked (as modified documents of an incremental run), and the
    index equals a full build; a template removed, or one held by more documents than
    ``AFFECTED_MAX_FRACTION`` of them, re-chunks every document."""
    monkeypatch.setattr(rechunk, "AFFECTED_MAX_FRACTION", 1.0)  # any number of documents
    second = " ".join(f"licence{i}" for i in range(30))
    (tmp_path / "t1.txt").write_text(TEMPLATE)
    (tmp_path / "t2.txt").write_text(second)
    docs = {
        "a": TEMPLATE + " " + own(1),
        "b": own(2, 30) + " " + TEMPLATE + " " + own(2, 50) + " " + second,
        "c": own(3, 40) + " " + own(1, 25),
        "d": second + " " + own(4, 40),
        "e": own(5, 20) + " " + " ".join(TEMPLATE.split()[:4]) + " " + own(5, 20),  # 4 words
    }
    folder = write_txt(docs, tmp_path / "src")
    cfg = CFG.replace(exclude_quotes=True)
    idx = Index.create(tmp_path / "idx", cfg)
    idx.update([folder], client=client)
    keyed = {f"src/{k}.txt": t for k, t in docs.items()}

    def holding(template: str) -> set[str]:  # brute force: a chunk of the template
        tpl = set(chunks(template, 5))
        return {k for k, t in keyed.items() if set(chunks(t, 5)) & tpl}

    steps = [([], ["t1.txt"]), (["t1.txt"], ["t1.txt", "t2.txt"])]
    for old, new in steps:
        added = " ".join(TEMPLATE if n == "t1.txt" else second for n in new if n not in old)
        s = idx.update(client=client, exclude=[tmp_path / n for n in new])
        assert (s.added, s.modified, s.deleted) == (0, len(holding(added)), 0)
        full = full_build(tmp_path, folder, client, cfg, [tmp_path / n for n in new])
        assert_same_index(idx, full)
    want = {
        k: len(true_chunks(t, 5, True, False, TEMPLATE) - set(chunks(second, 5)))
        for k, t in keyed.items()
    }
    assert {k: idx.catalog.document(k).n_chunks for k in keyed} == want
    s = idx.update([folder], client=client)  # the original files: unchanged
    assert (s.added, s.modified, s.unchanged) == (0, 0, 5)

    s = idx.update(client=client, exclude=[tmp_path / "t2.txt"])  # removed: every document
    assert s.rebuild and s.added == 5
    assert_same_index(idx, full_build(tmp_path, folder, client, cfg, [tmp_path / "t2.txt"]))
    monkeypatch.setattr(rechunk, "AFFECTED_MAX_FRACTION", 0.3)  # 2 of 5 documents: too many
    both = [tmp_path / "t1.txt", tmp_path / "t2.txt"]
    s = idx.update(client=client, exclude=both)
    assert s.rebuild and s.added == 5 and len(holding(TEMPLATE)) == 2
    assert_same_index(idx, full_build(tmp_path, folder, client, cfg, both))


def quoted_corpus() -> dict[str, str]:
    """Generated documents with planted quotations and reference lists shared between them,
    each beside text of its own."""
    quote = '"' + " ".join(f"qq{i}" for i in range(25)) + '"'
    refs = "\n".join(" ".join(f"ref{i}x{j}" for j in range(8)) for i in range(6))
    docs = {}
    for j in range(6):
        body = POOL[j][:600]
        parts = [body, f"As one author put it, {quote} and so on." if j % 2 == 0 else ""]
        parts.append(own(j, 40))
        if j % 3 != 2:
            parts.append("\nReferences\n" + refs)
        docs[f"d{j}"] = "\n".join(p for p in parts if p)
    docs["d6"] = POOL[0][:600] + "\n" + own(6, 30)  # d0's own text reused, no quotation
    return docs


@pytest.mark.parametrize("setting", ["quotes", "bibliography", "both"])
def test_quotes_and_bibliography_excluded_later_equal_full_build(tmp_path, client, setting):
    docs = quoted_corpus()
    folder = write_txt(docs, tmp_path / "src")
    base = IndexConfig(hash_bits=32, shards=2, top_k=10)
    idx = Index.create(tmp_path / "idx", base)
    idx.update([folder], client=client)
    q, b = setting in ("quotes", "both"), setting in ("bibliography", "both")
    cfg = base.replace(exclude_quotes=q, exclude_bibliography=b)
    idx.update([folder], client=client, config=cfg)  # no rebuild needed for exclusions
    assert idx.config == cfg == Index.open(tmp_path / "idx").config
    keyed = {f"src/{k}.txt": t for k, t in docs.items()}
    want = brute_table(keyed, 5, q, b, None, base.threshold)
    assert stored_table(idx) == want
    assert_same_index(idx, full_build(tmp_path, folder, client, cfg))
    plain = brute_table(keyed, 5, False, False, None, base.threshold)

    def shared(table, a, b):
        return sum(n for _, n, o in table.get(f"src/{a}.txt", []) if o == f"src/{b}.txt")

    # d0 and d4 share the quotation and the reference list; d1 and d3 only the references
    assert shared(want, "d0", "d4") < shared(plain, "d0", "d4")
    assert (shared(want, "d1", "d3") < shared(plain, "d1", "d3")) == b
    assert shared(want, "d0", "d6") == shared(plain, "d0", "d6") > 0  # reuse, unquoted
    with pytest.raises(ConfigError, match="rebuild"):  # other settings still need --rebuild
        idx.update([folder], client=client, config=cfg.replace(top_k=3))


def test_missing_template_file_changes_nothing(tmp_path, client):
    folder = write_txt({"a": own(1), "b": own(2)}, tmp_path / "src")
    idx = Index.create(tmp_path / "idx", CFG)
    idx.update([folder], client=client)
    gen = idx.catalog.generation
    with pytest.raises(SourceError, match=r"nothere\.txt"):
        idx.update([folder], client=client, exclude=[tmp_path / "nothere.txt"])
    assert idx.catalog.generation == gen and idx.templates() == ()


def test_exclusions_without_a_shared_filesystem(tmp_path, client):
    """Documents, pairs and the re-chunked stored texts travelling through Dask (the client
    reads the files): the same index as on a shared filesystem."""
    from simdask import RunOptions

    (tmp_path / "t.txt").write_text(TEMPLATE)
    docs = quoted_corpus() | {"t1": TEMPLATE + " " + own(1), "t2": TEMPLATE + " " + own(2)}
    folder = write_txt(docs, tmp_path / "src")
    cfg = CFG.replace(exclude_bibliography=True)
    idx = Index.create(tmp_path / "idx", CFG)
    dask = RunOptions(transfer="dask")
    idx.update([folder], client=client, options=dask)
    s = idx.update([folder], client=client, options=dask, config=cfg, exclude=[tmp_path / "t.txt"])
    assert s.unchanged == len(docs)
    assert_same_index(idx, full_build(tmp_path, folder, client, cfg, [tmp_path / "t.txt"]))
    assert ("src/t2.txt", "src/t1.txt") not in {(r.doc, r.other) for r in idx.pairs()}


def test_failed_exclusion_change_leaves_the_index_as_it_was(tmp_path, client, monkeypatch):
    """The run applying new exclusions fails before its commit: the index keeps its rows,
    settings and templates (also in memory), and the next update applies the change."""
    from simdask.failpoints import FailpointError

    (tmp_path / "t.txt").write_text(TEMPLATE)
    docs = {"a": TEMPLATE + " " + own(1), "b": TEMPLATE + " " + own(2)}
    folder = write_txt(docs, tmp_path / "src")
    idx = Index.create(tmp_path / "idx", CFG)
    idx.update([folder], client=client)
    before, gen = stored_table(idx), idx.catalog.generation
    monkeypatch.setenv("SIMDASK_FAILPOINTS", "before_commit:raise")
    cfg = CFG.replace(exclude_quotes=True)
    with pytest.raises(FailpointError):
        idx.update([], client=client, exclude=[tmp_path / "t.txt"], config=cfg)
    monkeypatch.delenv("SIMDASK_FAILPOINTS")
    assert idx.catalog.generation == gen and stored_table(idx) == before
    assert idx.config == CFG == Index.open(tmp_path / "idx").config and idx.templates() == ()
    assert not list((tmp_path / "idx" / "work").glob("rechunk-*"))
    idx.update([], client=client, exclude=[tmp_path / "t.txt"], config=cfg)
    assert stored_table(idx) == {} and idx.config == cfg
    assert [t.name for t in idx.templates()] == ["t.txt"]
