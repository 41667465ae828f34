"""docs/scale.md and docs/scale.png from the JSON lines bench_scale.py writes (measured sizes),
with power-law projections to the sizes not measured."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

from _benchutil import write_section

STAGES = ("chunk", "merge", "similarity", "commit")
TARGETS = (300_000, 1_000_000)
_TIME = re.compile(r"^time: (.*)$", re.M)


def _seconds_from_log(res: dict) -> dict:
    """Stage seconds as the CLI printed them (the stored summary has no commit/total)."""
    log = res.get("log")
    if not log or not Path(log).exists():
        return {}
    found = _TIME.findall(Path(log).read_text(errors="replace"))
    if not found:
        return {}
    out = {}
    for part in found[-1].split(","):
        name, _, val = part.strip().rpartition(" ")
        out[name] = float(val.rstrip("s"))
    return out


def load(paths: list[str]) -> list[dict]:
    """The latest result per corpus size, ascending."""
    by_n: dict[int, dict] = {}
    for p in paths:
        if not Path(p).exists():
            continue
        for line in Path(p).read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                if r.get("aborted"):
                    continue
                r["seconds"] = {**r["seconds"], **_seconds_from_log(r)}
                by_n[r["requested"]] = r
    return [by_n[n] for n in sorted(by_n)]


def fit(ns: list[float], ys: list[float]) -> tuple[float, float]:
    """Exponent and factor of ``y = a n^b`` through the two largest sizes (log-log)."""
    (n1, y1), (n2, y2) = list(zip(ns, ys, strict=True))[-2:]
    b = math.log(max(y2, 1e-3) / max(y1, 1e-3)) / math.log(n2 / n1)
    return b, y2 / n2**b


def _gib(x: float) -> str:
    return f"{x / 2**30:.2f}"


def _row(r: dict) -> str:
    s = r["seconds"]
    total = s.get("total", sum(s.get(k, 0) for k in ("scan", *STAGES)))
    heavy = r.get("heavy") or {}
    cut = heavy.get("cutoff")
    cutoff = "none" if cut is None else f"{cut} ({heavy.get('heavy_chunks', 0):,})"
    return (
        f"| {r['n']:,}{' (' + r['update_args'] + ')' if r.get('update_args') else ''} | "
        f"{r['words'] / 1e6:.0f} | "
        + " | ".join(f"{s.get(k, float('nan')):.1f}" for k in STAGES)
        + f" | {total:.1f} | {r['wall']:.1f} | {r['n'] / total:,.0f} | "
        f"{_gib(r['peak_single'])} | {_gib(r['peak_total'])} | {r['postings'] / 1e6:.1f} | "
        f"{r['shard_bytes'] / r['postings']:.2f} | {r['bytes_on_disk'] / r['postings']:.2f} | "
        f"{r['similarity_rows'] / r['n']:.1f} | "
        f"{cutoff} | "
        f"{r['extra'].get('candidate_pair_counts', 0) / 1e6:,.0f} | {r['query_cold_s']:.2f} | "
        + (f"{r['cpu_s']:,.0f} |" if r.get("cpu_s") else "– |")
    )


def projections(rows: list[dict]) -> tuple[str, dict]:
    """Markdown rows projecting each stage to the TARGETS not measured, and the fits."""
    ns = [r["n"] for r in rows]
    fits = {}
    for k in (*STAGES, "total"):
        ys = [r["seconds"].get(k, 0.0) for r in rows]
        fits[k] = fit(ns, ys)
    peak = fit(ns, [r["peak_single"] for r in rows])
    lines = []
    for n in TARGETS:
        if n <= ns[-1]:
            continue
        cells = " | ".join(f"{fits[k][1] * n ** fits[k][0]:,.0f}" for k in STAGES)
        total = fits["total"][1] * n ** fits["total"][0]
        lines.append(
            f"| {n:,} (projected) | {cells} | {total:,.0f} ({total / 60:,.0f} min) | "
            f"{peak[1] * n ** peak[0] / 2**30:.1f} |"
        )
    return "\n".join(lines), {**fits, "peak_single": peak}


def plot(rows: list[dict], fits: dict, path: Path) -> None:
    """Log-log plot: seconds of each stage against documents, projections dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = np.array([r["n"] for r in rows], float)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    far = np.array([ns[-1], max(TARGETS[-1], ns[-1])])
    for k in (*STAGES, "total"):
        ys = [r["seconds"].get(k, np.nan) for r in rows]
        label = f"{k} (n^{fits[k][0]:.2f})" if k in fits else k
        (line,) = ax.loglog(ns, ys, "o-", label=label)
        if k in fits and far[1] > far[0]:
            ax.loglog(far, fits[k][1] * far ** fits[k][0], "--", color=line.get_color(), lw=1)
    ax.axhline(1800, color="grey", lw=0.8, ls=":")
    ax.text(ns[0], 1900, "30 min", color="grey", fontsize=8)
    ax.set_xlabel("documents (~1,500 words each)")
    ax.set_ylabel("seconds")
    ax.set_title(
        "simdask update, generated prose: measured (dots), projected (dashed)", fontsize=10
    )
    ax.grid(True, which="both", lw=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(paths: list[str], out: str, machine: str, load_avg: str, notes: str = "") -> None:
    """Write the section of ``out`` (and the PNG beside it) from the results files."""
    rows = load(paths)
    if not rows:
        raise SystemExit(f"no results in {paths}")
    # a fit is only meaningful within one regime: sizes where the heavy cutoff is in force
    # (below it all-pairs counting fits its budget and grows with n^2, then drops)
    regime = [r for r in rows if (r.get("heavy") or {}).get("cutoff") is not None]
    proj, fits = projections(regime) if len(regime) >= 2 else ("", {})
    png = Path(out).with_suffix(".png")
    plot(rows, fits, png)
    head = (
        "| documents | M words | chunk s | merge s | similarity s | commit s | total s | "
        "process wall s | docs/s | peak RSS largest process GiB | peak RSS all processes GiB | "
        "postings M | shard bytes / posting | index bytes / posting | stored partners / doc | "
        "heavy cutoff (chunks) | candidate pair counts M | query 20 pages, cold s | "
        "CPU s, all processes |\n"
        "|" + "---|" * 19
    )
    measured = "\n".join(_row(r) for r in rows)
    dates = sorted({r["date"] for r in rows})
    loads = "; ".join(
        f"{r['n']:,}: {r['load_before']} before, {r['load_after']} after" for r in rows
    )
    exps = ", ".join(f"{k} n^{v[0]:.2f}" for k, v in fits.items())
    body = f"""Machine: {machine}. Dates: {", ".join(dates)}. Load average when each run started
and ended (1/5/15 min): {loads}. Written with load {load_avg}.

Script: `scripts/bench_scale.py` (see its docstring for the corpus and how to rerun).

### Measured

{head}
{measured}

### Projected (not measured)

Each stage fitted as `a·n^b` through the two largest measured sizes that have a heavy cutoff
({exps or "fewer than two such sizes measured: no fit; see the work model below"}); the
largest process's peak RSS the same way.

| documents | chunk s | merge s | similarity s | commit s | total s | peak RSS largest process GiB |
|---|---|---|---|---|---|---|
{proj}

![stages against corpus size]({png.name})

{notes}
"""
    write_section(out, "Scale (bench_scale.py)", body)
    text = Path(out).read_text()
    if text.startswith("# Benchmarks\n"):
        Path(out).write_text(
            "# Scale: a full run at growing corpus sizes (issue 13 item 5)\n"
            + text[len("# Benchmarks\n") :]
        )
