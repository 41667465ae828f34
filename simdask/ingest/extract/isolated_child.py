"""The child side of :mod:`simdask.ingest.extract.isolated`: ``python -m
simdask.ingest.extract.isolated_child`` answers requests on stdin, one document at a time,
each under the address-space and CPU limits of its
:class:`~simdask.ingest.extract.extract_limits.ExtractLimits` (``RLIMIT_AS``: ``pdf_memory_bytes``
plus the document; ``RLIMIT_CPU``: 1.25 times ``cpu_seconds`` plus a second; programs it
runs, as antiword, inherit both)."""

from __future__ import annotations

import json
import os
import resource
import sys
import time

from simdask.errors import ExtractionError
from simdask.ingest.extract.doc import read_doc
from simdask.ingest.extract.extract_limits import ExtractLimits
from simdask.ingest.extract.pdf_text import read_pdf
from simdask.ingest.extract.rtf_text import read_rtf

__all__ = ["READERS", "serve"]

#: The readers run in the child, by format.
READERS = {"pdf": read_pdf, "rtf": read_rtf, "doc": read_doc}


def _lower(which: int, soft: int) -> None:
    """Set the soft limit ``which`` to ``soft``, within the hard limit this process has."""
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def _answer(out, fmt: str, data: bytes, name: str, limits: ExtractLimits) -> None:
    """Read one document under the limits and write the answer to ``out``."""
    cpu = time.process_time()
    _lower(resource.RLIMIT_CPU, int(cpu + 1.25 * limits.cpu_seconds) + 1)
    _lower(resource.RLIMIT_AS, limits.pdf_memory_bytes + len(data))
    try:
        if fmt == "pdf":
            text = read_pdf(data, name, limits, cpu_start=cpu)
        else:
            text = READERS[fmt](data, name, limits)
    except ExtractionError as e:
        head = {"ok": False, "kind": e.kind, "message": e.message}
        out.write(json.dumps(head).encode() + b"\n")
        return
    except MemoryError:
        raise SystemExit(3) from None  # the parent reports the memory limit
    except (RecursionError, ValueError, TypeError, LookupError, OSError, RuntimeError) as e:
        head = {
            "ok": False,
            "kind": "corrupt",
            "message": f"expected a readable {fmt.upper()} document, found the reader failed "
            f"on it ({type(e).__name__}: {e})",
        }
        out.write(json.dumps(head).encode() + b"\n")
        return
    body = text.encode("utf-8", "surrogatepass")
    out.write(json.dumps({"ok": True, "size": len(body)}).encode() + b"\n")
    out.write(body)


def serve() -> None:
    """The child's loop: answer requests from stdin until it closes. The answers go to the
    original stdout; anything a library prints there goes to stderr instead."""
    inp = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    while line := inp.readline():
        head = json.loads(line)
        data = inp.read(head["size"])
        _answer(out, head["format"], data, head["name"], ExtractLimits.from_dict(head["limits"]))
        out.flush()


if __name__ == "__main__":
    serve()
