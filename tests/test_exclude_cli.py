"""``simdask update --exclude / --no-exclude / --exclude-quotes / --exclude-bibliography`` and
the reports that show excluded text, as real processes (issue 16)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.cli import run
from tests.helpers.documents import outside_evidence
from tests.helpers.server import need_web, serving

pytestmark = pytest.mark.system

TEMPLATE = (
    "Faculty of Arts thesis template. I declare that I wrote this thesis myself and that "
    "every source I used is cited in the list of references at its end."
)
QUOTE = "“" + " ".join(f"quoted{i}" for i in range(20)) + "”"


def own(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def pairs(index) -> dict[tuple[str, str], float]:
    out = run("similar", index, "--format", "jsonl").stdout.splitlines()
    return {(r["doc"], r["other"]): r["similarity"] for r in map(json.loads, out)}


def test_exclude_options_change_the_stored_similarities(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text(f"{TEMPLATE}\n{own('a', 60)} She wrote {QUOTE} then.\n")
    (src / "b.txt").write_text(f"{own('b', 30)}\n{TEMPLATE}\n{own('b', 50)}\n")
    (src / "c.txt").write_text(f"{own('c', 50)} He wrote {QUOTE} too.\n")
    tpl = tmp_path / "template.html"  # any format the extractors read
    tpl.write_text(f"<html><body><p>{TEMPLATE}</p></body></html>")
    idx = tmp_path / "idx"
    opts = ("--workers", 1, "--quiet", "--hash-bits", 32, "--shards", 2)
    run("update", idx, src, *opts)
    assert {("src/a.txt", "src/b.txt"), ("src/a.txt", "src/c.txt")} <= set(pairs(idx))

    # the template: a and b share nothing else; the quotation still counts
    run("update", idx, src, "--exclude", tpl, "--workers", 1, "--quiet")
    got = pairs(idx)
    assert ("src/a.txt", "src/b.txt") not in got and ("src/b.txt", "src/a.txt") not in got
    assert ("src/a.txt", "src/c.txt") in got
    stats = json.loads(run("stats", idx, "--format", "json").stdout)
    assert [t["name"] for t in stats["excluded_templates"]] == ["template.html"]

    # quotations too, without SOURCEs: a and c share only the quotation and its "wrote"
    run("update", idx, "--exclude-quotes", "--workers", 1, "--quiet")
    got = pairs(idx)
    assert got[("src/a.txt", "src/c.txt")] < 10.0  # only the words around the quotation
    rep = json.loads(run("report", idx, "src/a.txt", "src/c.txt", "--format", "json").stdout)
    kinds = sorted({x["kind"] for x in rep["excluded"]["doc"]})
    assert kinds == ["quote", "template"]
    assert rep["similarity"] == pytest.approx(got[("src/a.txt", "src/c.txt")])
    html = tmp_path / "ac.html"
    run("report", idx, "src/a.txt", "src/c.txt", "--html", html)
    page = html.read_text(encoding="utf-8")
    assert 'class="excl excl-quote"' in page and 'class="excl excl-template"' in page
    _web_pair_report(idx, rep)

    # everything off again: as built without exclusions
    first = pairs(idx)
    run("update", idx, "--no-exclude", "--no-exclude-quotes", "--workers", 1, "--quiet")
    again = pairs(idx)
    assert again != first and ("src/a.txt", "src/b.txt") in again
    stats = json.loads(run("stats", idx, "--format", "json").stdout)
    assert stats["excluded_templates"] == [] and not stats["config"]["exclude_quotes"]


def test_exclude_usage_errors(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text(own("a", 20))
    idx = tmp_path / "idx"
    p = run("update", idx, "--workers", 1, "--quiet", check=False)
    assert p.returncode == 1 and "expected at least one SOURCE" in p.stderr
    p = run("update", idx, src, "--exclude", tmp_path / "missing.txt", "--quiet", check=False)
    assert p.returncode == 1 and "missing.txt" in p.stderr and not idx.exists()
    (tmp_path / "t.txt").write_text(TEMPLATE)
    p = run(
        "update", idx, src, "--exclude", tmp_path / "t.txt", "--no-exclude", "--quiet", check=False
    )
    assert p.returncode == 1 and "contradict" in p.stderr


def _web_pair_report(idx, rep: dict) -> None:
    """The web page's pair report and its JSON API show the same excluded text (a real
    ``simdask serve``)."""
    need_web()
    import requests

    with serving(idx) as (url, _):
        params = {"a": "src/a.txt", "b": "src/c.txt"}
        api = requests.get(url + "/api/report", params=params, timeout=60).json()
        assert api["excluded"] == rep["excluded"] and api["similarity"] == rep["similarity"]
        page = requests.get(url + "/report", params=params, timeout=60).text
        assert outside_evidence(page).count('class="excl excl-template"') == 1
        assert outside_evidence(page).count('class="excl excl-quote"') == 2  # in both documents


def test_compare_with_exclusions(tmp_path):
    """``simdask compare A B --exclude FILE --exclude-quotes``: a pair sharing only the
    template and a quotation is gone (also with ``--lsh``); ``--html`` shows no passage of
    excluded text."""
    for g, tag in (("A", "a"), ("B", "b")):
        (tmp_path / g).mkdir()
        (tmp_path / g / "x.txt").write_text(f"{TEMPLATE}\n{own(tag, 60)} {QUOTE}\n")
    (tmp_path / "B" / "y.txt").write_text(own("a", 60)[: 60 * 3])  # shares a's own text
    tpl = tmp_path / "template.txt"
    tpl.write_text(TEMPLATE)
    base = ("compare", tmp_path / "A", tmp_path / "B", "--quiet", "--workers", 1)

    def cross(*extra) -> set[tuple[str, str]]:
        out = run(*base, "--format", "jsonl", *extra).stdout.splitlines()
        return {(r["a_key"], r["b_key"]) for r in map(json.loads, out)}

    assert cross() == {("A/x.txt", "B/x.txt"), ("A/x.txt", "B/y.txt")}
    assert cross("--exclude", tpl) == {("A/x.txt", "B/x.txt"), ("A/x.txt", "B/y.txt")}
    assert cross("--exclude", tpl, "--exclude-quotes") == {("A/x.txt", "B/y.txt")}
    lsh = run(*base, "--lsh", "64x1", "--format", "jsonl", "--exclude", tpl, "--exclude-quotes")
    assert {(r["a_key"], r["b_key"]) for r in map(json.loads, lsh.stdout.splitlines())} == {
        ("A/x.txt", "B/y.txt")
    }
    page = tmp_path / "cmp.html"
    # the exact evidence: a 20-word quotation of made-up tokens inside a sentence of others
    # is no passage for the aligner (tests/test_pair_views.py checks the aligned pages)
    run(*base, "--exclude-quotes", "--html", page, "--exact-only")
    assert "quoted3" not in page.read_text(encoding="utf-8")  # the quotation is no passage
    run(*base, "--html", page, "--exact-only")
    assert "quoted3" in page.read_text(encoding="utf-8")
