"""The pair report in a real headless Chromium: passages visible in both columns, a click on
one brings its twin into view; a screenshot is saved in the test's temporary directory."""

from __future__ import annotations

import pytest

from simdask.evidence.passages import compare_texts
from simdask.evidence.report_html import render_pair_html
from simdask.ingest.synth import generate_corpus
from tests.helpers.browser import chromium_driver

pytestmark = pytest.mark.system


IN_VIEW = (
    "var r=arguments[0].getBoundingClientRect();"
    "return r.bottom>0 && r.top<window.innerHeight && r.width>0 && r.height>0;"
)

FLASH_SEEN = (
    "window.flashSeen=false; new MutationObserver(function(){"
    "if(arguments[0][0].target.classList.contains('flash')){window.flashSeen=true;}"
    "}).observe(arguments[0], {attributes:true, attributeFilter:['class']});"
)


def test_report_in_chromium(tmp_path):
    corpus = generate_corpus(300, mean_words=1500, seed=9, reuse_fraction=0.3)
    # a passage copied far from where it sits in the source: the twin starts out of view
    r = max(
        (x for x in corpus.reuse if x.kind == "passage"),
        key=lambda x: abs(x.target_start - x.source_start),
    )
    a, b = corpus.text_of(r.target), corpus.text_of(r.source)
    ev = compare_texts(a, b)
    rep = ev.report(r.target, r.source, hashed_similarity=ev.similarity)
    page = tmp_path / "report.html"
    page.write_text(render_pair_html(rep, a, b), encoding="utf-8")
    i = max(range(len(ev.passages)), key=lambda j: ev.passages[j].words)

    driver = chromium_driver()
    from selenium.webdriver.common.action_chains import ActionChains

    try:
        driver.get(page.as_uri())
        mark_a = driver.find_element("id", f"a-{i}")
        mark_b = driver.find_element("id", f"b-{i}")
        assert mark_a.is_displayed() and mark_b.is_displayed()
        assert mark_a.value_of_css_property("background-color") == mark_b.value_of_css_property(
            "background-color"
        )
        assert mark_a.value_of_css_property("background-color") != "rgba(0, 0, 0, 0)"
        # put the first line of the passage mid-screen, the twin out of view, then click it
        first_line = "var r=arguments[0].getClientRects()[0];return [r.left, r.top, r.height];"
        x, y, _ = driver.execute_script(first_line, mark_a)
        driver.execute_script("window.scrollBy(0, arguments[0])", y - 400)
        if driver.execute_script(IN_VIEW, mark_b):
            driver.execute_script("arguments[0].scrollIntoView({block:'end'})", mark_a)
            driver.execute_script("window.scrollBy(0, 600)")
            x, y, _ = driver.execute_script(first_line, mark_a)
            driver.execute_script("window.scrollBy(0, arguments[0])", y - 400)
        before = driver.execute_script(IN_VIEW, mark_b)
        # record every class the twin gets: the highlight is removed again after 1.2 s, so
        # reading the class after the click would race that timer
        driver.execute_script(FLASH_SEEN, mark_b)
        x, y, h = driver.execute_script(first_line, mark_a)
        click = ActionChains(driver)
        click.w3c_actions.pointer_action.move_to_location(int(x) + 3, int(y + h / 2))
        click.w3c_actions.pointer_action.click()
        click.perform()
        assert driver.execute_script(IN_VIEW, mark_b), "clicking a passage scrolls to its twin"
        assert driver.execute_script("return window.flashSeen"), "the twin was highlighted"
        driver.save_screenshot(str(tmp_path / "report.png"))
        assert (tmp_path / "report.png").stat().st_size > 10_000
        assert before is False, "the twin was already in view: the click proved nothing"
    finally:
        driver.quit()
