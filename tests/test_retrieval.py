"""Collection reading, index building and BM25 retrieval on a real Lucene index."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from assistant.index import main as index_main
from assistant.kernel import DataFormatError, IndexDamagedError, IndexNotFoundError, InvalidInputError, Passage
from assistant.retrieval import (
    BM25Retriever,
    ChunkRetriever,
    build_index,
    chunk_text,
    SERVING_JAVA_OPTIONS,
    find_java_home,
    html_to_text,
    java_version,
    read_collection,
    split_passages,
)


def test_java_found_is_new_enough():
    assert java_version(find_java_home()) >= 21


def test_a_missing_module_is_named_and_only_java_failing_is_called_java(tmp_path):
    """Any import failure was reported as "Could not start Java": a missing
    pyserini module, or pyserini itself not installed."""
    import subprocess
    import sys

    from assistant.retrieval import import_pyserini

    with pytest.raises(ModuleNotFoundError, match="^No module named 'pyserini.no_such_module'$"):
        import_pyserini("pyserini.no_such_module")

    def run(code, **env):
        import os

        done = subprocess.run([sys.executable, "-c", "import sys\n" + code], capture_output=True, text=True,
                              env={**os.environ, **env}, timeout=300)
        assert done.returncode == 1
        return done.stderr.strip().splitlines()[-1]

    call = "from assistant.retrieval import import_pyserini\nimport_pyserini()"
    assert run("sys.modules['pyserini'] = None\n" + call).startswith(
        "ModuleNotFoundError: pyserini is not installed (No module named 'pyserini.setup'")
    fake = tmp_path / "jdk"
    fake.mkdir()
    (fake / "release").write_text('JAVA_VERSION="21.0.1"\n')  # a Java by its release file, without a JVM
    # One line: pyjnius' own message goes on with advice over several.
    assert run(call, JAVA_HOME=str(fake)).startswith(
        f"assistant.kernel._errors.JavaNotFoundError: Could not start Java from {fake} for pyserini: Unable to find")


_SERVING_PROBE = """
import json, sys
from assistant.retrieval import use_serving_java, BM25Retriever
given = use_serving_java()
hits = BM25Retriever.from_index(sys.argv[1]).search("Ada Lovelace", 3)
from jnius import autoclass
jvm_args = list(autoclass("java.lang.management.ManagementFactory").getRuntimeMXBean().getInputArguments())
late = use_serving_java()
print(json.dumps({"given": list(given), "jvm": jvm_args, "hits": len(hits), "late": list(late)}))
"""


@pytest.mark.parametrize("env, expected", [(None, list(SERVING_JAVA_OPTIONS)), ("-Xmx300m", ["-Xmx300m"])])
def test_serving_java_options_reach_the_jvm(tiny_index, retriever, env, expected):
    """The app's JVM gets the serving options (or $CONVQA_JAVA_OPTIONS instead);
    asked for once Java runs, they are not applied, and it says so.
    A subprocess: a JVM starts once per process."""
    import os
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k != "CONVQA_JAVA_OPTIONS"}
    if env is not None:
        environment["CONVQA_JAVA_OPTIONS"] = env
    done = subprocess.run([sys.executable, "-c", _SERVING_PROBE, str(tiny_index)], capture_output=True, text=True,
                          env=environment, timeout=300, check=True)
    result, subprocess_stderr = json.loads(done.stdout.strip().splitlines()[-1]), done.stderr
    assert result["given"] == expected
    assert all(option in result["jvm"] for option in expected)
    assert result["hits"] == len(retriever.search("Ada Lovelace", 3))  # it searches as without the options
    assert result["late"] == []
    assert "Java already runs in this process" in subprocess_stderr


def test_a_search_prints_no_java_22_warning_from_lucene(tiny_index):
    """On Java 22 or later (this machine's Java 25) pyserini's Lucene warned
    at every start of the chat, the app and the index command that it is
    too old "to make full use of MMapDirectory": two lines no user can act
    on. A subprocess: a JVM starts once per process."""
    import subprocess
    import sys

    probe = ("import sys\nfrom assistant.retrieval import BM25Retriever\n"
             "print(len(BM25Retriever.from_index(sys.argv[1]).search('Ada Lovelace', 3)))")
    done = subprocess.run([sys.executable, "-c", probe, str(tiny_index)], capture_output=True, text=True,
                          timeout=300, check=True)
    assert int(done.stdout.split()[-1]) > 0  # it searches
    assert "MMapDirectory" not in done.stderr and "Java 22 or later" not in done.stderr, done.stderr


_BUSY_AFTER_SEARCHING = """
import sys, time, torch
from assistant.retrieval import BM25Retriever
retriever = BM25Retriever.from_index(sys.argv[1])
print("ready", flush=True)
weights = torch.randn(256, 256)
while True:  # Java objects made and dropped while Python works, as when passages are encoded
    retriever.search("Ada Lovelace", 3)
    for _ in range(5):
        weights = (weights @ weights).tanh()
"""


def test_sigterm_ends_a_process_that_runs_java(tiny_index, tmp_path):
    """``timeout``, ``docker stop`` and a Space send SIGTERM. Handled by the
    JVM, it exited from a Java thread while Python was in the middle of
    JNI work: the process aborted ("terminate called without an active
    exception") or hung, in 5 of 6 tries. It must end at once, killed by the
    signal, leaving no JVM crash log."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    # In tmp_path, where a crashing JVM would write its log.
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    process = subprocess.Popen([sys.executable, "-c", _BUSY_AFTER_SEARCHING, str(tiny_index)], cwd=tmp_path, env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == -signal.SIGTERM
    finally:
        process.kill()
    assert not list(tmp_path.glob("hs_err_pid*"))


def test_top_k_is_pinned(retriever):
    hits = retriever.search("Who was the father of Ada Lovelace?", 3)
    # "who" is not in Lucene's English stop list, so Babbage's "... engineer who
    # originated ..." matches too; Byron shares no query term.
    assert [h.id for h in hits] == ["ada", "babbage"]
    assert hits[0].score > hits[1].score > 0
    assert hits[0].title == "Ada Lovelace"
    assert hits[0].url == "https://en.wikipedia.org/wiki/Ada_Lovelace"
    # The displayed text is the passage alone; the title is only indexed.
    assert hits[0].text.startswith("Ada Lovelace was an English mathematician")


def test_k_bounds_results(retriever):
    assert [h.id for h in retriever.search("Paris Eiffel Tower", 10)] == ["paris"]
    assert len(retriever.search("English", 2)) == 2


def test_awkward_queries_do_not_crash(retriever):
    assert [h.id for h in retriever.search("<script>alert('Paris')</script>", 5)] == ["paris"]
    assert retriever.search("Qui était Ada? 艾达·洛夫莱斯", 5)[0].id == "ada"
    # Lucene caps a query at 1024 clauses; 20,000 characters must still work.
    assert retriever.search("python " + "x" * 20_000 + " word" * 3000, 5)[0].id == "python"
    with pytest.raises(InvalidInputError):
        retriever.search("   ", 5)


def _chunk_retriever():
    from conftest import TINY_COLLECTION

    return ChunkRetriever([Passage(p["id"], p["contents"], 0.0, title=p["title"]) for p in TINY_COLLECTION])


def test_the_in_memory_bm25_takes_the_index_settings(tiny_index):
    # It had a BM25Config of its own, which no CONVQA_BM25_* setting reached.
    from conftest import TINY_COLLECTION

    from assistant.kernel import RetrieverConfig

    passages = [Passage(p["id"], p["contents"], 0.0, title=p["title"]) for p in TINY_COLLECTION]
    scores = {}
    for config in (RetrieverConfig(), RetrieverConfig(bm25_k1=1.5, bm25_b=0.75)):
        lucene, chunks = BM25Retriever.from_index(tiny_index, config), ChunkRetriever(passages, config)
        for query in ("Ada Lovelace father", "capital of France", "programming language"):
            assert [h.id for h in chunks.search(query, 3)] == [h.id for h in lucene.search(query, 3)]
        scores[config.bm25_k1] = chunks.scores("Ada Lovelace father")
    assert max(abs(a - b) for a, b in zip(scores[0.9], scores[1.5])) > 0.1


@pytest.mark.parametrize("which", ["bm25", "chunks"])
def test_every_retriever_refuses_a_bad_k_or_query_alike(retriever, which):
    """A caller's mistake is named as such, before any search, the same way
    by each retriever: a bad k reached Lucene and came back as "the index is
    damaged, rebuild it"; the in-memory retriever returned all but the last
    hit for k=-1 and [] for an empty query."""
    searcher = retriever if which == "bm25" else _chunk_retriever()
    searches = [searcher.search] + ([lambda q, k: retriever.batch_search([q], k)[0]] if which == "bm25" else [])
    for search in searches:
        for k in (0, -1):
            with pytest.raises(InvalidInputError, match=f"^k must be at least 1, not {k}$"):
                search("English mathematician", k)
        for k, kind in (("3", "str"), (None, "NoneType"), (2.5, "float"), (True, "bool")):
            with pytest.raises(TypeError, match=f"^k must be an int, not {kind}$"):
                search("English mathematician", k)
        for query in ("", "  \n"):
            with pytest.raises(InvalidInputError, match="^The query is empty.$"):
                search(query, 3)
        for query, kind in ((None, "NoneType"), (123, "int"), (["Ada"], "list")):
            with pytest.raises(TypeError, match=f"^the query must be a str, not {kind}$"):
                search(query, 3)
        # More than the index holds is every hit there is, not a Java error.
        assert [h.id for h in search("English", 2**31)] == [h.id for h in search("English", 5)]
        assert len(search("English", 2**31)) == 3
        assert [h.id for h in search("Lovelace", 1)] == ["ada"]


def test_batch_search_refuses_one_string_and_bad_threads(retriever):
    with pytest.raises(TypeError, match="not one str"):
        retriever.batch_search("English", 3)
    with pytest.raises(InvalidInputError, match="^threads must be at least 1, not 0$"):
        retriever.batch_search(["English"], 3, threads=0)


def test_chunk_retriever_refuses_what_is_not_a_passage():
    with pytest.raises(TypeError, match="^passage 1 must be a Passage, not str$"):
        ChunkRetriever([Passage("a", "Ada wrote notes.", 0.0), "Babbage built engines."])


# A page as NQ gives it (markup, one line) and as a user pastes one (plain
# lines): its references repeat the question's words more often than the
# sentence that answers it.
_MARKUP_PAGE = (
    "<P> The seventh season premiered on July 16 , 2017 . </P> <P> Filming began in 2016 in Belfast . </P> "
    "<Ol> <Li> Hibberd , James . `` Season 7 premiere date for the season '' . Retrieved May 22 , 2017 . </Li> "
    "<Li> `` Season 7 premiere of the season '' . HBO . Retrieved 2017 - 03 - 09 . </Li> "
    "<Li> The season 7 premiere party was held in Belfast . </Li> </Ol>"
)
_PLAIN_PAGE = (
    "The seventh season premiered on July 16, 2017.\n\nFilming began in 2016 in Belfast.\n\n"
    "References\n^ Hibberd, James. \"Season 7 premiere date for the season\". Retrieved 22 May 2017.\n"
    "^ \"Season 7 premiere of the season\". HBO. Archived from the original on 9 March 2017.\n"
    "The season 7 premiere crew was retrieved May 22 from Belfast."
)


def test_a_documents_references_are_not_its_passages():
    """The reader is handed the page's sentences, not its citations: the
    citations' items and lines are left out, a list item or line without
    the mark (and prose that says "retrieved") stays."""
    markup = ChunkRetriever(split_passages(_MARKUP_PAGE, "nq", max_words=12, title="Season 7"))
    assert [(p.id, p.text) for p in markup.search("when does season 7 premiere", 2)] == [
        ("nq_p0", "<P> The seventh season premiered on July 16 , 2017 ."),
        ("nq_p2", "</P> <Ol> <Li> The season 7 premiere party was held in Belfast"),
    ]
    plain = ChunkRetriever(split_passages(_PLAIN_PAGE, "doc", max_words=12, title="Season 7"))
    assert [(p.id, p.text) for p in plain.search("when does season 7 premiere", 2)] == [
        ("doc_p0", "The seventh season premiered on July 16, 2017."),
        ("doc_p2", "References The season 7 premiere crew was retrieved May 22 from Belfast."),
    ]


def test_a_wikipedia_note_marked_by_its_link_back_is_a_reference():
    """An entry with no "Retrieved" date is still a reference where its
    link back to the text ("Jump up ^", "^ Jump up to :") marks it: the
    reader answered "who plays lemony snicket" from a review's title."""
    page = ("<P> Neil Patrick Harris stars as Count Olaf . </P> <Ol> <Li> Jump up ^ Saraiya , Sonia . `` TV Review : "
            "Lemony Snicket 's ' A Series of Unfortunate Events ' '' . </Li> <Li> ^ Jump up to : a b Smith , Ann . `` Lemony "
            "Snicket '' . </Li> <Li> Warburton narrates as Lemony Snicket . </Li> </Ol>")
    texts = " ".join(p.text for p in split_passages(page, "nq", max_words=100))
    assert "TV Review" not in texts and "Smith" not in texts
    assert "Warburton narrates as Lemony Snicket" in texts


def _assert_notes(page: str, kept=(), dropped=()) -> None:
    """Each of ``kept`` is in ``page``'s passages, none of ``dropped`` is."""
    texts = " ".join(p.text for p in split_passages(page, "nq", max_words=300))
    for phrase in kept:
        assert phrase in texts, phrase
    for phrase in dropped:
        assert phrase not in texts, phrase


def test_a_note_with_the_link_back_but_no_reference_look_stays():
    """"Jump up ^" opens explanatory notes too: an entry stays unless what
    follows the mark opens as a reference (its author, its quoted title),
    never in a table cell, and a plain line only where the mark opens it."""
    page = ("<P> The show ran for seven seasons . </P> <Ol> <Li> Jump up ^ The finale was watched by 12.1 million viewers . "
            "</Li> </Ol> <Table> <Tr> <Td> Pilot <Ul> <Li> Jump up ^ Smith ( 2017 ) . `` Pilot '' . </Li> </Ul> </Td> </Tr> "
            "</Table>")
    texts = " ".join(p.text for p in split_passages(page, "nq", max_words=100))
    for kept in ("12.1 million viewers", "Smith ( 2017 )"):
        assert kept in texts, kept
    # A quote inside a sentence, a year in brackets that ends it, a bare "www ." name: a note's
    # prose, not a reference's title, date or address.
    notes = ("<P> The show ran . </P> <Ol> <Li> Jump up ^ The finale , `` Goodbye '' , was watched by 12.1 million viewers . "
             "</Li> <Li> Jump up ^ The network renewed the show for a second season ( 2017 ) . </Li> <Li> Jump up ^ The "
             "official site moved to www . show . com in 2018 . </Li> <Li> Jump up ^ Jefferson wrote `` We hold these "
             "truths to be self-evident '' in June 1776 . </Li> </Ol>")
    _assert_notes(notes, kept=("12.1 million viewers", "second season ( 2017 )", "www . show . com", "in June 1776"))
    lines = "It ran .\n^ Jump up to : The finale `` Goodbye '' drew 12.1 million viewers .\nIt ended ."
    assert "12.1 million viewers" in " ".join(p.text for p in split_passages(lines, "doc", max_words=100))
    lines = "The price can Jump up to : 50 dollars ( 2017 ) .\n^ Jump up to : a b Smith , J. ( 2017 ) . Title .\nIt aired ."
    texts = " ".join(p.text for p in split_passages(lines, "doc", max_words=100))
    assert "50 dollars" in texts and "It aired" in texts and "Title" not in texts


def test_a_note_that_opens_as_prose_stays_though_it_quotes_dates_or_links():
    """A note that quotes a sentence, dates a figure in brackets or gives
    an address was dropped as a reference: only an author or a title
    after the mark makes one."""
    notes = ("<P> He wrote it quickly . </P> <Ol> <Li> Jump up ^ McCartney later said , `` I woke up with a lovely tune in my "
             "head . '' </Li> <Li> Jump up ^ The band reformed ( 1994 ) . They toured again in 2004 . </Li> <Li> ^ Jump up to : "
             "a b The figure includes the suburbs ( 2010 ) . Census data excludes islands . </Li> <Li> Jump up ^ See https : "
             "//www.census.gov for the 2020 count of 331 million . </Li> <Li> Jump up ^ Lowry , Brian ( 2017 ) . `` TV Review "
             "'' . Variety . </Li> <Li> Jump up ^ `` Pilot '' . Hollywood Reporter . </Li> </Ol>")
    # An author opens a reference, and so does a quoted title closed by a full stop.
    _assert_notes(notes, kept=("lovely tune", "toured again", "excludes islands", "331 million"),
                  dropped=("TV Review", "Hollywood Reporter"))
    # A place or a name that brackets no year, or one whose bracketed year the sentence goes on
    # from, opens a note's prose, not an author: these were dropped.
    notes = ("<P> It sold well . </P> <Ol> <Li> Jump up ^ Paris , France ( metropolitan area ) had 12 million people in 2019 . "
             "</Li> <Li> Jump up ^ Lennon ( 1980 ) said the song was about his mother . </Li> <Li> Jump up ^ London , England "
             "; the band 's home city . </Li> <Li> Jump up ^ Smith , J. ; Jones , K. ( 2001 ) . Sales . </Li> </Ol>")
    _assert_notes(notes, kept=("12 million people", "about his mother", "home city"), dropped=("Sales",))
    lines = "It has 5 million people .\nJump up ^ Figures for 2019 ( 2019 ) . Excludes overseas territories .\nIt is large ."
    assert "overseas territories" in " ".join(p.text for p in split_passages(lines, "doc", max_words=100))


def test_an_unclosed_bracket_of_years_in_a_note_costs_linear_time():
    """Whether a note's author brackets a year is looked up once per
    bracket: a long unclosed bracket of years took seconds."""
    page = "<P> Body . </P> <Ol> <Li> Jump up ^ Paris , France ( " + "1234 " * 8000 + "</Li> </Ol>"
    start = time.perf_counter()
    passages = split_passages(page, "nq", max_words=100)
    assert time.perf_counter() - start < 1.0
    assert " ".join(p.text for p in passages).count("1234") == 8000
    # A closed bracket that holds a year still opens a reference.
    _assert_notes("<P> Body . </P> <Ol> <Li> Jump up ^ Paris , France ( Paris 1234 ) . Title . </Li> </Ol>",
                  kept=("Body",), dropped=("Title",))


def test_a_long_line_that_quotes_a_reference_stays():
    """A line over CITATION_MAX_WORDS words is prose (or a whole page
    without line breaks), kept though it holds a reference's mark."""
    prose = "The archive says the letter was filed. " * 12 + "Retrieved May 22 , 2017 it was read aloud."
    assert [p.text for p in split_passages(prose, "d", max_words=200)] == [" ".join(prose.split())]


def test_documents_by_id(retriever):
    assert [p.title for p in retriever.documents(["byron", "nope", "paris"])] == ["Lord Byron", "Paris"]


def _held_files(folder) -> list[str]:
    """The files under ``folder`` this process has open or mapped (Linux)."""
    held = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            held.append(os.readlink(fd))
        except OSError:  # closed while listed
            pass
    held += [line.split(maxsplit=5)[-1].strip() for line in Path("/proc/self/maps").read_text().splitlines()]
    return [path for path in held if path.startswith(str(folder))]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self to see which files are held")
def test_a_closed_retriever_lets_go_of_its_index_files(tiny_index, tmp_path):
    # A session's uploads are removed when it ends: files still held keep their disk space.
    index = shutil.copytree(tiny_index, tmp_path / "index")
    with BM25Retriever.from_index(index) as retriever:
        assert [p.id for p in retriever.search("Who was Ada Lovelace?", 1)] == ["ada"]
        assert _held_files(index)
    assert _held_files(index) == []
    for call in (lambda: retriever.search("Ada", 1), lambda: retriever.respelled("Ada"),
                 lambda: retriever.documents(["ada"]), lambda: list(retriever.passages())):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    retriever.close()  # again: nothing to do


def test_missing_and_corrupt_index(tmp_path):
    with pytest.raises(IndexNotFoundError, match="python -m assistant.index"):
        BM25Retriever.from_index(tmp_path / "absent")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "segments_1").write_bytes(b"not a lucene file")
    with pytest.raises(IndexDamagedError, match="is damaged .*rebuild it with `python -m assistant.index"):
        BM25Retriever.from_index(tmp_path / "bad")


def test_a_missing_index_has_one_message_and_a_path_is_checked(tmp_path, tiny_collection):
    """from_index and ensure_index (what the app and the pipeline call) said
    it two ways, "No Lucene index at" and "No index at"; a None path got
    pathlib's TypeError, and "" was "No Lucene index at ."."""
    from assistant.kernel import ConfigError
    from assistant.retrieval import ensure_index, verify_index

    absent = tmp_path / "absent"
    expected = (f"No Lucene index at {absent}. Build it with "
                f"`python -m assistant.index --input COLLECTION --index {absent}`.")
    for open_index in (BM25Retriever.from_index, ensure_index, verify_index):
        with pytest.raises(IndexNotFoundError) as caught:
            open_index(absent)
        assert str(caught.value) == expected
        with pytest.raises(IndexNotFoundError, match=r"^No Lucene index at '' \(an empty path\)\. .*--index DIR`"):
            open_index("")
        with pytest.raises(TypeError, match="^the index folder must be a path \\(str or Path\\), not NoneType$"):
            open_index(None)
    with pytest.raises(TypeError, match="^the index folder must be a path"):
        build_index(read_collection(tiny_collection), None, progress=False)
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="^cannot write the index folder .*file/idx: .*file is not a folder"):
        build_index(read_collection(tiny_collection), tmp_path / "file" / "idx", progress=False)


def test_an_index_path_that_is_a_file_is_named_as_one(tmp_path):
    # It advised building into the file, which assistant.index refuses.
    from assistant.retrieval import ensure_index, verify_index

    a_file = tmp_path / "some_file.json"
    a_file.write_text("{}")
    for open_index in (BM25Retriever.from_index, ensure_index, verify_index):
        with pytest.raises(IndexNotFoundError) as caught:
            open_index(a_file)
        message = str(caught.value)
        assert message.startswith(f"{a_file} is a file; --index takes the folder an index was built into")
        assert f"--index {a_file}" not in message


def test_folder_collection_and_cli(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Tea is a drink.\n\nIt comes from China.")
    (docs / "b.html").write_text("<html><script>x()</script><p>Coffee is brewed.</p></html>")
    (docs / "ignored.bin").write_bytes(b"\x00")
    passages = list(read_collection(docs))
    assert [(p["id"], p["contents"]) for p in passages] == [
        ("a.txt#0", "Tea is a drink. It comes from China."),
        ("b.html#0", "Coffee is brewed."),
    ]
    assert index_main(["--input", str(docs), "--index", str(tmp_path / "idx")]) == 0
    assert "Indexed 2 passages" in capsys.readouterr().out
    assert BM25Retriever.from_index(tmp_path / "idx").search("coffee", 1)[0].id == "b.html#0"


def test_empty_documents_are_named_not_left_out_in_silence(tmp_path, capsys):
    # A folder's empty or blank files were left out without a word, and a
    # folder of only such files (or an empty .jsonl) was "The collection has
    # no passages", naming no input.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "empty.txt").write_text("")
    (docs / "blank.md").write_text("  \n\t\n")
    assert index_main(["--input", str(docs), "--index", str(tmp_path / "idx")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {docs}: the collection has no passages: nothing to index (2 documents with no text: blank.md, empty.txt).")
    (docs / "good.txt").write_text("Tea is a drink.")
    assert index_main(["--input", str(docs), "--index", str(tmp_path / "idx")]) == 0
    captured = capsys.readouterr()
    assert "Indexed 1 passage" in captured.out
    assert "note: left out 2 documents with no text: blank.md, empty.txt" in captured.err
    (tmp_path / "empty.jsonl").write_text("")
    assert index_main(["--input", str(tmp_path / "empty.jsonl"), "--index", str(tmp_path / "idx2")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {tmp_path / 'empty.jsonl'}: the collection has no passages: nothing to index.")


def test_a_folder_of_documents_takes_titles_from_html_and_markdown(tmp_path):
    """A .md passage kept its '#' markup ('# Alan Turing Alan Turing was ...')
    and every title was the file's name, an HTML page's <title> unread."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "turing.md").write_text("\n# Alan Turing\n\nAlan Turing was a mathematician.\n\n"
                                    "## Early life ##\nHe was born in London, not #1.\n")
    (docs / "notes.md").write_text("Some notes.\n\n# Later heading\n\nMore.\n")
    (docs / "hopper.html").write_text("<html><head><title> Grace\n Hopper &amp; COBOL </title></head>"
                                      "<body><h1>Grace Hopper</h1><p>She wrote compilers.</p></body></html>")
    (docs / "plain.html").write_text("<p>No title here.</p>")
    (docs / "tea.txt").write_text("# Not markdown\n\nTea.")
    passages = {p["id"]: (p["title"], p["contents"]) for p in read_collection(docs)}
    assert passages == {
        "hopper.html#0": ("Grace Hopper & COBOL", "Grace Hopper She wrote compilers."),
        "notes.md#0": ("notes", "Some notes. Later heading More."),
        "plain.html#0": ("plain", "No title here."),
        "tea.txt#0": ("tea", "# Not markdown Tea."),
        "turing.md#0": ("Alan Turing", "Alan Turing was a mathematician. Early life He was born in London, not #1."),
    }
    # One file alone is read the same way.
    assert [(p["title"], p["contents"]) for p in read_collection(docs / "turing.md")] == [passages["turing.md#0"]]


def test_bad_collections(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "contents": "ok"}\n{"id": "2"}\n')
    with pytest.raises(DataFormatError, match="bad.jsonl, line 2"):
        list(read_collection(bad))
    assert index_main(["--input", str(bad), "--index", str(tmp_path / "idx")]) == 2
    assert "bad.jsonl, line 2" in capsys.readouterr().err
    assert not (tmp_path / "idx").exists()  # nothing half-built is left behind
    dup = tmp_path / "dup.jsonl"
    dup.write_text(json.dumps({"id": "1", "contents": "a"}) + "\n" + json.dumps({"id": "1", "contents": "b"}) + "\n")
    with pytest.raises(DataFormatError, match="Duplicate"):
        build_index(read_collection(dup), tmp_path / "idx2", progress=False)
    with pytest.raises(DataFormatError, match="no such file"):
        read_collection(tmp_path / "missing.jsonl")


def test_default_collection_is_readable():
    first = next(iter(read_collection()))
    # A summary's short description is kept where it has one (tests/test_lifespan.py).
    assert set(first) - {"description"} == {"id", "contents", "title", "url"}
    assert first["url"].startswith("https://en.wikipedia.org/wiki/")


def test_text_helpers():
    assert html_to_text("<p>a &amp; b</p><style>p{}</style><div>c</div>") == "a & b\n\nc"
    words = " ".join(f"w{i}." for i in range(300))
    parts = chunk_text(words, max_words=120)
    assert [len(p.split()) for p in parts] == [120, 120, 60]


def test_chunk_text_bounds_any_text():
    # A paragraph with no sentence end, as a scraped table or a log dump is.
    text = " ".join(f"cell{i}" for i in range(1000))
    parts = chunk_text(text, max_words=120)
    assert [len(p.split()) for p in parts] == [120] * 8 + [40]
    assert " ".join(parts) == text
    # A run with no space at all is cut at the character bound.
    blob = "x" * 10_000
    parts = chunk_text(blob, max_words=120)
    assert all(len(p) <= 120 * 32 for p in parts) and "".join(parts) == blob
    # One over-long sentence among normal ones: only it is cut.
    long_sentence = " ".join(["word"] * 300) + "."
    parts = chunk_text(f"Short one. {long_sentence} Short two.", max_words=120)
    assert all(len(p.split()) <= 120 for p in parts)
    assert " ".join(parts).split() == f"Short one. {long_sentence} Short two.".split()
    # Words longer than the bound inside prose: no passage passes either bound.
    mixed = ("see " + "y" * 5000 + " then more words. ") * 3
    parts = chunk_text(mixed, max_words=50, max_chars=1000)
    assert all(len(p.split()) <= 50 and len(p) <= 1000 for p in parts)
    assert "".join(parts).replace(" ", "") == mixed.replace(" ", "")


def test_chunk_text_keeps_normal_text_as_before():
    # Prose whose sentences fit: the same passages as the sentence packer gave.
    sentences = [" ".join(f"s{n}w{i}" for i in range(17)) + "." for n in range(30)]
    # Paragraphs of 3 sentences (51 words, kept whole) and of 8 (136, cut).
    paragraphs = "\n\n".join([" ".join(sentences[:3]), " ".join(sentences[3:11]), " ".join(sentences[11:14])])
    parts = chunk_text(paragraphs, max_words=120)
    assert parts == _sentence_packer(paragraphs, 120)
    assert [len(p.split()) for p in parts] == [51 + 4 * 17, 4 * 17 + 51]


def _sentence_packer(text, max_words):
    # The packer as it was before passages were bounded: paragraphs whole when
    # they fit, else their sentences, packed while the word count fits.
    import re

    units = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = re.sub(r"\s+", " ", paragraph).strip()
        if paragraph:
            units += [paragraph] if len(paragraph.split()) <= max_words else re.split(r"(?<=[.!?])\s+", paragraph)
    passages, current = [], []
    for unit in units:
        if current and len(" ".join(current + [unit]).split()) > max_words:
            passages.append(" ".join(current))
            current = []
        current.append(unit)
    return passages + [" ".join(current)] if current else passages


@pytest.mark.parametrize("threads", [1, 2])
def test_a_collection_saved_in_utf16_with_a_mark_is_indexed_as_its_text(tmp_path, threads):
    # Anserini, reading the files itself (threads > 1), reads them as UTF-8:
    # a UTF-16 file is encoded by Python instead, as on one thread.
    from assistant.retrieval import index_collection

    lines = [{"id": f"p{n}", "contents": f"Pelé scored goal number {n}."} for n in range(3)]
    src = tmp_path / "collection.jsonl"
    src.write_bytes("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-16"))
    assert index_collection(src, tmp_path / "idx", progress=False, threads=threads) == 3
    with BM25Retriever.from_index(tmp_path / "idx") as retriever:
        assert sorted((p.id, p.text) for p in retriever.passages()) == [(x["id"], x["contents"]) for x in lines]


def test_two_builds_or_a_build_and_a_search_never_call_java_at_the_same_time(tmp_path, monkeypatch):
    # Two builds at once (two visitors' uploads) crashed the JVM with
    # SIGSEGV, and pyjnius swaps the receivers of two threads' calls: a
    # build's batch, a second build and a search wait for each other.
    import threading

    from assistant.retrieval import import_pyserini

    lucene = import_pyserini("pyserini.index.lucene")
    entered = {"first": threading.Event(), "second": threading.Event(), "search": threading.Event()}
    release = threading.Event()

    class Indexer:  # stands for pyserini's LuceneIndexer
        def __init__(self, args, threads):
            self.object = self

        def addRawDocuments(self, batch):
            name = json.loads(batch[0])["id"]
            entered[name].set()
            release.wait(10)
            return 0  # refused: the build ends there, with its DataFormatError

        def close(self):
            pass

    class Searcher:  # stands for pyserini's LuceneSearcher: documents() calls doc()
        num_docs = 1

        def doc(self, doc_id):
            entered["search"].set()

    monkeypatch.setattr(lucene, "LuceneIndexer", Indexer)
    errors = []

    def build(name):
        try:
            build_index([{"id": name, "contents": "text"}], tmp_path / name, progress=False)
        except DataFormatError as error:
            errors.append(str(error))

    threads = [threading.Thread(target=build, args=(name,)) for name in ("first", "second")]
    threads.append(threading.Thread(target=BM25Retriever(Searcher(), "default").documents, args=(["x"],)))
    threads[0].start()
    assert entered["first"].wait(10)
    for thread in threads[1:]:
        thread.start()
    overlapped = entered["second"].wait(0.5) or entered["search"].is_set()
    release.set()
    for thread in threads:
        thread.join(10)
    assert not overlapped
    assert entered["second"].is_set() and entered["search"].is_set() and len(errors) == 2


def test_an_index_opened_while_another_is_searched_waits_for_the_search(tiny_index, monkeypatch):
    # Two indexes opened at once crashed the JVM (SIGSEGV); one opened during
    # a search raised "Receiver class RegExp does not implement the interface".
    import threading

    from assistant.retrieval import import_pyserini

    inside, opened = threading.Event(), threading.Event()
    release = threading.Event()

    class Searcher:  # stands for pyserini's LuceneSearcher: documents() calls doc()
        num_docs = 1

        def __init__(self, index_dir=""):
            opened.set()

        def doc(self, doc_id):
            inside.set()
            release.wait(10)

        def set_bm25(self, k1, b):
            pass

    monkeypatch.setattr(import_pyserini(), "LuceneSearcher", Searcher)
    searching = threading.Thread(target=BM25Retriever(Searcher(), "default").documents, args=(["x"],))
    opened.clear()
    searching.start()
    assert inside.wait(10)
    opening = threading.Thread(target=BM25Retriever.from_index, args=(tiny_index,))
    opening.start()
    overlapped = opened.wait(0.5)
    release.set()
    searching.join(10)
    opening.join(10)
    assert not overlapped and opened.is_set()


def test_two_retrievers_never_call_lucene_at_the_same_time():
    # Two searchers side by side (the default index, a session's upload),
    # each under its own lock, crashed the JVM (SIGSEGV in Lucene's
    # Document.get) or raised NullPointerException, read as a damaged index.
    import threading

    inside, most = [0], [0]

    class SlowSearcher:  # stands for pyserini's LuceneSearcher: documents() calls doc()
        num_docs = 1

        def doc(self, doc_id):
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            time.sleep(0.02)
            inside[0] -= 1
            return None

    retrievers = [BM25Retriever(SlowSearcher(), "default"), BM25Retriever(SlowSearcher(), "upload")]
    threads = [threading.Thread(target=retriever.documents, args=(["x"] * 5,)) for retriever in retrievers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1
