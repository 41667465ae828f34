"""Cost of refusing (or reading) each bomb of tests/helpers/bombs.py: peak RSS and CPU seconds
of one extraction in a fresh process (issue 30 item 5), and the kind it reports.

    PYTHONPATH=. nice -n 19 python scripts/bench_bombs.py [--only NAME ...] [--cap-gib 4]

Each bomb is written to a temporary file and extracted by ``extract_text`` in a child
process limited to ``--cap-gib`` GiB of address space and ``--timeout`` seconds; the child's
peak RSS and user+system CPU come from ``getrusage(RUSAGE_CHILDREN)``. The baseline of the
child (Python and simdask imported, nothing extracted) is printed first.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers import bombs

CASES = {
    "docx_empty_paragraphs": ("bomb.docx", bombs.docx_empty_paragraphs),
    "docx_nested": ("nested.docx", bombs.docx_nested),
    "docx_laughs": ("laughs.docx", bombs.docx_laughs),
    "odt_text": ("bomb.odt", bombs.odt_text),
    "pdf_flate": ("bomb.pdf", bombs.pdf_flate),
    "pdf_many_pages": ("pages.pdf", bombs.pdf_many_pages),
    "html_nested": ("nested.html", bombs.html_nested),
    "html_hidden_nested": ("hidden.html", bombs.html_hidden_nested),
    "rtf_nested": ("nested.rtf", bombs.rtf_nested),
    "plain_line": ("line.txt", bombs.plain_line),
}

_CHILD = """
import sys, time
from simdask.errors import ExtractionError
from simdask.ingest.extract import extract_text
path, name = sys.argv[1], sys.argv[2]
data = open(path, "rb").read() if path else b"x"
if not path:
    print("baseline"); sys.exit(0)
t = time.perf_counter()
try:
    text = extract_text(data, name)
    print("indexed", len(text), "characters")
except ExtractionError as e:
    print(e.kind, e.message[:160])
"""


def _limit(cap: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return apply


def measure(path: str, name: str, cap: int, timeout: float) -> tuple[str, float, float, float]:
    """``(outcome, peak RSS MiB, CPU s, wall s)`` of extracting ``path`` in a child (its own
    rusage, from ``os.wait4``)."""
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, path, name],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=_limit(cap),
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        status, usage = 0, None
        while usage is None:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == 0:
                usage = None
                if time.perf_counter() - t > timeout:
                    proc.kill()
                time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().strip().splitlines() or ["?"]
    outcome = lines[-1] if proc.returncode else lines[0]
    if proc.returncode:
        outcome = f"died (exit {proc.returncode}): {outcome[:120]}"
    wall = time.perf_counter() - t
    return outcome, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    """Print one line per bomb: size on disk, outcome, peak RSS, CPU and wall seconds."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--cap-gib", type=float, default=4.0)
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    cap = int(args.cap_gib * 2**30)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} load {os.getloadavg()[0]:.2f}")
    outcome, rss, cpu, wall = measure("", "", cap, args.timeout)
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
