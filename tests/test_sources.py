"""Listing sources (issue 12): keys unique across sources and independent of the working
directory, sources by resolved path, unreadable folders as items, file names that are not
UTF-8, JSONL line numbers and ids, the migration of indexes keyed the old way."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdask import Index, IndexConfig
from simdask.errors import ExtractionError, IndexFormatError
from simdask.ingest import listing
from simdask.ingest.listing import folder_key, jsonl_lines, safe_text, source_id, walk_folder
from simdask.ingest.sources import (
    fetch_item,
    fetch_items,
    list_items,
    read_item,
    read_queries,
)
from simdask.kernels.keys import unsafe_text
from simdask.storage.key_migration import KEY_SCHEME, migrate_keys

pytestmark = pytest.mark.unit

TEXT = "one two three four five six seven eight nine ten eleven twelve"


def _write(root: Path, files: dict[str, bytes | str]) -> Path:
    for name, data in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
    return root


def test_folder_documents_are_keyed_by_folder_name_and_path(tmp_path, monkeypatch):
    _write(tmp_path / "y2025", {"smith.txt": TEXT, "sub/jones.md": TEXT})
    _write(tmp_path / "y2026", {"smith.txt": TEXT})
    _write(tmp_path, {"loose.txt": TEXT})
    keys = [i.key for i in list_items([tmp_path / "y2025", tmp_path / "y2026"])]
    assert keys == ["y2025/smith.txt", "y2025/sub/jones.md", "y2026/smith.txt"]
    assert [i.key for i in list_items([tmp_path / "loose.txt"])] == ["loose.txt"]
    # the same keys and source whatever the working directory and spelling
    for cwd, spelling in [
        (tmp_path, "y2025"),
        (tmp_path, "./y2025/"),
        (tmp_path / "y2025", "."),
        (tmp_path / "y2025" / "sub", ".."),
        (Path("/"), str(tmp_path / "y2025")),
    ]:
        monkeypatch.chdir(cwd)
        items = list_items([spelling])
        assert [i.key for i in items] == ["y2025/smith.txt", "y2025/sub/jones.md"]
        assert {i.source for i in items} == {str((tmp_path / "y2025").resolve())}
        assert source_id(spelling) == str((tmp_path / "y2025").resolve())


def test_folder_key_of_a_symlink_is_the_name_given(tmp_path):
    _write(tmp_path / "data-2025", {"a.txt": TEXT})
    (tmp_path / "essays").symlink_to(tmp_path / "data-2025")
    [item] = list_items([tmp_path / "essays"])
    assert item.key == "essays/a.txt" and item.source == str((tmp_path / "data-2025").resolve())
    assert folder_key("/") == ""


def test_unreadable_folder_is_an_item_that_fails_as_unreadable(tmp_path, monkeypatch):
    _write(tmp_path / "essays", {"a.txt": TEXT, "sub/b.txt": TEXT, "sub/deep/c.txt": TEXT})
    real = os.scandir
    blocked = str(tmp_path / "essays" / "sub")

    def scandir(path="."):
        if not isinstance(path, int) and os.fspath(path) == blocked:
            raise PermissionError(13, "Permission denied", blocked)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    items = list_items([tmp_path / "essays"])
    assert [(i.key, bool(i.error)) for i in items] == [
        ("essays/a.txt", False),
        ("essays/sub/", True),
    ]
    with pytest.raises(ExtractionError) as info:
        fetch_item(items[1])
    e = info.value
    assert (e.key, e.kind) == ("essays/sub/", "unreadable")
    assert f"cannot list the folder {blocked}" in e.message and "Permission denied" in e.message
    # the folder given itself
    monkeypatch.setattr(
        os, "scandir", lambda p=".": (_ for _ in ()).throw(PermissionError(13, "denied", p))
    )
    files, failed = walk_folder(tmp_path / "essays", {".txt"})
    assert files == [] and failed == [("", "denied")]
    [item] = list_items([tmp_path / "essays"])
    assert item.key == "essays/" and item.error


def test_file_names_that_are_not_utf8_get_escaped_keys(tmp_path):
    folder = tmp_path / "essays"
    folder.mkdir()
    raw = os.fsencode(folder) + b"/caf\xe9 \xff.txt"
    with open(raw, "wb") as f:
        f.write(TEXT.encode())
    [item] = list_items([folder])
    assert item.key == "essays/caf\\xe9 \\xff.txt"
    key, text, _ = read_item(item)
    assert key == item.key and text == TEXT
    key.encode("utf-8")  # valid Unicode: storable, printable
    [(qkey, qtext)] = read_queries([folder])
    assert (qkey, qtext) == ("essays/caf\\xe9 \\xff.txt", TEXT)
    assert safe_text("a\ud800b") == "a\\ud800b" and safe_text("žluť") == "žluť"


@settings(max_examples=60, deadline=None)
@given(name=st.binary(min_size=1, max_size=20))
def test_any_file_name_bytes_give_a_faithful_valid_unicode_key(name):
    key = safe_text(os.fsdecode(name))
    key.encode("utf-8")  # never raises
    assert os.fsencode(unsafe_text(key)) == name  # one to one: the name's bytes come back
    if b"\\" not in name:
        assert key == name.decode("utf-8", "backslashreplace")  # each bad byte as \xNN


#: characters that make escapes: backslashes, x/u and hex digits, undecodable bytes (surrogate
#: escapes), other lone surrogates
_TRICKY = st.text(
    alphabet=st.sampled_from(
        ["\\", "x", "u", "d", "f", "0", "8", "a", "\udcff", "\udc80", "\ud800", "é"]
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(a=_TRICKY, b=_TRICKY)
def test_key_escaping_is_one_to_one(a, b):
    """Issue 30 item 15: a name with the byte 0xFF and one literally named ``\\xff`` had the same
    key; two different names never do now, and the escaping is undone exactly."""
    assert unsafe_text(safe_text(a)) == a
    safe_text(a).encode("utf-8")
    assert (safe_text(a) == safe_text(b)) == (a == b)


def test_a_raw_byte_and_its_escape_spelled_out_are_two_keys(tmp_path):
    folder = tmp_path / "essays"
    folder.mkdir()
    with open(os.fsencode(folder) + b"/\xff.txt", "wb") as f:  # the byte 0xFF
        f.write(TEXT.encode())
    (folder / "\\xff.txt").write_text(TEXT + " more", encoding="utf-8")  # backslash x f f
    (folder / "a\\b.txt").write_text(TEXT, encoding="utf-8")  # a backslash escaping nothing
    keys = sorted(item.key for item in list_items([folder]))
    assert keys == ["essays/\\\\xff.txt", "essays/\\xff.txt", "essays/a\\b.txt"]
    assert len({unsafe_text(k) for k in keys}) == 3


def test_jsonl_lines_skip_blank_and_whitespace_lines_and_number_the_rest(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_bytes(b'{"id":"a"}\n\n  \t\r\n{"id":"b"}\r\n \n{"id":"c"}')
    lines = jsonl_lines(p)
    assert [(n, p.read_bytes()[s:e]) for s, e, n in lines] == [
        (1, b'{"id":"a"}'),
        (4, b'{"id":"b"}\r'),
        (6, b'{"id":"c"}'),
    ]


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(st.sampled_from(["", " ", "\t", "x", " y ", "{}", "\r", "  z"]), max_size=12),
    final_break=st.booleans(),
    block=st.integers(1, 7),
)
def test_jsonl_lines_match_splitting_by_hand(tmp_path_factory, lines, final_break, block):
    p = tmp_path_factory.mktemp("j") / "d.jsonl"
    data = ("\n".join(lines) + ("\n" if final_break else "")).encode()
    p.write_bytes(data)
    expected = [(i + 1, ln) for i, ln in enumerate(data.split(b"\n")) if ln.strip(b" \t\r")]
    assert [(n, data[s:e]) for s, e, n in jsonl_lines(p)] == expected  # memory-mapped
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(listing, "_BLOCK", block)  # read in blocks: lines across their boundaries
        assert [(n, data[s:e]) for s, e, n in jsonl_lines(p, mapped=False)] == expected


def test_jsonl_errors_name_the_line_and_ids_are_strings_or_integers(tmp_path):
    p = tmp_path / "docs.jsonl"
    rows = [
        {"id": "a", "text": TEXT},  # 1
        {"id": 7, "text": TEXT},  # 2
        {"id": None, "text": TEXT},  # 3
        {"id": 1.5, "text": TEXT},  # 4
        {"id": True, "text": TEXT},  # 5
        {"id": ["x"], "text": TEXT},  # 6
    ]
    lines = [json.dumps(r) for r in rows] + [
        "",
        "   ",
        "not json",
        '{"id": "\\ud800", "text": "t"}',
    ]
    p.write_text("\n".join(lines) + "\n")
    out = {}
    for item in list_items([p]):
        try:
            out[item.line] = read_item(item)[0]
        except ExtractionError as e:
            out[item.line] = (e.key, e.kind, e.message)
    assert out[1] == "a" and out[2] == "7"
    label = f"{p}:"
    for line, found in [(3, "null"), (4, "1.5"), (5, "true"), (6, '["x"]')]:
        assert out[line] == (
            label + str(line),
            "jsonl",
            f'expected an "id" that is a string or an integer, found {found}',
        )
    assert 7 not in out and 8 not in out  # empty and whitespace-only lines are skipped
    assert out[9][:2] == (label + "9", "jsonl")
    assert out[10][:2] == (label + "10", "jsonl") and "lone surrogate" in out[10][2]


def _each(items, max_bytes):
    """``fetch_item`` of each item alone: bytes or ``(key, kind, message)`` of its error."""
    out = []
    for item in items:
        try:
            out.append(fetch_item(item, max_bytes))
        except ExtractionError as e:
            out.append((e.key, e.kind, e.message))
    return out


def _flat(results):
    return [r if isinstance(r, bytes) else (r.key, r.kind, r.message) for r in results]


def test_fetch_items_reads_a_jsonl_file_once_with_the_errors_of_fetch_item(tmp_path, monkeypatch):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("\n".join(json.dumps({"id": i, "text": TEXT * (1 + i % 3)}) for i in range(9)))
    b.write_text('{"id": "x", "text": "t"}\nnot json\n{"id": "y", "text": "u"}\n')
    (tmp_path / "f.txt").write_text(TEXT)
    items = list_items([a, tmp_path / "f.txt", b])
    assert len(items) == 13
    opened = []
    real_open = open
    # only this test's files: a monitoring thread of a cluster left by another test (psutil
    # reading /proc/PID/stat) may open files at the same time
    monkeypatch.setattr(
        "builtins.open",
        lambda f, *x, **k: (
            (str(f).startswith(str(tmp_path)) and opened.append(f)) or real_open(f, *x, **k)
        ),
    )
    limit = len(json.dumps({"id": 0, "text": TEXT * 2}))  # lines with 3 x TEXT are too large
    got = _flat(fetch_items(items, limit))
    assert opened == [str(a), str(tmp_path / "f.txt"), str(b)]  # one open per file
    assert got == _each(items, limit)
    assert [g[1] for g in got if isinstance(g, tuple)] == ["too_large"] * 3
    assert _flat(fetch_items(items, None)) == _each(items, None)
    # read_queries: the broken line reported with file:LINE, the others read
    q = read_queries([b])
    assert [k for k, _ in q] == ["x", f"{b}:2", "y"] and q[2][1] == "u"
    assert isinstance(q[1][1], ExtractionError) and q[1][1].kind == "jsonl"
    a.unlink()  # listed, then gone: every line of it is unreadable, named file:LINE
    got = _flat(fetch_items(items, None))
    assert got == _each(items, None)
    assert [g[:2] for g in got[:9]] == [(f"{a}:{n}", "unreadable") for n in range(1, 10)]
    assert isinstance(got[9], bytes)


def _old_style_index(tmp_path: Path) -> Index:
    """An index whose catalog is keyed as before scheme 2: a folder's documents by their path
    inside it (documents written straight into the catalog: no cluster needed)."""
    folder = _write(tmp_path / "essays", {"a.txt": TEXT, "sub/b.txt": TEXT})
    single = _write(tmp_path, {"single.txt": TEXT}) / "single.txt"
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text(json.dumps({"id": "j1", "text": TEXT}) + "\n")
    idx = Index.create(tmp_path / "idx", IndexConfig(shards=1))
    docs = [
        ("a.txt", source_id(folder)),
        ("sub/b.txt", source_id(folder)),
        ("single.txt", source_id(single)),
        ("j1", source_id(jsonl)),
        ("gone.txt", str(tmp_path / "gone-folder")),
    ]
    idx.catalog.conn.executemany(
        "INSERT INTO documents (doc_id, key, source, content_hash, n_chunks, n_words, status,"
        " added_at, updated_at) VALUES (?, ?, ?, '0', 0, 3, 'too_short', 0, 0)",
        [(i, k, s) for i, (k, s) in enumerate(docs)],
    )
    idx.catalog.conn.execute("DELETE FROM meta WHERE name = 'key_scheme'")
    return idx


def test_old_keys_are_migrated_once_in_one_transaction(tmp_path):
    idx = _old_style_index(tmp_path)
    assert migrate_keys(idx.catalog) == 3
    keys = {d.key for d in idx.catalog.documents()}
    assert keys == {"essays/a.txt", "essays/sub/b.txt", "single.txt", "j1", "gone-folder/gone.txt"}
    assert idx.catalog.meta("key_scheme") == str(KEY_SCHEME)
    assert migrate_keys(idx.catalog) == 0
    idx.catalog.set_meta("key_scheme", "9")
    with pytest.raises(IndexFormatError, match="key scheme '9'"):
        migrate_keys(idx.catalog)


def test_migration_refuses_keys_that_would_collide(tmp_path):
    idx = _old_style_index(tmp_path)
    idx.catalog.conn.execute("UPDATE documents SET key = 'essays/a.txt' WHERE key = 'j1'")
    with pytest.raises(IndexFormatError, match="rebuild it with --rebuild"):
        migrate_keys(idx.catalog)
    assert "a.txt" in {d.key for d in idx.catalog.documents()}  # rolled back
    assert idx.catalog.meta("key_scheme") is None


def test_new_index_records_the_key_scheme(tmp_path):
    with Index.create(tmp_path / "idx") as idx:
        assert idx.catalog.meta("key_scheme") == str(KEY_SCHEME)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_and_dangling_symlinks_in_a_folder_are_reported_not_dropped(tmp_path):
    """Issue 30 item 15: README says never dropped silently; a FIFO is never opened (a read
    would block)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("one two three four five six", encoding="utf-8")
    os.mkfifo(src / "pipe.txt")
    (src / "gone.txt").symlink_to(tmp_path / "nowhere.txt")
    (src / "link.txt").symlink_to(src / "a.txt")  # a symlinked file is read
    items = {i.key: i for i in list_items([src])}
    assert set(items) == {"src/a.txt", "src/pipe.txt", "src/gone.txt", "src/link.txt"}
    for key, what in (("src/pipe.txt", "a FIFO"), ("src/gone.txt", "a symbolic link to nothing")):
        with pytest.raises(ExtractionError, match=f"expected a regular file, found {what}") as e:
            read_item(items[key])
        assert e.value.kind == "unreadable"
    assert read_item(items["src/link.txt"])[1] == "one two three four five six"


def test_an_index_inside_its_source_folder_is_said_and_not_read(tmp_path):
    """Issue 30 item 15: an index kept in the folder it indexes had its own files listed (its
    upload staging folder's documents indexed, its catalog and packs reported as unsupported
    files on every run) without a word."""
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("one two three four five six", encoding="utf-8")
    (src / "sub" / "b.txt").write_text("seven eight nine ten eleven", encoding="utf-8")
    idx = src / "my-index"
    (idx / "uploads").mkdir(parents=True)
    (idx / "catalog.sqlite").write_bytes(b"SQLite format 3\x00")
    (idx / "uploads" / "essay.txt").write_text("an uploaded essay", encoding="utf-8")
    (idx / "texts").mkdir()
    (idx / "texts" / "r000001-b000000.pack").write_bytes(b"\x28\xb5")
    items = {i.key: i for i in list_items([src])}
    assert set(items) == {"src/a.txt", "src/sub/b.txt", "src/my-index/"}
    said = items["src/my-index/"]
    with pytest.raises(ExtractionError, match="holds a simdask index") as e:
        read_item(said)
    assert e.value.kind == "unsupported" and str(idx) in str(e.value)
    # the index folder given as the source itself
    assert [i.key for i in list_items([idx])] == ["my-index/"]
