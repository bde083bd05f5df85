"""Uploads: limits and messages, text extraction (HTML, PDF), a real per-session Lucene index."""

from __future__ import annotations

import collections
import errno
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from assistant.kernel import OWNER_FILE, DataFormatError, InvalidInputError
from assistant.session import (
    UploadLimits,
    check_uploads,
    index_uploads,
    read_passages,
    read_text,
    remove_stale_sessions,
)


def make_pdf(lines: list[str]) -> bytes:
    """A one-page PDF with ``lines`` of Helvetica text (offsets computed, so valid)."""
    text = " ".join(f"({line}) Tj T*" for line in lines)
    stream = f"BT /F1 12 Tf 14 TL 72 720 Td {text} ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_folder_index_reads_its_pdfs_as_uploads_are_and_names_what_it_skips(tmp_path, capsys):
    # A folder with garden.md, report.pdf and notes.docx was indexed as 1 passage, without a word.
    from assistant.index import main as index_main
    from assistant.retrieval import read_collection

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "garden.md").write_text("# Garden\n\nTomatoes went in in May.")
    (folder / "report.pdf").write_bytes(make_pdf(["The harvest report counts forty kilos."]))
    (folder / "notes.docx").write_bytes(b"PK\x03\x04 not text")
    (folder / ".DS_Store").write_bytes(b"\0\0")
    passages = {p["id"]: p for p in read_collection(folder)}
    assert sorted(passages) == ["garden.md#0", "report.pdf#0"]
    assert passages["report.pdf#0"]["title"] == "report"
    assert " ".join(passages["report.pdf#0"]["contents"].split()) == " ".join(
        read_text(folder / "report.pdf").split()) == "The harvest report counts forty kilos."
    assert index_main(["--input", str(folder), "--index", str(tmp_path / "idx")]) == 0
    out, err = capsys.readouterr()
    assert "Indexed 2 passages" in out
    assert "note: skipped 1 file that is not .txt/.md/.html/.htm/.jsonl/.pdf (notes.docx)" in err.splitlines()


def test_limits_and_types_get_clear_messages(tmp_path):
    ok = tmp_path / "notes.txt"
    ok.write_text("Ada wrote notes.")
    exe = tmp_path / "tool.exe"
    exe.write_bytes(b"MZ")
    with pytest.raises(InvalidInputError, match=r"tool.exe: unsupported file type '.exe'"):
        check_uploads([ok, exe])
    # Also what a .docx or an over-size file refused by the upload area leaves: the rules said again.
    with pytest.raises(InvalidInputError, match=r"Choose one or more files to upload first: \.txt, \.md, \.html, "
                                                r"\.htm, \.pdf, \.jsonl, at most 10 MB each"):
        check_uploads([])
    big = tmp_path / "big.md"
    big.write_text("word " * 400)  # 2,000 bytes
    with pytest.raises(InvalidInputError, match=r"big.md is 0.0 MB; files are limited to 0.001 MB each"):
        check_uploads([big], UploadLimits(max_file_mb=0.001))
    with pytest.raises(InvalidInputError, match=r"add up to 0.0 MB; a session takes at most 0.002 MB"):
        check_uploads([big, big], UploadLimits(max_file_mb=1, max_total_mb=0.002))
    with pytest.raises(InvalidInputError, match="upload at most 1 at a time"):
        check_uploads([ok, ok], UploadLimits(max_files=1))
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InvalidInputError, match="empty.txt is empty"):
        check_uploads([empty])
    assert check_uploads([str(ok)]) == [ok]


def test_text_of_html_pdf_and_bad_files(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<html><head><title>t</title></head><body><p>Ada <b>Lovelace</b></p>"
                    "<script>alert(1)</script><p>wrote notes.</p></body></html>")
    assert read_text(page) == "Ada Lovelace\n\nwrote notes."
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["Ada Lovelace wrote the first algorithm.", "Her notes appeared in 1843."]))
    assert " ".join(read_text(pdf).split()) == "Ada Lovelace wrote the first algorithm. Her notes appeared in 1843."
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nnot really a pdf")
    with pytest.raises(DataFormatError, match="broken.pdf"):
        read_text(broken)
    latin1 = tmp_path / "old.txt"
    latin1.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(DataFormatError, match="old.txt is not UTF-8 text"):
        read_text(latin1)
    notepad = tmp_path / "notes.md"  # a byte order mark opened the text and hid the heading
    notepad.write_bytes("\ufeff# Zanzibar\n\nSpices grow here.".encode())
    assert " ".join(read_text(notepad).split()) == "Zanzibar Spices grow here."
    # Windows PowerShell 5's `>` and Notepad's "Unicode" write UTF-16 with a
    # byte order mark: refused as "not UTF-8" though the mark says what it is.
    for encoding in ("utf-16", "utf-16-be", "utf-32"):
        windows = tmp_path / f"{encoding}.md"
        mark = {"utf-16-be": "\ufeff"}.get(encoding, "")  # utf-16 and utf-32 write their own
        windows.write_bytes(f"{mark}# Dvořák\n\nHe was born in 1841.".encode(encoding))
        assert " ".join(read_text(windows).split()) == "Dvořák He was born in 1841."
    torn = tmp_path / "torn.txt"  # a mark, then no UTF-16: said, not shown as noise
    torn.write_bytes(b"\xff\xfe" + b"abc")
    with pytest.raises(DataFormatError, match="^torn.txt begins as UTF-16 text but is not; save it as UTF-8"):
        read_text(torn)
    # "ÿþ" and "þÿ" in Latin-1 are UTF-16's marks, FF FE and FE FF: the ASCII
    # after them was read as UTF-16 pairs, "效汬Ɐ眠牯摬".
    for mark in ("ÿþ", "þÿ"):
        latin1 = tmp_path / "latin1.txt"
        latin1.write_bytes(f"{mark}Hello, world. Tea is grown in Assam.".encode("latin-1"))
        assert len(latin1.read_bytes()) % 2 == 0  # an odd length no UTF-16 decoder reads: refused before
        with pytest.raises(DataFormatError, match="^latin1.txt begins as UTF-16 text but is not; save it as UTF-8"):
            read_text(latin1)
    # UTF-16 and UTF-32 in other scripts still read, with or without ASCII.
    for text in ("北京是中国的首都，人口众多。", "東京", "Привет, мир", "Dvořák\r\n", "🙂🎉"):
        for encoding in ("utf-16", "utf-16-be", "utf-32"):
            wide = tmp_path / "wide.txt"
            wide.write_bytes(({"utf-16-be": "\ufeff"}.get(encoding, "") + text).encode(encoding))
            assert read_text(wide) == text, encoding
    # Nor are a few ideographs whose bytes read as single ASCII letters ("在上海"
    # in UTF-16 LE is "(W\nNwm"), nor one private-use or newer character
    # (Word's bullet, a Nerd Font glyph, U+0CF3 and U+2FFC of Unicode 15):
    # each was refused as "begins as UTF-16 text but is not".
    for text in ("在上海", "上海", "传名上", "\uf0b7 item one", "branch \ue0a0 main", "\u0cf3", "\u2ffc"):
        for encoding in ("utf-16", "utf-16-be", "utf-32"):
            wide = tmp_path / "wide.txt"
            wide.write_bytes(({"utf-16-be": "\ufeff"}.get(encoding, "") + text).encode(encoding))
            assert read_text(wide) == text, (ascii(text), encoding)
    # Yet private-use characters in bulk are no text: an 8-bit file of
    # accented letters behind "ÿþ" pairs into them.
    accented = tmp_path / "accented.txt"
    accented.write_bytes("ÿþàéèêëïîôûù çàéèêëïîôûù".encode("latin-1"))
    with pytest.raises(DataFormatError, match="^accented.txt begins as UTF-16 text but is not; save it as UTF-8"):
        read_text(accented)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"PK\x03\x04\x00\x00")
    with pytest.raises(DataFormatError, match="^binary.txt looks like a binary file"):
        read_text(binary)
    blank = tmp_path / "blank.md"
    blank.write_text("   \n\n ")
    with pytest.raises(DataFormatError, match="blank.md has no text to answer from"):
        read_text(blank)


def test_jsonl_errors_name_the_upload_not_the_temporary_path(tmp_path):
    bad = tmp_path / "collection.jsonl"
    bad.write_text('{"id": "a", "contents": "fine"}\n{"id": "b"}\n')
    with pytest.raises(DataFormatError) as error:
        read_passages([bad])
    assert str(error.value).startswith("collection.jsonl") and "2" in str(error.value)
    assert str(tmp_path) not in str(error.value)


def test_an_uploads_title_is_its_heading_or_page_title_as_the_indexer_reads_a_folder(tmp_path):
    # An uploaded page or Markdown file was titled by its file name and its heading read out at the start
    # of answers ("Garden notes The tomatoes were planted in May."), where `assistant.index` titles it.
    from assistant.retrieval import read_collection

    garden = tmp_path / "garden.md"
    garden.write_text("# Garden notes\n\nThe tomatoes were planted in May.\n")
    engine = tmp_path / "engine.html"
    engine.write_text("<html><head><title>Engines</title></head><body><h1>Engines</h1>"
                      "<p>The Analytical Engine had a mill and a store.</p></body></html>")
    plain = tmp_path / "plain.txt"
    plain.write_text("Just text.")
    passages = read_passages([garden, engine, plain])
    assert [(p["title"], p["contents"].strip()) for p in passages] == [
        ("Garden notes", "The tomatoes were planted in May."),
        ("Engines", "The Analytical Engine had a mill and a store."),
        ("plain", "Just text."),
    ]
    indexed = [(p["title"], p["contents"].strip()) for p in read_collection(tmp_path)]
    assert sorted(indexed) == sorted((p["title"], p["contents"].strip()) for p in passages)
    # read_text keeps the whole text; one-document mode titles a file as here (read_titled).
    assert read_text(garden).split() == "Garden notes The tomatoes were planted in May.".split()


def test_uploads_are_indexed_for_the_session_and_removed_on_close(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("The Difference Engine was designed by Charles Babbage.\n\n"
                     "Ada Lovelace translated an article by Luigi Menabrea.")
    collection = tmp_path / "extra.jsonl"
    collection.write_text(json.dumps({"id": "kb1", "contents": "Grace Hopper wrote the first compiler.",
                                      "title": "Grace Hopper", "url": "https://example.org/hopper"}) + "\n")
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["The Analytical Engine had a mill and a store."]))
    index = index_uploads([notes, collection, pdf], root=tmp_path / "sessions")
    try:
        assert index.passages == 3
        assert index.files == ["notes.txt", "extra.jsonl", "paper.pdf"]
        [hit] = index.retriever.search("who translated Menabrea", 1)
        assert (hit.id, hit.title) == ("notes.txt#0", "notes")
        [hit] = index.retriever.search("compiler", 1)
        assert (hit.id, hit.title, hit.url) == ("kb1", "Grace Hopper", "https://example.org/hopper")
        assert index.retriever.search("mill store", 1)[0].id == "paper.pdf#0"
        assert index.directory.parent == tmp_path / "sessions"
    finally:
        index.close()
    assert not index.directory.exists()
    # Nor does the process hold its files: removed but open, they kept their disk space.
    maps = [line for line in Path("/proc/self/maps").read_text().splitlines() if str(index.directory) in line]
    fds = [fd for fd in Path("/proc/self/fd").iterdir() if str(index.directory) in _link(fd)]
    assert maps == [] and fds == []


def _link(fd: Path) -> str:
    try:
        return os.readlink(fd)
    except OSError:  # closed while listed
        return ""


def test_a_full_or_read_only_disk_refuses_an_upload_with_a_clear_message(tmp_path, monkeypatch):
    # The bare OSError was shown as "Something went wrong (OSError)", and a
    # build that filled the disk as Lucene's "no segments* file found".
    notes = tmp_path / "notes.txt"
    notes.write_text("Ada Lovelace translated an article by Luigi Menabrea.")
    root = tmp_path / "sessions"
    usage = collections.namedtuple("usage", "total used free")
    limits = UploadLimits()
    nearly_full = limits.min_free_bytes + notes.stat().st_size  # the index would take more than that leaves
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10 * nearly_full, 9 * nearly_full, nearly_full))
    with pytest.raises(InvalidInputError, match=r"^Your files could not be indexed: the server's storage is nearly full\. "
                                                r"Nothing else is lost \(your conversation is kept\)"):
        index_uploads([notes], limits, root=root)
    assert not root.exists()
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(100 * nearly_full, 0, 100 * nearly_full))

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    with pytest.raises(InvalidInputError, match="could not be indexed: the server's storage is read-only"):
        index_uploads([notes], limits, root=root)
    monkeypatch.undo()
    index_uploads([notes], limits, root=root).close()


def test_a_failed_upload_leaves_no_folder(tmp_path):
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "a", "contents": "one"}\n{"id": "a", "contents": "two"}\n')
    with pytest.raises(DataFormatError, match="Duplicate passage id 'a'"):
        index_uploads([dup], root=tmp_path / "sessions")
    assert list((tmp_path / "sessions").iterdir()) == []


def test_a_stopped_servers_session_folders_go_at_the_next_start_and_a_running_ones_stay(tmp_path, dead_pid):
    """Session folders were removed at a start only when older than a day,
    so those of a server that was killed or restarted stayed (17 folders,
    29 MB, in the audit). Each folder now names the process that made it,
    and a start removes those whose process has stopped."""
    root = tmp_path / "sessions"
    notes = tmp_path / "notes.txt"
    notes.write_text("The Difference Engine was designed by Charles Babbage.")
    live = index_uploads([notes], root=root)  # this running process's
    mark = json.loads((live.directory / OWNER_FILE).read_text())
    assert mark["pid"] == os.getpid()

    def folder(name, owner=None, days=0):
        path = root / name
        (path / "index").mkdir(parents=True)
        if owner is not None:
            # The live mark as its server would write it there: a mark names its folder.
            (path / OWNER_FILE).write_text(json.dumps({**mark, "folder": name, **owner}))
        if days:
            then = time.time() - days * 24 * 3600
            os.utime(path, (then, then))
        return path

    folder("session-dead", {"pid": dead_pid})
    folder("session-reused", {"started": "another process's start"})  # this pid, once another process's
    folder("session-broken", {"pid": "nobody"})  # a mark that cannot be read: as unmarked
    folder("session-elsewhere", {"pid": dead_pid, "host": "another-host"})  # its pids are not ours
    folder("session-elsewhere-old", {"pid": dead_pid, "host": "another-host"}, days=2)
    folder("session-unmarked")  # made by an older version: the age rule
    folder("session-unmarked-old", days=2)
    folder("not-a-session", days=2)
    try:
        assert remove_stale_sessions(root) == 4
        assert sorted(p.name for p in root.iterdir()) == sorted(
            [live.directory.name, "session-broken", "session-elsewhere", "session-unmarked", "not-a-session"])
        assert live.retriever.search("Babbage", 1)  # the running session's index is whole
        assert remove_stale_sessions(root) == 0
    finally:
        live.close()
    assert remove_stale_sessions(tmp_path / "none") == 0


def test_a_session_folder_that_cannot_be_examined_is_left_alone(tmp_path, monkeypatch):
    # Two servers starting on one cache: the other removed an old unmarked
    # folder between this one's listing and its look at the folder's age,
    # and FileNotFoundError stopped the app before it served.
    root = tmp_path / "sessions"
    for name in ("session-a-gone", "session-b-stale", "session-c-old"):
        (root / name / "index").mkdir(parents=True)
        then = time.time() - 2 * 24 * 3600
        os.utime(root / name, (then, then))
    real_stat = Path.stat
    looks = collections.Counter()

    def stat(path, *args, **kwargs):
        looks[path.name] += 1
        if path.name == "session-a-gone" and looks[path.name] == 2:  # is_dir's look, then the age's
            shutil.rmtree(path)  # removed by the other server meanwhile
        if path.name == "session-b-stale":
            raise OSError(errno.ESTALE, "Stale file handle", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    assert remove_stale_sessions(root) == 1
    monkeypatch.undo()
    assert sorted(p.name for p in root.iterdir()) == ["session-b-stale"]


def test_a_long_file_name_is_cut_short_where_a_status_or_a_message_shows_it(tmp_path):
    # A name of 200 characters (Gradio keeps that many) filled the source line and every message.
    long = "a" * 240
    notes = tmp_path / f"{long}.txt"
    notes.write_text("The Difference Engine was designed by Charles Babbage.")
    index = index_uploads([notes], root=tmp_path / "sessions")
    try:
        shown = index.describe()
        assert long not in shown and "a" * 55 + "….txt; 1 passage)" in shown
        assert len(shown) < 100 and index.files == [notes.name]  # the file itself keeps its name
    finally:
        index.close()
    notes.write_text("")
    with pytest.raises(InvalidInputError) as info:
        check_uploads([notes])
    assert str(info.value) == "a" * 55 + "….txt is empty."
    notes.write_bytes(b"\xe9t\xe9 binary")  # not UTF-8 (a UTF-16 mark, FF FE, is read as UTF-16 now)
    with pytest.raises(DataFormatError) as info:
        read_text(notes)
    assert str(info.value).startswith("a" * 55 + "….txt is not UTF-8 text")


def test_one_document_names_the_kinds_it_takes_which_are_no_jsonl(app_services, tmp_path):
    # Its refusal of a .png listed .jsonl, which one document then refused too.
    from assistant.session import Session, use_document_file

    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG")
    with pytest.raises(InvalidInputError) as info:
        use_document_file(app_services, Session(), picture)
    assert str(info.value) == "photo.png: unsupported file type '.png'; upload .txt, .md, .html, .htm, .pdf files."
    long = tmp_path / f"{'b' * 240}.txt"
    long.write_text("The Difference Engine was designed by Charles Babbage.")
    assert use_document_file(app_services, Session(), long).startswith(f"Answering from the document “{'b' * 59}…”")


_ADA_LEAD = ("Augusta Ada King, Countess of Lovelace (née Byron; 10 December 1815 – 27 November 1852) "
             "was an English mathematician and writer.")
_ADA = (_ADA_LEAD + " She is chiefly known for her work on Charles Babbage's proposed mechanical general-purpose "
        "computer, the Analytical Engine.\n\nAda was the only legitimate child of the poet Lord Byron and his wife "
        "Anne Isabella Milbanke. Her father left England when she was a month old.\n")


@pytest.mark.parametrize("name, text", [
    ("Ada Lovelace.txt", "Ada Lovelace\n" + _ADA),
    ("ada.txt", "Ada Lovelace\n\n" + _ADA),
    ("ada.md", "# Ada Lovelace\n\n" + _ADA),
])
@pytest.mark.parametrize("mode", ["document", "uploads"])
def test_a_files_title_line_is_its_passages_title_and_not_read_out_in_one_document_mode_or_uploads(
        app_services, tmp_path, name, text, mode):
    # A saved article's first line naming its subject ("Ada Lovelace", or "# Ada Lovelace" in one-document
    # mode) stayed in its text and was read out glued to the first sentence: "Ada Lovelace Augusta Ada King, ...".
    from assistant.session import Session, ask, use_document_file, use_uploads

    path = tmp_path / name
    path.write_text(text)
    session = Session()
    if mode == "document":
        use_document_file(app_services, session, path)
    else:
        use_uploads(app_services, session, [path])
    list(ask(app_services, session, "Who was Ada Lovelace?"))
    turn = session.turns[-1].turn
    assert turn.answer.text.startswith(_ADA_LEAD)
    # Titled as an index titles it, in both modes.
    assert {passage.title for passage in turn.sources} == {"Ada Lovelace"}


@pytest.mark.parametrize("text", [
    "Ada Lovelace was an English mathematician.\nShe wrote the first published algorithm for Babbage's engine.\n",  # a sentence
    "Ada Lovelace\n",  # one line
    "Ada Lovelace and the Analytical Engine of Charles Babbage in London\nShe wrote notes on it.\n",  # a long line
    "Eggs\nMilk\nBread\n",  # a list of short lines
    "The notes she wrote on\nthe engine were long.\n",  # a hard-wrapped sentence
])
def test_a_text_files_first_line_stays_in_its_text_unless_it_is_a_title_line(tmp_path, text):
    # A .txt file's first line is its title only when it is a title line over prose; any other first line is text.
    path = tmp_path / "notes.txt"
    path.write_text(text)
    [passage] = read_passages([path])
    assert (passage["title"], passage["contents"].split()) == ("notes", text.split())
