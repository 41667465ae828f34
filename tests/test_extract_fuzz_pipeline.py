"""Property test through the real pipeline (issue 12): folders of damaged files of every
supported format, decompression bombs, broken JSONL lines and file names that are not UTF-8,
indexed by Index.update on one worker process with a memory limit. Every run commits, every
input is indexed or reported with a known kind, the good document beside them is indexed,
and the worker never dies: the same worker process (address and pid) serves every example of
the module. (Count workers with scheduler_workers, not Client.scheduler_info(): its cache can
show none while the worker is there; tests/test_scheduler_workers.py, docs/testing.md.)"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from distributed import Client, LocalCluster
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig
from simdask.cluster.workers import scheduler_workers
from simdask.ingest.extract import KINDS
from simdask.kernels.words import words
from simdask.storage.failures import WARNING_KINDS
from tests.helpers.documents import bomb_package, docx_bytes, html_bytes, odt_bytes, prose, text_pdf

pytestmark = pytest.mark.integration

LIMIT = 1_000_000  # --max-file-size of the runs: packages may inflate to 2 MB
GOOD = prose(200, seed=31)
#: the damaged documents' originals and the bombs, made by the ``inputs`` fixture when the test
#: runs, not at import (~1 CPU s of every pytest process that collects this module)
_SEED_MAKERS = {
    ".pdf": lambda: text_pdf(prose(120, seed=32)),
    ".docx": lambda: docx_bytes([prose(80, seed=33), prose(40, seed=34)], header="head words here"),
    ".odt": lambda: odt_bytes([prose(80, seed=35)], note="a note of five words"),
    ".html": lambda: html_bytes([prose(60, seed=36)]),
    ".htm": lambda: "<p>caf\u00e9 words for the sake of words</p>".encode("cp1250"),
    ".txt": lambda: prose(90, seed=37).encode("utf-16"),
    ".md": lambda: prose(90, seed=38).encode(),
}
_BOMB_MAKERS = {  # ~1000x deflate ratio, far over 2 MB uncompressed
    "bomb1.docx": lambda: bomb_package("docx", 30_000_000),
    "bomb2.odt": lambda: bomb_package("odt", 30_000_000, split=2),
    "bomb3.docx": lambda: bomb_package("docx", 12_000_000, split=4),
}


@pytest.fixture(scope="module")
def inputs() -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The seed documents by suffix and the bombs by file name (made once per module)."""
    seeds = {suffix: make() for suffix, make in _SEED_MAKERS.items()}
    return seeds, {name: make() for name, make in _BOMB_MAKERS.items()}


JSONL_LINES = [
    json.dumps({"id": "j-good", "text": prose(60, seed=39)}),
    json.dumps({"id": 5, "text": prose(30, seed=40)}),
    json.dumps({"id": None, "text": "x"}),
    json.dumps({"id": "\ud800", "text": "lone surrogate id"}),
    json.dumps({"id": "j-s", "text": "\udfff text"}),
    json.dumps({"text": "no id"}),
    "[1, 2]",
    "{broken",
    "",
    "   ",
    "\x00\x01",
]


@pytest.fixture(scope="module")
def small_client():
    """One worker process limited to 700 MiB (each bomb inflates to 12-30 MB, far more than
    the limit of 2 MB allows, but a tree of it would be several hundred MB)."""
    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=True,
        memory_limit="700MiB",
        dashboard_address=":0",
    )
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def first_workers(small_client):
    """Address -> pid of the worker process(es) before the first example."""
    return small_client.run(os.getpid)


def _damage(data: bytes, cut: float, flips: list[tuple[float, int]]) -> bytes:
    out = bytearray(data)
    for where, value in flips:
        out[int(where * (len(out) - 1))] = value
    return bytes(out[: max(1, int(cut * len(out)))])


_DAMAGE = st.tuples(
    st.floats(0.05, 1.0), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=6)
)
_NAME = st.binary(min_size=1, max_size=8).filter(
    lambda b: (
        b"/" not in b
        and b"\0" not in b
        and not b.startswith((b".", b"~$"))
        and b not in (b"good", b"damaged")
    )
)


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    damage=st.fixed_dictionaries({suffix: _DAMAGE for suffix in _SEED_MAKERS}),
    bombs=st.lists(st.sampled_from(sorted(_BOMB_MAKERS)), min_size=1, max_size=3, unique=True),
    lines=st.lists(st.sampled_from(JSONL_LINES), min_size=1, max_size=8),
    name=_NAME,
)
def test_bad_inputs_of_every_format_never_stop_the_run(
    small_client, first_workers, inputs, damage, bombs, lines, name
):
    first = first_workers
    seeds, made_bombs = inputs
    assert set(scheduler_workers(small_client)) == set(first)  # none died since the first
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        files = {f"damaged{sfx}": _damage(seeds[sfx], *damage[sfx]) for sfx in seeds}
        files.update({b: made_bombs[b] for b in bombs})
        files["good.txt"] = GOOD.encode()
        for fname, data in files.items():
            (src / fname).write_bytes(data)
        with open(os.fsencode(src) + b"/" + name + b".txt", "wb") as f:
            f.write(GOOD.encode())  # the same text under a name that may not be UTF-8
        jsonl = Path(tmp) / "lines.jsonl"
        jsonl.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        with Index.create(Path(tmp) / "idx", IndexConfig(shards=2)) as idx:
            run = idx.update([src, jsonl], client=small_client, max_file_bytes=LIMIT)
            keys = {d.key for d in idx.catalog.documents()}
            errors = {k: kind for k, kind, _ in run.errors}
            assert idx.catalog.last_run()["run_id"] == run.run_id  # committed
            assert words(idx.text("src/good.txt")) == words(GOOD)
            for b in bombs:
                assert errors[f"src/{b}"] == "bomb"
            assert set(errors.values()) <= set(KINDS)
            for fname in files:  # each file: indexed, or reported (too_short, warnings: both)
                key = f"src/{fname}"
                both = errors.get(key) == "too_short" or errors.get(key) in WARNING_KINDS
                assert (key in keys) != (key in errors) or both
            for key in keys:
                key.encode("utf-8")
            n_items = len(files) + 1 + sum(1 for ln in lines if ln.strip())
            too_short = sum(1 for _, kind, _ in run.errors if kind == "too_short")
            assert run.added + run.failed == n_items
            assert len(keys) == run.added and too_short == run.too_short
    assert set(scheduler_workers(small_client)) == set(first)  # no worker died
    assert small_client.run(os.getpid) == first  # nor was restarted under the same address
