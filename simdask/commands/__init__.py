"""Implementations of the longer ``simdask`` subcommands, one module each.

Each module has ``add_parser(sub, cluster_args)`` (declares the subcommand on the
``argparse`` subparsers ``sub``; ``cluster_args`` adds the shared cluster options) and
``run(args, callback) -> int`` (the exit status). Like :mod:`simdask.cli`, they only parse
arguments and format output; the work is in the Python API.
"""
