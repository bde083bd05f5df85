"""Indexing JSONL files with Anserini's own reader, as pyserini's CLI does.

When every line of a JSONL collection is already what the indexer would
write (see :func:`indexer_form`), nothing needs to pass through Python:
Anserini's ``IndexCollection`` reads the files on its own threads, exactly
as ``python -m pyserini.index.lucene -collection JsonCollection`` does. Python
reads the same lines once alongside it, to check them (an unreadable line is
named, a line that needs encoding sends the build back to the streaming
route, a line Lucene would refuse is named, and Anserini stopped, as
Python reaches it) and to keep each id's hash for the duplicate check; the
progress bar follows Anserini's index writer, passage by passage.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Callable, Iterator

from tqdm import tqdm

from ..kernel import DataFormatError, composed_text, json_lines, json_lines_with_text, unicode_mark
from ._collection import checked_passage, lucene_problem
from ._java import import_pyserini

__all__ = ["RAM_BUFFER_MB", "MAX_HASHES", "remember_id", "indexer_form", "as_is", "in_indexer_form", "index_lines"]

# Lucene's indexing RAM buffer (MB) before it flushes a segment. Anserini's
# default is 4096; a smaller buffer keeps the JVM's heap small and indexed
# no slower on the large bench collection (BENCHMARKS.md §9).
RAM_BUFFER_MB = 256

# Passages whose id hashes the duplicate check keeps (8 bytes each: 512 MB
# at the cap, QReCC's 54M passages fit under it); a larger collection is
# checked by Lucene's term walk alone, which holds nothing in Python.
MAX_HASHES = 64_000_000


def remember_id(hashes: array, doc_id: str) -> None:
    """Keep ``doc_id``'s hash for the duplicate check, up to :data:`MAX_HASHES`."""
    if len(hashes) < MAX_HASHES:
        hashes.append(hash(doc_id))


_FIELDS = frozenset(("id", "contents", "title", "url"))

# Lines checked before the build picks Anserini's reader: a collection that
# needs encoding almost always shows it on its first line.
_HEAD = 1000

# Seconds between two looks at Anserini's counter once Python has read everything.
_POLL_S = 0.5


def indexer_form(record) -> bool:
    """Whether a JSONL record is what the indexer would write for it: a
    string id, only id, contents, title and url (strings), contents that
    start with the title (or no title), and text already composed as
    :func:`checked_passage` makes it, so that Lucene can take the line as
    it is."""
    if type(record) is not dict or not record.keys() <= _FIELDS:
        return False
    contents, title = record.get("contents"), record.get("title", "")
    return (type(record.get("id")) is str and type(contents) is str and type(title) is str
            and contents.startswith(title) and type(record.get("url", "")) is str
            and composed_text(contents) == contents and composed_text(title) == title)


def as_is(record, text: str) -> bool:
    """Whether a JSONL line (``text``, its ``record``) can go to Lucene as it
    is, on either route: in :func:`indexer_form`, nothing in it Lucene would
    refuse (:func:`lucene_problem`; such a line goes to
    :func:`checked_passage`, which names it), and no byte order mark before
    it, which Lucene reads as the line's first character."""
    return (indexer_form(record) and not text.startswith("\ufeff")
            and lucene_problem(record["id"], record["contents"], record.get("title", ""), record.get("url", "")) is None)


def in_indexer_form(files: list[Path]) -> bool:
    """Whether the first lines of ``files`` are all in :func:`indexer_form`,
    and every file is UTF-8 (Anserini reads the files as UTF-8: one in
    UTF-16, which Python reads, is encoded on the streaming route)."""
    if any(_marked(file) for file in files):
        return False
    lines = itertools.chain.from_iterable(json_lines(file) for file in files)
    return all(indexer_form(record) for _, record in itertools.islice(lines, _HEAD))


def _marked(file: Path) -> bool:
    try:
        with file.open("rb") as handle:
            return unicode_mark(handle.read(4)) is not None
    except OSError:
        return False  # json_lines names what it cannot read


def index_lines(
    files: list[Path], staging: Path, *, threads: int, total: int | None, progress: bool, description: str
) -> tuple[int, array] | None:
    """Index ``files`` into the empty folder ``staging`` with Anserini's
    ``IndexCollection`` on ``threads`` threads; the passage count and the
    ids' hashes, or None when a line is not in :func:`indexer_form` (the
    caller then encodes the collection itself). A line that is no passage,
    or one Lucene would refuse, raises :class:`DataFormatError` naming it.

    Anserini is stopped as soon as its work is of no use (a line refused or
    needing encoding, Ctrl-C): its index writer is rolled back, which ends
    its threads at their next passage, instead of letting it read the rest
    of the collection. What Java prints meanwhile (stack traces of lines it
    cannot parse, which Python names in one line) is kept from the terminal.
    """
    import_pyserini("pyserini.index.lucene")  # the JVM, configured our way
    from jnius import JavaException, autoclass, cast

    links = Path(tempfile.mkdtemp(prefix=staging.name + ".input.", dir=staging.parent))
    try:
        # Anserini reads a folder: one link per file, so it reads exactly ours.
        for number, file in enumerate(files):
            (links / f"{number:06d}.jsonl").symlink_to(file.resolve())
        arguments = autoclass("java.util.ArrayList")()
        for argument in ("-collection", "JsonCollection", "-input", str(links), "-index", str(staging),
                         "-threads", str(threads), "-storeRaw", "-memoryBuffer", str(RAM_BUFFER_MB), "-quiet"):
            arguments.add(argument)
        options = autoclass("io.anserini.index.IndexCollection$Args")()
        autoclass("org.kohsuke.args4j.CmdLineParser")(options).parseArgument(arguments)
        with _java_stderr_kept() as java_said:
            indexer = autoclass("io.anserini.index.IndexCollection")(options)
            counters = indexer.getCounters()
            # Anserini's IndexWriter (a protected field pyjnius reads): its
            # count moves with every passage, while Anserini's counter moves
            # 10,000 passages a thread at a time.
            writer = indexer.writer
            # Anserini indexes on a thread the JVM starts itself, so no Python
            # thread of ours stays attached to the JVM (pyjnius never detaches
            # one); the FutureTask keeps what the run raises for us.
            task = autoclass("java.util.concurrent.FutureTask")(cast("java.lang.Runnable", indexer), None)
            java = autoclass("java.lang.Thread")(cast("java.lang.Runnable", task), "anserini-index")
            java.start()
            with tqdm(total=total, desc=description, unit=" passages", disable=not progress,
                      file=sys.stderr, smoothing=0.1) as bar:

                def show() -> None:
                    bar.update(_indexed(counters, writer, JavaException) - bar.n)

                finished = False
                try:
                    checked = _check_lines(files, show)
                    while checked is not None and java.isAlive():
                        java.join(int(_POLL_S * 1000))
                        show()
                    finished = checked is not None
                finally:
                    if not finished:
                        _stop(writer, java, JavaException)
                bar.update(counters.indexed.get() - bar.n)
                if finished:
                    bar.total = checked[0]  # not the line count, blank lines included
            if checked is None:
                return None
            try:
                task.get()
            except JavaException as error:
                raise DataFormatError(f"Anserini failed: {_first_line(java_said()) or _first_line(str(error))}") from None
        count, hashes = checked
        indexed = counters.indexed.get()
        if indexed != count:
            raise DataFormatError(
                f"Lucene indexed {indexed} of the {count} passages ({counters.empty.get()} empty, "
                f"{counters.unindexable.get()} unindexable, {counters.errors.get()} failed); "
                "every passage needs a non-empty contents."
            )
        return count, hashes
    finally:
        for link in links.iterdir():
            link.unlink()
        links.rmdir()


def _indexed(counters, writer, JavaException) -> int:
    """Passages Anserini has indexed so far: the writer's count while it is
    open, else Anserini's own counter."""
    try:
        return max(int(writer.getPendingNumDocs()), counters.indexed.get())
    except JavaException:  # closed: the build has ended
        return counters.indexed.get()


def _stop(writer, java, JavaException) -> None:
    """End Anserini's run early: the rolled back writer discards what it
    holds and fails each thread's next passage, so the run ends within a
    passage's time (its folder is removed with ours)."""
    try:
        writer.rollback()
    except JavaException:
        pass  # closed already: the run is over
    while java.isAlive():
        java.join(int(_POLL_S * 1000))


@contextlib.contextmanager
def _java_stderr_kept() -> Iterator[Callable[[], str]]:
    """Java's ``System.err`` and Anserini's log held back while Anserini
    reads the files: a line it cannot parse, or a thread stopped by
    :func:`_stop`, prints a stack trace there, and Python names such a line
    in one line. Yields a function returning what Java printed, for a
    failure Python cannot name."""
    from jnius import autoclass

    System = autoclass("java.lang.System")
    Configurator = autoclass("org.apache.logging.log4j.core.config.Configurator")
    LogManager = autoclass("org.apache.logging.log4j.LogManager")
    Level = autoclass("org.apache.logging.log4j.Level")
    before, level = System.err, LogManager.getLogger("io.anserini").getLevel()
    kept = autoclass("java.io.ByteArrayOutputStream")()
    System.setErr(autoclass("java.io.PrintStream")(kept, True, "UTF-8"))
    Configurator.setLevel("io.anserini", Level.OFF)
    try:
        yield lambda: kept.toString("UTF-8")
    finally:
        Configurator.setLevel("io.anserini", level)
        System.setErr(before)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _check_lines(files: list[Path], show: Callable[[], None]) -> tuple[int, array] | None:
    """Every line checked as Anserini reads it; (count, hashes), or None at
    the first line that needs encoding. ``show`` moves the bar."""
    hashes = array("q")
    count = 0
    for file in files:
        for where, record, text in json_lines_with_text(file):
            if not as_is(record, text):
                checked_passage(where, record)  # a line that is no passage, or one Lucene refuses, is named
                return None
            remember_id(hashes, record["id"])
            count += 1
            if count % 2_000 == 0:
                show()
    return count, hashes
