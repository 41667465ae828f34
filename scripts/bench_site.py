"""How long ``simdask export-html INDEX OUTDIR`` takes with its default settings (issue 31
item 7: at most 120 s and 300 MB on an index of about 710 to 788 real licence files), before
and after, side by side in one run.

The index: every ``/usr/share/doc/*/copyright`` of this machine (each real file once: a
package folder that is a symlink to another is skipped), copied into a temporary folder as
``NAME.txt`` and indexed with ``simdask update`` (defaults); nothing is kept. Then, one after
the other, each as a new process (``python -m simdask.cli export-html INDEX OUT --quiet``):

* ``--before PATH``: the ``simdask`` package at PATH (a checkout of the code before the
  change: ``git archive BASE simdask | tar -x -C PATH``), if given;
* after, with ``--workers 1`` (one process: the per-text cache alone; left out with
  ``--no-single``);
* after, defaults (one worker process per core).

Each site is compared with the first run's, file by file (``same site``: every file
byte-identical, else how many differ).

Each row: wall seconds, CPU seconds (user + system, of the process and its worker
processes), peak memory (RSS of the process and its workers together, sampled), the site's
bytes and pages, and the load average at its end. On a machine shared with other jobs the
wall time is loaded: the CPU seconds divided by the cores give the quiet wall time.

Writes the section "The static site (bench_site.py)" of docs/benchmarks.md.

    python scripts/bench_site.py [--before CHECKOUT] [--limit N] [--every N] [--no-single]
        [--no-write]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from simdask.index import Index

from _benchutil import banner, load_average, machine, today, write_section

ROOT = Path(__file__).resolve().parents[1]
DOCS = Path("/usr/share/doc")


def licence_folder(dest: Path, limit: int | None, every: int = 1) -> int:
    """Copy each real ``copyright`` file once into ``dest`` as ``PACKAGE.txt`` (``every``:
    only every N-th of them in name order, a sample across the alphabet)."""
    dest.mkdir(parents=True)
    seen: set[str] = set()
    n = 0
    for pkg in sorted(os.listdir(DOCS)):
        f = DOCS / pkg / "copyright"
        if not f.is_file():
            continue
        real = os.path.realpath(f)
        if real in seen:
            continue
        seen.add(real)
        if len(seen) % every:
            continue
        shutil.copyfile(real, dest / f"{pkg}.txt")
        n += 1
        if limit and n >= limit:
            break
    return n


def _peak(proc: subprocess.Popen) -> int:
    """Sample the RSS of ``proc`` and its children together until it ends; the peak."""
    peak = 0
    ps = psutil.Process(proc.pid)
    while proc.poll() is None:
        total = 0
        try:
            for p in [ps, *ps.children(recursive=True)]:
                total += p.memory_info().rss
        except psutil.Error:
            pass
        peak = max(peak, total)
        time.sleep(0.1)
    return peak


def differing_files(a: Path, b: Path) -> int:
    """How many files of the sites ``a`` and ``b`` differ (in one only, or in bytes)."""
    names = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    names |= {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    return sum(
        1
        for n in names
        if not (a / n).is_file()
        or not (b / n).is_file()
        or (a / n).read_bytes() != (b / n).read_bytes()
    )


def run_site(code: Path, index: Path, out: Path, extra: tuple[str, ...]) -> dict:
    """``export-html`` of ``index`` into ``out`` with the package at ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    cmd = [sys.executable, "-m", "simdask.cli", "export-html", str(index), str(out), "--quiet"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # cwd: `python -m` puts the working folder first on sys.path, before PYTHONPATH
    proc = subprocess.Popen([*cmd, *extra], env=env, cwd=code, stderr=subprocess.PIPE, text=True)
    peak = _peak(proc)
    err = proc.stderr.read() if proc.stderr else ""
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"export-html failed ({proc.returncode}): {err}")
    files = [p for p in out.rglob("*") if p.is_file()]
    return {
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak_mb": peak / 1e6,
        "mb": sum(p.stat().st_size for p in files) / 1e6,
        "doc_pages": sum(1 for p in files if p.parent.name == "docs"),
        "pair_pages": sum(1 for p in files if p.parent.name == "pairs"),
        "load": load_average(),
        "said": err.strip().splitlines()[-1] if err.strip() else "",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--before", type=Path, help="a checkout of simdask before the change")
    ap.add_argument("--limit", type=int, default=None, help="at most N licence files")
    ap.add_argument("--every", type=int, default=1, help="every N-th licence file (a sample)")
    ap.add_argument("--no-single", action="store_true", help="no `--workers 1` run")
    ap.add_argument("--no-write", action="store_true", help="do not write docs/benchmarks.md")
    ap.add_argument("--index", type=Path, help="an index of the licence files built before")
    args = ap.parse_args()
    print(banner(), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_site_") as tmp:
        tmp_path = Path(tmp)
        n, pairs, index = _index(args, tmp_path)
        print(f"{n} licence files indexed: {pairs}", flush=True)
        runs = []
        if args.before:
            # its defaults: one worker process per core too (simdask since its site_pool)
            runs.append(("before (the `--before` checkout)", args.before, (), os.cpu_count() or 1))
        if not args.no_single:
            runs.append(("after, `--workers 1` (one process)", ROOT, ("--workers", "1"), 1))
        runs.append(
            ("after, defaults (one worker process per core)", ROOT, (), os.cpu_count() or 1)
        )
        rows = []
        for i, (name, code, extra, procs) in enumerate(runs):
            r = run_site(code, index, tmp_path / f"site{i}", extra)
            r["quiet"] = r["cpu"] / procs
            diff = differing_files(tmp_path / "site0", tmp_path / f"site{i}")
            r["same"] = "yes" if diff == 0 else f"no: {diff:,} files differ"
            rows.append((name, r))
            print(
                f"{name}: wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, peak {r['peak_mb']:.0f} MB,"
                f" site {r['mb']:.1f} MB, {r['doc_pages']} document pages, {r['pair_pages']} "
                f"pair pages, same site as the first run: {r['same']}; load {r['load']}; "
                f"{r['said']}",
                flush=True,
            )
    if not args.no_write:
        write_section(
            ROOT / "docs" / "benchmarks.md",
            "The static site (bench_site.py)",
            _body(n, pairs, rows),
        )


def _index(args, tmp_path: Path) -> tuple[int, str, Path]:
    """The licence index: ``--index`` as it is, or the files copied and indexed anew; the
    files, the update's summary line, the index's path."""
    if args.index is not None:
        with Index.open(args.index) as idx:
            return (
                len(idx.catalog.documents()),
                f"{len(idx.pair_list()):,} stored pairs",
                args.index,
            )
    n = licence_folder(tmp_path / "lic", args.limit, args.every)
    index = tmp_path / "idx"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    update = [sys.executable, "-m", "simdask.cli", "update", str(index), str(tmp_path / "lic")]
    said = subprocess.run(
        [*update, "--quiet"], env=env, check=True, capture_output=True, text=True
    ).stderr
    return n, next((ln for ln in said.splitlines() if "similarity rows" in ln), ""), index


def _body(n: int, pairs: str, rows) -> str:
    cores = os.cpu_count() or 1
    table = "\n".join(
        f"| {name} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['quiet']:.1f} | "
        f"{r['peak_mb']:.0f} | {r['mb']:.1f} | {r['doc_pages']:,} | {r['pair_pages']:,} | "
        f"{r['same']} | {r['load']} |"
        for name, r in rows
    )
    return f"""`scripts/bench_site.py`: `simdask export-html INDEX OUTDIR` with its default settings
on an index of {n} real licence files (`/usr/share/doc/*/copyright`, each real file once),
indexed with `simdask update` defaults ({pairs.split(";")[-1].strip() if pairs else "?"}).
Each run a new process; CPU: user + system of it and its worker processes; quiet wall: the
CPU seconds divided by the processes that share the work ({cores} for the default runs, 1 for
`--workers 1`): about what the run takes on an idle machine (the default run's pages are
written by one process, so a little more); peak: RSS of the process and its workers
together.

Machine: {machine()}. Date: {today()}.

| export-html | wall (s) | CPU (s) | quiet wall (s) | peak (MB) | site (MB) | document pages | pair pages | same site as the first row | load at its end |
|---|---:|---:|---:|---:|---:|---:|---:|---|---|
{table}
"""


if __name__ == "__main__":
    main()
