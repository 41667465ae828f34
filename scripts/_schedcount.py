"""A Dask scheduler that counts the bytes of the messages it reads and writes over TCP.

Used by bench_cluster.py to measure the bytes that pass through the scheduler: the process is
started as ``python -c "import _schedcount; _schedcount.main()" ARGS`` (ARGS as for
``dask scheduler``), and ``client.run_on_scheduler(_schedcount.total)`` reads the counter.
Counts the frames of every message (``distributed.comm.tcp``); the 8-byte length prefixes are
left out.
"""

from __future__ import annotations

import distributed.comm.tcp as tcp

COUNT = {"read": 0, "written": 0}
_read_frames = tcp.read_bytes_rw
_write_msg = tcp.TCP.write


async def _counted_read(stream, n: int):
    COUNT["read"] += n
    return await _read_frames(stream, n)


async def _counted_write(self, msg, serializers=None, on_error="message"):
    n = await _write_msg(self, msg, serializers, on_error)
    COUNT["written"] += n
    return n


tcp.read_bytes_rw = _counted_read
tcp.TCP.write = _counted_write


def total() -> int:
    """Bytes read plus written by this process's TCP comms so far."""
    return COUNT["read"] + COUNT["written"]


def main() -> None:
    """Run ``dask scheduler`` with the counters installed."""
    from distributed.cli.dask_scheduler import main as scheduler_main

    scheduler_main()
