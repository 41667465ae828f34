"""Where the data of a run lives: on a filesystem the workers share, or travelling through Dask.

* ``shared``: the workers read the documents and write bucket files, shards and text packs at
  the same paths the client uses (one machine, or an NFS/shared disk mounted at the same path
  on every host). Least data moves through Dask.
* ``dask``: the workers touch no file of the index or the documents. The client reads each
  document's bytes and scatters them; chunk tasks keep their bucket pairs in worker memory for
  the merge tasks; the client receives the merged shards and text packs and writes them. Old
  shards are sent from the client to the worker merging them, unless that worker still holds
  them in its shard cache (:mod:`simdask.cluster.worker_cache`).
* ``auto`` (default): ``shared`` when every worker can read a probe file the client wrote into
  the index's work directory, write one back, and see the run's documents at the same paths
  with the same sizes; ``dask`` otherwise.
"""

from __future__ import annotations

import os
import posixpath
import uuid
from pathlib import Path
from typing import Any

from simdask.cluster.workers import scheduler_workers
from simdask.errors import ConfigError

__all__ = [
    "SMALL_RUN_ITEMS",
    "TRANSFER_MODES",
    "choose_transfer",
    "probe_workers",
    "runs_in_process",
]

#: Accepted values of ``RunOptions.transfer`` / ``--data-transfer``.
TRANSFER_MODES = ("auto", "shared", "dask")


def _probe(
    token_path: str,
    token: str,
    reply_path: str,
    files: list[tuple[str, int]],
    store_token: str | None = None,
) -> str:
    """Run on each worker: '' when it sees the client's files (and the shard store, when that
    is a URL: ``store_token`` is the URL of a token file there), else the reason it does not."""
    if store_token is not None:
        import fsspec  # optional: only a URL needs it

        try:
            with fsspec.open(store_token, "rb") as f:
                if f.read().decode() != token:
                    return f"{store_token} holds other content than the client wrote"
        except Exception as e:  # any fsspec backend error means: cannot use the store
            return f"cannot read the shard store at {store_token}: {type(e).__name__}: {e}"
    try:
        with open(token_path, encoding="utf-8") as f:
            if f.read() != token:
                return f"{token_path} holds other content than the client wrote"
    except OSError as e:
        return f"cannot read {token_path}: {e.strerror or e}"
    try:
        reply = Path(reply_path)
        reply.parent.mkdir(parents=True, exist_ok=True)
        tmp = reply.with_name(f".{reply.name}.{uuid.uuid4().hex[:8]}")
        tmp.write_text(token, encoding="utf-8")
        os.replace(tmp, reply)
    except OSError as e:
        return f"cannot write {reply_path}: {e.strerror or e}"
    for path, size in files:
        try:
            found = os.path.getsize(path)
        except OSError as e:
            return f"cannot see document {path}: {e.strerror or e}"
        if found != size:
            return f"document {path} has {found} bytes on the worker, {size} on the client"
    return ""


def probe_workers(
    client, work_dir: Path, documents: list[str], store_url: str | None = None
) -> dict[str, str]:
    """Ask every worker whether it shares the client's filesystem for ``work_dir`` and the
    ``documents`` (paths; a few are sampled), and reaches the shard store ``store_url`` (an
    fsspec URL; None: the store is in ``work_dir``'s index). Returns ``{worker address:
    reason}``, with an empty reason for workers that do."""
    work_dir.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex
    token_path = work_dir / f"probe-{token[:12]}.txt"
    token_path.write_text(token, encoding="utf-8")
    store_token = None
    if store_url is not None:
        import fsspec  # optional: only a URL needs it

        store_token = f"{store_url.rstrip('/')}/probe-{token[:12]}.txt"
        fs, path = fsspec.core.url_to_fs(store_token)
        fs.makedirs(posixpath.dirname(path), exist_ok=True)
        fs.pipe_file(path, token.encode())
    sample = sorted(set(documents))
    sample = sample[:: max(1, len(sample) // 8)][:8] + sample[-1:]
    files = [(p, os.path.getsize(p)) for p in dict.fromkeys(sample) if os.path.exists(p)]
    workers = list(scheduler_workers(client))  # not scheduler_info(): can show none
    reasons: dict[str, str] = {}
    try:
        for addr in workers:
            reply = work_dir / f"probe-{token[:12]}-{uuid.uuid4().hex[:8]}.reply"
            [reason] = client.run(
                _probe, str(token_path), token, str(reply), files, store_token, workers=[addr]
            ).values()
            if not reason and not (reply.exists() and reply.read_text() == token):
                reason = f"wrote {reply} but the client does not see it"
            reasons[addr] = reason
            reply.unlink(missing_ok=True)
    finally:
        token_path.unlink(missing_ok=True)
        if store_token is not None:
            fs.rm(path)
    return reasons


def choose_transfer(
    mode: str, client, work_dir: Path, documents: list[str], store_url: str | None = None
) -> tuple[str, str]:
    """Resolve ``mode`` (one of :data:`TRANSFER_MODES`) to ``shared`` or ``dask``; returns the
    mode and a one-line reason. ``shared`` asked for but not possible raises ConfigError."""
    if mode not in TRANSFER_MODES:
        raise ConfigError(f"data transfer must be one of {', '.join(TRANSFER_MODES)}; got {mode!r}")
    if mode == "dask":
        return "dask", "asked for: data travels through Dask"
    reasons = probe_workers(client, work_dir, documents, store_url)
    bad = {w: r for w, r in reasons.items() if r}
    if not bad:
        return "shared", f"all {len(reasons)} workers share the client's filesystem"
    worker, reason = next(iter(bad.items()))
    if mode == "shared":
        raise ConfigError(
            f"--data-transfer shared needs workers that see the index and documents at the "
            f"client's paths; worker {worker} does not: {reason} "
            "(use --data-transfer dask or auto)"
        )
    return "dask", f"worker {worker} does not share the client's filesystem: {reason}"


#: a run listing at most this many documents on a default local cluster gets in-process
#: workers (threads): starting worker processes would cost more than the run. Threads share
#: one interpreter, so CPU-bound Python (the aligner of the commit's totals, the similarity
#: stage's pair work on a large index) runs on one core: +100 documents to a 100k index took
#: 4.2 s with threads and 9.6-12 s with two worker processes, but +1,000 to a 100k index of
#: phrase-rich text 701 s with threads and 389 s with processes (docs/benchmarks.md,
#: "In-process threads or worker processes")
SMALL_RUN_ITEMS = 300


def runs_in_process(spec: Any, n_items: int) -> bool:
    """Whether a run of ``n_items`` documents gets in-process workers: a small run on a local
    cluster whose worker processes and memory limit were not asked for."""
    default = spec.workers is None and spec.memory_limit == "auto"
    return spec.kind == "local" and default and n_items <= SMALL_RUN_ITEMS
