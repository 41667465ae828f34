"""The static site's in-browser pair passages (issue 31 item 7), the pure part in Node.js:
:mod:`simdask.evidence.site_pair_js`'s ``passages`` on :mod:`simdask.evidence.site_data`'s
records gives exactly the passages of :func:`~simdask.evidence.passages.compare_texts` (the
exact evidence of ``report --exact-only``), on texts with repeated words, shared passages,
quotations, reference lists, templates and ``max_df`` chunks (hypothesis). The real browser
is tested in tests/test_browser_site_pairs.py."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdask.evidence.excluded import PairExclusions
from simdask.evidence.passages import compare_texts, prepare_side
from simdask.evidence.site_data import SiteData, js_value, mask_ranges, text_record
from simdask.evidence.site_pair_js import PAIR_JS
from tests.helpers.components import need

pytestmark = pytest.mark.integration

K = 5
NODE = shutil.which("node")


def js_passages(cases: list[dict]) -> list[list[list[int]]]:
    """``SimdaskPairs.passages(site, A, B)`` in Node for each case ``{site, a, b}``."""
    need(NODE is not None, "Node.js to run the page's script", ".ci/run installs Debian's nodejs")
    script = (
        PAIR_JS
        + "\nvar cases=JSON.parse(require('fs').readFileSync(0,'utf8'));"
        + "process.stdout.write(JSON.stringify(cases.map(function(c){"
        + "return globalThis.SimdaskPairs.passages(c.site,c.a,c.b);})));"
    )
    out = subprocess.run(
        [str(NODE), "-e", script],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def site(common: bool = False, min_words: int = 0) -> dict:
    return {"k": K, "min_chunks": 2, "min_words": min_words, "common": common}


def expected(a: str, b: str, excl=None, drop=None, min_words: int = 0) -> list[list[int]]:
    ev = compare_texts(a, b, K, 2, min_words, exclusions=excl, drop_shared=drop)
    return [
        [p.doc_start, p.doc_end, p.other_start, p.other_end, p.words, p.chunks] for p in ev.passages
    ]


VOCAB = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]
words = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=60)
seps = st.sampled_from([" ", "  ", ", ", ". ", "\n", ' "', '" ', " (", ") "])


@st.composite
def texts(draw) -> str:
    ws = draw(words)
    return "".join(w + draw(seps) for w in ws)


@st.composite
def pairs(draw) -> tuple[str, str]:
    """Two texts sharing a passage, in B reversed or with words changed (runs with gaps)."""
    shared = draw(st.lists(st.sampled_from(VOCAB), min_size=0, max_size=50))
    copy = list(shared)
    for i in draw(st.lists(st.integers(0, 49), max_size=4)):
        if i < len(copy):
            copy[i] = f"changed{i}"
    if draw(st.booleans()):
        copy.reverse()
    a = draw(texts()) + " ".join(shared) + " " + draw(texts())
    b = draw(texts()) + " ".join(copy) + " " + draw(texts())
    return a, b


def records(a: str, b: str, excl=None, common_words=frozenset()) -> tuple[dict, dict]:
    data = SiteData()
    out = []
    for t in (a, b):
        rec, windows = text_record(t, K, excl, data)
        if common_words:  # a stand-in for max_df: chunks holding one of these words
            rec["c"] = mask_ranges([bool(set(w) & common_words) for w in windows])
        out.append(json.loads(js_value(rec)))
    return out[0], out[1]


TEMPLATE = ("gamma delta eps zeta eta",)
#: many pairs per Node process (one process per example costs seconds on a loaded machine)
MANY = st.lists(st.tuples(pairs(), st.booleans(), st.booleans()), min_size=10, max_size=25)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MANY, st.sampled_from([0, 6]))
def test_passages_in_js_equal_the_exact_report(many, min_words):
    cases, want = [], []
    for (a, b), quotes, biblio in many:
        excl = PairExclusions(quotes=quotes, bibliography=biblio, templates=TEMPLATE)
        for ex in (None, excl):
            ra, rb = records(a, b, ex)
            cases.append({"site": site(min_words=min_words), "a": ra, "b": rb})
            want.append(expected(a, b, ex, min_words=min_words))
    assert js_passages(cases) == want


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(pairs(), min_size=10, max_size=25))
def test_max_df_chunks_are_left_out_and_cut_as_in_python(many):
    common = frozenset({"beta", "iota"})

    def drop(shared: set) -> set:
        return {c for c in shared if set(c) & common}

    cases, want = [], []
    for a, b in many:
        ra, rb = records(a, b, None, common)
        cases.append({"site": site(common=True), "a": ra, "b": rb})
        want.append(expected(a, b, None, drop))
    assert js_passages(cases) == want


def test_a_copied_passage_is_found_and_a_broken_script_would_fail():
    shared = " ".join(f"w{i}" for i in range(40))
    a = "intro words here and there " + shared + " the end of a"
    b = "other start " + shared + " closing words of b"
    ra, rb = records(a, b)
    got = js_passages([{"site": site(), "a": ra, "b": rb}])[0]
    assert got == expected(a, b) and len(got) == 1
    ((ds, de, os_, oe, n, _),) = got
    assert a[ds:de] == shared == b[os_:oe] and n == 40


def test_records_hold_the_sides_offsets_and_exclusions():
    text = 'One two three four five six. "Quoted words are here now." Seven eight nine ten.'
    excl = PairExclusions(quotes=True)
    rec, windows = text_record(text, K, excl, SiteData())
    side = prepare_side(text, K, excl)
    assert windows == side.windows and rec["text"] == text
    starts, ends, pos = [], [], 0
    for gap, length in zip(rec["b"][0::2], rec["b"][1::2], strict=True):
        starts.append(pos + gap)
        ends.append(pos + gap + length)
        pos = ends[-1]
    assert starts == side.bounds[0].tolist() and ends == side.bounds[1].tolist()
    out = [False] * len(windows)
    for lo, hi in zip(rec["x"][0::2], rec["x"][1::2], strict=True):
        out[lo:hi] = [True] * (hi - lo)
    assert out == [not k for k in side.keep] and any(out)
    assert [tuple(m) for m in rec["m"]] == list(side.marks)


def test_js_value_cannot_close_a_script_element():
    s = js_value({"k": "</script><script>alert(1)</script>", "t": "a & b\u2028"})
    assert "<" not in s and ">" not in s and "&" not in s and "\u2028" not in s
    assert json.loads(s) == {"k": "</script><script>alert(1)</script>", "t": "a & b\u2028"}
