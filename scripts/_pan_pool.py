"""The PAN 2013 text-alignment corpus read, and its pairs aligned in a pool of processes
(scripts/eval_pan.py, scripts/eval_end_to_end.py): each process prepares a text for the
aligner once (:func:`simdask.alignment.prepare`) while it stays among its last
:data:`CACHE_TEXTS`, and reports with each pair's detections the longest run of words the
two texts share verbatim."""

from __future__ import annotations

import re
import resource
from collections import OrderedDict
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from simdask.alignment import AlignConfig, align_prepared, prepare
from simdask.alignment.pan_measures import Annotation
from simdask.alignment.seeds import key_matches, window_keys

SUBCORPORA = (
    ("01-no-plagiarism", "no plagiarism"),
    ("02-no-obfuscation", "no obfuscation"),
    ("03-random-obfuscation", "random obfuscation"),
    ("04-translation-obfuscation", "cyclic translation"),
    ("05-summary-obfuscation", "summary"),
)
_FEATURE = re.compile(r"<feature\b([^>]*)/>")
_ATTR = re.compile(r'(\w+)="([^"]*)"')


def read_text(path: Path) -> str:
    """The file decoded as UTF-8 with line ends unchanged (offsets are code points)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def read_annotations(path: Path, pair: tuple[str, str], name: str) -> list[Annotation]:
    """The ``<feature name=NAME>`` spans of one PAN XML file."""
    if not path.exists():
        return []
    out = []
    for m in _FEATURE.finditer(path.read_text(encoding="utf-8")):
        attrs = dict(_ATTR.findall(m.group(1)))
        if attrs.get("name") != name:
            continue
        a, b = int(attrs["this_offset"]), int(attrs["source_offset"])
        out.append(
            Annotation(pair, a, a + int(attrs["this_length"]), b, b + int(attrs["source_length"]))
        )
    return out


def read_pairs(corpus: Path, sub: str, limit: int | None) -> list[tuple[str, str]]:
    """The (suspicious, source) file names of a sub-corpus."""
    lines = (corpus / sub / "pairs").read_text().split("\n")
    pairs = [tuple(ln.split()) for ln in lines if ln.strip()]
    return pairs[:limit] if limit else pairs


def xml_name(pair: tuple[str, str]) -> str:
    """The ground-truth file name of a pair."""
    return f"{Path(pair[0]).stem}-{Path(pair[1]).stem}.xml"


_WORKER: dict = {}
#: prepared texts a worker keeps (least recently used dropped first)
CACHE_TEXTS = 512


def _init(corpus: str, config: dict, reuse: bool, runs: bool) -> None:
    _WORKER["corpus"] = Path(corpus)
    _WORKER["runs"] = runs
    _WORKER["config"] = AlignConfig.from_dict(config)
    _WORKER["reuse"] = reuse
    _WORKER["cache"] = OrderedDict()


def _prepared(path: Path):
    """The text at ``path`` prepared for the aligner, once per worker while it stays among
    the :data:`CACHE_TEXTS` most recently used (``reuse`` off: every time)."""
    cache = _WORKER["cache"]
    if path in cache:
        cache.move_to_end(path)
        return cache[path]
    got = prepare(read_text(path), _WORKER["config"])
    if _WORKER["reuse"]:
        cache[path] = got
        if len(cache) > CACHE_TEXTS:
            cache.popitem(last=False)
    return got


#: the words of the verbatim n-grams a shared run is found from
RUN_GRAM = 8


def longest_run(a, b) -> int:
    """The most consecutive words (kept words, normalised) two prepared texts share in the
    same order: runs of shared word :data:`RUN_GRAM` -grams on one diagonal (n-grams
    occurring more than 4 times in a text ignored); 0 when they share no n-gram."""
    ia, ib = key_matches(
        window_keys(a.hashes, RUN_GRAM, False), window_keys(b.hashes, RUN_GRAM, False), 4
    )
    if len(ia) == 0:
        return 0
    order = np.lexsort((ia, ia - ib))
    d, i = (ia - ib)[order], ia[order]
    new = np.ones(len(i), dtype=bool)
    new[1:] = (d[1:] != d[:-1]) | (i[1:] != i[:-1] + 1)
    starts = np.flatnonzero(new)
    lengths = np.diff(np.append(starts, len(i)))
    return int(lengths.max()) + RUN_GRAM - 1


def _align_pair(pair: tuple[str, str]) -> tuple[list[Annotation], int]:
    corpus, config = _WORKER["corpus"], _WORKER["config"]
    a = _prepared(corpus / "susp" / pair[0])
    # a pair of two suspicious documents (candidates among every document) reads both there
    b = _prepared(corpus / ("susp" if pair[1].startswith("suspicious") else "src") / pair[1])
    found = align_prepared(a, b, config)
    run = longest_run(a, b) if _WORKER["runs"] else 0
    return [Annotation(pair, p.a_start, p.a_end, p.b_start, p.b_end) for p in found], run


def align_all(
    corpus: Path,
    config: AlignConfig,
    processes: int,
    pairs,
    reuse: bool = True,
    runs: bool = False,
):
    """Each pair's detections (in the order of ``pairs``) and the CPU seconds of the pool's
    processes; with ``runs``, each pair's ``(detections, longest verbatim run in words)``.
    The pairs go to the processes sorted by suspicious document (then source), in runs of
    32, so that a process prepares a text once for the pairs it aligns (``reuse`` off: once
    per pair, as before)."""
    order = sorted(range(len(pairs)), key=lambda i: pairs[i])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    init = (str(corpus), config.to_dict(), reuse, runs)
    with Pool(processes, initializer=_init, initargs=init) as pool:
        found = pool.map(_align_pair, [pairs[i] for i in order], chunksize=32)
        pool.close()
        pool.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out: list = [None] * len(pairs)
    for i, f in zip(order, found, strict=True):
        out[i] = f if runs else f[0]
    return out, cpu
