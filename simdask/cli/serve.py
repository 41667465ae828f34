"""``simdask serve INDEX``: the web interface and JSON API of an index (extra ``web``).

Binds to 127.0.0.1 by default; another address needs ``--token`` or ``--password-file``.
Read-only unless ``--allow-upload-to-index``. The pages and the API are in
:mod:`simdask.web`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from simdask.cli._args import add_cluster_arguments, size
from simdask.cli._common import EXIT_OK, EXIT_USAGE
from simdask.errors import ConfigError
from simdask.ingest.sources import DEFAULT_MAX_FILE_BYTES
from simdask.web.auth import check_bind, read_secret

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Declare ``serve``."""
    p = subparsers.add_parser(
        "serve",
        help="web interface and JSON API: check documents, browse the index (pip install "
        "simdask[web])",
        description="Serve a web page to check documents against the index (upload or "
        "paste; matches both ways; side-by-side reports), browse it, and a JSON API under "
        "/api/. Binds to 127.0.0.1 unless --host is given; any other address needs --token "
        "or --password-file. Read-only unless --allow-upload-to-index.",
    )
    p.add_argument("index", metavar="INDEX")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    secret = p.add_mutually_exclusive_group()
    secret.add_argument("--token", metavar="T", help="the secret users must give (8+ chars)")
    secret.add_argument(
        "--password-file", metavar="F", help="read the secret from the first line of F"
    )
    p.add_argument(
        "--allow-upload-to-index",
        action="store_true",
        help="let users add uploaded documents to the index (incremental runs on the cluster)",
    )
    p.add_argument(
        "--max-file-size",
        type=size,
        default=DEFAULT_MAX_FILE_BYTES,
        metavar="SIZE",
        help="largest accepted upload per file (default 100MB)",
    )
    p.add_argument("--max-files", type=int, default=50, help="most files per upload (50)")
    p.add_argument(
        "--timeout",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="close a connection whose request headers take longer, or whose body stops "
        "arriving for longer (default 15)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=100,
        metavar="N",
        help="open connections served at once; beyond, requests get 503 (default 100)",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=10_000,
        metavar="N",
        help="logged-in sessions kept; beyond, the least recently seen is logged out "
        "(default 10000)",
    )
    p.add_argument(
        "--no-preload",
        action="store_true",
        help="do not pull the shards into the page cache at start (slower first queries)",
    )
    add_cluster_arguments(p)


def run(args) -> int:
    """Serve until interrupted."""
    try:
        import uvicorn  # optional (web extra)

        from simdask.web.app import Settings, create_app  # optional (web extra)
        from simdask.web.protocol import QuietServer, protocol_with_header_timeout  # same
    except ImportError as e:
        print(
            f"simdask: error: `serve` needs the web extra ({e.name} is missing): "
            "pip install 'simdask[web]'",
            file=sys.stderr,
        )
        return EXIT_USAGE

    try:
        secret = read_secret(args.token, args.password_file)
        check_bind(args.host, secret)
    except ConfigError as e:
        print(f"simdask: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    limits = (args.max_file_size, args.max_files, args.timeout, args.max_connections)
    if min(limits) <= 0 or args.max_sessions <= 0:
        print(
            "simdask: error: --max-file-size, --max-files, --timeout, --max-connections and "
            "--max-sessions must be positive",
            file=sys.stderr,
        )
        return EXIT_USAGE
    settings = Settings(
        index=Path(args.index),
        host=args.host,
        secret=secret,
        max_file_bytes=args.max_file_size,
        max_files=args.max_files,
        allow_upload=args.allow_upload_to_index,
        cluster=args.cluster.spec,
        preload=not args.no_preload,
        timeout=args.timeout,
        max_sessions=args.max_sessions,
    )
    app = create_app(settings)
    mode = "read-write (uploads may be indexed)" if settings.allow_upload else "read-only"
    print(
        f"simdask: serving {args.index} ({mode}) at http://{_url_host(args.host)}:{args.port}/"
        + (" — token required" if secret else ""),
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
        http=protocol_with_header_timeout(args.timeout),
        limit_concurrency=args.max_connections,
    )
    QuietServer(config).run()  # SIGINT and SIGTERM: graceful shutdown, exit 0
    return EXIT_OK


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
