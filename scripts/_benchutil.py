"""Shared helpers of the benchmark scripts: machine description, peak RSS, docs/ writing."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import threading
import time
from pathlib import Path

import psutil


def machine() -> str:
    """One line: CPU model, cores, RAM, Python and library versions."""
    import dask
    import numpy
    import zarr

    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu
            )
    except OSError:
        pass
    ram = psutil.virtual_memory().total / 2**30
    return (
        f"{cpu}, {os.cpu_count()} cores, {ram:.0f} GiB RAM; Python {platform.python_version()}, "
        f"numpy {numpy.__version__}, dask {dask.__version__}, zarr {zarr.__version__}"
    )


def today() -> str:
    """The date, ISO format."""
    return _dt.date.today().isoformat()


class PeakRSS:
    """Samples the RSS of this process and all its children (Dask workers) in a thread."""

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.peak_total = 0
        self.peak_single = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = single = 0
            for p in [me, *me.children(recursive=True)]:
                try:
                    rss = p.memory_info().rss
                except psutil.Error:
                    continue
                total += rss
                single = max(single, rss)
            self.peak_total = max(self.peak_total, total)
            self.peak_single = max(self.peak_single, single)
            time.sleep(self.interval)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def write_section(path: str | Path, title: str, body: str) -> None:
    """Replace (or append) the section ``## title`` of a markdown file."""
    path = Path(path)
    text = (
        path.read_text()
        if path.exists()
        else "# Benchmarks\n\nMeasured results; each section names its script, machine and date.\n"
    )
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    section = f"## {title}\n\n{body.strip()}\n\n"
    text = (
        pattern.sub(lambda _: section, text)
        if pattern.search(text)
        else text.rstrip() + "\n\n" + section
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages and the core count, e.g. ``1.2 / 0.9 / 0.7 on
    2 cores`` (other jobs on a shared machine make absolute seconds larger)."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def banner() -> str:
    """One line to print before a benchmark's numbers: machine, date and load
    (:func:`machine`, :func:`today`, :func:`load_average`)."""
    return f"{machine()}; {today()}; load {load_average()}"
