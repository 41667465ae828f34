"""A pair's report as a PDF (issue 31, item 14; ``simdask report INDEX A B --pdf FILE``): the
side-by-side HTML page (:func:`simdask.evidence.report_html.render_pair_html`, evidence block
open) printed by a Chromium-family browser in headless mode (Chromium, Google Chrome,
Microsoft Edge: ``--print-to-pdf``), the maintained engine that draws the page on screen, so
that the PDF is what the teacher saw, in the page's print layout (A4, the two texts side by
side). docs/evidence.md says why a browser and not a Python PDF library (a benchmark, and
what a teacher's machine has).

The browser is the one named by ``browser`` or the environment variable ``SIMDASK_BROWSER``,
else the first of :data:`BROWSER_NAMES` on ``PATH``, else one at a usual install location.
No browser, a browser that fails or writes no PDF: :class:`~simdask.errors.RenderError`
saying what to install or what it printed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from simdask.errors import RenderError

__all__ = ["BROWSER_NAMES", "find_browser", "html_to_pdf"]

#: the commands tried on PATH, in order
BROWSER_NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "microsoft-edge",
    "microsoft-edge-stable",
    "msedge",
)

#: usual install locations of the same browsers on macOS and Windows
_INSTALLED = (
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
    r"C:\Program Files\Google\Chrome\Application\chrome.exe",
    r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe",
    r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe",
    r"C:\Program Files\Microsoft\Edge\Application\msedge.exe",
)

#: seconds a browser may take to print one page
TIMEOUT = 180


def find_browser(browser: str | None = None) -> str:
    """The path of the browser that prints: ``browser``, else ``$SIMDASK_BROWSER``, else the
    first of :data:`BROWSER_NAMES` on PATH, else a usual install location. Raises
    :class:`RenderError` when there is none (or the one named does not exist)."""
    named = browser or os.environ.get("SIMDASK_BROWSER")
    if named:
        found = shutil.which(named)
        if found is None:
            raise RenderError(
                f"expected a Chromium, Chrome or Edge browser at {named!r} to print the PDF, "
                "found no such program"
            )
        return found
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    for path in _INSTALLED:
        if Path(path).is_file():
            return path
    raise RenderError(
        "--pdf prints the report with a Chromium-family browser (Chromium, Google Chrome or "
        "Microsoft Edge), found none on PATH nor where they are usually installed: install one "
        "(Debian/Ubuntu: apt install chromium) or name it with SIMDASK_BROWSER=/path/to/chrome; "
        "or write the page with --html and print it from any browser"
    )


def _command(browser: str, page: Path, out: Path, profile: Path) -> list[str]:
    flags = [
        browser,
        "--headless",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--no-pdf-header-footer",
        "--print-to-pdf-no-header",  # the same, for browsers before the flag's rename
        f"--print-to-pdf={out}",
    ]
    if sys.platform.startswith("linux") and os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox
    return [*flags, page.as_uri()]


def html_to_pdf(page_html: str, out: str | os.PathLike, browser: str | None = None) -> Path:
    """Print the self-contained HTML page ``page_html`` to the PDF file ``out`` with a headless
    browser (:func:`find_browser`); returns the PDF's path. Raises :class:`RenderError` when
    no browser is found, it fails or times out (:data:`TIMEOUT` seconds), or writes no PDF."""
    exe = find_browser(browser)
    target = Path(out).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="simdask-pdf-") as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(page_html, encoding="utf-8")
        printed = Path(tmp) / "report.pdf"
        cmd = _command(exe, page, printed, Path(tmp) / "profile")
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired as e:
            raise RenderError(f"{exe} did not print the PDF within {TIMEOUT} s") from e
        except OSError as e:
            raise RenderError(f"{exe} could not be started to print the PDF: {e}") from e
        size = printed.stat().st_size if printed.is_file() else None
        if proc.returncode != 0 or not size:
            said = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            what = "no PDF" if size is None else ("an empty PDF" if size == 0 else "a PDF")
            raise RenderError(
                f"expected {exe} to print a PDF, found exit status {proc.returncode} and "
                f"{what}: " + " / ".join(said)
            )
        shutil.move(str(printed), target)
    return target
