"""Old Word documents (.doc, an OLE compound file), through the Debian tool ``antiword``
where it is installed (``apt install antiword``): it prints the text of Word 2, 6, 7, 97,
2000, 2002 and 2003 files as UTF-8. Without it, or for an OLE file that is not a Word
document (an .xls), the file is reported as ``unsupported`` with what to do. ``antiword``
reads a file, so the bytes go to a temporary file first; it runs with a time limit, started
from the bounded helper process (:mod:`simdask.ingest.extract.isolated`), whose memory and
CPU limits it inherits."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from simdask.errors import ExtractionError
from simdask.ingest.extract.extract_limits import ExtractLimits
from simdask.ingest.extract.isolated import extract_isolated

__all__ = ["ANTIWORD", "TIMEOUT_S", "antiword_path", "extract_doc", "read_doc"]

#: the program run
ANTIWORD = "antiword"
#: seconds one document may take
TIMEOUT_S = 60


def antiword_path() -> str | None:
    """Where ``antiword`` is installed (None: not on the PATH)."""
    return shutil.which(ANTIWORD)


def _missing(name: str) -> ExtractionError:
    return ExtractionError(
        name,
        "unsupported",
        "expected the Debian tool antiword to read an old Word (.doc) file, found it is not "
        "installed (apt install antiword), or convert the file to DOCX or PDF",
    )


def extract_doc(data: bytes, name: str = "<doc>", limits: ExtractLimits | None = None) -> str:
    """The text of an old Word document by ``antiword``, run from the bounded helper process
    (:func:`read_doc` there). Raises :class:`~simdask.errors.ExtractionError` of kind
    ``unsupported`` (antiword not installed, or the file is not a Word document it reads:
    convert it to DOCX or PDF), ``too_large`` or ``too_complex`` (over the memory or CPU
    limits of ``limits``)."""
    if antiword_path() is None:
        raise _missing(name)
    return extract_isolated("doc", data, name, limits or ExtractLimits())


def read_doc(data: bytes, name: str = "<doc>", limits: ExtractLimits | None = None) -> str:
    """The text of an old Word document by ``antiword`` run from this process (``limits``:
    unused here, the helper process's resource limits bound antiword). Raises as
    :func:`extract_doc`."""
    program = antiword_path()
    if program is None:
        raise _missing(name)
    fd, path = tempfile.mkstemp(suffix=".doc")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        proc = subprocess.run(
            [program, "-m", "UTF-8.txt", "-w", "0", path],
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        raise ExtractionError(
            name,
            "corrupt",
            f"expected antiword to read the file within {TIMEOUT_S} s, found it did not",
        ) from e
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        why = proc.stderr.decode("utf-8", "replace").replace(path, name).strip().splitlines()[:1]
        raise ExtractionError(
            name,
            "unsupported",
            "expected an old Word document that antiword reads, found one it does not"
            f"{': ' + why[0] if why else ''}; convert it to DOCX or PDF",
        )
    return proc.stdout.decode("utf-8", "replace")
