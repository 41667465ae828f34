"""The ``simdask`` command: argument parsing and output only; the work is in the Python API.

Exit status: 0 success (a run committed, even if some files failed), 1 a simdask error (the
message says what was expected and found; also: the index is locked by another update), 2 bad
usage or bad cluster settings (options, SIMDASK_* variables, the config file), 3 (``query``,
``compare``) some input documents could not be read — they are named on stderr and the results of
the others are printed, 4 the Dask cluster could not be reached or started, or failed during the
run (the index is unchanged), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

from simdask import __version__
from simdask.cli import compact as compact_cmd
from simdask.cli import compare as compare_cmd
from simdask.cli import query as query_cmd
from simdask.cli.cluster import add_cluster_command, cmd_cluster
from simdask.cli.output import FORMATS, write_rows
from simdask.cluster.placement import TRANSFER_MODES
from simdask.cluster.spec import add_cluster_arguments, cli_values, resolve_cluster
from simdask.config import IndexConfig
from simdask.errors import ClusterError, ConfigError, DocumentNotFoundError, SimdaskError
from simdask.index import Index
from simdask.ingest.sources import DEFAULT_MAX_FILE_BYTES, parse_size
from simdask.progress import Callback, TqdmCallback
from simdask.storage.lock import WriterLock
from simdask.summary import RunSummary

__all__ = ["EXIT_CLUSTER", "main"]

#: exit status when the Dask cluster could not be reached or started, or failed during a run
EXIT_CLUSTER = 4

PAIR_COLUMNS = ("doc", "other", "similarity", "shared", "doc_chunks", "other_chunks")

_DESCRIPTION = """\
Find similar documents (text reuse, plagiarism) in a growing document base.

A document's text is cut into overlapping 5-word chunks (words sorted inside each chunk),
chunks are hashed, and similarity of A to B is the percent of A's chunks also found in B
(asymmetric: a short text wholly inside a long one is 100 % similar to it).

Start with `simdask demo`, then `simdask update INDEX SOURCE...` and `simdask similar INDEX`.
"""

_EPILOG = """\
exit status: 0 success (a run committed, even if some files failed), 1 an error (the message
says what was expected and found; also: another update holds the index), 2 bad usage or bad
cluster settings, 3 (query, compare) some input documents could not be read, 4 the Dask
cluster could not be reached or started or failed during the run (the index is unchanged), 130
interrupted.
"""


def _data_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data placement")
    g.add_argument(
        "--data-transfer",
        choices=TRANSFER_MODES,
        default="auto",
        help="shared: workers read documents and write shards at the client's paths (one "
        "machine, or a shared filesystem); dask: documents, pairs and shards travel through "
        "Dask and only the client touches files; auto (default): shared if every worker sees "
        "the index and documents, else dask",
    )
    g.add_argument(
        "--worker-cache",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="keep shards cached in the workers' memory for the next run (default: on with "
        "--scheduler, whose workers outlive the run; off for a cluster started for this run)",
    )


def _format_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o", "--format", choices=FORMATS, default="table", help="output format (default table)"
    )


def _size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="simdask",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"simdask {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "update",
        help="create the index if needed and index the sources",
        description="Index SOURCEs: documents, folders (.txt .md .html .htm .pdf .docx .odt, "
        'recursively) or .jsonl files of {"id": ..., "text": ...} lines, then compute '
        "similarities. Files that fail to extract are reported (simdask errors INDEX); the "
        "run still commits and exits with status 0.",
    )
    p.add_argument("index", metavar="INDEX", help="index directory")
    p.add_argument("sources", metavar="SOURCE", nargs="+", help="file, folder or .jsonl file")
    d = IndexConfig()
    g = p.add_argument_group(
        "index settings (fixed when the index is created; change them with --rebuild)"
    )
    g.add_argument("--hash-bits", type=int, help=f"bits of a chunk ID, 16..32 ({d.hash_bits})")
    g.add_argument("--shards", type=int, help=f"shard ranges ({d.shards})")
    g.add_argument(
        "--threshold", type=float, help=f"least similarity stored, percent ({d.threshold})"
    )
    g.add_argument(
        "--top-k", type=int, help=f"most similar documents kept per document ({d.top_k})"
    )
    g.add_argument("--max-df", type=int, help="leave out chunks held by more than N documents")
    g.add_argument(
        "--shard-store",
        metavar="URL",
        help="keep the shards at this fsspec URL (s3://bucket/prefix, file:///nfs/path) "
        "instead of INDEX/shards; the catalog and texts stay in INDEX",
    )
    p.add_argument(
        "--delete-missing",
        action="store_true",
        help="delete documents indexed earlier from these SOURCEs that are gone from them",
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
        type=_size_arg,
        default=DEFAULT_MAX_FILE_BYTES,
        metavar="SIZE",
        help="do not read larger files, report them as too_large (e.g. 50MB, 2GiB; "
        "default 100MB; 0: no limit)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_cluster_arguments(p)
    _data_args(p)

    p = sub.add_parser("remove", help="delete documents by key")
    p.add_argument("index", metavar="INDEX")
    p.add_argument("keys", metavar="KEY", nargs="+")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS")
    p.add_argument("--quiet", action="store_true")
    add_cluster_arguments(p)

    p = sub.add_parser("text", help="print a document's extracted text as indexed")
    p.add_argument("index", metavar="INDEX")
    p.add_argument("key", metavar="KEY")

    p = sub.add_parser(
        "report",
        help="exact similarity of a pair and its matching passages (JSON)",
        description="Recompute a pair exactly from the stored texts (true chunks, no hashing) "
        "and list the matching passages with character offsets into each text "
        "(`simdask text INDEX KEY` prints that text).",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("key", metavar="KEY_A")
    p.add_argument("other", metavar="KEY_B")
    p.add_argument("--min-chunks", type=int, default=2, help="shortest passage, in chunks (2)")
    p.add_argument("--html", metavar="FILE", help="write the side-by-side HTML report to FILE")
    p.add_argument(
        "--format",
        choices=("json",),
        help="print the report as one JSON object (default unless --html is given)",
    )

    p = sub.add_parser(
        "export-html",
        help="write a static site to browse the index (documents, matches, pair reports)",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("outdir", metavar="OUTDIR")
    p.add_argument(
        "--min",
        type=float,
        default=0.0,
        metavar="PCT",
        help="pair reports only for pairs at least this similar either way",
    )
    p.add_argument("--max-pairs", type=int, default=20_000, help="most pair reports (20000)")
    p.add_argument("--quiet", action="store_true")

    p = sub.add_parser("errors", help="per-file errors of the last run (key, kind, message)")
    p.add_argument("index", metavar="INDEX")
    _format_arg(p)

    add_cluster_command(sub, _EPILOG)

    p = sub.add_parser("similar", help="stored similar pairs, all or of one document")
    p.add_argument("index", metavar="INDEX")
    p.add_argument("key", metavar="KEY", nargs="?", help="a document's key (default: all pairs)")
    p.add_argument(
        "--min", type=float, default=0.0, metavar="PCT", help="least similarity, percent"
    )
    _format_arg(p)

    query_cmd.add_parser(sub, add_cluster_arguments)
    compact_cmd.register(sub)
    compare_cmd.add_parser(sub, add_cluster_arguments)

    p = sub.add_parser("stats", help="documents, chunks, pairs, shards, bytes on disk, config")
    p.add_argument("index", metavar="INDEX")
    p.add_argument("--format", choices=("table", "json"), default="table")

    p = sub.add_parser(
        "demo", help="generate a small corpus, index it on a LocalCluster, show the top pairs"
    )
    p.add_argument("--docs", type=int, default=2000, help="documents to generate (default 2000)")
    p.add_argument("--words", type=int, default=600, help="mean words per document (default 600)")
    p.add_argument("--out", help="keep corpus and index in this folder (default: a temporary one)")
    p.add_argument("--top", type=int, default=15, help="pairs to print (default 15)")
    p.add_argument("--quiet", action="store_true")
    add_cluster_arguments(p)
    return parser


def _callback(args) -> Callback:
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return _MessageOnly()
    return TqdmCallback()


class _MessageOnly(Callback):
    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    def message(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr)


def _print_summary(s: RunSummary) -> None:
    secs = ", ".join(f"{k} {v:.2f}s" for k, v in s.seconds.items())
    print(
        f"run {s.run_id} committed generation {s.generation}: {s.added} added, "
        f"{s.modified} modified, {s.deleted} deleted, {s.unchanged} unchanged, {s.failed} failed "
        f"({s.too_short} too short); {s.documents} documents in the index; "
        f"{s.similarity_rows} similarity rows written; {s.skipped_chunks} chunks skipped by max_df",
        file=sys.stderr,
    )
    print(f"time: {secs}", file=sys.stderr)
    if "transfer" in s.extra:
        data = (
            f"data transfer: {s.extra['transfer']}; "
            f"{s.extra.get('bytes_to_cluster', 0) / 2**20:.1f} MiB to the cluster, "
            f"{s.extra.get('bytes_from_cluster', 0) / 2**20:.1f} MiB back"
        )
        if "worker_cache" in s.extra:
            wc = s.extra["worker_cache"]
            data += f"; worker shard cache: {wc['hits']} hits, {wc['misses']} misses"
        print(data, file=sys.stderr)
    if "compaction" in s.extra:
        c = s.extra["compaction"]
        print(
            f"compacted: {c['segments_merged']} segments of {c['ranges']} ranges merged",
            file=sys.stderr,
        )
    for key, kind, msg in s.errors[:20]:
        print(
            f"  {kind}: {msg}" if msg.startswith(key) else f"  {kind}: {key}: {msg}",
            file=sys.stderr,
        )
    if len(s.errors) > 20:
        print(f"  ... and {len(s.errors) - 20} more", file=sys.stderr)


def _run_callback(args) -> Callback:
    """Progress for a command that runs the pipeline (quiet: messages only, not even those)."""
    return _MessageOnly(quiet=True) if getattr(args, "quiet", False) else _callback(args)


def _run(args, index_path, config: IndexConfig | None, **update_kwargs) -> RunSummary:
    from simdask.cluster.connect import (
        connect,  # dask and distributed: only for the commands that run
    )

    cb = _run_callback(args)
    spec = args.cluster.spec
    idx = Index.open_or_create(index_path, config, getattr(args, "shard_store", None))
    # the lock first: a second update fails before it starts a cluster
    with idx, WriterLock(idx.path, wait=getattr(args, "wait", 0.0)):
        cb.message(f"using {spec.describe()}")
        with connect(spec) as client:
            summary = idx.update(client=client, callback=cb, config=config, **update_kwargs)
            cb.end_stage()
    return summary


_SETTINGS = ("hash_bits", "shards", "threshold", "top_k", "max_df")


def _cmd_update(args) -> int:
    from simdask.engine.run import RunOptions

    given = {k: getattr(args, k) for k in _SETTINGS if getattr(args, k) is not None}
    config = None
    if given:
        try:
            base = Index.open(args.index).config
        except SimdaskError:
            base = IndexConfig()
        config = base.replace(**given)
    summary = _run(
        args,
        args.index,
        config,
        sources=args.sources,
        delete_missing=args.delete_missing,
        rebuild=args.rebuild,
        options=RunOptions(
            batch_docs=args.batch_docs,
            transfer=args.data_transfer,
            worker_cache=args.cluster.spec.kind == "scheduler"
            if args.worker_cache is None
            else args.worker_cache,
            max_file_bytes=args.max_file_size or None,
        ),
    )
    _print_summary(summary)
    return 0


def _cmd_remove(args) -> int:
    with Index.open(args.index) as idx:
        known = idx.catalog.known_documents()
    missing = [k for k in args.keys if k not in known]
    if missing:
        raise DocumentNotFoundError(f"no document with key {missing[0]!r} in the index")
    _print_summary(_run(args, args.index, None, remove=args.keys))
    return 0


def _cmd_text(args) -> int:
    with Index.open(args.index) as idx:
        sys.stdout.write(idx.text(args.key))
    return 0


def _cmd_report(args) -> int:
    with Index.open(args.index) as idx:
        rep = idx.report(args.key, args.other, args.min_chunks)
        if args.html:
            from simdask.evidence.report_html import render_pair_html

            page = render_pair_html(rep, idx.text(args.key), idx.text(args.other))
            Path(args.html).write_text(page, encoding="utf-8")
            print(f"wrote {args.html}", file=sys.stderr)
    if args.format == "json" or not args.html:
        print(json.dumps(rep, ensure_ascii=False))
    return 0


def _cmd_export_html(args) -> int:
    from simdask.evidence.site import export_site

    with Index.open(args.index) as idx:
        n = export_site(idx, args.outdir, args.min, args.max_pairs, callback=_callback(args))
    print(
        f"wrote {args.outdir}/index.html: {n['documents']} documents, {n['pairs']} pair reports"
        + (
            f" ({n['pairs_skipped']} more pairs not written, see --max-pairs)"
            if n["pairs_skipped"]
            else ""
        ),
        file=sys.stderr,
    )
    return 0


def _cmd_errors(args) -> int:
    with Index.open(args.index) as idx:
        last = idx.catalog.last_run()
        errs = idx.catalog.errors_of_run(last["run_id"]) if last else []
    rows = ({"key": k, "kind": kind, "message": m} for k, kind, m in errs)
    write_rows(rows, ("key", "kind", "message"), args.format, sys.stdout)
    return 0


def _cmd_similar(args) -> int:
    with Index.open(args.index) as idx:
        rows = idx.similar(args.key, args.min) if args.key else idx.pairs(args.min)
        write_rows((r.to_dict() for r in rows), PAIR_COLUMNS, args.format, sys.stdout)
    return 0


def _cmd_stats(args) -> int:
    with Index.open(args.index) as idx:
        st = idx.stats()
    if args.format == "json":
        print(json.dumps(st, indent=2))
        return 0
    for k, v in st.items():
        if k == "config":
            for ck, cv in v.items():
                print(f"config.{ck:<17} {cv}")
        else:
            print(f"{k:<24} {v}")
    return 0


def _cmd_demo(args) -> int:
    from simdask.ingest.synth import generate_corpus, write_corpus

    with tempfile.TemporaryDirectory(prefix="simdask-demo-") as tmp:
        base = Path(args.out) if args.out else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        print(f"generating {args.docs} documents of ~{args.words} words ...", file=sys.stderr)
        corpus = generate_corpus(args.docs, mean_words=args.words, seed=1)
        src = write_corpus(corpus, base / "corpus.jsonl", fmt="jsonl")
        summary = _run(args, base / "index", IndexConfig(), sources=[src], rebuild=True)
        _print_summary(summary)
        with Index.open(base / "index") as idx:
            rows = [r.to_dict() for r in idx.pairs()[: args.top]]
        print(f"\nthe {len(rows)} most similar directed pairs:")
        write_rows(rows, PAIR_COLUMNS, "table", sys.stdout)
        kinds = {}
        for r in corpus.reuse:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
        print(f"\nthe generator planted {len(corpus.reuse)} reuse cases: {kinds}")
        if args.out:
            print(f"corpus and index kept in {base}")
    return 0


_COMMANDS = {
    "cluster": cmd_cluster,
    "update": _cmd_update,
    "similar": _cmd_similar,
    "query": lambda args: query_cmd.run(args),
    "compact": compact_cmd.run,
    "compare": lambda args: compare_cmd.run(args, _run_callback(args)),
    "stats": _cmd_stats,
    "remove": _cmd_remove,
    "text": _cmd_text,
    "errors": _cmd_errors,
    "report": _cmd_report,
    "export-html": _cmd_export_html,
    "demo": _cmd_demo,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``simdask`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    if hasattr(args, "cluster_workers"):  # a command with cluster options
        try:
            args.cluster = resolve_cluster(cli_values(args))
        except ConfigError as e:
            print(f"simdask: error: {e}", file=sys.stderr)
            return 2
    try:
        return _COMMANDS[args.command](args)
    except ClusterError as e:
        print(f"simdask: error: {e}", file=sys.stderr)
        return EXIT_CLUSTER
    except SimdaskError as e:
        print(f"simdask: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("simdask: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
