"""The align engine on a LocalCluster of worker processes: the same results as the aligner
called pair by pair, in the order of the pairs, deterministic task names, progress counted
in pairs; the pairs file's rules."""

from __future__ import annotations

import pytest
from distributed import get_task_stream

from simdask.alignment import align
from simdask.engine.align_pairs import align_batch, align_pairs, read_pairs_file
from simdask.errors import ConfigError, ExtractionError
from simdask.progress import RecordingCallback
from tests.helpers.paraphrase import PARAGRAPHS, paraphrased_pair, verbatim_pair

pytestmark = pytest.mark.integration


@pytest.fixture()
def files(tmp_path):
    essay, source, _, _ = verbatim_pair(3)
    para = paraphrased_pair()
    texts = {
        "essay.txt": essay,
        "source.txt": source,
        "para.txt": para.essay,
        "para-src.txt": para.source,
        "other.txt": PARAGRAPHS[0],
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    names = list(texts)
    lines = [f"{a}\t{b}" for a in names for b in names if a != b]
    (tmp_path / "pairs.tsv").write_text("\n".join(lines), encoding="utf-8")
    return tmp_path, texts


def test_results_equal_the_aligner_pair_by_pair_with_stable_task_names(client, files):
    root, texts = files
    pairs = read_pairs_file(root / "pairs.tsv")
    assert len(pairs) == 20 and pairs[0].a_path == str(root / "essay.txt")
    cb = RecordingCallback()
    with get_task_stream(client) as ts:
        got = list(align_pairs(pairs, client=client, batch_pairs=3, callback=cb))
    keys = sorted({t["key"] for t in ts.data})
    expected = [
        [p.to_dict() for p in align(texts[pr.a], texts[pr.b])] for pr in pairs
    ]  # brute force: one pair at a time, in this process
    assert [(r["a"], r["b"]) for r in got] == [(pr.a, pr.b) for pr in pairs]
    # scores as computed in another process: equal to the last bits of a float sum
    assert [r["passages"] for r in got] == [
        [{**q, "score": pytest.approx(q["score"], rel=1e-12)} for q in ps] for ps in expected
    ]
    assert any(expected) and not all(expected)
    assert len(keys) == 7 and all(k.startswith("simdask-align-") for k in keys)
    assert keys[0].endswith("-b000000") and keys[-1].endswith("-b000006")
    assert cb.events[0] == ("stage", ("align", 20))
    assert sum(n for e, n in cb.events if e == "advance") == 20
    with get_task_stream(client) as ts:
        list(align_pairs(pairs, client=client, batch_pairs=3))
    assert sorted({t["key"] for t in ts.data}) == keys  # the same pairs: the same names
    with get_task_stream(client) as ts:
        list(align_pairs(pairs[:-1], client=client, batch_pairs=3))
    assert not {t["key"] for t in ts.data} & set(keys)  # other pairs: other names


def test_a_file_read_once_per_batch_and_errors_per_pair(files, monkeypatch):
    root, _ = files
    import simdask.engine.align_pairs as engine

    reads = []
    real = engine.read_pair_text
    monkeypatch.setattr(engine, "read_pair_text", lambda p: reads.append(p) or real(p))
    (root / "pairs.tsv").write_text(
        "essay.txt\tsource.txt\nnope.txt\tsource.txt\nessay.txt\tnope.txt\n", encoding="utf-8"
    )
    out = align_batch(read_pairs_file(root / "pairs.tsv"))
    assert sorted(reads) == sorted(str(root / n) for n in ("essay.txt", "source.txt", "nope.txt"))
    assert out[0]["passages"] and out[1]["error"] == out[2]["error"]
    assert out[1]["error"].startswith("nope.txt: missing: expected a document file at ")


@pytest.mark.parametrize(
    ("content", "found"),
    [("a.txt b.txt\n", "1 field"), ("a.txt\tb.txt\tc.txt\n", "3 fields"), ("a.txt\t\n", "2")],
)
def test_a_bad_line_of_the_pairs_file_is_named(tmp_path, content, found):
    f = tmp_path / "p.tsv"
    f.write_text("x.txt\ty.txt\n\n" + content, encoding="utf-8")
    with pytest.raises(ConfigError, match=f"p.tsv line 3: expected two file paths .*{found}"):
        read_pairs_file(f)
    with pytest.raises(ConfigError, match="expected a readable UTF-8 pairs file"):
        read_pairs_file(tmp_path / "none.tsv")


def test_plain_utf8_with_a_stray_nul_is_text_binary_data_is_not(tmp_path):
    from simdask.engine.align_pairs import read_pair_text

    text = "Ünïcödé text\r\nwith a stray NUL byte, as a few PAN files have. " * 20 + "\0."
    (tmp_path / "nul.txt").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert read_pair_text(str(tmp_path / "nul.txt")) == text  # unchanged, BOM not a char
    for data in (b"\x00\x01\x02\x03" * 300, b"\x00\x00\xff\x81" * 300):  # valid UTF-8 or not
        (tmp_path / "bin.txt").write_bytes(data)
        with pytest.raises(ExtractionError) as e:
            read_pair_text(str(tmp_path / "bin.txt"))
        assert e.value.kind == "binary"
