"""The README's screenshots of ``simdask serve``: the check page after an upload, and the views
that lead with the total (issue 29, issue 31 items 9, 15, 16).

Indexes this machine's licence texts (/usr/share/common-licenses) and 150 Debian copyright files
into a temporary index, computes every document's total (``Index.compute_totals``), starts the
server, checks an "essay" made of paragraphs of the GPL-3 and the Apache-2.0 licence and of new
text in headless Chromium, and saves the page as docs/serve-check.png; then, on a 1024x700
window, the checked essay's view (docs/serve-checked.png: its total first, one colour per
source), the GPL-3's page (docs/serve-document.png) and "this term" (docs/serve-term.png).

    PYTHONPATH=. python scripts/screenshot_web.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simdask import Index
from tests.helpers.browser import chromium_driver
from tests.helpers.server import serving


def main() -> None:
    out = Path("docs/serve-check.png")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "texts"
        (src / "licenses").mkdir(parents=True)
        for p in sorted(Path("/usr/share/common-licenses").iterdir()):
            if p.is_file() and not p.is_symlink():
                shutil.copy(p, src / "licenses" / f"{p.name}.txt")
        (src / "copyright").mkdir()
        for p in sorted(Path("/usr/share/doc").glob("*/copyright"))[:150]:
            shutil.copy(p, src / "copyright" / f"{p.parent.name}.txt")
        subprocess.run(
            [sys.executable, "-m", "simdask.cli", "update", f"{tmp}/idx", str(src), "--quiet"],
            check=True,
        )
        gpl = Path("/usr/share/common-licenses/GPL-3").read_text().split("\n\n")
        apache = Path("/usr/share/common-licenses/Apache-2.0").read_text().split("\n\n")
        essay = "\n\n".join(
            [
                "Licences of free software: an essay. This essay compares how licences treat "
                "the freedom to share and change software, and what they ask in return.",
                *gpl[4:9],
                "Permissive licences ask for far less: keeping the notices is enough.",
                *apache[10:13],
            ]
        )
        started = time.perf_counter()
        with Index.open(Path(tmp) / "idx") as idx:
            done = idx.compute_totals()
        print(f"totals: {done} in {time.perf_counter() - started:.1f} s")
        qfile = Path(tmp) / "essay.txt"
        qfile.write_text(essay, encoding="utf-8")
        with serving(Path(tmp) / "idx") as (url, _):
            driver = chromium_driver(1280, 1150)
            try:
                driver.get(url + "/")
                box = driver.find_element("id", "files")
                driver.execute_script("arguments[0].hidden=false", box)
                box.send_keys(str(qfile))
                driver.execute_script("arguments[0].hidden=true", box)
                driver.find_element("id", "check").click()
                results = driver.find_element("id", "results")
                while not results.is_displayed():
                    time.sleep(0.05)
                driver.save_screenshot(str(out))
                driver.set_window_size(1024, 700)
                driver.find_element("css selector", "a.doc-view").click()
                driver.find_element("id", "total")
                driver.save_screenshot("docs/serve-checked.png")
                driver.get(url + "/document?key=texts/licenses/GPL-3.txt")
                driver.save_screenshot("docs/serve-document.png")
                driver.get(url + "/term")
                driver.save_screenshot("docs/serve-term.png")
            finally:
                driver.quit()
    print(f"wrote {out}, docs/serve-checked.png, docs/serve-document.png, docs/serve-term.png")


if __name__ == "__main__":
    main()
