"""How long the report of a 20-page pair takes with the aligned passages (issue 28), against
the exact 5-word evidence every view showed before.

The pair is built as ``scripts/eval_pan.py --thesis`` builds it, from real English text of
the PAN 2013 training corpus (not in this repository; ``--corpus`` or the environment
variable ``SIMDASK_PAN_CORPUS`` names its ``train_corpus`` folder): a 20-page thesis (60,000
characters: suspicious documents joined, 3,000 characters of a source planted in its middle)
and a 20-page source (source documents joined). Both are indexed in a temporary index
(LocalCluster, one worker thread). Timed, median of ``--repeats`` runs after one warm-up:

* in this process: the report as every view gets it
  (:func:`simdask.evidence.pair_view.index_report`), exact evidence (``--exact-only``) and
  aligned, then the text summary and the side-by-side HTML page;
* ``simdask report INDEX A B`` as a new process (start-up included), ``--exact-only`` and
  by default; with ``--before PATH``, also the ``simdask`` package at PATH (a checkout of
  the code before the aligner, run the same way).

Writes the section "Pair views with the aligner (bench_pair_views.py)" of docs/benchmarks.md.

    python scripts/bench_pair_views.py --corpus PATH [--before CHECKOUT]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from distributed import Client, LocalCluster

from simdask import Index
from simdask.evidence.pair_view import ViewOptions, index_report
from simdask.evidence.report_html import render_pair_html
from simdask.evidence.summary_text import format_report

from _benchutil import machine, today, write_section

ROOT = Path(__file__).resolve().parents[1]


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def _pages(paths: list[Path], chars: int) -> str:
    text = ""
    for path in paths:
        text += _read(path) + "\n\n"
        if len(text) >= chars:
            break
    return text[:chars]


def _pair(corpus: Path) -> tuple[str, str]:
    susp = sorted((corpus / "susp").iterdir())
    src = sorted((corpus / "src").iterdir())
    big = _pages(src[1:], 60_000)
    thesis = _pages(susp, 60_000)
    return thesis[:30_000] + big[10_000:13_000] + thesis[30_000:57_000], big


def _median(fn, repeats: int) -> float:
    fn()  # warm-up: imports, caches
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _cli(index: Path, pythonpath: Path, extra: tuple[str, ...], repeats: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    cmd = [sys.executable, "-m", "simdask.cli", "report", str(index), "thesis.txt", "source.txt"]

    def once():
        subprocess.run([*cmd, *extra], env=env, check=True, capture_output=True)

    return _median(once, repeats)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=os.environ.get("SIMDASK_PAN_CORPUS"))
    ap.add_argument("--before", type=Path, help="a checkout of simdask before the aligner")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = ap.parse_args()
    if args.corpus is None:
        ap.error("--corpus (or SIMDASK_PAN_CORPUS): the PAN 2013 train_corpus folder")
    thesis, source = _pair(args.corpus)
    work = Path(tempfile.mkdtemp(prefix="bench-views-"))
    (work / "docs").mkdir()
    (work / "docs" / "thesis.txt").write_text(thesis, encoding="utf-8")
    (work / "docs" / "source.txt").write_text(source, encoding="utf-8")
    cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
    with cluster, Client(cluster) as c, Index.create(work / "idx") as idx:
        idx.update([work / "docs"], client=c)
    load0 = os.getloadavg()
    rows, reps = [], {}
    with Index.open(work / "idx") as idx:
        a, b = idx.text("docs/thesis.txt"), idx.text("docs/source.txt")
        for label, exact in (
            ("exact evidence (`--exact-only`, as before)", True),
            ("aligned", False),
        ):
            opts = ViewOptions(exact_only=exact)
            rep = index_report(idx, "docs/thesis.txt", "docs/source.txt", options=opts)
            reps[exact] = rep
            t_rep = _median(
                lambda o=opts: index_report(idx, "docs/thesis.txt", "docs/source.txt", options=o),
                args.repeats,
            )
            t_txt = _median(lambda r=rep: format_report(r, a, b), args.repeats)
            t_html = _median(lambda r=rep: render_pair_html(r, a, b), args.repeats)
            rows.append((label, len(rep["passages"]), t_rep, t_txt, t_html))
    clis = [
        ("this branch, `--exact-only`", ROOT, ("--exact-only",)),
        ("this branch, default (aligned)", ROOT, ()),
    ]
    if args.before:
        clis.insert(0, ("before the aligner (the `--before` checkout)", args.before, ()))
    cli_rows = [
        (label, _cli(work / "idx", path, extra, args.repeats)) for label, path, extra in clis
    ]
    load1 = os.getloadavg()
    for r in rows:
        print(
            f"{r[0]}: {r[1]} passages, report {r[2] * 1000:.0f} ms, text {r[3] * 1000:.1f} ms, html {r[4] * 1000:.1f} ms"
        )
    for label, t in cli_rows:
        print(f"simdask report, {label}: {t:.2f} s")
    cov = reps[False]["aligned_coverage"]
    table = "\n".join(
        f"| {label} | {n} | {t_rep * 1000:.0f} | {t_txt * 1000:.1f} | {t_html * 1000:.1f} |"
        for label, n, t_rep, t_txt, t_html in rows
    )
    cli_table = "\n".join(f"| {label} | {t:.2f} |" for label, t in cli_rows)
    body = f"""Machine: {machine()}. Date: {today()}. Load average before {load0[0]:.2f}, after {load1[0]:.2f}
(other engineers' jobs share the 2 cores). Median of {args.repeats} runs after a warm-up.

A 20-page pair of real English text from the PAN 2013 training corpus, built as
`scripts/eval_pan.py --thesis` builds it: a thesis of {len(thesis):,} characters holding
3,000 characters of a {len(source):,}-character source. Aligned: {cov["doc"]:.1f} % of the
thesis lies in passages taken from the source.

| passages shown | passages | report (ms) | text summary (ms) | HTML page (ms) |
|---|---|---|---|---|
{table}

`simdask report INDEX thesis.txt source.txt` as a new process (start-up and imports included):

| run | seconds |
|---|---|
{cli_table}
"""
    write_section(args.out, "Pair views with the aligner (bench_pair_views.py)", body)


if __name__ == "__main__":
    main()
