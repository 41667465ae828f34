"""Peak memory (RSS) of ``simdask serve`` under the largest uploads it accepts (issue 30 item 6).

Starts the server with its default limits (50 files of 100 MB a request; a check reads at most
``api.QUERY_TEXT_CAP`` characters; ``api.CHECKS_AT_ONCE`` checks and ``api.FORMS_AT_ONCE``
upload forms at once) on a small index of generated documents, and measures the server
process's peak RSS (``VmHWM`` of /proc, reset between cases through ``clear_refs``) in:

1. the case of the issue: 5 files of 20 MB of plain text in one ``POST /api/query`` (1.5 GB
   held for 64 s before the fix), answered 413 once the text read passes the cap;
2. the worst request accepted: plain-text files holding just under the cap, checked (200);
3. ``--concurrent`` such requests at once (the checks beyond ``CHECKS_AT_ONCE`` wait).

Plain text is the worst case per byte uploaded (every byte is a character to shingle); the
extractors of other formats are bounded separately. Writes the section "Web server memory"
of docs/benchmarks.md with machine, date and load.

    PYTHONPATH=. python scripts/bench_serve_memory.py
"""

from __future__ import annotations

import argparse
import concurrent.futures
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simdask.web import api
from tests.helpers.corpus import make_docs, write_txt
from tests.helpers.server import serving

from _benchutil import load_average, machine, today, write_section


def status_kib(pid: int, field: str) -> int:
    """A ``Vm*`` field of /proc/PID/status, KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def reset_peak(pid: int) -> None:
    """Reset VmHWM to the current RSS (Linux >= 4.0)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def words_file(path: Path, chars: int, seed: int) -> Path:
    """About ``chars`` characters of random words from a 20,000-word vocabulary."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(20_000)]
    n = chars // 7
    text = " ".join(np.array(vocab)[rng.integers(0, len(vocab), n)])
    path.write_text(text[:chars], encoding="utf-8")
    return path


def post(url: str, files: list[Path]) -> tuple[int, float, str]:
    """POST the files to /api/query; (status, seconds, error or match count)."""
    t = time.perf_counter()
    parts = [("file", (f.name, f.read_bytes(), "text/plain")) for f in files]
    r = requests.post(url + "/api/query", files=parts, timeout=3600)
    body = r.json()
    what = body.get("error", f"{len(body.get('results', []))} matches")
    return r.status_code, time.perf_counter() - t, what


def measure(pid: int, url: str, requests_files: list[list[Path]]) -> dict:
    """Peak RSS over ``requests_files`` sent at once; their statuses and seconds."""
    reset_peak(pid)
    base = status_kib(pid, "VmRSS")
    with concurrent.futures.ThreadPoolExecutor(len(requests_files)) as pool:
        out = list(pool.map(lambda fs: post(url, fs), requests_files))
    return {"base_mib": base / 1024, "peak_mib": status_kib(pid, "VmHWM") / 1024, "out": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/tmp/simdask-bench-serve-memory")
    ap.add_argument("--concurrent", type=int, default=3)
    ap.add_argument(
        "--budget-mb",
        type=int,
        default=0,
        help="for cases 2 and 3, serve with --max-files 2 --max-file-size BUDGET/2 MB, so "
        "that a check reads at most BUDGET M characters (0: the default cap)",
    )
    ap.add_argument("--out", default="docs/benchmarks.md")
    args = ap.parse_args()
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    index = data / "index"
    if not index.exists():
        write_txt(make_docs(40, seed=3), data / "src")
        cmd = ["update", str(index), str(data / "src"), "--workers", "1", "--quiet"]
        subprocess.run([sys.executable, "-m", "simdask.cli", *cmd], check=True)
    cap = api.QUERY_TEXT_CAP
    issue = [words_file(data / f"issue-{i}.txt", 20_000_000, i) for i in range(5)]
    budget = args.budget_mb * 1_000_000 or cap
    limits = ["--max-files", "2", "--max-file-size", str(budget // 2)] if args.budget_mb else []
    half = (budget - 1_000) // 2
    worst = [
        [words_file(data / f"worst-{j}-{i}.txt", half, 10 * j + i) for i in range(2)]
        for j in range(args.concurrent)
    ]
    cases = []
    with serving(index) as (url, proc):
        started = status_kib(proc.pid, "VmRSS") / 1024
        cases.append(("5 files of 20 MB (the issue's case)", measure(proc.pid, url, [issue])))
    with serving(index, *limits) as (url, proc):
        name = f"2 files holding {budget / 1e6:.0f} M characters, checked"
        cases.append((name, measure(proc.pid, url, worst[:1])))
        name = f"{args.concurrent} such requests at once"
        cases.append((name, measure(proc.pid, url, worst)))
    extrapolation = ""
    if budget != cap:
        one = cases[1][1]
        per_char = (one["peak_mib"] - one["base_mib"]) * 2**20 / budget
        at_cap = one["base_mib"] + per_char * cap / 2**20
        extrapolation = (
            f" (to keep the run short on a shared machine; {per_char:.1f} bytes of peak "
            f"RSS per character checked, so a check at the default cap of {cap:,} "
            f"characters would peak near {at_cap:,.0f} MiB: extrapolated, not measured)"
        )
    rows = []
    for name, m in cases:
        answers = "; ".join(f"{s} in {sec:.0f} s" for s, sec, _ in m["out"])
        rows.append(f"| {name} | {m['base_mib']:.0f} | **{m['peak_mib']:.0f}** | {answers} |")
        print(name, m, flush=True)
    body = f"""Script: `scripts/bench_serve_memory.py`. Machine: {machine()}. Date: {today()}.
Load during the run: {load_average()} (seconds are wall clock at that load).

`simdask serve` with its default limits (50 files of 100 MB a request, a check reads at most
{cap:,} characters, {api.CHECKS_AT_ONCE} checks and {api.FORMS_AT_ONCE} upload forms at
once) on an index of 40 generated documents; peak RSS of the server process (`VmHWM`, reset
before each case), MiB. Files are plain text of random words (every byte a character to
shingle: the worst case per uploaded byte). The server held {started:.0f} MiB after start.
Cases 2 and 3 ran with {" ".join(limits) or "the default limits"}, a check reading at most
{budget:,} characters{extrapolation}.
Before the fix, the issue's case held 1.5 GB for 64 s and the default limits allowed 50 x
100 MB (about 75 GB extrapolated).

| request | RSS before (MiB) | peak RSS (MiB) | answers |
|---|---:|---:|---|
{chr(10).join(rows)}

The measured peaks stay under about {max(m["peak_mib"] for _, m in cases) / 1024:.1f} GiB
whatever the uploads: requests beyond the cap get 413, checks beyond {api.CHECKS_AT_ONCE} wait
(up to {api.CHECK_WAIT:.0f} s, then 429 with `Retry-After`).
"""
    write_section(args.out, "Web server memory", body)


if __name__ == "__main__":
    main()
