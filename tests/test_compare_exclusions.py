"""``compare_groups`` with exclusions (issue 16): ``exclude`` templates, quotations and reference
lists left out of the cross-group counts as in ``update``; checked against a brute force over
planted words (which word is in a quotation, a reference list, a template), on a LocalCluster;
``compare --lsh`` with the same exclusions."""

from __future__ import annotations

import random

import pytest

from simdask import IndexConfig
from simdask.comparison import compare_groups
from simdask.kernels.lsh_bands import LshParams
from simdask.read.lsh_search import group_pairs
from simdask.write.exclude import index_exclusions, read_templates
from tests.helpers.corpus import write_txt

pytestmark = pytest.mark.integration

K = 5
TEMPLATE = [f"tpl{i}" for i in range(30)]
QUOTE = [f"quo{i}" for i in range(25)]
REFS = [f"ref{i}" for i in range(25)]


def planted_groups(seed: int):
    """Two groups of documents; each a list of ``(word, where)`` with ``where`` one of
    ``own``, ``quote``, ``bib``, ``tpl``; the shared pieces are own text copied between
    groups, the template, a quotation and a reference list."""
    rng = random.Random(seed)
    shared = [f"sh{seed}x{i}" for i in range(40)]
    groups = []
    for g in "ab":
        docs = {}
        for j in range(4):
            body = [(f"{g}{j}w{i}", "own") for i in range(rng.randint(30, 80))]
            pieces = []
            if rng.random() < 0.6:
                pieces.append([(w, "tpl") for w in TEMPLATE])
            if rng.random() < 0.6:
                a = rng.randrange(0, 20)
                pieces.append([(w, "own") for w in shared[a : a + rng.randint(8, 20)]])
            if rng.random() < 0.6:
                pieces.append([(w, "quote") for w in QUOTE[: rng.randint(10, 25)]])
            for p in pieces:
                at = rng.randrange(len(body) + 1)
                body[at:at] = p
            if rng.random() < 0.6:
                body += [("References", "bib")] + [(w, "bib") for w in REFS]
            docs[f"d{j}"] = body
        groups.append(docs)
    return groups


def render(doc) -> str:
    """The text: quotations in “…”, the reference list after a heading line."""
    out, i = [], 0
    while i < len(doc):
        w, where = doc[i]
        if where == "quote":
            j = i
            while j < len(doc) and doc[j][1] == "quote":
                j += 1
            out.append("“" + " ".join(x for x, _ in doc[i:j]) + "”")
            i = j
        elif w == "References" and where == "bib":
            out.append("\nReferences\n")
            i += 1
        else:
            out.append(w)
            i += 1
    return " ".join(out)


def true_set(doc, quotes: bool, bib: bool, templates: bool) -> set:
    left = {"quote"} if quotes else set()
    left |= {"bib"} if bib else set()
    tpl = {tuple(sorted(TEMPLATE[i : i + K])) for i in range(len(TEMPLATE) - K + 1)}
    out = set()
    for i in range(len(doc) - K + 1):
        win = doc[i : i + K]
        if left and all(where in left for _, where in win):
            continue
        chunk = tuple(sorted(w.lower() for w, _ in win))
        if templates and chunk in tpl:
            continue
        out.add(chunk)
    return out


def brute_pairs(groups, quotes, bib, templates, threshold):
    sa = {k: true_set(d, quotes, bib, templates) for k, d in groups[0].items()}
    sb = {k: true_set(d, quotes, bib, templates) for k, d in groups[1].items()}
    out = {}
    for a, x in sa.items():
        for b, y in sb.items():
            n = len(x & y)
            if not n:
                continue
            pa, pb = 100.0 * n / len(x), 100.0 * n / len(y)
            if max(pa, pb) >= threshold:
                out[(a, b)] = (n, len(x), len(y))
    return out


@pytest.mark.parametrize(
    ("quotes", "bib", "templates"),
    [(False, False, False), (True, False, False), (False, True, True), (True, True, True)],
)
def test_compare_exclusions_equal_brute_force(tmp_path, client, quotes, bib, templates):
    groups = planted_groups(seed=int(quotes) + 2 * int(bib) + 4 * int(templates))
    a = write_txt({k: render(d) for k, d in groups[0].items()}, tmp_path / "A")
    b = write_txt({k: render(d) for k, d in groups[1].items()}, tmp_path / "B")
    tpl = tmp_path / "template.txt"
    tpl.write_text("Template. " + " ".join(TEMPLATE))
    cfg = IndexConfig(k=K, hash_bits=32, shards=2, exclude_quotes=quotes, exclude_bibliography=bib)
    res = compare_groups([a], [b], config=cfg, client=client, exclude=[tpl] if templates else None)
    got = {(p.a_key, p.b_key): (p.shared, p.a_chunks, p.b_chunks) for p in res.pairs}
    want = brute_pairs(groups, quotes, bib, templates, 1.0)
    assert got == {(f"A/{x}.txt", f"B/{y}.txt"): v for (x, y), v in want.items()}
    assert res.exclusions.quotes == quotes and res.exclusions.bibliography == bib
    assert bool(res.exclusions.templates) == templates
    if quotes or bib or templates:  # the exclusions changed something in this corpus
        assert want != brute_pairs(groups, False, False, False, 1.0)


def test_compare_lsh_exclusions(tmp_path):
    """``compare --lsh``: two texts sharing only a template are a pair until it is excluded."""
    tpl = tmp_path / "t.txt"
    tpl.write_text(" ".join(TEMPLATE))
    a = " ".join(TEMPLATE) + " " + " ".join(f"a{i}" for i in range(20))
    b = " ".join(f"b{i}" for i in range(20)) + " " + " ".join(TEMPLATE)
    cfg = IndexConfig(k=K, hash_bits=32)
    params = LshParams(bands=64, rows=1)  # a pair of Jaccard 0.3 shares a band key
    assert group_pairs([a], [b], params, cfg)  # Jaccard about 0.4
    excl = index_exclusions(cfg, read_templates([tpl]))
    assert group_pairs([a], [b], params, cfg, excl=excl) == []
    # the quoted text of both is all they share
    qa, qb = f"x {a} “{' '.join(QUOTE)}”", f"y {b} “{' '.join(QUOTE)}”"
    quotes = index_exclusions(cfg.replace(exclude_quotes=True), ())
    assert group_pairs([qa], [qb], params, cfg, excl=excl)
    both = index_exclusions(cfg.replace(exclude_quotes=True), read_templates([tpl]))
    assert group_pairs([qa], [qb], params, cfg, excl=both) == []
    assert quotes.quotes and not quotes.chunk_ids.size
