"""The side-by-side report of a paraphrased pair in headless Chromium (issue 28): the two
reworded sections are two passages (not dozens of fragments), each one colour in both
columns, labelled with its number and kind, listed in the header with links, and the
coverage of both texts in words; the screenshot is saved in the test's temporary directory
(``report-paraphrased.png``)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.browser import chromium_driver
from tests.helpers.cli import run
from tests.helpers.paraphrase import paraphrased_pair

pytestmark = pytest.mark.system

LABEL = "return getComputedStyle(arguments[0], '::before').content;"


def test_paraphrased_pair_side_by_side_in_chromium(tmp_path):
    pair = paraphrased_pair()
    src = tmp_path / "class"
    src.mkdir()
    (src / "essay.txt").write_text(pair.essay, encoding="utf-8")
    (src / "source.txt").write_text(pair.source, encoding="utf-8")
    run("update", tmp_path / "idx", src, "--workers", 1, "--quiet")
    page = tmp_path / "report.html"
    run("report", tmp_path / "idx", "essay.txt", "source.txt", "--html", page)
    out = run("report", tmp_path / "idx", "essay.txt", "source.txt", "--format", "json").stdout
    rep = json.loads(out)
    exact = tmp_path / "exact.html"
    run("report", tmp_path / "idx", "essay.txt", "source.txt", "--html", exact, "--exact-only")
    driver = chromium_driver(1024, 700)
    try:
        driver.get(exact.as_uri())
        fragments = driver.find_elements("css selector", "#doc mark")
        driver.get(page.as_uri())
        marks_a = driver.find_elements("css selector", "#doc mark")
        marks_b = driver.find_elements("css selector", "#other mark")
        assert len(marks_a) == len(marks_b) == 2  # the two reworded sections, one each
        assert len(fragments) != 2  # the exact evidence sees them otherwise (or not at all)
        colours = [m.value_of_css_property("background-color") for m in marks_a]
        assert colours[0] != colours[1]
        for i, ma in enumerate(marks_a):
            mb = driver.find_element("id", ma.get_attribute("data-twin"))
            assert mb.get_attribute("id") == f"b-{i}"
            assert ma.value_of_css_property("background-color") == colours[i]
            assert mb.value_of_css_property("background-color") == colours[i]
            assert driver.execute_script(LABEL, ma) == f'"{i + 1} paraphrased"'
            (a0, a1), (b0, b1) = pair.spans_a[i], pair.spans_b[i]
            assert ma.text.strip() in pair.essay[a0:a1] and len(ma.text) > 0.9 * (a1 - a0)
            assert mb.text.strip() in pair.source[b0:b1] and len(mb.text) > 0.9 * (b1 - b0)
        nav = driver.find_elements("css selector", "nav.passages a")
        assert [a.text for a in nav] == [
            f"{i + 1}: paraphrased, {p['words']} words" for i, p in enumerate(rep["passages"])
        ]
        details = driver.find_element("css selector", "header details")
        assert not details.get_attribute("open")  # the chunk counts: folded, one click away
        header = driver.find_element("tag name", "header").text
        assert "% of class/essay.txt lies in passages taken from class/source.txt" in header
        height = driver.execute_script("return document.querySelector('header').offsetHeight")
        assert height < 250, height  # the text keeps most of a 1024x700 window
        driver.save_screenshot(str(tmp_path / "report-paraphrased.png"))
        assert (tmp_path / "report-paraphrased.png").stat().st_size > 10_000
    finally:
        driver.quit()
