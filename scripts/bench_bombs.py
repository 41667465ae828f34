"""Cost of refusing (or reading) each bomb of tests/helpers/bombs.py: peak RSS and CPU seconds
of one extraction in a fresh process (issue 30 item 5), and the kind it reports.

    PYTHONPATH=. nice -n 19 python scripts/bench_bombs.py [--only NAME ...] [--cap-gib 4]

Each bomb is written to a temporary file and extracted by ``extract_text`` (default limits)
in a child process limited to ``--cap-gib`` GiB of address space and ``--timeout`` seconds;
its peak RSS and user+system CPU come from ``wait4`` (the child and the descendants it
reaped: the helper process that reads PDF and RTF included). The baseline of the child
(Python and simdask imported, nothing extracted) is printed first.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import bombs  # noqa: E402

from _benchutil import banner  # noqa: E402

CASES = {
    "docx_empty_paragraphs": ("bomb.docx", bombs.docx_empty_paragraphs),
    "docx_nested": ("nested.docx", bombs.docx_nested),
    "docx_laughs": ("laughs.docx", bombs.docx_laughs),
    "odt_text": ("bomb.odt", bombs.odt_text),
    "pdf_flate": ("bomb.pdf", bombs.pdf_flate),
    "pdf_many_pages": ("pages.pdf", bombs.pdf_many_pages),
    "pdf_too_many_pages": ("many.pdf", bombs.pdf_too_many_pages),
    "html_nested": ("nested.html", bombs.html_nested),
    "html_hidden_nested": ("hidden.html", bombs.html_hidden_nested),
    "rtf_nested": ("nested.rtf", bombs.rtf_nested),
    "rtf_fonts": ("fonts.rtf", bombs.rtf_fonts),
    "plain_line": ("line.txt", bombs.plain_line),
}

_CHILD = """
import sys
from simdask.errors import ExtractionError
from simdask.ingest.extract import extract_text
path, name = sys.argv[1], sys.argv[2]
if not path:
    print("baseline"); sys.exit(0)
try:
    print("indexed", len(extract_text(open(path, "rb").read(), name)), "characters")
except ExtractionError as e:
    print(e.kind, e.message[:150])
"""


def measure(path: str, name: str, cap: int, timeout: float) -> tuple[str, float, float, float]:
    """``(outcome, peak RSS MiB, CPU s, wall s)`` of extracting ``path`` in a child."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    status, out, _, peak, cpu, wall = bombs.run_measured(
        [sys.executable, "-c", _CHILD, path, name], timeout, env=env, cap=cap
    )
    lines = out.strip().splitlines() or ["?"]
    outcome = lines[-1] if status == 0 else f"died (status {status}): {lines[-1][:100]}"
    return outcome, peak, cpu, wall


def main() -> None:
    """Print one line per bomb: size on disk, outcome, peak RSS, CPU and wall seconds."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--cap-gib", type=float, default=4.0)
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args()
    cap = int(args.cap_gib * 2**30)
    print(f"# {banner()}", flush=True)
    _, rss, cpu, _ = measure("", "", cap, args.timeout)
    print(f"baseline: {rss:.0f} MiB peak, {cpu:.2f} s CPU")
    with tempfile.TemporaryDirectory() as tmp:
        for case, (name, make) in CASES.items():
            if args.only and case not in args.only:
                continue
            path = Path(tmp) / name
            path.write_bytes(make())
            size = path.stat().st_size
            outcome, rss, cpu, wall = measure(str(path), name, cap, args.timeout)
            print(
                f"{case}: {size / 1e6:.2f} MB on disk -> {outcome} | peak {rss:.0f} MiB, "
                f"{cpu:.1f} s CPU, {wall:.1f} s wall",
                flush=True,
            )
            path.unlink()


if __name__ == "__main__":
    main()
