"""``simdask update INDEX SOURCE...``: create the index if needed and index the sources."""

from __future__ import annotations

import argparse
import sys

from simdask.cli._args import add_cluster_arguments, add_data_placement, size
from simdask.cli._common import EXIT_OK, print_summary, update_index, write_summary_json
from simdask.config import DEFAULT_SLACK, SIMILARITY_MODES, IndexConfig
from simdask.engine.sizing import MAX_RANGES, MIN_RANGE_DOCS, MIN_RANGES, TASKS_PER_THREAD
from simdask.errors import ConfigError, IndexDamagedError
from simdask.index import Index
from simdask.ingest.sources import DEFAULT_MAX_FILE_BYTES, require_sources
from simdask.kernels.keys import key_prefix
from simdask.read.boilerplate_passages import boilerplate_hint
from simdask.write.settings import INDEX_SETTINGS, update_config, use_worker_cache

__all__ = ["register", "run"]

_DESCRIPTION = (
    "Index SOURCEs: documents, folders (.txt .md .html .htm .pdf .docx .odt .rtf .doc, "
    'recursively) or .jsonl files of {"id": ..., "text": ...} lines, then compute '
    "similarities. Files that fail to extract are reported (simdask errors INDEX); the "
    "run still commits and exits with status 0. A SOURCE whose keys another source's documents "
    "hold (a folder of the same name elsewhere: use --key-prefix), or that lies inside a folder "
    "indexed before (or holds one), is refused with status 1 and nothing is indexed."
)


def register(subparsers) -> None:
    """Declare ``update``."""
    p = subparsers.add_parser(
        "update", help="create the index if needed and index the sources", description=_DESCRIPTION
    )
    p.add_argument("index", metavar="INDEX", help="index directory")
    p.add_argument(
        "sources",
        metavar="SOURCE",
        nargs="*",
        help="file, folder or .jsonl file (may be left out when only changing --exclude...)",
    )
    _index_settings(p)
    _exclusions(p)
    p.add_argument(
        "--delete-missing",
        action="store_true",
        help="delete documents indexed earlier from these SOURCEs that are gone from them",
    )
    p.add_argument(
        "--key-prefix",
        type=key_prefix,
        default="",
        metavar="PREFIX",
        help="put PREFIX before the keys of these SOURCEs' documents, e.g. --key-prefix 2026/ "
        "keys alt/2026/submissions/smith.docx 2026/submissions/smith.docx (keys are the "
        "folder's name and the path inside it, so two folders of the same name collide; give "
        "the same PREFIX at every later update of these SOURCEs)",
    )
    p.add_argument("--rebuild", action="store_true", help="replace the whole index by SOURCEs")
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for another update of the same index (default: fail at once)",
    )
    p.add_argument("--batch-docs", type=int, help="documents per chunking task (default: auto)")
    p.add_argument(
        "--max-file-size",
        type=size,
        default=DEFAULT_MAX_FILE_BYTES,
        metavar="SIZE",
        help="do not read larger files, report them as too_large (e.g. 50MB, 2GiB; "
        "default 100MB; 0: no limit)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--summary-json",
        metavar="FILE",
        help="also write the run summary to FILE as JSON (counts, seconds per stage, the "
        "engine's statistics, the keys added, modified and deleted, the errors)",
    )
    p.add_argument(
        "--align",
        dest="totals",
        action="store_const",
        const="all",
        default="new",
        help="give every document its aligned total (its top candidates aligned, stored; "
        "`simdask totals`); by default only the documents an incremental run adds or "
        "modifies get one (and documents that have one keep it up to date)",
    )
    p.add_argument(
        "--no-totals",
        dest="totals",
        action="store_const",
        const="off",
        help="give no new document an aligned total in this run",
    )
    add_cluster_arguments(p)
    add_data_placement(p)


def _index_settings(p) -> None:
    """The options of :data:`simdask.write.settings.INDEX_SETTINGS` and ``--shard-store``."""
    d = IndexConfig()
    g = p.add_argument_group(
        "index settings (fixed when the index is created; change them with --rebuild)"
    )
    g.add_argument(
        "--hash-bits",
        type=int,
        help=f"bits of a chunk ID, 16..64 ({d.hash_bits}; 28: the seed's setting)",
    )
    g.add_argument(
        "--shards",
        type=int,
        help="chunk-ID ranges, 1..4096; the merge and the per-range passes run one task per "
        "range (default for a new index: chosen for the cluster, the smallest power of two "
        f">= {TASKS_PER_THREAD} per worker thread, {MIN_RANGES}..{MAX_RANGES}, at most one per "
        f"{MIN_RANGE_DOCS} documents of the first run; an existing index keeps its own, with "
        "--rebuild too)",
    )
    g.add_argument(
        "--threshold", type=float, help=f"least similarity stored, percent ({d.threshold})"
    )
    g.add_argument(
        "--top-k", type=int, help=f"most similar documents kept per document ({d.top_k})"
    )
    g.add_argument(
        "--slack",
        type=int,
        help="rows kept per document beyond --top-k, so that deleting or modifying documents "
        "recomputes a list only when more than N of its partners are gone (default: "
        f"min(top-k, {DEFAULT_SLACK}))",
    )
    g.add_argument("--max-df", type=int, help="leave out chunks held by more than N documents")
    g.add_argument("--lsh", metavar="BxR", help="keep MinHash LSH data: B bands of R rows (20x5)")
    g.add_argument(
        "--candidates",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="keep each document's paraphrase-robust candidate partners (shared informative "
        "content word pairs), which the aligned totals align first (off: the totals align a "
        "document's partners by shared chunks; on costs ~10x a build as built, docs/scale.md)",
    )
    g.add_argument(
        "--similarity-mode",
        choices=SIMILARITY_MODES,
        help="how pairs sharing only heavy chunks (held by very many documents: licence and "
        "template text, set phrases) are handled. Every pair sharing at least one other chunk "
        "is always stored with its exact count. exact: pairs sharing only heavy chunks are "
        "searched too (a dense search, documents x documents holding heavy chunks); "
        "informative: they are not searched (cheap on any corpus; a partner sharing only "
        "boilerplate may be missing); auto: exact when that search is at most --auto-budget "
        "pairs, else informative, decided at each full build and kept by incremental runs; "
        "`simdask stats` and the run summary say which and why "
        f"({d.similarity_mode})",
    )
    g.add_argument(
        "--auto-budget",
        type=int,
        metavar="PAIRS",
        help="--similarity-mode auto: most (document, document) pairs the heavy-only search "
        f"may compare ({d.auto_budget:.0e}; rendered man pages need 2e+08, generated prose of "
        "100k documents ~6e+09: docs/realtext.md)",
    )
    g.add_argument(
        "--heavy-df",
        type=int,
        help="chunks held by more than N documents are heavy (default: chosen per build)",
    )
    g.add_argument(
        "--shard-store",
        metavar="URL",
        help="keep the shards at this fsspec URL (s3://bucket/prefix, file:///nfs/path) "
        "instead of INDEX/shards; the catalog and texts stay in INDEX",
    )


def _exclusions(p) -> None:
    """``--exclude FILE...``, ``--no-exclude``, ``--exclude-quotes``, ``--exclude-bibliography``."""
    g = p.add_argument_group(
        "boilerplate (stored in the index; changing them later recomputes the documents "
        "from their stored texts, as a full build with the new exclusions would: for added "
        "templates only the documents holding their chunks, otherwise every document)"
    )
    g.add_argument(
        "--exclude",
        nargs="+",
        action="extend",
        metavar="FILE",
        help="leave the chunks of these texts (a template, a licence, an assignment sheet; any "
        "format SOURCEs may have) out of every count; replaces the files excluded so far",
    )
    g.add_argument(
        "--no-exclude", action="store_true", help="stop excluding the files given earlier"
    )
    g.add_argument(
        "--exclude-quotes",
        action=argparse.BooleanOptionalAction,
        help="leave text inside quotation marks and > block quotes out of the counts of the "
        "document holding it (the same words copied unquoted elsewhere are still found)",
    )
    g.add_argument(
        "--exclude-bibliography",
        action=argparse.BooleanOptionalAction,
        help="leave the reference list (References, Bibliography, Literatura, ...) out",
    )


def _exclude_files(args) -> list[str] | None:
    """The template files to exclude (None: keep those of the index; []: none)."""
    if args.no_exclude and args.exclude:
        raise ConfigError("--exclude and --no-exclude contradict each other: give one of them")
    if args.no_exclude:
        return []
    if args.exclude:
        require_sources(args.exclude)
        return list(args.exclude)
    return None


def run(args) -> int:
    """Run ``simdask update``; prints the run summary on stderr."""
    from simdask.engine.run import RunOptions  # dask: only for the commands that run

    exclude = _exclude_files(args)
    changing = exclude is not None or any(
        getattr(args, n) is not None for n in IndexConfig.EXCLUSION_SETTINGS
    )
    if not args.sources and not changing:
        raise ConfigError(
            "expected at least one SOURCE (or an exclusion option: --exclude, --no-exclude, "
            "--[no-]exclude-quotes, --[no-]exclude-bibliography), found none"
        )
    config = update_config(args.index, {k: getattr(args, k) for k in INDEX_SETTINGS})
    options = RunOptions(
        batch_docs=args.batch_docs,
        transfer=args.data_transfer,
        worker_cache=use_worker_cache(
            args.worker_cache, cluster_outlives_run=args.cluster.spec.outlives_run
        ),
        max_file_bytes=args.max_file_size or None,
        totals=args.totals,
    )
    summary = update_index(
        args,
        args.index,
        config,
        sources=args.sources,
        delete_missing=args.delete_missing,
        rebuild=args.rebuild,
        options=options,
        exclude=exclude,
        key_prefix=args.key_prefix,
    )
    print_summary(summary, getattr(args, "verbose", False))
    if args.summary_json:
        write_summary_json(args.summary_json, summary)
    try:
        with Index.open(args.index) as idx, idx.snapshot():
            hint = boilerplate_hint(idx)
    except IndexDamagedError as e:  # the run is committed: say so, and what the look found
        hint = f"simdask: warning: the run is committed; looking for shared passages: {e}"
    if hint:
        print(hint, file=sys.stderr)
    return EXIT_OK
