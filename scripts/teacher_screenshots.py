"""Screenshots of a term's work for a teacher (issue 31) into docs/: runs the teacher-workflow
system test (tests/test_teacher_workflow.py: a generated archive, the real CLI, ``serve`` and
headless Chromium), which writes its screenshots to ``$SIMDASK_SCREENSHOTS``:

- ``1-term-overview.png``: the web page "this term" (``/term``), the documents by their total
- ``2-checked-essay.png``: an essay checked on the web page, its total and sources first
- ``3-side-by-side.png``: the side-by-side view of a pair
- ``4-evidence-pdf.png``: the first page of ``report --pdf``, rendered to PNG with pypdfium2

    python scripts/teacher_screenshots.py [--out docs/screenshots]

Needs Debian's chromium and chromium-driver and the test extras (``pip install -e '.[test]'``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("1-term-overview", "2-checked-essay", "3-side-by-side", "4-evidence-pdf")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    args = ap.parse_args()
    out = Path(args.out).resolve()
    env = {**os.environ, "SIMDASK_SCREENSHOTS": str(out), "PYTHONPATH": str(ROOT)}
    test = "tests/test_teacher_workflow.py::test_screenshots_and_the_evidence_pdf"
    cmd = [sys.executable, "-m", "pytest", test, "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(cmd, cwd=ROOT, env=env)
    if done.returncode != 0:
        print("the teacher-workflow test failed: no screenshots written", file=sys.stderr)
        return done.returncode
    for name in NAMES:
        png = out / f"{name}.png"
        print(f"{png.relative_to(ROOT) if png.is_relative_to(ROOT) else png}: "
              f"{png.stat().st_size:,} bytes")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
