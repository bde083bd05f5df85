"""The streaming indexer, collection formats, batch search and damaged indexes."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time
import tracemalloc
import types
import zlib
from pathlib import Path

import pytest

from assistant.index import main as index_main
from assistant.kernel import (
    OWNER_FILE,
    DataFormatError,
    IndexChangedError,
    IndexDamagedError,
    IndexNotFoundError,
    Terminated,
)
from assistant.retrieval import (
    BM25Retriever,
    build_index,
    collection_size,
    index_collection,
    read_collection,
    verify_index,
)

_WORDS = ("river bridge castle harbour garden market tower valley forest island mountain lake "
          "station museum library theatre church palace square street").split()


def _passage(number: int) -> dict:
    # Deterministic text: each passage mixes a few words picked by its number.
    words = [_WORDS[(number * 7 + i * 3) % len(_WORDS)] for i in range(12)] + [f"code{number}"]
    return {"id": f"p{number}", "contents": " ".join(words) + ".", "title": f"Place {number % 40}", "url": ""}


def _write_jsonl(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture(scope="module")
def medium_index(tmp_path_factory):
    """600 passages: postings and term files big enough to damage in their middle."""
    index_dir = tmp_path_factory.mktemp("medium") / "index"
    build_index((_passage(n) for n in range(600)), index_dir, progress=False)
    return index_dir


def _peak_python_memory(build) -> int:
    tracemalloc.start()
    try:
        build()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_build_streams_a_generator_without_holding_the_collection(tmp_path):
    produced = []

    def passages(count):
        for n in range(count):
            produced.append(n)
            yield _passage(n)

    build_index(passages(10), tmp_path / "warm", progress=False)  # imports and JVM start
    # Both sizes are past the few batches the build keeps in flight.
    small = _peak_python_memory(lambda: build_index(passages(5000), tmp_path / "small", progress=False))
    large = _peak_python_memory(lambda: build_index(passages(20000), tmp_path / "large", progress=False))
    # Holding the 20000 passages (a list of dicts, a set of ids) would cost
    # about 9 MB; streaming costs the few batches in flight (about 200 kB
    # each) whatever the size, and the id hashes 8 bytes a passage.
    assert large < 4_000_000 and large - small < 1_500_000, (small, large)
    assert len(produced) == 25010
    retriever = BM25Retriever.from_index(tmp_path / "large")
    assert retriever.size == 20000
    assert retriever.search("code1234", 3)[0].id == "p1234"


def test_threads_index_the_same_documents_and_scores(tmp_path):
    records = [_passage(n) for n in range(2500)]
    one = build_index(iter(records), tmp_path / "one", progress=False, threads=1)
    four = build_index(iter(records), tmp_path / "four", progress=False, threads=4)
    assert one == four == 2500
    a, b = BM25Retriever.from_index(tmp_path / "one"), BM25Retriever.from_index(tmp_path / "four")
    for query in ("castle harbour", "code17 museum", "island lake palace"):
        hits_a, hits_b = a.search(query, 50), b.search(query, 50)
        assert [h.score for h in hits_a] == pytest.approx([h.score for h in hits_b], rel=1e-6)
        assert {h.id for h in hits_a if h.score > hits_a[-1].score} == {
            h.id for h in hits_b if h.score > hits_b[-1].score}


def test_passages_come_back_as_given_whatever_their_characters(tmp_path):
    # Non-ASCII and separator characters cross to Java as JSON escapes; a text
    # that starts with its title is stored once, one that does not keeps its own.
    passages = [
        {"id": "zoe", "contents": "Zoë visited 東京 in spring.\u2028Then Kraków\x0c.", "title": "Zoë", "url": "u1"},
        {"id": "tokyo", "contents": "東京 is a city on Honshu.", "title": "Tokyo", "url": ""},
    ]
    build_index(iter(passages), tmp_path / "index", progress=False)
    retriever = BM25Retriever.from_index(tmp_path / "index")
    hits = {hit.id: hit for hit in retriever.search("東京 Kraków spring", 2)}
    assert hits["zoe"].text == passages[0]["contents"] and hits["zoe"].title == "Zoë" and hits["zoe"].url == "u1"
    assert hits["tokyo"].text == passages[1]["contents"] and hits["tokyo"].title == "Tokyo"
    assert retriever.search("Tokyo Honshu", 1)[0].id == "tokyo"  # the title is searchable all the same


def test_a_collection_indexed_from_its_lines_equals_one_indexed_from_its_passages(tmp_path):
    # Lines already in the indexer's form go to Lucene as they are; the others
    # (a number id, a title the text does not start with, an extra field, a
    # null title) are read and encoded. Both routes must give the same index.
    lines = [
        {"id": "a", "contents": "Ada Lovelace wrote the first program.", "title": "Ada Lovelace", "url": "u"},
        {"id": "b", "contents": "Tea comes from China."},
        {"id": 7, "contents": "Seven is a number.", "title": "Seven"},
        {"id": "c", "contents": "The engine was never built.", "title": "Analytical Engine", "url": ""},
        {"id": "d", "contents": "Zoë went to 東京.", "title": None, "extra": 1},
    ]
    _write_jsonl(tmp_path / "coll" / "part-0.jsonl", lines[:3])
    _write_jsonl(tmp_path / "coll" / "part-1.jsonl", lines[3:])
    assert index_collection(tmp_path / "coll", tmp_path / "lines", progress=False) == 5
    build_index(read_collection(tmp_path / "coll"), tmp_path / "passages", progress=False)
    by_lines = BM25Retriever.from_index(tmp_path / "lines")
    by_passages = BM25Retriever.from_index(tmp_path / "passages")
    for query in ("Ada program", "tea China", "seven number", "Analytical Engine built", "Zoë 東京"):
        assert by_lines.search(query, 5) == by_passages.search(query, 5)
    assert by_lines.search("Analytical Engine", 1)[0].text == "The engine was never built."  # title searchable, not shown
    with pytest.raises(DataFormatError, match=r"part-0.jsonl, line 2"):
        _write_jsonl(tmp_path / "bad" / "part-0.jsonl", [lines[0], {"contents": "no id"}])
        index_collection(tmp_path / "bad", tmp_path / "bad-index", progress=False)


def _hit_groups(hits):
    # Several threads may order tied hits either way: compare ids above the last score.
    return [round(h.score, 4) for h in hits], {h.id for h in hits if h.score > hits[-1].score}


def test_anserini_reads_lines_in_indexer_form_itself_with_the_same_result(tmp_path):
    records = [dict(_passage(n), contents=f"Place {n % 40} " + _passage(n)["contents"]) for n in range(3000)]
    _write_jsonl(tmp_path / "coll" / "a.jsonl", records[:1700])
    _write_jsonl(tmp_path / "coll" / "b.jsonl", records[1700:])
    assert index_collection(tmp_path / "coll", tmp_path / "direct", progress=False, threads=2) == 3000
    build_index(iter(records), tmp_path / "streamed", progress=False)
    direct, streamed = BM25Retriever.from_index(tmp_path / "direct"), BM25Retriever.from_index(tmp_path / "streamed")
    for query in ("castle harbour", "code17 museum", "Place 3 island"):
        assert _hit_groups(direct.search(query, 30)) == _hit_groups(streamed.search(query, 30))
    assert direct.search("code2999", 1)[0].text == records[2999]["contents"]
    assert verify_index(tmp_path / "direct") == 3000


def test_a_late_line_that_needs_encoding_sends_the_build_back_to_streaming(tmp_path):
    # The first 1000 lines are in the indexer's form; line 1200 has a title its text does not start with.
    records = [dict(_passage(n), title="") for n in range(1500)]
    records[1200] = dict(records[1200], title="Harbour Town")
    _write_jsonl(tmp_path / "coll" / "a.jsonl", records)
    assert index_collection(tmp_path / "coll", tmp_path / "index", progress=False, threads=2) == 1500
    retriever = BM25Retriever.from_index(tmp_path / "index")
    assert retriever.search("Harbour Town", 1)[0].id == "p1200"  # its title was put in front of its text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coll", "index"]  # no staging or links left


def test_the_direct_route_names_a_bad_line_and_finds_duplicates(tmp_path):
    good = [dict(_passage(n), title="") for n in range(1200)]
    _write_jsonl(tmp_path / "bad" / "a.jsonl", good + [{"contents": "no id here"}])
    with pytest.raises(DataFormatError, match=r"a.jsonl, line 1201"):
        index_collection(tmp_path / "bad", tmp_path / "bad-index", progress=False, threads=2)
    _write_jsonl(tmp_path / "dup" / "a.jsonl", good + [dict(_passage(5), title="", contents="again")])
    with pytest.raises(DataFormatError, match="Duplicate passage id 'p5'"):
        index_collection(tmp_path / "dup", tmp_path / "dup-index", progress=False, threads=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "dup"]  # no index, staging or links left


# A file's text that no person saved, at line 1201 of its second file
# (past the lines that decide the route): each refused with the one text
# check's words (the kernel's json_lines), on either route.
_NOT_TEXT = {
    "a NUL in a line": ('{"id": "q0", "contents": "milk\0 is white"}\n', "line 1201 looks like a binary file (it holds "
                        "a NUL character), not text (JSON holds a NUL only written as \\u0000)."),
    "NULs after the last line": ("\0" * 64, "line 1201 looks like a binary file (it holds a NUL character), not text "
                                 "(JSON holds a NUL only written as \\u0000)."),
    "a byte order mark inside": ('\ufeff{"id": "q0", "contents": "milk"}\n', "line 1201: not valid JSON "
                                 "(Unexpected UTF-8 BOM (decode using utf-8-sig))"),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", sorted(_NOT_TEXT))
def test_both_routes_refuse_a_file_that_is_not_text_in_the_same_words(tmp_path, monkeypatch, threads, case):
    bad, said = _NOT_TEXT[case]
    links, symlink_to = [], Path.symlink_to  # Anserini's route links each file in a folder of its own
    monkeypatch.setattr(Path, "symlink_to", lambda link, target, *a: links.append(Path(target).name) or symlink_to(link, target, *a))
    _write_jsonl(tmp_path / "coll" / "a.jsonl", [dict(_passage(n), title="") for n in range(10)])
    _write_jsonl(tmp_path / "coll" / "b.jsonl", [dict(_passage(n), title="", id=f"b{n}") for n in range(1200)])
    with (tmp_path / "coll" / "b.jsonl").open("a", encoding="utf-8") as file:
        file.write(bad)
    with pytest.raises(DataFormatError) as caught:
        index_collection(tmp_path / "coll", tmp_path / "idx", progress=False, threads=threads)
    assert str(caught.value) == f"{tmp_path / 'coll' / 'b.jsonl'}, {said}"
    assert links == (["a.jsonl", "b.jsonl"] if threads > 1 else [])  # with two threads, Anserini read the files itself
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coll"]  # no index, staging or links left


def test_the_direct_route_names_a_line_java_cannot_read_without_its_stack_trace(tmp_path, capfd):
    """With --threads 2 Anserini reads the files itself: a line it could not
    parse (bad JSON past the first 1000 lines, a field over Jackson's limit)
    printed 24 lines of Java stack trace and an ERROR log line before the
    one line that names it."""
    from assistant.retrieval import MAX_FIELD_CHARS

    good = [dict(_passage(n), title="") for n in range(1200)]
    _write_jsonl(tmp_path / "coll" / "a.jsonl", good)
    with (tmp_path / "coll" / "a.jsonl").open("a") as file:
        file.write('{"id": "broken", "contents": \n')
    long = tmp_path / "long" / "a.jsonl"
    _write_jsonl(long, good + [{"id": "huge", "contents": "x" * (MAX_FIELD_CHARS + 1)}] + good[:5])
    capfd.readouterr()
    for collection, named in ((tmp_path / "coll", "line 1201: not valid JSON"), (long.parent, "line 1201 (id 'huge')")):
        assert index_main(["--input", str(collection), "--index", str(tmp_path / "idx"), "--threads", "2"]) == 2
        err = capfd.readouterr().err
        assert named in err.splitlines()[-1]
        assert "Exception" not in err and "\tat " not in err and "ERROR" not in err, err[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coll", "long"]  # no index, staging or links left


def test_the_direct_route_stops_anserini_once_a_line_is_refused(tmp_path, capsys):
    # Python found the bad line at once, but the build waited for Anserini to
    # index the rest of the collection (and Ctrl-C waited the same way), the
    # bar climbing to the end meanwhile.
    good = [dict(_passage(n), title="") for n in range(1200)]
    _write_jsonl(tmp_path / "coll" / "a.jsonl", good + [{"contents": "no id here"}])
    _write_jsonl(tmp_path / "coll" / "b.jsonl", [dict(_passage(n), title="", id=f"q{n}") for n in range(150_000)])
    with pytest.raises(DataFormatError, match=r"a.jsonl, line 1201"):
        index_collection(tmp_path / "coll", tmp_path / "idx", threads=2)
    shown = [int(n) for n in re.findall(r"(\d+)/151201", capsys.readouterr().err)]
    assert shown and max(shown) < 100_000, shown
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coll"]


def test_the_direct_route_bar_moves_passage_by_passage(tmp_path, capsys):
    # Anserini's own counter moves 10,000 passages a thread at a time: the bar
    # showed 0, then 10000, 20000 and the end.
    records = [dict(_passage(n), title="") for n in range(40_000)]
    _write_jsonl(tmp_path / "coll" / "a.jsonl", records)
    assert index_collection(tmp_path / "coll", tmp_path / "idx", threads=2) == 40_000
    shown = {int(n) for n in re.findall(r"(\d+)/40000", capsys.readouterr().err)}
    assert shown - {0, 10_000, 20_000, 30_000, 40_000}, shown


def test_duplicate_ids_are_found_across_segments(tmp_path):
    # Four threads each write their own segment, so a repeated id at the two
    # ends of the stream sits in two segments; one in a single segment too.
    records = [_passage(n) for n in range(2500)]
    build_index(iter(records), tmp_path / "ok", progress=False, threads=4)
    assert len(list((tmp_path / "ok").glob("*.si"))) > 1  # several segments indeed
    across = records + [dict(_passage(7), contents="another text")]
    with pytest.raises(DataFormatError, match="Duplicate passage id 'p7'"):
        build_index(iter(across), tmp_path / "dup", progress=False, threads=4)
    assert not (tmp_path / "dup").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("dup")] == []  # no staging left
    with pytest.raises(DataFormatError, match="Duplicate passage id 'p1'"):
        build_index(iter([_passage(1), _passage(2), _passage(1)]), tmp_path / "dup1", progress=False)


def test_jsonl_folder_and_qrecc_collection(tmp_path, capsys):
    # apple/ml-qrecc's paragraph_chunker.py writes {"id": "<page>_p<n>", "contents"}
    # lines into .jsonl files mirroring its input's subfolders.
    root = tmp_path / "collection-paragraph"
    _write_jsonl(root / "commoncrawl" / "a.jsonl", [
        {"id": "http://tea.example/_p0", "contents": "Tea is an aromatic beverage."},
        {"id": "http://tea.example/_p1", "contents": "Green tea comes from China."},
    ])
    _write_jsonl(root / "wayback" / "b.jsonl", [{"id": "http://coffee.example/_p0", "contents": "Coffee is brewed."}])
    passages = list(read_collection(root))
    assert [p["id"] for p in passages] == ["http://tea.example/_p0", "http://tea.example/_p1", "http://coffee.example/_p0"]
    assert collection_size(root) == 3
    assert index_main(["--input", str(root), "--index", str(tmp_path / "idx"), "--threads", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"index": str(tmp_path / "idx"), "passages": 3}
    assert BM25Retriever.from_index(tmp_path / "idx").search("coffee", 1)[0].id == "http://coffee.example/_p0"
    (root / "notes.txt").write_text("A stray document.")
    with pytest.raises(DataFormatError, match="both .jsonl passages and documents"):
        read_collection(root)


def test_collection_size_is_cheap_and_honest(tmp_path, tiny_collection):
    assert collection_size(tiny_collection) == 5
    no_newline = tmp_path / "last.jsonl"
    no_newline.write_text('{"id": "1", "contents": "a"}\n{"id": "2", "contents": "b"}')
    assert collection_size(no_newline) == 2
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Text.")
    assert collection_size(docs) is None  # passages only known once chunked
    assert collection_size() == sum(1 for _ in read_collection())


def test_cli_rejects_bad_threads(tmp_path, tiny_collection, capsys):
    assert index_main(["--input", str(tiny_collection), "--index", str(tmp_path / "i"), "--threads", "0"]) == 2
    assert "threads must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "i").exists()
    # A folder with a file it would skip: the flag is refused before that
    # folder is listed (its "note: skipped ..." came first, then the error).
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "tea.txt").write_text("Tea is a drink.")
    (folder / "notes.docx").write_bytes(b"PK")
    assert index_main(["--input", str(folder), "--index", str(tmp_path / "i"), "--threads", "0"]) == 2
    assert capsys.readouterr().err == "error: --threads must be at least 1, not 0\n"


def test_cli_refuses_a_document_that_is_not_utf8_as_the_upload_does(tmp_path, capsys):
    # It used to be indexed with replacement characters (exit 0) while the
    # app's upload refused the same file; both now say the same thing. A file
    # given by its path, and a folder with no other document, are refused.
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Caf\u00e9 au lait is coffee with milk.".encode("latin-1"))
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "old.txt").write_bytes(latin1.read_bytes())
    for given, named in ((latin1, latin1), (folder, folder / "old.txt")):
        assert index_main(["--input", str(given), "--index", str(tmp_path / "idx")]) == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err == f"error: {named} is not UTF-8 text; save it as UTF-8 and try again."
    assert not (tmp_path / "idx").exists()


def test_cli_skips_a_folders_document_that_is_not_utf8_and_indexes_the_rest(tmp_path, capsys):
    # One Latin-1 file of many stopped the whole folder's build.
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "fine.txt").write_text("Tea is a drink.", encoding="utf-8")
    (folder / "sub" / "old.txt").write_bytes("Caf\u00e9 au lait is coffee with milk.".encode("latin-1"))
    (folder / "wide.txt").write_bytes("Coffee is a drink too.".encode("utf-16"))  # read by its mark, not skipped
    # A NUL's file was skipped as "not UTF-8 text (save it as UTF-8)": it is UTF-8.
    (folder / "nul.txt").write_bytes(b"Milk is a drink.\x00\x01")
    assert index_main(["--input", str(folder), "--index", str(tmp_path / "idx"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["passages"] == 2
    assert "note: skipped sub/old.txt: it is not UTF-8 text; save it as UTF-8 and try again.\n" in err
    assert "note: skipped nul.txt: it looks like a binary file (it holds a NUL character), not text; give a .txt, .md, .html or .pdf file, or save the text as UTF-8 and try again.\n" in err
    assert "wide.txt" not in err
    ids = sorted(hit.id for hit in BM25Retriever.from_index(tmp_path / "idx").search("drink", 5))
    assert ids == ["fine.txt#0", "wide.txt#0"]


def test_cli_makes_the_index_folders_parent_or_refuses_it_up_front(tmp_path, tiny_collection, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    for where in (blocker, blocker / "idx"):
        assert index_main(["--input", str(tiny_collection), "--index", str(where)]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and err.startswith(f"error: cannot write --index {where}: ")
    assert index_main(["--input", str(tiny_collection), "--index", str(tmp_path / "new" / "idx")]) == 0
    assert (tmp_path / "new" / "idx").is_dir()


def test_index_cli_says_one_passage_in_the_singular(tmp_path, capsys):
    # A first-time user's one-line collection was "Indexed 1 passages".
    _write_jsonl(tmp_path / "one.jsonl", [_passage(1)])
    assert index_main(["--input", str(tmp_path / "one.jsonl"), "--index", str(tmp_path / "idx")]) == 0
    assert capsys.readouterr().out.strip() == f"Indexed 1 passage into {tmp_path / 'idx'}"

def test_batch_search_equals_search(retriever):
    queries = ["Who was the father of Ada Lovelace?", "Paris Eiffel Tower", "English", "python code",
               "nothing matches zzzz", "English mathematician"]
    batched = retriever.batch_search(queries, k=3, threads=2)
    assert len(batched) == len(queries)
    for query, hits in zip(queries, batched):
        single = retriever.search(query, 3)
        assert [(h.id, h.title, h.text, h.url) for h in hits] == [(h.id, h.title, h.text, h.url) for h in single]
        assert [h.score for h in hits] == pytest.approx([h.score for h in single])
    assert batched[0][0].id == "ada" and batched[4] == []
    assert retriever.batch_search([], k=3) == []


def _damaged_copy(index_dir, tmp_path, suffix: str):
    copy = tmp_path / f"damaged-{suffix}"
    shutil.copytree(index_dir, copy)
    target = next(copy.glob(f"*.{suffix}"))  # compound files are off: .tim/.doc exist as such
    data = bytearray(target.read_bytes())
    assert len(data) > 512, f"{target.name} too small to damage its middle"
    middle = len(data) // 2 - 32
    for i in range(middle, middle + 64):
        data[i] ^= 0xFF
    target.write_bytes(bytes(data))
    return copy


@pytest.mark.parametrize("suffix", ["tim", "doc"])
def test_damaged_index_is_refused_with_one_line(medium_index, tmp_path, suffix):
    assert verify_index(medium_index) == 600
    damaged = _damaged_copy(medium_index, tmp_path, suffix)
    for check in (verify_index, BM25Retriever.from_index):
        with pytest.raises(IndexDamagedError) as caught:
            check(damaged)
        message = str(caught.value)
        assert "\n" not in message and message.isprintable()
        assert message.startswith(f"the index at {damaged} is damaged (")
        assert "checksum failed" in message
        assert message.endswith(f"rebuild it with `python -m assistant.index --input COLLECTION --index {damaged}`")
    # A damaged index is still an index that cannot serve: callers catching
    # IndexNotFoundError keep working.
    assert issubclass(IndexDamagedError, IndexNotFoundError)


def test_a_missing_file_of_an_index_is_damaged_in_one_flat_reason(tiny_index, tmp_path, monkeypatch):
    # It said "(cannot read it (No such file or directory) (resource=NAME))".
    # The file cannot be found after Lucene listed it (Lucene's own open
    # refuses an index missing one), the folder and its commit left as they
    # were (a file removed from it is a change to the folder: looked at
    # again, Lucene's open names it).
    copy = tmp_path / "idx"
    shutil.copytree(tiny_index, copy)
    gone = next(copy.glob("*.tim"))
    real_open = open

    def missing_open(file, *args, **kwargs):
        if Path(file) == gone:
            raise FileNotFoundError(2, "No such file or directory", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", missing_open)
    with pytest.raises(IndexDamagedError) as caught:
        verify_index(copy)
    assert str(caught.value).startswith(f"the index at {copy} is damaged ({gone.name}: cannot read it, No such file")


def _rebuilt_while_checked(index_dir, sources, monkeypatch):
    """Replace ``index_dir`` by the next of ``sources`` (as a rebuild's rename
    does) as each check opens the first of its files, by then listed by
    Lucene: what it reads after is the new index's, or gone."""
    real_open, left = open, list(sources)

    def replacing_open(file, *args, **kwargs):
        path = Path(file)
        if left and path.parent == index_dir and path.name == min(p.name for p in index_dir.iterdir()):
            staging = index_dir.with_name("staging")
            shutil.copytree(left.pop(0), staging)
            shutil.rmtree(index_dir)
            staging.rename(index_dir)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", replacing_open)


def test_an_index_rebuilt_while_it_is_checked_is_checked_anew(tiny_index, medium_index, tmp_path, monkeypatch):
    # Its files read by path after Lucene listed them, a rebuild landing in
    # between was "damaged (...No such file...); rebuild it".
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    _rebuilt_while_checked(index_dir, [medium_index], monkeypatch)
    assert verify_index(index_dir) == 600


def test_an_index_rebuilt_again_while_it_is_checked_says_try_again(tiny_index, medium_index, tmp_path, monkeypatch):
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    _rebuilt_while_checked(index_dir, [medium_index, tiny_index], monkeypatch)
    with pytest.raises(IndexChangedError) as caught:
        verify_index(index_dir)
    assert not isinstance(caught.value, IndexDamagedError)
    assert str(caught.value) == f"the index at {index_dir} changed while it was checked (rebuilt?); try again"


def _rebuilt_while_java_opens(index_dir, sources, seam: str, monkeypatch):
    """As Java opens the index (``seam``: the checksum check's reader, or
    the searcher), a rebuild replaces ``index_dir`` by the next of
    ``sources``: its removal of the old index has begun when Java looks
    (Java finds the old commit's segments_N, not the files it names), the
    new index is in place once Java has failed. Returns the opens met."""
    left, met = list(sources), []

    def rebuilt_around(java_open):
        if not left:
            return java_open()
        met.append(1)
        for file in index_dir.iterdir():
            if not file.name.startswith("segments_"):
                file.unlink()
        try:
            return java_open()
        finally:
            staging = index_dir.with_name("staging")
            shutil.copytree(left.pop(0), staging)
            shutil.rmtree(index_dir)
            staging.rename(index_dir)

    _around_java_opens(seam, rebuilt_around, monkeypatch)
    return met


def _around_java_opens(seam: str, around, monkeypatch) -> None:
    """Java's opens of an index at ``seam`` (the checksum check's reader,
    or the searcher) go through ``around(java_open)``."""
    import jnius
    import pyserini.search.lucene

    if seam == "searcher":
        searcher = pyserini.search.lucene.LuceneSearcher
        monkeypatch.setattr(pyserini.search.lucene, "LuceneSearcher",
                            lambda *args, **kwargs: around(lambda: searcher(*args, **kwargs)))
    else:
        real_autoclass = jnius.autoclass

        def autoclass(name, *args, **kwargs):
            found = real_autoclass(name, *args, **kwargs)
            if name != "org.apache.lucene.index.DirectoryReader":
                return found
            return types.SimpleNamespace(open=lambda directory: around(lambda: found.open(directory)))

        monkeypatch.setattr(jnius, "autoclass", autoclass)


# Java's own opens of an index: the checksum check's reader, and the searcher (unchecked).
_JAVA_OPENS = [("reader", True), ("searcher", False)]


@pytest.mark.parametrize("seam, verify", _JAVA_OPENS)
def test_an_index_rebuilt_while_java_opens_it_is_opened_anew(tiny_index, medium_index, tmp_path, monkeypatch,
                                                              seam, verify):
    # Java failed to read files of a commit that a rebuild removed while it
    # opened it (NoSuchFileException): "damaged (...); rebuild it".
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    met = _rebuilt_while_java_opens(index_dir, [medium_index], seam, monkeypatch)
    with BM25Retriever.from_index(index_dir, verify=verify) as retriever:
        assert retriever.size == 600
    assert len(met) == 1


@pytest.mark.parametrize("seam, verify", _JAVA_OPENS)
def test_an_index_rebuilt_again_while_java_opens_it_says_try_again(tiny_index, medium_index, tmp_path, monkeypatch,
                                                                   seam, verify):
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    _rebuilt_while_java_opens(index_dir, [medium_index, tiny_index], seam, monkeypatch)
    with pytest.raises(IndexChangedError) as caught:
        BM25Retriever.from_index(index_dir, verify=verify)
    assert str(caught.value) == f"the index at {index_dir} changed while it was opened (rebuilt?); try again"
    # What callers catching IndexNotFoundError for "cannot serve" caught before.
    assert isinstance(caught.value, IndexNotFoundError) and not isinstance(caught.value, IndexDamagedError)


def test_an_index_that_fails_to_open_unchanged_is_still_damaged(tiny_index, tmp_path):
    # The retry is for a folder that changed during the open: a file missing
    # before it (and after) is damage, in one line naming the rebuild.
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    next(index_dir.glob("*.si")).unlink()
    for verify in (True, False):
        with pytest.raises(IndexDamagedError, match=f"^the index at {re.escape(str(index_dir))} is damaged \\(.*rebuild it"):
            BM25Retriever.from_index(index_dir, verify=verify)


def _without_an_si(index_dir: Path) -> str:
    next(index_dir.glob("*.si")).unlink()
    return ".*rebuild it"  # Lucene's own words, then the advice


def _with_a_bad_checksum(index_dir: Path) -> str:
    target = next(index_dir.glob("*.tim"))
    target.write_bytes(target.read_bytes()[:-8] + b"\0" * 8)  # its checksum
    return re.escape(target.name) + ": "  # found by the checksums' read, after Java listed the files


@pytest.mark.parametrize("damage, seam, verify", [(_without_an_si, seam, verify) for seam, verify in _JAVA_OPENS]
                         + [(_with_a_bad_checksum, "reader", True)])
def test_a_damaged_index_whose_folder_gains_a_file_while_java_opens_it_is_still_damaged(
        tiny_index, tmp_path, monkeypatch, damage, seam, verify):
    # A file written into the folder during the first open (the passage
    # vectors, a sibling's rsync) made it "changed"; the second open (or
    # read), on the folder unchanged, failed too and was called "changed;
    # try again".
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    reason = damage(index_dir)
    opens = []

    def gaining_a_file(java_open):
        opens.append(1)
        if len(opens) == 1:
            (index_dir / "unrelated.tmp").write_bytes(b"x")
        return java_open()

    _around_java_opens(seam, gaining_a_file, monkeypatch)
    with pytest.raises(IndexDamagedError, match=f"^the index at {re.escape(str(index_dir))} is damaged \\({reason}"):
        BM25Retriever.from_index(index_dir, verify=verify)
    assert len(opens) == 2


def test_an_index_folder_the_os_cannot_list_is_the_os_s_error_not_a_missing_index(tiny_index, tmp_path, monkeypatch):
    # Every OSError read "No Lucene index at ... Build it": a disk (EIO) or
    # permission fault sent the user to rebuild an index that is there.
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    glob = Path.glob

    def failing_glob(self, pattern, *args, **kwargs):
        if self == index_dir:
            raise OSError(5, "Input/output error", str(self))
        return glob(self, pattern, *args, **kwargs)

    monkeypatch.setattr(Path, "glob", failing_glob)
    with pytest.raises(OSError, match="Input/output error") as caught:
        BM25Retriever.from_index(index_dir)
    assert not isinstance(caught.value, IndexNotFoundError)


def test_an_index_removed_while_it_is_looked_for_is_not_found(tiny_index, tmp_path, monkeypatch):
    # Gone between the look at the folder and the look for its commit (a
    # rebuild renaming it aside), it raised the OS's FileNotFoundError.
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    scandir, removed = os.scandir, []

    def removing_scandir(path=".", *args):
        if not removed and isinstance(path, (str, os.PathLike)) and Path(path) == index_dir:  # the glob's listing
            removed.append(index_dir)
            shutil.rmtree(index_dir)
        return scandir(path, *args)

    monkeypatch.setattr(os, "scandir", removing_scandir)
    with pytest.raises(IndexNotFoundError, match=f"^No Lucene index at {re.escape(str(index_dir))}. Build it"):
        BM25Retriever.from_index(index_dir)


def test_a_rebuild_never_leaves_a_half_removed_index_at_its_path(tiny_index, tmp_path, monkeypatch):
    # The old index was removed file by file at its own path before the new
    # one was renamed in: a reader opening it meanwhile found a commit whose
    # files were gone, unchanged while it looked, and called it damaged. It
    # is renamed aside first, and removed there.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    removed, rmtree = [], shutil.rmtree

    def recording_rmtree(path, *args, **kwargs):
        removed.append(Path(path))
        return rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", recording_rmtree)
    assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    assert index_dir not in removed and removed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # the old index is gone from beside it too
    assert verify_index(index_dir) == 5


def test_a_rebuild_whose_old_index_cannot_be_marked_still_puts_the_new_one_in_place(tmp_path, monkeypatch, capsys):
    # The old index, renamed aside, was marked before the new one was
    # renamed in: a failed mark (a full disk) left no index at the path,
    # the new build removed with its staging folder. The aside folder is
    # marked before the renames now; its mark is no condition of the swap.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    write_text, marks = Path.write_text, []

    def full_disk_for_the_old_index(self, *args, **kwargs):
        if self.name == OWNER_FILE:
            marks.append(self.parent)
            if len(marks) == 2:  # the staging folder's first, then the old index's
                raise OSError(28, "No space left on device", str(self))
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk_for_the_old_index)
    assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    monkeypatch.undo()
    assert len(marks) == 3  # and the old index's folder marked finished after the renames
    assert verify_index(index_dir) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert capsys.readouterr().err == ""


def _in_a_rebuild_s_gap(index_dir: Path, look, monkeypatch) -> None:
    """``look()`` runs between a rebuild's two renames of ``index_dir``:
    the old index moved aside, the new one not yet in."""
    rename = Path.rename

    def renaming(self, target):
        moved = rename(self, target)
        if self == index_dir:
            look()
        return moved

    monkeypatch.setattr(Path, "rename", renaming)


def _opened_in_a_rebuild_s_gap(index_dir: Path, opened: Path, monkeypatch) -> list[IndexNotFoundError]:
    """The errors (one once the rebuild has run) of opening ``opened``
    between a rebuild's two renames of ``index_dir``, the open's wait
    passing at once."""
    caught = []

    def look():
        clock = [time.monotonic()]
        with monkeypatch.context() as patch:
            patch.setattr(time, "monotonic", lambda: clock[0])
            patch.setattr(time, "sleep", lambda seconds: clock.__setitem__(0, clock[0] + seconds))
            with pytest.raises(IndexNotFoundError) as error:
                BM25Retriever.from_index(opened)
        caught.append(error.value)

    _in_a_rebuild_s_gap(index_dir, look, monkeypatch)
    return caught


def test_an_index_opened_between_a_rebuild_s_two_renames_waits_for_the_new_one(tmp_path, monkeypatch):
    # An open between the renames found no index: "No Lucene index at ...
    # Build it", to a user whose index was being rebuilt.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    in_gap, looked, opened = threading.Event(), threading.Event(), []
    sleep = time.sleep

    def opener_sleep(seconds):
        if threading.current_thread() is threading.main_thread():
            looked.set()  # it found no index and waits: the rebuild goes on
        sleep(seconds)

    # Safety nets, no timing: each wait ends at once unless the other side broke.
    _in_a_rebuild_s_gap(index_dir, lambda: (in_gap.set(), looked.wait(timeout=60)), monkeypatch)
    monkeypatch.setattr(time, "sleep", opener_sleep)
    builder = threading.Thread(target=lambda: build_index((_passage(n) for n in range(5)), index_dir, progress=False))
    builder.start()
    try:
        assert in_gap.wait(timeout=60)
        with BM25Retriever.from_index(index_dir) as retriever:
            opened.append(retriever.size)
    finally:
        looked.set()
        builder.join()
    assert opened == [5] and looked.is_set()


@pytest.mark.parametrize("first", ["its staging folder", "the old index's folder"])
def test_an_index_still_missing_while_its_rebuild_runs_says_try_again(tmp_path, monkeypatch, first):
    # Past the wait, the build still running: "being built, try again", not
    # "Build it" (a second build of the same index beside the running one).
    # Both of the rebuild's folders are marked in its gap: the advice names
    # the old index's, whichever name sorts first.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    names = iter(["aaaaaaaa", "zzzzzzzz"] if first == "its staging folder" else ["zzzzzzzz", "aaaaaaaa"])

    def mkdtemp(prefix, dir):  # staging first, then the old index's folder
        made = Path(dir) / f"{prefix}{next(names)}"
        made.mkdir(mode=0o700)
        return str(made)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    caught = _opened_in_a_rebuild_s_gap(index_dir, index_dir, monkeypatch)
    assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    assert len(caught) == 1 and isinstance(caught[0], IndexChangedError), caught
    caught = [str(error) for error in caught]
    assert re.fullmatch(f"No Lucene index at {re.escape(str(index_dir))} yet: a build of it is running "
                        f"\\(the folder ({re.escape(str(index_dir))}\\.\\w{{8}}) is a live process's build\\); "
                        "try again when it has finished, or, if no build runs, "
                        f"move \\1/index \\(the previous index\\) to {re.escape(str(index_dir))}, then delete that folder\\.",
                        caught[0]), caught[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # the old index removed after
    assert verify_index(index_dir) == 5


def test_an_index_given_as_a_link_and_opened_in_its_rebuild_s_gap_is_being_built(tmp_path, monkeypatch):
    # The build of a link (current -> v3) names its folders after the
    # target (v3.xxxxxxxx): an open of the link in the gap found no build of
    # "current" and said "Build it" at once.
    target, link = tmp_path / "v3", tmp_path / "current"
    build_index((_passage(n) for n in range(3)), target, progress=False)
    link.symlink_to("v3")
    caught = _opened_in_a_rebuild_s_gap(target, link, monkeypatch)
    assert build_index((_passage(n) for n in range(5)), link, progress=False) == 5
    assert len(caught) == 1 and isinstance(caught[0], IndexChangedError), caught
    assert f"the folder {target}." in str(caught[0])
    assert link.is_symlink()
    with BM25Retriever.from_index(link) as retriever:
        assert retriever.size == 5


def _no_build_runs_and_the_next_one_tidies(index_dir: Path) -> None:
    """An open of the missing ``index_dir`` says "Build it" at once (no
    build of it runs), and its next build leaves nothing else beside it."""
    start = time.monotonic()
    with pytest.raises(IndexNotFoundError, match=f"^No Lucene index at {re.escape(str(index_dir))}. Build it") as caught:
        BM25Retriever.from_index(index_dir)
    assert not isinstance(caught.value, IndexChangedError)
    assert time.monotonic() - start < 1
    assert build_index((_passage(n) for n in range(2)), index_dir, progress=False) == 2
    assert [p.name for p in index_dir.parent.iterdir()] == [index_dir.name]


def test_a_rebuild_s_unremovable_old_index_is_no_running_build_to_later_opens(tmp_path, monkeypatch, capsys):
    # The old index's folder, marked as this (living) process's build, could
    # not be removed (NFS's .nfsXXXX files, EACCES): once the index was
    # deleted, every open in this process waited and said "a build of it is
    # running" while none ran. The folder is marked finished after the
    # renames: the open says "Build it" at once, and the next build removes it.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    rmtree = shutil.rmtree

    def refusing(path, *args, **kwargs):
        if Path(path).parent == tmp_path and Path(path).name.startswith("idx.") and not kwargs.get("ignore_errors"):
            raise OSError(39, "Directory not empty", str(path))
        return rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", refusing)
    assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    monkeypatch.undo()
    (aside,) = [p for p in tmp_path.iterdir() if p.name != "idx"]
    said = capsys.readouterr().err
    shutil.rmtree(index_dir)
    _no_build_runs_and_the_next_one_tidies(index_dir)
    assert re.fullmatch(f"The index at {re.escape(str(index_dir))} is rebuilt; its old files at {re.escape(str(aside))} "
                        "could not be removed \\(Directory not empty\\): a later build of it removes them, or delete "
                        "that folder\\.\n", said)


def _old_index_files_busy(monkeypatch) -> None:
    """rmtree's unlink of an index's ``segments_N`` fails (NFS's .nfsXXXX:
    EBUSY), and each listing gives an owner mark first, as a listing in
    which rmtree unlinks the mark before it fails."""
    unlink, scandir = os.unlink, os.scandir

    def busy(path, *args, **kwargs):
        if str(path).startswith("segments_") and "dir_fd" in kwargs:  # rmtree's
            raise OSError(16, "Device or resource busy", str(path))
        return unlink(path, *args, **kwargs)

    class Entries(list):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def close(self):
            pass

    def mark_first(*args):  # the order of a listing that fails without the fix
        with scandir(*args) as entries:
            return Entries(sorted(entries, key=lambda entry: entry.name != OWNER_FILE))

    monkeypatch.setattr(os, "unlink", busy)
    monkeypatch.setattr(os, "scandir", mark_first)


def test_a_rebuild_s_old_index_removed_in_part_keeps_its_finished_mark(tmp_path, monkeypatch, capsys):
    # rmtree of the aside folder could unlink its mark before it failed on a
    # file of the old index (NFS's .nfsXXXX: EBUSY): the folder was left
    # unmarked, and no later build removed it, while stderr said one would.
    from assistant.kernel import owner_gone

    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    _old_index_files_busy(monkeypatch)
    assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    monkeypatch.undo()
    (aside,) = [p for p in tmp_path.iterdir() if p.name != "idx"]
    assert owner_gone(aside) is True
    assert "a later build of it removes them" in capsys.readouterr().err
    assert build_index((_passage(n) for n in range(2)), index_dir, progress=False) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_a_dead_build_s_folder_removed_in_part_by_the_next_build_keeps_a_finished_mark(tmp_path, monkeypatch):
    # The next build's removal of a finished aside folder (its old index
    # still busy) unlinked the mark, then failed: the folder, unmarked, was
    # no dead build's to any later build outside the index cache, and stayed.
    from assistant.kernel import owner_gone

    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    _old_index_files_busy(monkeypatch)
    assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    assert build_index((_passage(n) for n in range(4)), index_dir, progress=False) == 4  # the first aside still busy
    monkeypatch.undo()
    asides = [p for p in tmp_path.iterdir() if p.name != "idx"]
    assert len(asides) == 2 and all(owner_gone(aside) is True for aside in asides)
    assert build_index((_passage(n) for n in range(2)), index_dir, progress=False) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_a_build_leaves_alone_a_folder_beside_it_that_cannot_be_examined(tmp_path, monkeypatch):
    # An unmarked build-named folder in the index cache whose listing fails
    # (a stale NFS handle, EIO, EACCES): the look for an index in it raised,
    # and no build of the index beside it could run.
    monkeypatch.setenv("CONVQA_CACHE", str(tmp_path / "cache"))
    cache = tmp_path / "cache" / "indexes"
    unreadable = [cache / "wiki.abcdefgh", cache / "wiki.abcdefgh.input.ab12cd34"]  # links beside it too
    for folder in unreadable:
        folder.mkdir(parents=True)
    glob, iterdir = Path.glob, Path.iterdir

    def stale(method):
        def listing(self, *args, **kwargs):
            if self in unreadable:
                raise OSError(116, "Stale file handle", str(self))
            return method(self, *args, **kwargs)
        return listing

    monkeypatch.setattr(Path, "glob", stale(glob))
    monkeypatch.setattr(Path, "iterdir", stale(iterdir))
    assert build_index(iter([_passage(1)]), cache / "wiki", progress=False) == 1
    monkeypatch.undo()
    assert sorted(p.name for p in cache.iterdir()) == ["wiki", *(folder.name for folder in unreadable)]


def _second_rename_stopped(index_dir: Path, stop: BaseException, monkeypatch, *, put_back_refused=False) -> None:
    """A rebuild of ``index_dir``: the rename of its new index into place
    raises ``stop``, and so does the old index's rename back to its place
    when ``put_back_refused`` (as OSError(EBUSY))."""
    rename = Path.rename

    def renaming(self, target):
        if Path(target) == index_dir and self.name.startswith(index_dir.name + "."):
            raise stop
        if Path(target) == index_dir and self.name == "index" and put_back_refused:
            raise OSError(16, "Device or resource busy", str(self))
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", renaming)


def _raise(error: BaseException):
    raise error


@pytest.mark.parametrize("stop", ["interrupted after the first rename", "interrupted before the second",
                                  "second refused"])
def test_a_rebuild_stopped_between_its_renames_puts_the_old_index_back(tmp_path, monkeypatch, stop):
    # Stopped there (Ctrl-C, SIGTERM), or its second rename refused, a
    # rebuild left no index at the path and the old one's only copy in its
    # aside folder, marked finished: the next build of it, even one that
    # then failed, removed it.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    error = OSError(39, "Directory not empty") if stop == "second refused" else KeyboardInterrupt()
    if stop == "interrupted after the first rename":
        _in_a_rebuild_s_gap(index_dir, lambda: _raise(error), monkeypatch)
    else:
        _second_rename_stopped(index_dir, error, monkeypatch)
    with pytest.raises(type(error)) as caught:
        build_index((_passage(n) for n in range(5)), index_dir, progress=False)
    monkeypatch.undo()
    assert caught.value is error  # as it was: the command says "interrupted: ... a previous one there is unchanged"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert verify_index(index_dir) == 3


def _stopped_once_in_place(index_dir: Path, stop: BaseException, where: str, monkeypatch) -> None:
    """A rebuild of ``index_dir`` raises ``stop`` after its new index is
    renamed into place: as it marks the old index's folder finished
    (``where="mark"``), or as it removes the old index (``"tidy"``); once
    (its removal marks the folder finished again first)."""
    write_text, rmtree, raised = Path.write_text, shutil.rmtree, []

    def marking(self, data, *args, **kwargs):
        if (where == "mark" and self.name == OWNER_FILE and (self.parent / "index").exists() and "finished" in data
                and not raised):
            raised.append(stop)
            raise stop
        return write_text(self, data, *args, **kwargs)

    def removing(path, *args, **kwargs):
        if (where == "tidy" and Path(path).name == "index" and Path(path).parent.name.startswith(index_dir.name + ".")
                and not raised):
            raised.append(stop)
            raise stop
        return rmtree(path, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", marking)
    monkeypatch.setattr(shutil, "rmtree", removing)


def test_a_rebuild_stopped_once_its_new_index_is_in_place_keeps_it_and_removes_the_old_one(tmp_path, monkeypatch):
    # A Ctrl-C right after the second rename (as the old index's folder is
    # marked finished): the new index is the one to keep, the old one is
    # tidied, and nothing says the index is missing.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    _stopped_once_in_place(index_dir, KeyboardInterrupt(), "mark", monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        build_index((_passage(n) for n in range(5)), index_dir, progress=False)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert verify_index(index_dir) == 5


@pytest.mark.parametrize("where, stop, status", [("mark", KeyboardInterrupt(), 130), ("tidy", Terminated(), 143)])
def test_a_command_stopped_once_its_new_index_is_in_place_says_so(tmp_path, monkeypatch, capsys, where, stop, status):
    # Ctrl-C (or SIGTERM) after the second rename, as the old index's
    # folder was marked or removed: the command said "the index was not
    # written (a previous one there is unchanged)" over the new index.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    _write_jsonl(tmp_path / "c" / "five.jsonl", [_passage(n) for n in range(5)])
    _stopped_once_in_place(index_dir, stop, where, monkeypatch)
    assert index_main(["--input", str(tmp_path / "c" / "five.jsonl"), "--index", str(index_dir)]) == status
    monkeypatch.undo()
    said = capsys.readouterr().err.splitlines()[-1]
    assert verify_index(index_dir) == 5
    if where == "mark":  # the old index was removed after the stop
        assert said == f"interrupted: the new index is in place at {index_dir}."
        assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "idx"]
        return
    (aside,) = [p for p in tmp_path.iterdir() if p.name.startswith("idx.")]
    assert said == (f"interrupted: the new index is in place at {index_dir}; its old files at {aside} are left: "
                    "a later build of it removes them, or delete that folder.")
    assert build_index((_passage(n) for n in range(2)), index_dir, progress=False) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "idx"]


@pytest.mark.parametrize("again, status", [(KeyboardInterrupt(), 130), (Terminated(), 143)])
def test_a_second_stop_as_the_old_index_goes_back_says_where_it_is(tmp_path, monkeypatch, capsys, again, status,
                                                                   dead_pid):
    # Ctrl-C between a rebuild's renames, and again as the old index was
    # renamed back: the command said "a previous one there is unchanged",
    # the path empty.
    from assistant.kernel import owner_mark

    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    _write_jsonl(tmp_path / "c" / "five.jsonl", [_passage(n) for n in range(5)])
    rename = Path.rename

    def renaming(self, target):
        if Path(target) == index_dir and self.name.startswith(index_dir.name + "."):
            raise KeyboardInterrupt()
        if Path(target) == index_dir and self.name == "index":
            raise again
        return rename(self, target)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "rename", renaming)
        assert index_main(["--input", str(tmp_path / "c" / "five.jsonl"), "--index", str(index_dir)]) == status
    (aside,) = [p for p in tmp_path.iterdir() if p.name.startswith("idx.")]
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"interrupted: the index was not written; the previous one is at {aside / 'index'}: the next build of "
        f"{index_dir} puts it back (or move that folder to {index_dir}, then delete {aside}).")
    assert not index_dir.exists()
    # This process ended (as the command's does), the next build puts it back.
    (aside / OWNER_FILE).write_text(json.dumps(dict(owner_mark(), pid=dead_pid)))
    with pytest.raises(DataFormatError):
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "idx"]
    assert verify_index(index_dir) == 3


@pytest.mark.parametrize("stop, place", [(KeyboardInterrupt(), "elsewhere"),
                                         (OSError(39, "Directory not empty"), "the index cache"),
                                         (SystemExit(0), "elsewhere")])
def test_an_old_index_a_stopped_rebuild_cannot_put_back_is_kept_and_named(tmp_path, monkeypatch, stop, place):
    # Its rename back refused too, the old index is left aside: the error
    # says where, and no later build removes it (marked finished, it was).
    from assistant.kernel import owner_gone

    monkeypatch.setenv("CONVQA_CACHE", str(tmp_path / "cache"))
    parent = tmp_path / "cache" / "indexes" if place == "the index cache" else tmp_path / "elsewhere"
    index_dir = parent / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    with monkeypatch.context() as patch, pytest.raises(
            KeyboardInterrupt if isinstance(stop, KeyboardInterrupt) else IndexNotFoundError) as caught:
        _second_rename_stopped(index_dir, stop, patch, put_back_refused=True)
        build_index((_passage(n) for n in range(5)), index_dir, progress=False)
    (aside,) = [p for p in parent.iterdir()]
    assert owner_gone(aside) is None  # unmarked: no running build's (an open says "Build it"), no dead one's
    kept = (f"the previous index could not be put back \\(Device or resource busy\\) and is kept at "
            f"{re.escape(str(aside / 'index'))}: move that folder to {re.escape(str(index_dir))}, "
            f"then delete {re.escape(str(aside))}\\.")  # unmarked, it stays: the user removes it
    ended = "was stopped \\(SystemExit\\)" if isinstance(stop, SystemExit) else "failed \\(Directory not empty\\)"
    if isinstance(stop, KeyboardInterrupt):  # the command's "interrupted:" line
        assert re.fullmatch(f"the index was not written; {kept}", str(caught.value)), caught.value
    else:  # not a SystemExit's "failed (0)"
        assert re.fullmatch(f"No Lucene index at {re.escape(str(index_dir))}: its rebuild {ended}; {kept}",
                            str(caught.value)), caught.value
    old = time.time() - 2 * 24 * 3600  # in the cache, an unmarked folder unchanged for a day goes
    for path in [aside, *aside.iterdir()]:
        os.utime(path, (old, old))
    with pytest.raises(DataFormatError):  # a next build that fails
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert build_index((_passage(n) for n in range(2)), index_dir, progress=False) == 2
    assert sorted(p.name for p in parent.iterdir()) == sorted(["idx", aside.name])
    assert verify_index(aside / "index") == 3


def test_a_rebuild_whose_gap_another_build_fills_keeps_that_index_and_removes_its_old_one(tmp_path, monkeypatch):
    # Build B put its index at the path while build A's old index was aside:
    # A's rename failed (ENOTEMPTY), and A, taking "its staging folder still
    # there" for "no index in place", raised "No Lucene index at DIR", told
    # to move the old index into B's (nesting it), and kept it aside for good.
    index_dir, other = tmp_path / "idx", tmp_path / "b" / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    build_index((_passage(n) for n in range(7)), other, progress=False)
    _in_a_rebuild_s_gap(index_dir, lambda: os.rename(other, index_dir), monkeypatch)
    with pytest.raises(Exception) as caught:
        build_index((_passage(n) for n in range(5)), index_dir, progress=False)
    monkeypatch.undo()
    assert type(caught.value) is OSError and caught.value.errno == errno.ENOTEMPTY  # A's own failure, as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "idx"]
    assert verify_index(index_dir) == 7


def test_a_failed_build_s_unremovable_staging_folder_is_no_running_build(tmp_path, monkeypatch):
    # Its removal refused (EACCES), the staging folder kept this process's
    # live mark: an open of the index waited, then said a build of it ran.
    index_dir = tmp_path / "idx"
    rmtree = shutil.rmtree

    def refusing(path, *args, **kwargs):
        if Path(path).parent == tmp_path and Path(path).name.startswith("idx.") and kwargs.get("ignore_errors"):
            return None  # nothing removed
        return rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", refusing)
    with pytest.raises(DataFormatError):
        build_index(iter([]), index_dir, progress=False)
    monkeypatch.undo()
    assert len(list(tmp_path.glob("idx.*"))) == 1  # the staging folder stayed
    _no_build_runs_and_the_next_one_tidies(index_dir)


def test_a_build_s_marked_folders_are_readable_by_other_users_as_the_umask_allows(tmp_path, monkeypatch):
    # mkdtemp makes them 0700: another user serving the index could not
    # read the mark, and took a rebuild's gap for a missing index.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    write_text, modes = Path.write_text, []

    def recording(self, *args, **kwargs):
        if self.name == OWNER_FILE:
            modes.append(self.parent.stat().st_mode & 0o777)
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", recording)
    umask = os.umask(0o027)
    try:
        assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    finally:
        os.umask(umask)
    assert modes == [0o750, 0o750, 0o750]  # staging's mark, the old index's, its finished mark
    assert index_dir.stat().st_mode & 0o777 == 0o750


def test_a_build_in_a_group_shared_folder_keeps_its_setgid_bit(tmp_path, monkeypatch):
    # Cleared by the umask's chmod, the index's files took the builder's
    # own group, not the shared folder's: the serving account could not read them.
    import stat

    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o2775)
    index_dir = shared / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    write_text, kept = Path.write_text, []

    def recording(self, *args, **kwargs):
        if self.name == OWNER_FILE:
            kept.append(bool(self.parent.stat().st_mode & stat.S_ISGID))
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", recording)
    assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    assert kept == [True, True, True]  # staging's mark, the old index's, its finished mark
    assert index_dir.stat().st_mode & stat.S_ISGID


def test_a_folder_marked_finished_is_a_gone_owner_s_even_if_the_mark_cannot_be_written(tmp_path, monkeypatch):
    from assistant.kernel import mark_finished, mark_owner, owner_gone

    mark_owner(tmp_path)
    assert owner_gone(tmp_path) is False  # this process runs
    assert mark_finished(tmp_path) is True and owner_gone(tmp_path) is True
    mark_owner(tmp_path)

    def refused(self, *args, **kwargs):
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", refused)
    assert mark_finished(tmp_path) is False
    monkeypatch.undo()
    assert not (tmp_path / OWNER_FILE).exists() and owner_gone(tmp_path) is None  # no live process's folder


def test_a_mark_says_nothing_of_a_folder_it_was_moved_into(tmp_path):
    # A build killed between its rename into place and its mark's removal
    # left its mark in the index: a dated index named as a build's
    # (wiki.20240101) was then a dead build's to the next build of wiki.
    from assistant.kernel import mark_owner, owner_gone, owner_mark, remove_moved_mark

    (tmp_path / "wiki.abcd1234").mkdir()
    mark_owner(tmp_path / "wiki.abcd1234")
    (tmp_path / "wiki.abcd1234").rename(tmp_path / "wiki.20240101")
    assert owner_gone(tmp_path / "wiki.20240101") is None
    remove_moved_mark(tmp_path / "wiki.20240101")
    assert not (tmp_path / "wiki.20240101" / OWNER_FILE).exists()
    (tmp_path / "wiki.20240101" / OWNER_FILE).write_text(json.dumps(owner_mark()))  # an earlier version's: no name
    assert owner_gone(tmp_path / "wiki.20240101") is False
    remove_moved_mark(tmp_path / "wiki.20240101")
    assert (tmp_path / "wiki.20240101" / OWNER_FILE).exists()


def test_an_index_whose_build_died_between_its_renames_is_not_found(tmp_path):
    # A build that died there left its marked folder: no build runs, so the
    # open does not wait, and says to build the index.
    index_dir = tmp_path / "idx"
    aside = tmp_path / "idx.abcd1234"
    build_index((_passage(n) for n in range(3)), aside / "index", progress=False)
    (aside / OWNER_FILE).write_text(json.dumps({"pid": 2 ** 22 + 1, "started": "1", "host": socket.gethostname()}))
    start = time.monotonic()
    with pytest.raises(IndexNotFoundError, match=f"^No Lucene index at {re.escape(str(index_dir))}. Build it"):
        BM25Retriever.from_index(index_dir)
    assert time.monotonic() - start < 1


@pytest.mark.parametrize("seam, verify", _JAVA_OPENS)
def test_an_index_deleted_while_java_opens_it_is_not_found(tiny_index, tmp_path, monkeypatch, seam, verify):
    # Gone after Java's failed open, it read "changed while it was opened
    # (rebuilt?); try again", and again at every try.
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)

    def deleting(java_open):
        shutil.rmtree(index_dir, ignore_errors=True)
        return java_open()

    _around_java_opens(seam, deleting, monkeypatch)
    with pytest.raises(IndexNotFoundError) as caught:
        BM25Retriever.from_index(index_dir, verify=verify)
    assert not isinstance(caught.value, IndexChangedError)
    assert str(caught.value).startswith(f"No Lucene index at {index_dir}. Build it with")


def test_an_index_deleted_while_it_is_checked_is_not_found(tiny_index, tmp_path, monkeypatch):
    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    real_open = open

    def deleting_open(file, *args, **kwargs):
        if Path(file).parent == index_dir:
            shutil.rmtree(index_dir, ignore_errors=True)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deleting_open)
    with pytest.raises(IndexNotFoundError) as caught:
        verify_index(index_dir)
    assert not isinstance(caught.value, (IndexChangedError, IndexDamagedError))
    assert str(caught.value).startswith(f"No Lucene index at {index_dir}. Build it with")


def test_a_search_goes_on_while_an_index_is_checked(retriever, tiny_index, monkeypatch):
    # Reading an index's files for their checksums needs no Java: it holds
    # no Java lock, so another session's search completes while it runs.
    # The check is paused in its first CRC32 until that search is done.
    checking, searched, paused, failed = threading.Event(), threading.Event(), [], []
    crc32 = zlib.crc32

    def paused_crc32(data, value=0):
        if threading.current_thread() is opener and not checking.is_set():
            checking.set()
            # A safety net, no timing: set at once unless the search is blocked.
            paused.append(searched.wait(timeout=60))
        return crc32(data, value)

    def open_index():
        try:
            BM25Retriever.from_index(tiny_index)
        except Exception as error:  # reported by the assertions below
            failed.append(error)

    monkeypatch.setattr(zlib, "crc32", paused_crc32)
    opener = threading.Thread(target=open_index)
    opener.start()
    assert checking.wait(timeout=60), "the index's checksums were not read in Python"
    hits = retriever.search("Who was the father of Ada Lovelace?", 3)
    searched.set()
    opener.join()
    assert hits and paused == [True] and not failed


def test_lucene_failure_at_search_time_is_index_damaged(tiny_index, tmp_path):
    # Unchecked at open, damaged terms fail inside Lucene when a search reads them.
    retriever = BM25Retriever.from_index(_damaged_copy(tiny_index, tmp_path, "tim"), verify=False)
    with pytest.raises(IndexDamagedError, match="is damaged"):
        retriever.search("Who was the father of Ada Lovelace?", 3)
    with pytest.raises(IndexDamagedError, match="is damaged"):
        retriever.batch_search(["Ada Lovelace", "Paris"], k=3)


def test_both_builders_refuse_bad_threads_before_reading_anything(tmp_path, tiny_collection):
    from assistant.kernel import ConfigError
    from assistant.retrieval import build_index, index_collection

    def unread():
        raise AssertionError("the passages were read")
        yield  # pragma: no cover

    with pytest.raises(ConfigError, match="threads must be at least 1"):
        build_index(unread(), tmp_path / "a", threads=0)
    with pytest.raises(ConfigError, match="threads must be at least 1"):
        index_collection(tiny_collection, tmp_path / "b", threads=0)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_build_index_takes_records_without_title_or_url(tmp_path):
    """As a JSONL collection's lines, a record needs only id and contents:
    build_index raised a bare KeyError for a missing title or url."""
    records = [{"id": "curie", "contents": "Marie Curie studied radioactivity.", "title": "Marie Curie"},
               {"id": 7, "contents": "Pierre Curie studied crystals.", "url": "https://example.org/pierre"},
               {"id": "polonium", "contents": "Polonium was named after Poland.", "title": None, "url": None}]
    assert build_index(records, tmp_path / "idx", progress=False) == 3
    hits = BM25Retriever.from_index(tmp_path / "idx").search("Curie studied", 3)
    assert sorted((h.id, h.title, h.url) for h in hits) == [
        ("7", "", "https://example.org/pierre"), ("curie", "Marie Curie", "")]


@pytest.mark.parametrize("record, message", [
    ({"id": "b", "text": "Pierre Curie."}, """passage 2 (id 'b'): no "contents"; "id" and "contents" are required"""),
    ({"contents": "Pierre Curie."}, 'passage 2: no "id"; "id" and "contents" are required'),
    ({"id": "b", "contents": None}, """passage 2 (id 'b'): "contents" must be a string, not NoneType."""),
    ({"id": "b", "contents": ["Pierre", "Curie"]}, """passage 2 (id 'b'): "contents" must be a string, not list."""),
    ({"id": "b", "contents": "Pierre.", "title": 3}, """passage 2 (id 'b'): "title" must be a string, not int."""),
    ({"id": None, "contents": "Pierre."}, 'passage 2: "id" must be a string, not NoneType.'),
    ("Pierre Curie.", "passage 2: a passage is a dict (\"id\" and \"contents\" are required"),
])
def test_build_index_refuses_a_bad_record_by_its_place_and_id(tmp_path, record, message):
    from assistant.kernel import Passage

    good = {"id": "a", "contents": "Marie Curie."}
    with pytest.raises(DataFormatError) as caught:
        build_index([good, record], tmp_path / "idx", progress=False)
    assert str(caught.value).startswith(message)
    assert not (tmp_path / "idx").exists() and list(tmp_path.iterdir()) == []
    with pytest.raises(DataFormatError, match="^passage 1: a passage is a dict .*, not Passage.$"):
        build_index([Passage("a", "Marie Curie.", 0.0)], tmp_path / "idx", progress=False)
    with pytest.raises(TypeError, match="^passages must be an iterable of dicts, not one dict$"):
        build_index(good, tmp_path / "idx", progress=False)


@pytest.mark.parametrize("bad", ["empty", "blank", "too long"])
def test_a_passage_lucene_would_refuse_is_named_by_its_place_and_id_on_every_route(tmp_path, capsys, bad):
    """An empty contents was refused as 'Lucene refused 1 of passages
    1-512; see the log above' (no log), or, with --threads 2, with counts
    and no id; a contents over Jackson's 20,000,000 characters with 24
    lines of Java stack trace and 'every passage needs a non-empty
    contents'. The passage is now checked in Python, whatever the route."""
    from assistant.retrieval import MAX_FIELD_CHARS

    contents = {"empty": "", "blank": " \n\t", "too long": "word " * (MAX_FIELD_CHARS // 5 + 1)}[bad]
    reason = ('"contents" is empty; every passage needs text to index.' if bad != "too long" else
              f"title and contents are {len(contents):,} characters long; Anserini's JSON reader takes "
              f"at most {MAX_FIELD_CHARS:,} a field: split the passage.")
    # Past the first 1000 lines, so that --threads 2 has Anserini read the file itself.
    records = [dict(_passage(n), title="") for n in range(1200)]
    records[1100] = dict(records[1100], contents=contents)
    collection = tmp_path / "coll" / "a.jsonl"
    _write_jsonl(collection, records)
    for threads in ("1", "2"):
        assert index_main(["--input", str(collection), "--index", str(tmp_path / "idx"), "--threads", threads]) == 2
        assert capsys.readouterr().err.splitlines()[-1] == f"error: {collection}, line 1101 (id 'p1100'): {reason}"
    with pytest.raises(DataFormatError) as caught:
        build_index(iter(records), tmp_path / "idx", progress=False)
    assert str(caught.value) == f"passage 1101 (id 'p1100'): {reason}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coll"]  # no index, staging or links left


def test_an_id_longer_than_a_lucene_term_is_named(tmp_path):
    with pytest.raises(DataFormatError, match=r"^passage 2 \(id 'xxx.*'\): \"id\" is 32,767 bytes long; "
                                              r"Lucene takes an id \(a term\) of at most 32,766 bytes"):
        build_index([_passage(1), {"id": "x" * 32767, "contents": "text"}], tmp_path / "idx", progress=False)
    assert build_index([{"id": "x" * 32766, "contents": "text"}], tmp_path / "idx", progress=False) == 1


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_duplicate_id_names_its_two_lines(tmp_path, capsys, threads):
    # It was 'Duplicate passage id ...: ids must be unique.', naming no file or line.
    records = [dict(_passage(n), title="") for n in range(1200)]
    _write_jsonl(tmp_path / "coll" / "a.jsonl", records[:600])
    _write_jsonl(tmp_path / "coll" / "b.jsonl", records[600:] + [dict(records[10], contents="again")])
    assert index_main(["--input", str(tmp_path / "coll"), "--index", str(tmp_path / "idx"),
                       "--threads", threads]) == 2
    coll = tmp_path / "coll"
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: Duplicate passage id 'p10' ({coll / 'a.jsonl'}, line 11 and {coll / 'b.jsonl'}, line 601): "
        "ids must be unique.")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coll"]


def test_a_folder_with_nothing_to_index_says_what_it_takes(tmp_path, capsys):
    (tmp_path / "coll").mkdir()
    (tmp_path / "coll" / "a.csv").write_text("id,contents\n")
    assert index_main(["--input", str(tmp_path / "coll"), "--index", str(tmp_path / "idx")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {tmp_path / 'coll'}: no .jsonl passages or .txt, .md, .html, .htm, .pdf documents in this folder "
        "(or its subfolders).")


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_the_index_folder_and_files_follow_the_umask(tmp_path, umask):
    # The folder was mkdtemp's 0700 whatever the umask: a copy made with its
    # modes (rsync -a) could not be opened by another user.
    import os
    import stat

    before = os.umask(umask)
    try:
        build_index(iter([_passage(1), _passage(2)]), tmp_path / "idx", progress=False)
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "idx").stat().st_mode) == 0o777 & ~umask
    assert {stat.S_IMODE(f.stat().st_mode) for f in (tmp_path / "idx").iterdir()} == {0o666 & ~umask}


def test_a_build_removes_the_staging_folders_dead_builds_left_and_keeps_live_ones(tmp_path, dead_pid):
    # SIGKILL (or a machine's stop) runs no cleanup: its partial index stayed
    # next to the index for good, tens of GB at corpus scale.
    import socket

    from assistant.kernel import OWNER_FILE, owner_mark

    def staging(name: str, owner: dict | None, links: bool = False) -> None:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "_0.fdt").write_bytes(b"partial")
        if owner is not None:
            (folder / OWNER_FILE).write_text(json.dumps(owner))
        if links:
            (tmp_path / f"{name}.input.ab12cd34").mkdir()
            (tmp_path / f"{name}.input.ab12cd34" / "000000.jsonl").symlink_to(tmp_path / "nowhere.jsonl")

    dead = dead_pid
    staging("idx.dead0001", dict(owner_mark(), pid=dead), links=True)
    staging("idx.reused01", dict(owner_mark(), started="another start"))  # our pid, another process's start
    staging("idx.live0001", owner_mark())  # this process: a build under way
    staging("idx.otherhst", dict(owner_mark(), pid=dead, host=socket.gethostname() + "-other"))
    staging("idx.unmarked", None)  # an older version's, or one just made: cannot be told
    staging("idx.baseline", None)  # a user's own folder
    staging("idy.dead0002", dict(owner_mark(), pid=dead))  # another index's
    (tmp_path / "idx.orphan01.input.zz99yy88").mkdir()  # links whose staging is gone
    assert build_index(iter([_passage(1)]), tmp_path / "idx", progress=False) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "idx", "idx.baseline", "idx.live0001", "idx.otherhst", "idx.unmarked", "idy.dead0002"]
    assert not (tmp_path / "idx" / OWNER_FILE).exists()


@pytest.mark.parametrize("case", ["killed between the renames", "its put-back refused", "killed after them"])
def test_an_old_index_a_dead_rebuild_left_aside_is_put_back_never_removed(tmp_path, monkeypatch, capsys, case,
                                                                          dead_pid):
    # SIGKILL between a rebuild's two renames (or a second Ctrl-C as it put
    # the old index back, or its folder's unmark refused) left the old
    # index's only copy aside, marked by a process now dead: the next build
    # of it, even one that then failed, removed it.
    from assistant.kernel import owner_mark

    index_dir, aside = tmp_path / "idx", tmp_path / "idx.killed01"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    aside.mkdir()
    (aside / OWNER_FILE).write_text(json.dumps(dict(owner_mark(), pid=dead_pid)))
    index_dir.rename(aside / "index")
    if case == "killed after them":  # the new index went in: the old one is superseded
        build_index((_passage(n) for n in range(5)), tmp_path / "new" / "idx", progress=False)
        os.rename(tmp_path / "new" / "idx", index_dir)
        (tmp_path / "new").rmdir()
    rename = Path.rename

    def refused(self, target):
        if self == aside / "index":
            raise OSError(5, "Input/output error", str(self))
        return rename(self, target)

    with monkeypatch.context() as patch:
        if case == "its put-back refused":  # as when another build's put-back won the race: nothing removed
            patch.setattr(Path, "rename", refused)
        with pytest.raises(DataFormatError):  # a next build that fails
            build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    if case == "its put-back refused":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["idx.killed01"]
        assert verify_index(aside / "index") == 3
        with pytest.raises(DataFormatError):  # the next, the OS willing, puts it back
            build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert verify_index(index_dir) == (5 if case == "killed after them" else 3)
    put_back = f"note: the index at {index_dir}, which a stopped rebuild had moved to {aside}, is put back."
    assert (put_back in capsys.readouterr().err.splitlines()) == (case != "killed after them")


def _aside_of_a_dead_rebuild(index_dir: Path, name: str, passages: int, dead_pid: int, *, finished: bool = False,
                             age_s: float | None = None) -> Path:
    """An old index of ``passages`` passages in the aside folder ``name``
    beside ``index_dir``, as a rebuild killed between its two renames left
    it (marked by the ended process ``dead_pid``), or, ``finished``, one
    killed once its new index was in; its folder last changed ``age_s`` ago."""
    from assistant.kernel import owner_mark

    aside = index_dir.parent / name
    build_index((_passage(n) for n in range(passages)), aside / "built", progress=False)
    (aside / OWNER_FILE).write_text(json.dumps(dict(owner_mark(), pid=dead_pid, **({"finished": True} if finished
                                                                                     else {}))))
    (aside / "built").rename(aside / "index")
    if age_s is not None:
        when = time.time() - age_s
        os.utime(aside, (when, when))
    return aside


def test_an_old_index_a_finished_rebuild_left_aside_is_removed_never_put_back(tmp_path, capsys, dead_pid):
    # Marked finished, its rebuild's new index went in: the old one is
    # superseded even though that index was deleted since (an empty path).
    index_dir = tmp_path / "idx"
    _aside_of_a_dead_rebuild(index_dir, "idx.finish01", 3, dead_pid, finished=True)
    with pytest.raises(DataFormatError):  # a next build that fails
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert "is put back" not in capsys.readouterr().err


@pytest.mark.parametrize("newer", ["idx.aaaa0001", "idx.zzzz0001"])
def test_of_two_old_indexes_dead_rebuilds_left_aside_the_newest_is_put_back(tmp_path, capsys, newer, dead_pid):
    # Rebuild A killed in its gap, another build's index put in, then
    # rebuild B killed in its gap: the next build put back whichever aside
    # folder's name sorted first and removed the other, the newer index too.
    index_dir = tmp_path / "idx"
    older = "idx.zzzz0001" if newer == "idx.aaaa0001" else "idx.aaaa0001"
    _aside_of_a_dead_rebuild(index_dir, older, 3, dead_pid, age_s=7200)
    aside = _aside_of_a_dead_rebuild(index_dir, newer, 5, dead_pid, age_s=3600)
    with pytest.raises(DataFormatError):  # a next build that fails
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert verify_index(index_dir) == 5
    put_back = f"note: the index at {index_dir}, which a stopped rebuild had moved to {aside}, is put back."
    assert [line for line in capsys.readouterr().err.splitlines() if "put back" in line] == [put_back]


def test_when_the_newest_old_index_cannot_be_put_back_no_older_one_is(tmp_path, monkeypatch, capsys, dead_pid):
    # The newest one's rename refused (EBUSY), the next was put back in its
    # place, and the next cleanup removed the newest as superseded.
    index_dir = tmp_path / "idx"
    _aside_of_a_dead_rebuild(index_dir, "idx.aaaa0001", 3, dead_pid, age_s=7200)
    newest = _aside_of_a_dead_rebuild(index_dir, "idx.zzzz0001", 5, dead_pid, age_s=3600)
    rename = Path.rename

    def refusing(self, target):
        if self == newest / "index":
            raise OSError(errno.EBUSY, "Device or resource busy", str(self))
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", refusing)
    with pytest.raises(DataFormatError):  # a next build that fails
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx.aaaa0001", "idx.zzzz0001"]  # both kept
    monkeypatch.undo()
    with pytest.raises(DataFormatError):
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"] and verify_index(index_dir) == 5
    assert "is put back" in capsys.readouterr().err


def test_an_old_index_a_dead_rebuild_left_aside_waits_while_a_live_rebuild_is_in_its_gap(tmp_path, monkeypatch,
                                                                                        dead_pid):
    # Build P started while live rebuild L had moved the index aside and not
    # yet put its new one in: P put back a dead rebuild's older index, L's
    # second rename failed, and L's put-back, finding an index in place,
    # deleted the one it had moved aside, the newest.
    index_dir, dead = tmp_path / "idx", tmp_path / "idx.killed01"
    build_index((_passage(n) for n in range(7)), index_dir, progress=False)
    failed = []

    def another_build():
        # Another rebuild, past its cleanup when L started, killed in its gap.
        _aside_of_a_dead_rebuild(index_dir, dead.name, 3, dead_pid)
        with pytest.raises(DataFormatError) as caught:  # P, which fails past its cleanup
            build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
        failed.append(caught.value)

    _in_a_rebuild_s_gap(index_dir, another_build, monkeypatch)
    assert build_index((_passage(n) for n in range(9)), index_dir, progress=False) == 9  # L
    monkeypatch.undo()
    assert len(failed) == 1 and verify_index(index_dir) == 9
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx", dead.name]  # kept while L ran
    assert build_index((_passage(n) for n in range(2)), index_dir, progress=False) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # then superseded


def _staging_of_a_build_killed_before_its_rename(index_dir: Path, name: str, passages: int, dead_pid: int,
                                                 monkeypatch) -> Path:
    """The staging folder ``name`` beside ``index_dir`` as a build of
    ``passages`` passages leaves it when killed (SIGKILL) just before its
    rename into place: its index complete and checked, its mark (if it has
    one there) naming the ended process ``dead_pid``."""
    from assistant.kernel import OWNER_FILE

    folder, elsewhere, rename = index_dir.parent / name, index_dir.parent / "elsewhere", Path.rename

    def copying(self, target):  # what the disk holds as the rename starts
        if Path(target) == elsewhere / "built":
            shutil.copytree(self, folder, symlinks=True)
        return rename(self, target)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "rename", copying)
        build_index((_passage(n) for n in range(passages)), elsewhere / "built", progress=False)
    shutil.rmtree(elsewhere)
    if (folder / OWNER_FILE).exists():
        mark = json.loads((folder / OWNER_FILE).read_text())
        # The copy's mark names the folder as the build's own would.
        (folder / OWNER_FILE).write_text(json.dumps(dict(mark, pid=dead_pid, folder=folder.name)))
    return folder


@pytest.mark.parametrize("case", ["a first build", "a rebuild", "a first build while another build runs",
                                  "a first build in its checks"])
def test_a_build_killed_before_its_rename_leaves_no_copy_for_good_and_loses_no_index(tmp_path, monkeypatch, capsys,
                                                                                      case, dead_pid):
    # Its mark was removed before its rename: killed there, its complete
    # copy was a folder no later build could tell from a user's own, and it
    # stayed for good. Marked up to the rename, it is a dead build's: removed
    # when an index is in place (as a stopped build's is), kept while none
    # is (a build puts none in place: put in by a build of another
    # collection that then failed, it left that collection in a path that
    # was empty; the app's start puts the default collection's in place)
    # and while a live build of it runs. Killed before its checks were
    # done, its index is no usable one.
    from assistant.kernel import owner_mark

    index_dir = tmp_path / "idx"
    if case == "a rebuild":
        build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    killed = _staging_of_a_build_killed_before_its_rename(index_dir, "idx.killed01", 5, dead_pid, monkeypatch)
    if case.endswith("in its checks"):
        (killed / "convqa.json").unlink()  # written once the checks have passed
    if case.endswith("while another build runs"):
        (tmp_path / "idx.live0001").mkdir()
        (tmp_path / "idx.live0001" / OWNER_FILE).write_text(json.dumps(owner_mark()))  # this process's
    with pytest.raises(DataFormatError):  # a next build that fails
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    said = capsys.readouterr().err
    if case == "a first build":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["idx.killed01"] and "put in place" not in said
        assert build_index((_passage(n) for n in range(2)), index_dir, progress=False) == 2
        assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # superseded once an index is in place
        assert not (index_dir / OWNER_FILE).exists()
        return
    if case.endswith("while another build runs"):
        assert sorted(p.name for p in tmp_path.iterdir()) == ["idx.killed01", "idx.live0001"]
        assert "put in place" not in said
        return
    if case.endswith("in its checks"):
        assert sorted(p.name for p in tmp_path.iterdir()) == [] and "put in place" not in said
        return
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert verify_index(index_dir) == 3
    assert not (index_dir / OWNER_FILE).exists() and "put in place" not in said


def test_an_old_index_a_dead_rebuild_left_aside_damaged_is_not_put_back(tmp_path, capsys, dead_pid):
    # Its removal killed part way (SIGKILL in the rmtree of a large folder)
    # before its folder could be marked finished: its commit was there, some
    # of its files not, and it was put back as the index. Nor is it removed:
    # a failed check does not tell damage from a file unreadable just now
    # (EIO), and it may be the only copy of the old index.
    index_dir = tmp_path / "idx"
    aside = _aside_of_a_dead_rebuild(index_dir, "idx.aside001", 3, dead_pid)
    next(p for p in (aside / "index").iterdir() if p.name.startswith("_") and p.suffix != ".si").unlink()
    for _ in range(2):  # the app's start looks, then its build: the user is told once
        with pytest.raises(DataFormatError):  # a next build that fails
            build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    err = capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx.aside001"] and "put back" not in err
    assert err.count(f"note: {aside}, left by a stopped build of {index_dir}, is kept as it is") == 1


def test_an_old_index_aside_with_a_file_unreadable_just_now_is_kept(tmp_path, capsys, dead_pid, monkeypatch):
    # EIO (a stale NFS handle) reading one of its files was "damaged": the
    # folder, the only copy of the old index, was removed as a dead build's.
    index_dir = tmp_path / "idx"
    aside = _aside_of_a_dead_rebuild(index_dir, "idx.aside001", 3, dead_pid)
    real_open = open

    def eio(file, *args, **kwargs):
        if Path(file).parent == aside / "index" and Path(file).name.startswith("_"):
            raise OSError(errno.EIO, "Input/output error", str(file))
        return real_open(file, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr("builtins.open", eio)
        with pytest.raises(DataFormatError):  # a next build that fails
            build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx.aside001"]
    assert f"note: {aside}, left by" in capsys.readouterr().err
    assert verify_index(aside / "index") == 3


def test_an_old_index_another_process_puts_back_while_it_is_checked_stops_no_build(tmp_path, dead_pid, monkeypatch):
    # Two cleanups at once (two app starts): the other one's put-back, during
    # this one's check of the copy, made the check's "not found" escape, and
    # the build (the app's start) failed, an index in place.
    index_dir = tmp_path / "idx"
    aside = _aside_of_a_dead_rebuild(index_dir, "idx.aside001", 5, dead_pid)
    real_open, done = open, []

    def other_process_puts_back(file, *args, **kwargs):
        if not done and Path(file).parent == aside / "index":
            done.append(file)
            (aside / "index").rename(index_dir)
            file = index_dir / Path(file).name
        return real_open(file, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr("builtins.open", other_process_puts_back)
        assert build_index((_passage(n) for n in range(3)), index_dir, progress=False) == 3
    assert done and verify_index(index_dir) == 3


def test_a_killed_build_s_copy_only_kept_is_not_read_end_to_end(tmp_path, dead_pid, monkeypatch):
    # Each build with no index in place read every file of the copy (its
    # check) and then kept it as it was: put in place by the app's start only.
    index_dir = tmp_path / "idx"
    killed = _staging_of_a_build_killed_before_its_rename(index_dir, "idx.killed01", 5, dead_pid, monkeypatch)
    real_open, read = open, []

    def counted(file, *args, **kwargs):
        if Path(file).parent == killed and Path(file).name.startswith(("_", "segments_")):
            read.append(Path(file).name)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counted)
    with pytest.raises(DataFormatError):  # a next build that fails
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert read == [] and sorted(p.name for p in tmp_path.iterdir()) == ["idx.killed01"]


def test_two_threads_leaving_one_folder_hold_no_descriptor_unclosed(tmp_path, dead_pid, monkeypatch):
    # Both cleanups (two uploads indexed at once) could neither mark finished
    # nor remove a dead build's folder: the second thread's descriptor of it
    # replaced the first's, which stayed open for good.
    index_dir = tmp_path / "idx"
    dead = _aside_of_a_dead_rebuild(index_dir, "idx.aside001", 1, dead_pid, finished=True)
    write_text, unlink, rmtree, os_open = Path.write_text, Path.unlink, shutil.rmtree, os.open
    other, ended = [], []

    def refused(self, *args, **kwargs):  # its dead build's mark stays: both threads find it
        if self == dead / OWNER_FILE:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return unlink(self, *args, **kwargs)

    def disk_full(self, data, *args, **kwargs):
        if self.name == OWNER_FILE and "finished" in data:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return write_text(self, data, *args, **kwargs)

    def busy(path, *args, **kwargs):
        return None if Path(path).name.startswith("idx.") else rmtree(path, *args, **kwargs)

    def failing_build():
        try:
            build_index(iter([]), index_dir, progress=False)
        except DataFormatError as error:
            ended.append(error)

    def second_thread_meanwhile(path, flags, *args, **kwargs):
        if Path(path) == dead and flags & os.O_DIRECTORY and not other:
            other.append(threading.Thread(target=failing_build))
            other[0].start()
            other[0].join(1)  # it runs to its end, unless it waits for this one
        return os_open(path, flags, *args, **kwargs)

    fds = len(os.listdir("/proc/self/fd"))
    with monkeypatch.context() as patch:
        patch.setattr(Path, "write_text", disk_full)
        patch.setattr(shutil, "rmtree", busy)
        patch.setattr(Path, "unlink", refused)
        patch.setattr(os, "open", second_thread_meanwhile)
        failing_build()
        other[0].join()
    failing_build()  # its builds remove what they left, closing what they held
    assert len(ended) == 3 and sorted(p.name for p in tmp_path.iterdir()) == [] and len(os.listdir("/proc/self/fd")) == fds


def test_a_build_folder_whose_removal_is_killed_part_way_is_no_index_to_put_in_place(tmp_path, monkeypatch):
    # The removal of a complete copy (its first build's rename refused)
    # killed part way: its mark a dead build's, its commit and record left,
    # some of its files gone, it was put in place as the index. Marked
    # finished, its record gone, before the removal starts, it is none.
    from assistant.kernel import owner_finished

    index_dir, rename = tmp_path / "idx", Path.rename

    def refused(self, target):
        if Path(target) == index_dir:
            raise PermissionError(errno.EACCES, "Permission denied", str(target))
        return rename(self, target)

    class Killed(BaseException):
        pass

    def killed_part_way(path, *args, **kwargs):  # SIGKILL as the first data file goes
        next(p for p in Path(path).iterdir() if p.name.startswith("_")).unlink()
        raise Killed

    monkeypatch.setattr(Path, "rename", refused)
    monkeypatch.setattr(shutil, "rmtree", killed_part_way)
    with pytest.raises(Killed):
        build_index((_passage(n) for n in range(5)), index_dir, progress=False)
    monkeypatch.undo()
    (left,) = tmp_path.iterdir()
    assert owner_finished(left) and not (left / "convqa.json").exists()


def test_a_folder_made_again_where_this_process_left_one_is_never_taken_for_it(tmp_path, monkeypatch):
    # Known by its (device, inode) alone, a folder this process had left
    # (neither marked finished nor removed) was taken for the one a user
    # made again at its path most times: ext4 hands the freed inode to the
    # next folder made. Its later build removed the user's folder.
    index_dir, write_text, rmtree = tmp_path / "idx", Path.write_text, shutil.rmtree

    def disk_full(self, data, *args, **kwargs):
        if self.name == OWNER_FILE and "finished" in data:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return write_text(self, data, *args, **kwargs)

    def busy(path, *args, **kwargs):
        if Path(path).name.startswith("idx."):
            return None
        return rmtree(path, *args, **kwargs)

    for trial in range(20):
        with monkeypatch.context() as patch:
            patch.setattr(Path, "write_text", disk_full)
            patch.setattr(shutil, "rmtree", busy)
            with pytest.raises(DataFormatError):  # a build that fails, its folder left
                build_index(iter([]), index_dir, progress=False)
        (left,) = tmp_path.iterdir()
        shutil.rmtree(left)
        left.mkdir()
        (left / "notes.txt").write_text("mine")
        with pytest.raises(DataFormatError):
            build_index(iter([]), index_dir, progress=False)
        assert (left / "notes.txt").exists(), f"trial {trial}"
        shutil.rmtree(left)


@pytest.mark.parametrize("wiki", ["in place", "not there"])
def test_a_mark_a_killed_build_left_in_its_index_makes_no_index_a_dead_build_s(tmp_path, monkeypatch, dead_pid, wiki):
    # Killed between its rename into place and its mark's removal, a build
    # of a user's dated index (wiki.20240101) left its mark in it: the
    # folder, named as a build's of wiki, was then removed by the next build
    # of wiki, or put in its place. The mark names the folder it was
    # written in, and says nothing of another; one left in the index a
    # build is of goes at its cleanup.
    dated, index_dir, unlink = tmp_path / "wiki.20240101", tmp_path / "wiki", Path.unlink

    def killed_before_unlink(self, *args, **kwargs):
        if self.name == OWNER_FILE and self.parent in (dated, index_dir):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return unlink(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "unlink", killed_before_unlink)
        build_index((_passage(n) for n in range(7)), dated, progress=False)
        if wiki == "in place":
            build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    for folder in [dated, index_dir] if wiki == "in place" else [dated]:
        mark = json.loads((folder / OWNER_FILE).read_text())
        (folder / OWNER_FILE).write_text(json.dumps(dict(mark, pid=dead_pid)))
    with pytest.raises(DataFormatError):  # a next build of wiki, which fails
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == (["wiki", "wiki.20240101"] if wiki == "in place"
                                                          else ["wiki.20240101"])
    assert verify_index(dated) == 7
    assert not (index_dir / OWNER_FILE).exists()


def test_a_dead_build_s_copy_whose_record_cannot_be_read_now_is_left_alone(tmp_path, monkeypatch, dead_pid):
    # ESTALE (or EIO) reading its convqa.json: taken for an incomplete
    # copy, the only complete one was removed, where a folder that cannot
    # be examined is otherwise left alone.
    index_dir = tmp_path / "idx"
    killed = _staging_of_a_build_killed_before_its_rename(index_dir, "idx.killed01", 5, dead_pid, monkeypatch)
    read_text = Path.read_text

    def stale(self, *args, **kwargs):
        if self == killed / "convqa.json":
            raise OSError(errno.ESTALE, "Stale file handle", str(self))
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", stale)
    with pytest.raises(DataFormatError):  # a next build that fails
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx.killed01"]


def test_a_rebuild_killed_between_its_renames_leaves_the_old_index_and_no_copy_of_the_new(tmp_path, monkeypatch,
                                                                                           capsys, dead_pid):
    # Both of its folders are a dead build's: the old index goes back, and
    # the new one, superseded by it as a stopped rebuild's is, is removed.
    index_dir = tmp_path / "idx"
    aside = _aside_of_a_dead_rebuild(index_dir, "idx.aside001", 3, dead_pid)
    _staging_of_a_build_killed_before_its_rename(index_dir, "idx.killed01", 5, dead_pid, monkeypatch)
    with pytest.raises(DataFormatError):  # a next build that fails
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert verify_index(index_dir) == 3
    assert [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")] == [
        f"note: the index at {index_dir}, which a stopped rebuild had moved to {aside}, is put back."]


@pytest.mark.parametrize("case", ["another first build's index", "a cleanup's put-back"])
def test_a_first_build_whose_empty_path_fills_as_it_renames_puts_its_index_in(tmp_path, monkeypatch, case, dead_pid):
    # Just before a first build's rename into the empty path, another
    # first build's index landed there, or another build's cleanup put back
    # an old index a dead rebuild had left aside: the rename failed with a
    # raw "OSError: [Errno 39] Directory not empty" once all was indexed.
    from assistant.kernel import owner_mark

    index_dir, other = tmp_path / "idx", tmp_path / "other"
    build_index((_passage(n) for n in range(3)), other, progress=False)
    rename, seen = Path.rename, []

    def filling(self, target):
        if Path(target) == index_dir and self.name.startswith("idx.") and not seen:
            if case == "a cleanup's put-back":
                aside = tmp_path / "idx.killed01"  # a rebuild killed in its gap, after this build's cleanup
                aside.mkdir()
                (aside / OWNER_FILE).write_text(json.dumps(dict(owner_mark(), pid=dead_pid)))
                rename(other, aside / "index")
                with pytest.raises(DataFormatError):  # a third build, which fails past its cleanup
                    build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
            else:
                rename(other, index_dir)
            seen.append(index_dir.exists())
        return rename(self, target)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "rename", filling)
        assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    # The cleanup leaves the old index aside while this build's marked
    # staging folder shows a build running: its index is to come.
    assert seen == [case != "a cleanup's put-back"]
    assert verify_index(index_dir) == 5
    with pytest.raises(DataFormatError):  # a next build, which removes what is superseded
        build_index(iter([_passage(1), _passage(1)]), index_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_a_first_build_whose_rename_is_refused_says_the_os_s_reason_and_leaves_nothing(tmp_path, monkeypatch):
    # Refused with the path still empty, the rename is no race to go round:
    # its own error is the one to say, not a later step's "No such file".
    index_dir, rename = tmp_path / "idx", Path.rename
    refused = PermissionError(errno.EACCES, "Permission denied", str(index_dir))

    def refusing(self, target):
        if Path(target) == index_dir and self.name.startswith("idx."):
            raise refused
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", refusing)
    with pytest.raises(PermissionError) as caught:
        build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    assert caught.value is refused
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("then", ["left as it was", "made again by the user"])
def test_an_old_index_this_process_could_neither_mark_nor_remove_goes_at_its_next_build(tmp_path, monkeypatch,
                                                                                          capsys, then):
    # Its folder's finished mark refused (a full disk) and its removal too
    # (NFS's busy files): unmarked, no build could tell it from a user's
    # folder, and it stayed for good. The process that left it knows it:
    # its next build removes it, and never a folder made again at its path.
    index_dir = tmp_path / "idx"
    build_index((_passage(n) for n in range(3)), index_dir, progress=False)
    write_text, rmtree = Path.write_text, shutil.rmtree

    def disk_full(self, data, *args, **kwargs):
        if self.name == OWNER_FILE and "finished" in data:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return write_text(self, data, *args, **kwargs)

    def busy(path, *args, **kwargs):
        if Path(path).parent.name.startswith("idx.") or Path(path).name.startswith("idx."):
            if kwargs.get("ignore_errors"):
                return None
            raise OSError(errno.EBUSY, "Device or resource busy", str(path))
        return rmtree(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "write_text", disk_full)
        patch.setattr(shutil, "rmtree", busy)
        assert build_index((_passage(n) for n in range(5)), index_dir, progress=False) == 5
    (aside,) = [p for p in tmp_path.iterdir() if p.name != "idx"]
    assert not (aside / OWNER_FILE).exists()
    assert capsys.readouterr().err.endswith("could not be removed (Device or resource busy): delete that folder.\n")
    if then == "made again by the user":
        shutil.rmtree(aside)
        aside.mkdir()
        (aside / "notes.txt").write_text("mine")
    assert build_index((_passage(n) for n in range(2)), index_dir, progress=False) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == (["idx"] if then == "left as it was" else ["idx", aside.name])


def test_sigterm_stops_a_build_as_ctrl_c_does_removing_its_staging_folder(tmp_path):
    """SIGTERM (timeout, docker stop) ended the process at once, leaving the
    staging folder; now the build's cleanup runs and the old index stays."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    build_index(iter([_passage(1)]), tmp_path / "idx", progress=False)
    script = """
import sys, time
import assistant.index as cli
from assistant.retrieval import build_index

def endless():  # passages without end, a little at a time: the build is under way until stopped
    for number in range(10**9):
        yield {"id": str(number), "contents": "Ada wrote notes."}
        if number == 0:
            print("building", flush=True)  # the staging folder is there
        time.sleep(0.001)

cli.index_collection = lambda path, index_dir, **_: build_index(endless(), index_dir, progress=False)
sys.exit(cli.main(sys.argv[1:]))
"""
    (tmp_path / "coll.jsonl").write_text(json.dumps(_passage(2)) + "\n")
    process = subprocess.Popen([sys.executable, "-c", script, "--input", str(tmp_path / "coll.jsonl"),
                                "--index", str(tmp_path / "idx")], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1])
    try:
        assert process.stdout.readline() == "building\n"
        assert len(list(tmp_path.glob("idx.*"))) == 1  # its staging folder
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert err.splitlines()[-1] == "interrupted: the index was not written (a previous one there is unchanged)."
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coll.jsonl", "idx"]
    assert BM25Retriever.from_index(tmp_path / "idx").size == 1


def test_an_html_heading_that_repeats_the_title_is_not_shown_twice(tmp_path):
    # The passage read 'Ada Lovelace Ada Lovelace was ...' under the title
    # 'Ada Lovelace': the page's <h1> and the start of its text, after the
    # <title> the app shows above it.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ada.html").write_text(
        "<html><head><title>Ada Lovelace</title></head><body><h1>ADA LOVELACE</h1>"
        "<p>Ada Lovelace wrote the first program.</p><p>She worked with Babbage.</p></body></html>")
    (docs / "other.html").write_text(  # a heading that says more than the title stays
        "<html><head><title>Babbage</title></head><body><h1>Babbage's engines</h1><p>He designed them.</p></body></html>")
    (docs / "only.html").write_text(  # a page whose only text is its heading keeps it
        "<html><head><title>Stub</title></head><body><h1>Stub</h1></body></html>")
    assert [(p["title"], p["contents"]) for p in read_collection(docs)] == [
        ("Ada Lovelace", "Ada Lovelace wrote the first program. She worked with Babbage."),
        ("Stub", "Stub"),
        ("Babbage", "Babbage's engines He designed them."),
    ]
    build_index(read_collection(docs), tmp_path / "idx", progress=False)
    hit = BM25Retriever.from_index(tmp_path / "idx").search("Lovelace program", 1)[0]
    assert (hit.title, hit.text) == ("Ada Lovelace", "Ada Lovelace wrote the first program. She worked with Babbage.")
    assert [p["contents"] for p in read_collection(docs / "ada.html")] == [hit.text]


def test_unmarked_staging_folders_in_the_index_cache_go_once_a_day_old(tmp_path, monkeypatch):
    # A build by a version before owner marks, killed, left a partial index
    # that no later build removed, whatever its age.
    import os
    import socket
    import time

    from assistant.kernel import OWNER_FILE, owner_mark

    monkeypatch.setenv("CONVQA_CACHE", str(tmp_path / "cache"))
    cache, elsewhere = tmp_path / "cache" / "indexes", tmp_path / "elsewhere"
    old = time.time() - 2 * 24 * 3600

    def staging(parent, name, age=old, mark=None, fresh_file=False):
        folder = parent / name
        folder.mkdir(parents=True)
        (folder / "_0.fdt").write_bytes(b"partial")
        if mark is not None:
            (folder / OWNER_FILE).write_text(mark)
        for path in [*folder.iterdir(), folder]:
            os.utime(path, (age, age))
        if fresh_file:  # an old version's build still at work
            (folder / "_1.fdt").write_bytes(b"new")
        return folder

    staging(cache, "idx.old00001")
    links = cache / "idx.old00001.input.ab12cd34"
    links.mkdir()
    (links / "000000.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    staging(cache, "idx.new00001", age=time.time() - 3600)  # an hour: may be a build under way
    staging(cache, "idx.working1", fresh_file=True)
    staging(cache, "idx.otherhst", mark=json.dumps(dict(owner_mark(), host=socket.gethostname() + "-other")))
    staging(cache, "idx.broken01", mark="{")  # a mark that cannot be read: kept, as before
    staging(elsewhere, "idx.old00001")  # outside the cache: may be a user's own folder
    assert build_index(iter([_passage(1)]), cache / "idx", progress=False) == 1
    assert sorted(p.name for p in cache.iterdir()) == ["idx", "idx.broken01", "idx.new00001", "idx.otherhst", "idx.working1"]
    assert build_index(iter([_passage(1)]), elsewhere / "idx", progress=False) == 1
    assert sorted(p.name for p in elsewhere.iterdir()) == ["idx", "idx.old00001"]


def test_an_index_in_the_cache_named_like_a_build_folder_is_kept_however_old(tmp_path, monkeypatch):
    # A dated copy beside the index (wiki.20240101 next to wiki) matches
    # INDEX.xxxxxxxx and has no mark: a day unchanged, a build of wiki
    # deleted it as a dead build's staging folder.
    monkeypatch.setenv("CONVQA_CACHE", str(tmp_path / "cache"))
    cache = tmp_path / "cache" / "indexes"
    dated = cache / "wiki.20240101"
    build_index((_passage(n) for n in range(3)), dated, progress=False)
    old = time.time() - 2 * 24 * 3600
    for path in [*dated.iterdir(), dated]:
        os.utime(path, (old, old))
    assert build_index((_passage(n) for n in range(2)), cache / "wiki", progress=False) == 2
    assert sorted(p.name for p in cache.iterdir()) == ["wiki", "wiki.20240101"]
    assert verify_index(dated) == 3


def test_a_documents_folder_skips_what_is_no_file_and_names_one_that_goes(tmp_path, capsys):
    # A link to nowhere (Emacs' '.#notes.md' lock file) or a folder named
    # 'x.md' was a FileNotFoundError or IsADirectoryError traceback, as was a
    # file removed while the folder was being indexed.
    docs = tmp_path / "docs"
    (docs / "sub" / "deeper").mkdir(parents=True)
    (docs / "a.txt").write_text("Ada wrote notes on the engine.")
    (docs / "sub" / "deeper" / "c.html").write_text("<p>Deep page about coffee.</p>")
    (docs / "sub" / "link.txt").symlink_to(docs / "a.txt")  # a link to a file is that file
    (docs / ".#a.md").symlink_to(docs / "nowhere.md")
    (docs / "folder.md").mkdir()
    assert [p["id"] for p in read_collection(docs)] == ["a.txt#0", "sub/deeper/c.html#0", "sub/link.txt#0"]
    assert index_main(["--input", str(docs), "--index", str(tmp_path / "idx")]) == 0
    assert capsys.readouterr().out.strip() == f"Indexed 3 passages into {tmp_path / 'idx'}"

    def vanishing():
        for passage in read_collection(docs):
            yield passage
            (docs / "sub" / "deeper" / "c.html").unlink(missing_ok=True)

    with pytest.raises(DataFormatError, match=r"^.*/docs/sub/deeper/c\.html: no such file$"):
        build_index(vanishing(), tmp_path / "idx2", progress=False)


def test_a_folder_that_holds_files_and_no_index_is_not_replaced(tmp_path, capsys):
    # The build replaced the --index folder whatever it held: '--index ~/notes',
    # or the collection's own folder, deleted the user's files.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Ada wrote notes on the engine.")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "precious.txt").write_text("keep me")
    for folder, held in ((mine, "precious.txt"), (docs, "a.txt")):
        assert index_main(["--input", str(docs), "--index", str(folder)]) == 2
        assert capsys.readouterr().err.splitlines()[-1] == (
            f"error: cannot write the index folder {folder}: it holds {held!r} and no index, and a build replaces "
            "the whole folder; give a new or empty folder (or an index's, to rebuild it).")
    assert (mine / "precious.txt").read_text() == "keep me" and (docs / "a.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "mine"]
    (tmp_path / "empty").mkdir()
    assert index_main(["--input", str(docs), "--index", str(tmp_path / "empty")]) == 0
    assert index_main(["--input", str(docs), "--index", str(tmp_path / "empty")]) == 0  # an index is rebuilt


def test_an_index_given_by_a_link_is_rebuilt_at_its_target(tmp_path, capsys):
    # '--index current' (a link to the index) indexed the whole collection,
    # then ended in "OSError: Cannot call rmtree on a symbolic link".
    build_index(iter([_passage(1)]), tmp_path / "v1", progress=False)
    (tmp_path / "current").symlink_to("v1")
    _write_jsonl(tmp_path / "coll.jsonl", [_passage(2), _passage(3)])
    assert index_main(["--input", str(tmp_path / "coll.jsonl"), "--index", str(tmp_path / "current")]) == 0
    assert (tmp_path / "current").is_symlink() and BM25Retriever.from_index(tmp_path / "v1").size == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coll.jsonl", "current", "v1"]


def test_an_index_whose_folder_cannot_be_written_beside_is_one_line(tmp_path, capsys, monkeypatch):
    # The index folder writable, its parent not (where the build is made
    # before its rename): a PermissionError traceback from mkdtemp. As root a
    # read-only folder is still writable, hence the stand-in refusal.
    import tempfile

    build_index(iter([_passage(1)]), tmp_path / "idx", progress=False)

    def refused(**_):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    _write_jsonl(tmp_path / "coll.jsonl", [_passage(2)])
    assert index_main(["--input", str(tmp_path / "coll.jsonl"), "--index", str(tmp_path / "idx")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: cannot write the index folder {tmp_path / 'idx'}: a build is made beside it, in {tmp_path}, and "
        "renamed into place, and that folder refuses (Permission denied); give an index folder in a writable folder.")


def test_a_jsonl_suffix_in_capitals_is_a_jsonl_collection(tmp_path):
    # '.TXT' and '.HTML' documents were read, but 'A.JSONL' was no collection:
    # 'no .jsonl passages or ... documents in this folder'.
    _write_jsonl(tmp_path / "coll" / "A.JSONL", [_passage(1), _passage(2)])
    _write_jsonl(tmp_path / "coll" / "sub" / "b.Jsonl", [_passage(3)])
    assert collection_size(tmp_path / "coll") == 3 and collection_size(tmp_path / "coll" / "A.JSONL") == 2
    assert [p["id"] for p in read_collection(tmp_path / "coll" / "A.JSONL")] == ["p1", "p2"]
    for threads in (1, 2):
        assert index_collection(tmp_path / "coll", tmp_path / f"idx{threads}", progress=False, threads=threads) == 3


def test_a_document_saved_with_a_byte_order_mark_reads_as_without(tmp_path):
    # Notepad's UTF-8 starts with U+FEFF: it opened the first passage
    # ('\ufeffZanzibar ...') and hid a Markdown file's '# Title' line, which
    # then stayed in the text, its file name the title.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_bytes("\ufeffZanzibar spices grow here.\n".encode())
    (docs / "b.md").write_bytes("\ufeff# Zanzibar\n\nSpices grow here.\n".encode())
    (docs / "c.html").write_bytes("\ufeff<html><head><title>Cloves</title></head><p>Cloves too.</p></html>".encode())
    assert [(p["title"], p["contents"]) for p in read_collection(docs)] == [
        ("a", "Zanzibar spices grow here."), ("Zanzibar", "Spices grow here."), ("Cloves", "Cloves too.")]


def test_a_jsonl_collection_saved_with_a_byte_order_mark_is_indexed_on_both_routes(tmp_path):
    # "line 1: not valid JSON (Unexpected UTF-8 BOM)": PowerShell's and
    # Notepad's UTF-8 put U+FEFF before the first line; Lucene, handed that
    # line as it is (--threads 2), would read it as the line's first character.
    coll = tmp_path / "bom.jsonl"
    # In the indexer's own form (no title), so that --threads 2 hands the lines to Lucene as they are.
    lines = "".join(json.dumps({"id": f"p{n}", "contents": _passage(n)["contents"]}) + "\n" for n in (1, 2))
    coll.write_bytes("\ufeff".encode() + lines.encode())
    assert [p["id"] for p in read_collection(coll)] == ["p1", "p2"]
    for threads in (1, 2):
        assert index_collection(coll, tmp_path / f"idx{threads}", progress=False, threads=threads) == 2
        assert BM25Retriever.from_index(tmp_path / f"idx{threads}").search("code1", 1)[0].id == "p1"


def test_decomposed_accents_and_ligatures_are_indexed_as_questions_are_read(tmp_path):
    # Questions are composed (NFC, ligatures folded) before the search, but a
    # collection's "Go\u0308del" or a PDF's "\ufb01nance" were indexed as they
    # came: no question could find them, on either route.
    coll = tmp_path / "nfd.jsonl"
    _write_jsonl(coll, [{"id": "g", "contents": "Kurt Go\u0308del proved incompleteness."},
                        {"id": "f", "contents": "The \ufb01nance minister resigned.", "title": "Caf\u0065\u0301"},
                        {"id": "a", "contents": "Plain text about apples."}])
    for threads in (1, 2):
        assert index_collection(coll, tmp_path / f"idx{threads}", progress=False, threads=threads) == 3
        retriever = BM25Retriever.from_index(tmp_path / f"idx{threads}")
        [goedel] = retriever.search("G\u00f6del", 1)
        assert goedel.id == "g" and goedel.text == "Kurt G\u00f6del proved incompleteness."
        [finance] = retriever.search("finance", 1)
        assert finance.id == "f" and "finance minister" in finance.text and finance.title == "Caf\u00e9"


def test_file_names_that_are_not_utf8_make_distinct_readable_ids(tmp_path):
    # 'caf\xe9.txt' (Latin-1) was the id 'caf\udce9.txt#0' in Python and
    # 'caf\ufffd.txt#0' once Java had stored it: 'caf\xe8.txt' became the
    # same id, and neither the hash check nor Lucene's saw a duplicate.
    import os

    docs = tmp_path / "docs"
    docs.mkdir()
    for raw in (b"caf\xe9.txt", b"caf\xe8.txt"):
        with open(os.path.join(os.fsencode(docs), raw), "wb") as file:
            file.write(b"Coffee notes from the cafe " + raw[3:4].hex().encode() + b".")
    passages = list(read_collection(docs))
    assert [(p["id"], p["title"]) for p in passages] == [("caf\\xe8.txt#0", "caf\\xe8"), ("caf\\xe9.txt#0", "caf\\xe9")]
    build_index(iter(passages), tmp_path / "idx", progress=False)
    hits = BM25Retriever.from_index(tmp_path / "idx").search("coffee", 5)
    assert sorted(h.id for h in hits) == ["caf\\xe8.txt#0", "caf\\xe9.txt#0"]


@pytest.mark.parametrize("given", ["", "."])
def test_an_empty_or_dot_index_path_does_not_replace_the_working_folder(tmp_path, monkeypatch, capsys, given):
    # '--index ""' is the working folder to pathlib: a build indexed the
    # collection, then removed every file of the folder the command ran in.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "thesis.txt").write_text("years of work")
    _write_jsonl(tmp_path / "coll" / "a.jsonl", [_passage(1)])
    assert index_main(["--input", "coll", "--index", given]) == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith("error: cannot write the index folder .: it holds 'coll' and no index")
    assert (tmp_path / "thesis.txt").read_text() == "years of work"


def test_markdown_front_matter_gives_the_title_and_is_not_indexed_as_text(tmp_path):
    # A Jekyll/Hugo/Obsidian note's passage read '--- title: "Zanzibar trip"
    # date: 2024-05-01 tags: [travel, spices] --- Zanzibar trip We bought ...'
    # under the title 'post', its file name.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "post.md").write_text('---\ntitle: "Zanzibar trip"\ndate: 2024-05-01\ntags: [travel, spices]\n---\n\n'
                                  "# Zanzibar trip\n\nWe bought cloves in Stone Town.\n")
    (docs / "note.md").write_text("---\ntitle: My notes\n---\nNo heading here, just text.\n")
    (docs / "rule.md").write_text("---\n\nNot front matter: a rule, then text.\n")
    assert [(p["title"], p["contents"]) for p in read_collection(docs)] == [
        ("My notes", "No heading here, just text."),
        ("Zanzibar trip", "We bought cloves in Stone Town."),
        ("rule", "Not front matter: a rule, then text."),
    ]


def test_an_icon_s_svg_title_is_not_added_to_the_page_title(tmp_path):
    # Every <title> was the page's: a page with inline SVG icons (whose
    # <title> labels them) was titled 'Ada LovelaceHome iconShare'.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ada.html").write_text(
        "<html><head><title>Ada Lovelace</title></head><body><a href='/'><svg><title>Home icon</title></svg></a>"
        "<p>Ada wrote notes.</p><svg><title>Share</title></svg></body></html>")
    (docs / "logo.html").write_text("<svg><title>Logo</title></svg><title>Real title</title><p>Text.</p>")
    assert [(p["title"], p["contents"]) for p in read_collection(docs)] == [
        ("Ada Lovelace", "Ada wrote notes."), ("Real title", "Text.")]


def test_html_table_cells_and_other_blocks_are_not_glued_into_one_word(tmp_path):
    # Only p, div, li, headings, tr, section and article ended a paragraph:
    # '<td>Paris</td><td>France</td>' read 'ParisFrance' (an infobox's every
    # row), '<dt>Term</dt><dd>...' 'TermDefinition', and a blockquote, a
    # caption or a nav ran into what followed, so searches missed those words.
    from assistant.retrieval import html_to_text

    page = ("<table><caption>Capitals</caption><tr><th>City</th><th>Country</th></tr><tr><td>Paris</td><td>France</td>"
            "</tr></table><dl><dt>Term</dt><dd>Definition</dd></dl><blockquote>Quoted.</blockquote><nav>Menu</nav>"
            "<p>Ada <b>Lovelace</b></p>")
    assert html_to_text(page).split("\n\n") == [
        "Capitals", "City Country", "Paris France", "Term", "Definition", "Quoted.", "Menu", "Ada Lovelace"]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "capitals.html").write_text(page)
    build_index(read_collection(docs), tmp_path / "idx", progress=False)
    assert [h.id for h in BM25Retriever.from_index(tmp_path / "idx").search("Paris", 1)] == ["capitals.html#0"]


def test_markdown_rules_heading_underlines_and_code_fences_are_not_words(tmp_path):
    # A note's '---' rules, a Setext heading's '=====' and a code block's
    # '```python' fences were read as words: 'Intro ===== text --- ```python'.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text("Zanzibar\n========\nSpice island.\n\n---\n\nHistory\n-------\nStone Town.\n\n"
                                  "```python\ncloves = 3\n```\n\n* * *\n\nA - b -- c. Rate 3*4*5.\n")
    assert [p["contents"] for p in read_collection(docs)] == [
        "Zanzibar Spice island. History Stone Town. cloves = 3 A - b -- c. Rate 3*4*5."]


@pytest.mark.parametrize("threads", [1, 2])
def test_the_bar_ends_at_the_passage_count_when_blank_lines_made_the_estimate(tmp_path, capsys, threads):
    # The bar's total is the files' line count; with blank lines it ended at
    # '50%| 2/4' over a build that indexed every passage.
    path = tmp_path / "coll.jsonl"
    path.write_text(json.dumps(_passage(1)) + "\n\n" + json.dumps(_passage(2)) + "\n\n")
    assert index_collection(path, tmp_path / "idx", threads=threads) == 2
    assert re.findall(r"\d+/\d+", capsys.readouterr().err)[-1] == "2/2"
