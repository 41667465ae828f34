"""Fast, direct tests of guards that only the system tier caught (issue 34 item 4), on a small
non-empty index built in this process: ``check`` reports a checksum mismatch of a shard file
(same size, one byte flipped), and garbage collection keeps the segments of the previous
committed state one run longer (readers opened before the commit still use them), then
deletes them; a query through a reader opened before a compaction still answers from them."""

from __future__ import annotations

import json

import pytest

from simdask import Index, IndexConfig
from simdask.read.segment_reads import segment_set
from simdask.storage.segments import stored_segments
from simdask.storage.verify import check_index
from tests.helpers.corpus import make_docs

pytestmark = pytest.mark.integration

DOCS = make_docs(16, seed=21)


def _build(tmp_path, docs=DOCS):
    src = tmp_path / "docs.jsonl"
    _write(src, docs)
    idx = Index.create(tmp_path / "idx", IndexConfig(hash_bits=28, shards=3, top_k=5))
    idx.update([src])
    return idx, src


def test_check_reports_a_flipped_byte_in_a_shard_file(tmp_path):
    idx, _ = _build(tmp_path)
    idx.close()
    assert check_index(tmp_path / "idx").ok
    target = max(
        (
            p
            for p in (tmp_path / "idx" / "shards").rglob("c/0")
            if p.parent.parent.name == "doc_ids"
        ),
        key=lambda p: p.stat().st_size,
    )
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    rep = check_index(tmp_path / "idx")
    name = target.relative_to(tmp_path / "idx").as_posix()
    assert not rep.ok
    assert ("checksum", name) in {(d.kind, d.name) for d in rep.damage}, rep.damage


def _on_disk(idx) -> set[tuple[int, int]]:
    return {(s, g) for g, s in stored_segments(idx.store)}


def _write(src, docs) -> None:
    src.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in docs.items()))


def test_gc_keeps_the_previous_generation_one_run_longer(tmp_path):
    idx, src = _build(tmp_path)
    keys = sorted(DOCS)
    changed = {**DOCS, keys[1]: DOCS[keys[1]] + " " + DOCS[keys[2]]}
    _write(src, changed)
    idx.update([src])  # a delta run: the first segments and the new ones are all current
    query = DOCS[keys[3]]
    reader = Index.open(tmp_path / "idx")
    before = [(m.key, m.similarity) for m in reader.query(query, 1.0)]
    assert before, "the query matches something"
    first = segment_set(idx.catalog.segments())
    assert len(first) > 3 and first <= _on_disk(idx)

    idx.compact(force=True)  # every range rewritten: none of those segments is current
    second = segment_set(idx.catalog.segments())
    assert first.isdisjoint(second)
    assert first <= _on_disk(idx), "GC deleted segments a reader opened before may still use"
    assert [(m.key, m.similarity) for m in reader.query(query, 1.0)] == before

    _write(src, {**changed, "extra": DOCS[keys[0]] + " and some more words at the end"})
    idx.update([src])
    idx.compact(force=True)
    on_disk = _on_disk(idx)
    assert first.isdisjoint(on_disk), "two commits later the first segments are garbage"
    assert segment_set(idx.catalog.segments()) <= on_disk
    reader.close()
    idx.close()
