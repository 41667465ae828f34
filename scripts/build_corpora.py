"""Assemble real-text corpora (JSONL, one ``{"id", "text"}`` document a line) from this machine.

Corpora (each selectable with ``--only NAME``, all by default), written to ``<out>/NAME.jsonl``:

* ``manpages``: every installed man page (``/usr/share/man/**/man*/*``, all languages), rendered
  by ``man -l FILE`` with ``MANWIDTH=80 LC_ALL=C.UTF-8`` (man-db itself runs ``col -b`` when its
  output is not a terminal; leftover overstrikes are removed here), in a process pool. Id: path
  relative to /usr/share/man. Heavy boilerplate across pages (that is the point).
* ``copyright``: ``/usr/share/doc/*/copyright`` (licence texts). Id: package name.
* ``changelogs``: ``/usr/share/doc/*/changelog.Debian.gz`` and ``changelog.gz``, decompressed.
  Id: path relative to /usr/share/doc.
* ``pydocs``: per module of site-packages (``sysconfig.get_paths()["purelib"]``), its module,
  class and function docstrings (``ast``, in source order) joined; modules under 50 words are
  left out. Id: path relative to site-packages.
* ``docs``: text-like files under /usr/share/doc (README*, NEWS*, AUTHORS, TODO, *.txt, *.md,
  *.rst, ..., plain or .gz), except copyright and changelog* files. Id: relative path.

Files reached twice (symlinks, symlinked package directories) are kept once, under their first
id in sorted order. Unreadable, binary (NUL byte) or unrenderable files are skipped and counted
("skipped"); empty or too-short documents are counted apart ("short"). Output is deterministic:
documents sorted by id. Prints a summary table and writes ``<out>/MANIFEST.json`` (counts, date,
platform; entries of corpora not rebuilt are kept).

Needs ``man`` (man-db) and ``groff`` for ``manpages``; on a bare Debian:
``apt-get update && apt-get install -y man-db groff-base``. More man pages:
``apt-get install -y manpages manpages-dev manpages-posix``.

    python scripts/build_corpora.py                      # all corpora into bench-data/corpora
    python scripts/build_corpora.py --only pydocs --limit 100

Other scripts: ``from build_corpora import load_jsonl`` (list of ``(id, text)``).
"""

from __future__ import annotations

import argparse
import ast
import datetime
import gzip
import json
import multiprocessing
import os
import platform
import re
import subprocess
import sys
import sysconfig
import time
import warnings
from collections.abc import Callable, Iterator

MAN_ROOT = "/usr/share/man"
DOC_ROOT = "/usr/share/doc"
WORD_RE = re.compile(r"[^\W_]+")
OVERSTRIKE_RE = re.compile(r".\x08")
MIN_PYDOC_WORDS = 50
DOC_NAMES = {
    "README", "NEWS", "AUTHORS", "THANKS", "TODO", "FAQ", "BUGS", "INSTALL", "HISTORY",
    "CHANGES", "CREDITS", "FEATURES", "NOTICE", "CONTRIBUTORS", "USAGE", "HACKING",
}  # fmt: skip
DOC_EXTS = {".txt", ".md", ".rst", ".org", ".text", ".markdown"}


def load_jsonl(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """The ``(id, text)`` documents of a corpus file written by this script, in file order."""
    with open(path, encoding="utf-8") as f:
        return [(d["id"], d["text"]) for d in map(json.loads, f) if d]


# --- listing: sorted (id, path) pairs, each real file once ----------------------------------


def _walk(root: str, keep: Callable[[str], bool]) -> list[tuple[str, str]]:
    items = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if keep(rel) and os.path.isfile(path):
                items.append((rel, path))
    return _dedupe(items)


def _dedupe(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen, out = set(), []
    for doc_id, path in sorted(items):
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            out.append((doc_id, path))
    return out


def list_manpages() -> list[tuple[str, str]]:
    def keep(rel: str) -> bool:
        parts = rel.split(os.sep)
        return len(parts) >= 2 and parts[-2].startswith("man")

    return _walk(MAN_ROOT, keep)


def list_copyright() -> list[tuple[str, str]]:
    pkgs = sorted(os.listdir(DOC_ROOT))
    return _dedupe([(p, os.path.join(DOC_ROOT, p, "copyright")) for p in pkgs
                    if os.path.isfile(os.path.join(DOC_ROOT, p, "copyright"))])  # fmt: skip


def list_changelogs() -> list[tuple[str, str]]:
    items = []
    for pkg in sorted(os.listdir(DOC_ROOT)):
        for name in ("changelog.Debian.gz", "changelog.gz"):
            path = os.path.join(DOC_ROOT, pkg, name)
            if os.path.isfile(path):
                items.append((f"{pkg}/{name}", path))
    return _dedupe(items)


def list_pydocs() -> list[tuple[str, str]]:
    root = sysconfig.get_paths()["purelib"]
    return _walk(root, lambda rel: rel.endswith(".py") and "__pycache__" not in rel)


def _is_doc(rel: str) -> bool:
    name = os.path.basename(rel).removesuffix(".gz")
    low = name.lower()
    if low.startswith(("copyright", "changelog")):
        return False
    return os.path.splitext(low)[1] in DOC_EXTS or name.split(".")[0].upper() in DOC_NAMES


def list_docs() -> list[tuple[str, str]]:
    return _walk(DOC_ROOT, _is_doc)


# --- workers: path -> text, "" if too short, None if skipped (run in a process pool) -----------


def _read_bytes(path: str) -> bytes | None:
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except (OSError, EOFError, ValueError):
        return None
    return None if b"\x00" in data else data


def read_text(path: str) -> str | None:
    data = _read_bytes(path)
    if data is None:
        return None
    text = data.decode("utf-8", errors="replace")
    return text if text.strip() else ""


def render_manpage(path: str) -> str | None:
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MANPAGER="cat", PAGER="cat")
    env.pop("MAN_KEEP_FORMATTING", None)
    section_dir = os.path.dirname(path)  # .so requests are relative to the manN parent
    try:
        res = subprocess.run(["man", "-l", path], cwd=os.path.dirname(section_dir), env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    text = OVERSTRIKE_RE.sub("", res.stdout.decode("utf-8", errors="replace"))
    return text if text.strip() else ""


def extract_pydoc(path: str) -> str | None:
    data = _read_bytes(path)
    if data is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data.decode("utf-8", errors="replace"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    nodes = sorted((getattr(n, "lineno", 0), getattr(n, "col_offset", -1), n)
                   for n in ast.walk(tree) if isinstance(n, kinds))  # fmt: skip
    docs = [d for *_, n in nodes if (d := ast.get_docstring(n, clean=True))]
    text = "\n\n".join(docs)
    return text if len(WORD_RE.findall(text)) >= MIN_PYDOC_WORDS else ""


CORPORA: dict[str, tuple[Callable[[], list[tuple[str, str]]], Callable[[str], str | None]]] = {
    "manpages": (list_manpages, render_manpage),
    "copyright": (list_copyright, read_text),
    "changelogs": (list_changelogs, read_text),
    "pydocs": (list_pydocs, extract_pydoc),
    "docs": (list_docs, read_text),
}


def _work(job: tuple[str, str, str]) -> tuple[str, str | None, int]:
    name, doc_id, path = job
    try:
        text = CORPORA[name][1](path)
    except Exception:  # a worker never dies on one bad file
        text = None
    words = len(WORD_RE.findall(text)) if text else 0
    return doc_id, text, words


def build(name: str, out_dir: str, limit: int | None, workers: int) -> dict:
    t0 = time.perf_counter()
    items = CORPORA[name][0]()
    jobs: Iterator = ((name, doc_id, path) for doc_id, path in items)
    stats = {"docs": 0, "words": 0, "text_bytes": 0, "skipped": 0, "short": 0}
    out_path = os.path.join(out_dir, f"{name}.jsonl")
    # one pool per corpus: leaving it (terminate) drops the work queued beyond --limit
    with multiprocessing.Pool(workers) as pool, open(out_path + ".tmp", "w", encoding="utf-8") as f:
        for doc_id, text, words in pool.imap(_work, jobs, chunksize=8):
            if not text:
                stats["skipped" if text is None else "short"] += 1
                continue
            f.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
            stats["docs"] += 1
            stats["words"] += words
            stats["text_bytes"] += len(text.encode("utf-8"))
            if limit is not None and stats["docs"] >= limit:
                break
    os.replace(out_path + ".tmp", out_path)
    stats.update(candidates=len(items), file_bytes=os.path.getsize(out_path),
                 file=f"{name}.jsonl", seconds=round(time.perf_counter() - t0, 1))  # fmt: skip
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out", default="bench-data/corpora", help="output folder")
    ap.add_argument("--only", action="append", choices=list(CORPORA),
                    help="build only this corpus (repeatable)")  # fmt: skip
    ap.add_argument("--limit", type=int, default=None, help="max documents per corpus")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    names = args.only or list(CORPORA)
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "MANIFEST.json")
    manifest = {"corpora": {}}
    if os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)

    print(f"{'corpus':<11} {'docs':>8} {'words':>12} {'MB':>8} {'seconds':>8} "
          f"{'skipped':>8} {'short':>7}", flush=True)  # fmt: skip
    for name in names:
        s = build(name, args.out, args.limit, max(1, args.workers))
        manifest["corpora"][name] = dict(s, limit=args.limit)
        print(f"{name:<11} {s['docs']:>8,} {s['words']:>12,} {s['text_bytes'] / 1e6:>8.1f} "
              f"{s['seconds']:>8.1f} {s['skipped']:>8,} {s['short']:>7,}", flush=True)  # fmt: skip

    manifest.update(
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        platform=platform.platform(),
        uname=platform.uname()._asdict(),
        python=sys.version.split()[0],
        word_regex=WORD_RE.pattern,
        mb="text bytes (UTF-8) / 1e6",
    )
    with open(manifest_path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(manifest_path + ".tmp", manifest_path)
    print(f"wrote {', '.join(names)} and MANIFEST.json to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
