"""Arguments shared by several commands: cluster options, output format, sizes, data placement.

The cluster options are declared from :data:`simdask.cluster.spec.SETTINGS` (one option per
setting, ``dest`` ``cluster_<name>``); :func:`cluster_of` turns them into the
:class:`~simdask.cluster.spec.ResolvedCluster` a command uses (with the environment, the config
file and the defaults).
"""

from __future__ import annotations

import argparse
from typing import Any

from simdask.cli.output import FORMATS
from simdask.cluster.placement import TRANSFER_MODES
from simdask.cluster.spec import SETTINGS, ResolvedCluster, parse_values, resolve_cluster
from simdask.config import IndexConfig
from simdask.errors import ConfigError
from simdask.evidence.pair_view import ViewOptions
from simdask.ingest.sources import parse_size
from simdask.read.total_reads import SORTS

__all__ = [
    "add_cluster_arguments",
    "add_data_placement",
    "add_exact_only",
    "add_format",
    "cli_values",
    "cluster_of",
    "config_of",
    "has_cluster_arguments",
    "size",
]

_OPTION = {s.name: s.option for s in SETTINGS}


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """The cluster options (``--scheduler``, ``--ssh``, ``--workers`` ...) of a command."""
    g = parser.add_argument_group(
        "cluster (settings also come from SIMDASK_* environment variables and the config "
        "file; see `simdask cluster --help`)"
    )
    g.add_argument(
        "--local", action="store_true", help="start a LocalCluster, whatever env/file say"
    )
    for s in SETTINGS:
        if s.name == "kind":
            continue
        g.add_argument(
            s.option,
            dest=f"cluster_{s.name}",
            metavar=s.metavar,
            type=s.cli_type,
            help=f"{s.help} [{s.env}]",
        )


def has_cluster_arguments(args: argparse.Namespace) -> bool:
    """Whether the command parsed into ``args`` takes the cluster options."""
    return hasattr(args, "cluster_workers")


def cli_values(args: argparse.Namespace) -> dict[str, Any]:
    """The cluster settings given on the command line (only those given), validated."""
    given = {}
    for s in SETTINGS:
        value = getattr(args, f"cluster_{s.name}", None)
        if value is not None:
            given[s.name] = value
    out = parse_values(given, _OPTION.__getitem__)
    if getattr(args, "local", False):
        if "scheduler" in out or "ssh_hosts" in out:
            raise ConfigError("--local cannot be combined with --scheduler or --ssh")
        out["kind"] = "local"
    return out


def cluster_of(args: argparse.Namespace) -> ResolvedCluster:
    """The cluster a command runs on: its options, then SIMDASK_*, the config file, defaults."""
    return resolve_cluster(cli_values(args))


def add_format(parser: argparse.ArgumentParser) -> None:
    """``-o/--format table|jsonl|csv`` (default table)."""
    parser.add_argument(
        "-o", "--format", choices=FORMATS, default="table", help="output format (default table)"
    )


def add_total_sorting(parser: argparse.ArgumentParser) -> None:
    """``--sort similarity|aligned|total`` and ``--min-total PCT`` (issue 29)."""
    parser.add_argument(
        "--sort",
        choices=SORTS,
        default="similarity",
        help="rows by similarity (chunks), aligned coverage (percent of the document inside "
        "passages taken from the other) or the document's total (default similarity); "
        "`similar` then prints its directed rows, as in JSONL, in a table too",
    )
    parser.add_argument(
        "--min-total",
        type=float,
        default=None,
        metavar="PCT",
        help="only rows of documents whose total (share of their words found in any other "
        "document) is at least PCT percent",
    )


def add_exact_only(parser: argparse.ArgumentParser) -> None:
    """``--exact-only``: the exact 5-word evidence instead of the aligner's passages."""
    parser.add_argument(
        "--exact-only",
        action="store_true",
        help="show only exact matches (runs of shared 5-word chunks, verbatim text) instead "
        "of the aligned passages (copied, paraphrased or summarised, merged into one passage "
        "each)",
    )


def add_min_match(parser: argparse.ArgumentParser) -> None:
    """``--min-match WORDS``: matches shorter than this are ignored in the view."""
    parser.add_argument(
        "--min-match",
        type=int,
        default=0,
        metavar="WORDS",
        help="ignore matches shorter than WORDS words: they are not shown and not counted in "
        "the percentages of the passages view (the similarity lists, which hold no word "
        "positions, are unchanged; default 0: every match)",
    )


def view_options(args, **kwargs: Any) -> ViewOptions:
    """The :class:`~simdask.evidence.pair_view.ViewOptions` of ``--exact-only`` and
    ``--min-match`` (``kwargs``: further options)."""
    return ViewOptions(exact_only=args.exact_only, min_words=args.min_match, **kwargs)


def size(text: str) -> int:
    """An argparse ``type``: a size such as ``50MB`` or ``2GiB``, in bytes."""
    try:
        return parse_size(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def add_data_placement(parser: argparse.ArgumentParser) -> None:
    """``--data-transfer`` and ``--worker-cache`` of a command that runs on a cluster."""
    g = parser.add_argument_group("data placement")
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


def config_of(args: argparse.Namespace) -> IndexConfig:
    """The settings of the index a comparison (``simdask compare``, with or without
    ``--lsh``) builds for its groups, its exclusion settings included."""
    return IndexConfig(
        hash_bits=args.hash_bits,
        shards=args.shards,
        max_df=getattr(args, "max_df", None),
        exclude_quotes=args.exclude_quotes,
        exclude_bibliography=args.exclude_bibliography,
    )
