"""The term overview (``/term``) fits a 1280-pixel window (issue 31): every column, the date
last, inside the page, no horizontal scrolling, with keys as long as a real term's
(``2026/submissions/...``). Checked in headless Chromium."""

from __future__ import annotations

import pytest

from tests.helpers.browser import chromium_driver
from tests.helpers.cli import run
from tests.helpers.documents import prose
from tests.helpers.server import serving

pytestmark = pytest.mark.system

# no hyphen or space: nothing a browser breaks a line at, as in 2026/submissions/smith.docx
NAMES = ("hernandezrodriguezfinalessay.txt", "smith.txt", "quinnseconddraftversion.txt")


def test_term_overview_fits_1280_pixels(tmp_path):
    shared = prose(300, seed=41)
    for year in ("2025", "2026"):
        folder = tmp_path / "archive" / year / "submissionsoftheseminar"
        folder.mkdir(parents=True)
        for i, name in enumerate(NAMES):
            text = prose(200, seed=50 + i + (10 if year == "2026" else 0)) + " " + shared
            (folder / name).write_text(text, encoding="utf-8")
    idx = tmp_path / "idx"
    run("update", idx, tmp_path / "archive", "--workers", 1, "--quiet")
    run("totals", idx, "--compute", "--workers", 1, "--quiet")  # every column filled
    driver = chromium_driver(1280, 800)
    try:
        with serving(idx, log=tmp_path / "serve.log") as (url, _):
            driver.set_window_size(1280, 800)
            driver.get(f"{url}/term")
            driver.save_screenshot(str(tmp_path / "term-1280.png"))
            rows = driver.find_elements("css selector", "#batch tbody tr")
            assert len(rows) == 2 * len(NAMES)
            page = driver.execute_script(
                "var d=document.documentElement;"
                "var th=document.querySelectorAll('#batch thead th');"
                "var last=th[th.length-1].getBoundingClientRect();"
                "var cell=document.querySelector('#batch tbody tr td:last-child');"
                "return [d.scrollWidth, d.clientWidth, last.right, "
                "cell.getBoundingClientRect().right, cell.textContent, th[th.length-1].textContent]"
            )
            scroll, width, head_right, cell_right, date, head = page
            assert "date" in head
            assert scroll <= width, f"the page scrolls sideways: {scroll} > {width} pixels"
            assert head_right <= width and cell_right <= width
            assert len(date.strip()) == 10  # the whole date, 2026-11-28, not cut
    finally:
        driver.quit()
