"""Building a Lucene BM25 index (the engine of ``python -m assistant.index``).

The build streams: passages are read, turned into Lucene JSON and handed to
Anserini in batches of ``_BATCH``, so Python holds a few batches whatever the
collection's size (Lucene buffers in its own bounded RAM buffer and flushes
segments to disk), or, for JSONL lines that need no encoding, Anserini
reads the files itself (``_direct``). In the streaming route Anserini's
``SimpleIndexer`` indexes each batch on ``threads`` threads of its own,
while a Python thread reads and encodes the next batches (at most two
wait). A JSONL line already in the indexer's form is passed on as
it is (:func:`index_collection`).

Duplicate ids are found without a Python set of every id. While reading,
each id's 64-bit hash goes into a flat array (8 bytes a passage, up to
:data:`._direct.MAX_HASHES` passages); after the build the sorted array shows in
one NumPy pass whether any two ids may be equal. Only then (or past the
cap) does Lucene name the id: each passage's id is one term of the index's
``id`` field, so a segment whose term count is below its document count has
a repeated id, and across segments one sorted walk of the merged term
dictionary finds the first id in two documents (see
:func:`._lucene.duplicate_id`), exact but two Java calls a term. A
duplicate is reported when the build ends, not at the line where it occurs
(knowing it there would take a set of every id); for a collection of files,
its first two lines are then found by one more read of the files, which
only a failed build pays.

The index is written to a temporary folder next to ``DIR``, checked
(duplicates, then every file's checksum) and only then renamed into place,
so an interrupted or failed build never leaves a half index that a later
start would take for a good one. The staging folder holds an owner mark
(the building process's pid and start, and the host) until it is renamed:
a build removes the staging folders of builds of the same index whose
process has died (killed, or the machine stopped), puts back the old index
a rebuild killed between its two renames had moved aside, keeps the
complete copy of a build killed just before its rename until an index is in
place (only the app's start puts one in place, of the default collection,
:func:`ensure_index`), and keeps the folders of builds still running (and,
in the index cache, those older builds left without a mark, once unchanged
for a day). The index folder
gets the modes of any folder made under the process's umask (``mkdtemp``
makes it 0700).
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
from array import array
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
from tqdm import tqdm

from ..kernel import (
    OWNER_FILE,
    ConfigError,
    DataFormatError,
    IndexNotFoundError,
    cache_dir,
    counted,
    current_umask,
    default_index_dir,
    json_lines,
    json_lines_with_text,
    mark_finished,
    mark_owner,
    output_path,
    owner_finished,
    owner_gone,
    remove_moved_mark,
)
from ._collection import collection_size, checked_passage, default_collection_path, jsonl_sources, read_collection
from ._dense import VECTORS_FILE
from ._direct import RAM_BUFFER_MB, as_is, in_indexer_form, index_lines, remember_id
from ._java import JAVA_LOCK, import_pyserini
from ._lucene import (
    build_folder_pattern,
    duplicate_id,
    existing_index,
    has_index,
    holds_old_index,
    index_path,
    java_exception,
    open_reader,
    running_build,
    verify_checksums,
)

__all__ = ["build_index", "index_collection", "ensure_index", "verify_index"]

# What a build writes in an index's convqa.json beside its passage count:
# 2 since passages keep their collection's short description in the stored
# JSON. The default collection's index of an earlier format is built again
# (see ensure_index): its descriptions hold the only years of many a person.
INDEX_FORMAT = 2

# Passages handed to Lucene per call: one JNI round trip each, so a batch of
# hundreds saves most of the calls, while memory stays small. Each
# indexing thread gets a share of the batch, so it grows with the threads.
_BATCH = 512


def _lucene_doc(passage: dict) -> dict:
    # Lucene ranks "contents"; the title goes in front of it so that a passage
    # from deep inside a document still matches its subject's name. The text
    # we show is kept apart in "text" (stored in the raw JSON), only where it
    # differs from "contents" (the retriever shows "contents" when it is
    # absent): the same words need not be encoded, passed to Java, parsed
    # and stored twice.
    # A description is stored only: Anserini indexes it as a field of its
    # own, which no search reads, so BM25's ranking of "contents" is the same.
    title, text = passage["title"], passage["contents"]
    described = {"description": passage["description"]} if passage.get("description") else {}
    if not title or text.startswith(title):
        return {"id": passage["id"], "contents": text, "title": title, "url": passage["url"], **described}
    return {"id": passage["id"], "contents": f"{title}\n{text}", "text": text, "title": title, "url": passage["url"],
            **described}


def build_index(
    passages: Iterable[dict],
    index_dir: str | Path,
    *,
    total: int | None = None,
    progress: bool = True,
    description: str = "Indexing",
    threads: int = 1,
) -> int:
    """Index ``passages`` into ``index_dir`` (replacing it) and return their count.

    ``passages`` may be any iterable of dicts, read once, each with ``id``
    and ``contents`` (``title`` and ``url`` optional), as a JSONL
    collection's lines have them; a record without them is refused with a
    :class:`~assistant.kernel.DataFormatError` naming it. ``total`` (when known) gives
    the progress bar its ETA; otherwise it shows the rate. ``threads`` are
    Anserini's indexing threads: one keeps documents in input order, so an
    index is the same at every build (BM25 breaks score ties by that order);
    more index faster where there are cores to spare, but the order, and so
    the order of tied hits, then varies between builds.
    """
    _require_threads(threads)
    if isinstance(passages, (str, bytes, dict)):
        # Each would be iterated (characters, keys) and refused item by item.
        raise TypeError(f"passages must be an iterable of dicts, not one {type(passages).__name__}")
    return _build(_encoded(_checked(passages)), index_dir, total=total, progress=progress,
                  description=description, threads=threads)


def _checked(passages: Iterable) -> Iterator[dict]:
    # The collection readers check their records as they read them; a
    # caller's records get the same check, named by their place.
    for number, record in enumerate(passages, 1):
        yield checked_passage(f"passage {number}", record)


def _require_threads(threads: int) -> None:
    if threads < 1:
        raise ConfigError(f"threads must be at least 1, not {threads}.")


def index_collection(
    path: str | Path | None,
    index_dir: str | Path,
    *,
    progress: bool = True,
    description: str = "Indexing",
    threads: int = 1,
) -> int:
    """Index the collection at ``path`` (any form :func:`read_collection`
    reads; None: the default collection) into ``index_dir``, as
    :func:`build_index` does, and return the passage count.

    A JSONL line already in the indexer's own form (a string id; only id,
    contents, title and url; contents starting with the title, or no title)
    goes to Lucene as it is, unparsed by a second encoding: most of what a
    large collection costs in Python. With ``threads`` above one and every
    line in that form, Anserini reads the files itself, as pyserini's CLI
    does (:func:`._direct.index_lines`); one thread keeps the streaming
    route, whose order, and so whose index, is the same at every build.

    A folder's document that is not text is left out with a ``note:
    skipped NAME: <its reason>`` line on stderr (not UTF-8 text; a NUL
    character, a binary file's), unless no other
    gives a passage: then its refusal is raised, as for a file given alone.
    """
    _require_threads(threads)
    files = jsonl_sources(path) if path is not None else None
    total = collection_size(path)
    empty: list[str] = []  # a folder's documents with no text, as read
    not_text: list = []  # a folder's documents that are not UTF-8 text, and why, as read
    try:
        if files is not None and threads > 1 and in_indexer_form(files):
            try:
                count = _staged(index_dir, lambda staging: _locked(index_lines)(
                    files, staging, threads=threads, total=total, progress=progress, description=description))
            except DataFormatError as error:
                if not str(error).startswith("Lucene indexed"):
                    raise
                # Anserini skipped or could not read a passage, and names none
                # (a line over Jackson's limit also ends its reading of that
                # file): the first line Python refuses is the one to name.
                _first_refused(files)
                raise
            if count is not None:
                return count
            # A later line needs encoding after all: the streaming route does it.
        encoded = (_encoded_jsonl(files) if files is not None
                   else _encoded(read_collection(path, empty=empty, not_text=not_text)))
        count = _build(encoded, index_dir, total=total, progress=progress,
                       description=description, threads=threads)
        for name, error in not_text:  # said with or without a progress bar: a file left out is no progress detail
            # The file's own reason: a NUL's file was said to be "not UTF-8 text (save it as UTF-8)".
            tqdm.write(f"note: skipped {name}: it {error.reason}", file=sys.stderr)
        if empty and progress:
            # Left out in silence, an empty document looked indexed.
            tqdm.write(f"note: left out {_empty_documents(empty)}", file=sys.stderr)
        return count
    except _NoPassages:
        if not_text:  # nothing else to index: the first such file's own refusal says what to do
            raise not_text[0][1] from None
        # The input is named: "The collection" alone did not say which.
        where = default_collection_path() if path is None else path
        left_out = f" ({_empty_documents(empty)})" if empty else ""
        raise DataFormatError(f"{where}: the collection has no passages: nothing to index{left_out}.") from None
    except _DuplicateId as error:
        if files is None:
            raise
        places = _places_of(files, error.doc_id)
        if len(places) < 2:  # an id Lucene reads from lines Python reads otherwise: cannot happen
            raise
        raise DataFormatError(
            f"Duplicate passage id {error.doc_id!r} ({' and '.join(places)}): ids must be unique."
        ) from None


def _locked(function: Callable) -> Callable:
    """``function`` called under the Java lock: Anserini's own reading of the
    files (the command line's --threads route) is Java from start to end."""

    def call(*args, **kwargs):
        with JAVA_LOCK:
            return function(*args, **kwargs)

    return call


def _places_of(files: list[Path], doc_id: str, most: int = 2) -> list[str]:
    """The places ("FILE, line N") of the first ``most`` lines of ``files``
    whose id is ``doc_id``. A line whose text cannot hold the id is not
    parsed: for a plain id that is a substring test, so the read costs
    little more than the files' bytes."""
    plain = re.fullmatch(r"[ -~]*", doc_id) is not None and not set(doc_id) & set('"\\/')
    places: list[str] = []
    for file in files:
        for where, record, line in json_lines_with_text(file):
            if plain and doc_id not in line:
                continue
            if isinstance(record, dict) and str(record.get("id")) == doc_id:
                places.append(where)
                if len(places) == most:
                    return places
    return places


def _empty_documents(names: list[str], shown: int = 5) -> str:
    listed = ", ".join(names[:shown]) + (", …" if len(names) > shown else "")
    return f"{counted(len(names), 'document')} with no text: {listed}"


class _NoPassages(DataFormatError):
    """A build with no passage at all."""

    def __init__(self):
        super().__init__("The collection has no passages: nothing to index.")


class _DuplicateId(DataFormatError):
    """Two passages with one id; :attr:`doc_id` is the id."""

    def __init__(self, doc_id: str):
        super().__init__(f"Duplicate passage id {doc_id!r}: ids must be unique.")
        self.doc_id = doc_id


def _build(encoded: Iterable[tuple[str, str]], index_dir: str | Path, *, total: int | None,
           progress: bool, description: str, threads: int) -> int:

    def fill(staging: Path) -> tuple[int, array]:
        LuceneIndexer = import_pyserini("pyserini.index.lucene").LuceneIndexer
        # -storeRaw keeps each passage's JSON for display; we add raw JSON strings
        # because add_batch_dict would keep only id and contents.
        with JAVA_LOCK:
            indexer = LuceneIndexer(
                args=["-index", str(staging), "-storeRaw", "-memoryBuffer", str(RAM_BUFFER_MB)], threads=threads
            )
        hashes = array("q")
        try:
            with tqdm(total=total, desc=description, unit=" passages", disable=not progress,
                      file=sys.stderr, smoothing=0.1) as bar:
                with closing(_prefetched(_batches(encoded, _BATCH * threads, hashes))) as batches:
                    count = 0
                    for batch in batches:
                        with JAVA_LOCK:  # a batch at a time: searches go on between them
                            count += _add(indexer, batch, count)
                        bar.update(len(batch))
                # The total was the files' line count, blank lines included:
                # left, the bar ended at "2/4" over a complete build.
                bar.total = count
        finally:
            with JAVA_LOCK:
                indexer.close()
        return count, hashes

    return _staged(index_dir, fill)


def _staged(index_dir: str | Path, fill: Callable[[Path], tuple[int, array] | None]) -> int | None:
    """Build in a temporary folder next to ``index_dir`` with ``fill``
    (which returns the passage count and the ids' hashes, or None to give
    up), check the ids and every checksum, then rename it into place."""
    # A folder that cannot be made or written is named before any work.
    index_dir = index_path(index_dir)
    if index_dir.is_symlink():
        # A link to the index (indexes/current -> indexes/v3): the build
        # replaces its target and the link stays; renamed over the link, it
        # was shutil.rmtree's "Cannot call rmtree on a symbolic link", once
        # the whole collection was indexed.
        index_dir = index_dir.resolve()
    index_dir = output_path(index_dir, "the index folder", folder=True)
    _require_replaceable(index_dir)
    JavaException = java_exception()
    kept: list[Path] = []
    remove_stale_staging(index_dir, kept=kept)
    try:
        staging = Path(tempfile.mkdtemp(prefix=index_dir.name + ".", dir=index_dir.parent))
    except OSError as error:
        # The index folder itself may be writable (output_path checked it),
        # its parent not: the build is made there and renamed into place.
        raise ConfigError(
            f"cannot write the index folder {index_dir}: a build is made beside it, in {index_dir.parent}, "
            f"and renamed into place, and that folder refuses ({error.strerror or error}); give an index folder "
            "in a writable folder."
        ) from None
    try:
        # mkdtemp's 0700 would keep its mark from another user serving the
        # index (its opens could not tell a running build), and would survive
        # the rename: an index copied with its modes (rsync -a, cp -p) could
        # be read by its owner alone.
        _umask_modes(staging)
        mark_owner(staging)  # so that a later build can tell a dead build's folder
        # Each call into Java under the Java lock (two builds at once, two
        # visitors' uploads indexed by the app's turn threads, crashed the
        # JVM with SIGSEGV); the indexer takes it a batch at a time.
        filled = fill(staging)
        if filled is None:
            return None
        count, hashes = filled
        if count == 0:
            raise _NoPassages()
        may_repeat = _may_repeat(hashes, count)  # numpy's, outside the Java lock
        with JAVA_LOCK:
            _check_ids(staging, count, may_repeat, JavaException)
        verify_checksums(staging, JAVA_LOCK)
        (staging / "convqa.json").write_text(json.dumps({"passages": count, "format": INDEX_FORMAT}))
        # Its mark stays until the rename (see _moved_in): unmarked before it,
        # a build killed there left a complete copy that no later build could
        # tell from a user's own folder, and kept for good.
        _replace(index_dir, staging)
        for copy in kept:  # superseded now that an index is in place
            _remove_build_folder(copy)
    finally:
        # Its removal refused (EACCES, NFS's .nfsXXXX): left marked as this
        # process's, it read as a running build for as long as the process
        # lived (each open waited, then said a build ran).
        _remove_build_folder(staging)
    return count


def _replace(index_dir: Path, staging: Path) -> None:
    """Rename ``staging`` into ``index_dir``'s place. An old index there is
    renamed aside first and removed after: removed at its own path, file by
    file, it was a commit whose files were gone to a reader opening it
    meanwhile, which no check could tell from a damaged index. The aside
    folder is marked first (an open between the renames waits for the new
    index; see :func:`._lucene.existing_index`), and marked finished after
    them: it is a dead build's to the next build, which removes it, should
    it stay (its removal refused, or this process killed). Killed between
    the renames, its mark is not finished: the next build puts the old
    index back (:func:`_lost_index`).

    The new index is renamed in right after the old one is moved aside; a
    stop before it is in (a Ctrl-C, SIGTERM, its rename refused) puts the
    old one back (:func:`_put_back`). What follows (the removal) is
    tidying: a failure there is said on stderr, the index being in place,
    and a Ctrl-C then, or as the aside folder is marked, says it is in place."""
    if not index_dir.exists():
        try:
            _moved_in(staging, index_dir)
            return
        except OSError:
            # Another build's index landed in the empty path meanwhile (two
            # first builds at once, or a cleanup putting an old index back):
            # this build replaces it, as it replaces any index there. Its rename
            # onto the full folder was a raw "Directory not empty".
            if not (_holds_index(index_dir) and os.path.lexists(staging)):
                raise
    aside = Path(tempfile.mkdtemp(prefix=index_dir.name + ".", dir=index_dir.parent))
    try:
        with suppress(OSError):
            # Its mark readable by another user serving the index, as staging's.
            _umask_modes(aside)
        with suppress(OSError):
            # Marked before the old index goes into it: an open between the two
            # renames finds no index, and the mark of a running build tells it
            # to wait for the new one, not that there is none ("build it"). A
            # mark that cannot be written (a full disk) costs only that.
            mark_owner(aside)
        index_dir.rename(aside / "index")
        _moved_in(staging, index_dir)
        # The renames are over: no open is to wait on this folder from now.
        # Left marked as this process's, a folder that could not be removed
        # told every open of a later-deleted index, as long as this process
        # lived on (the app's), that a build ran.
        finished = _marked_finished(aside)
    except BaseException as stop:
        _put_back(index_dir, aside, staging, stop)
        raise
    try:
        # The old index first, the folder with its mark last: a removal
        # refused part way (a busy file) keeps the mark, so that the next
        # build still takes the folder for a dead build's and removes it.
        shutil.rmtree(aside / "index")
        shutil.rmtree(aside)
    except OSError as error:
        print(f"The index at {index_dir} is rebuilt; its old files at {aside} could not be removed "
              f"({error.strerror or error}): {_left_for(finished)}.", file=sys.stderr)
    except KeyboardInterrupt as stop:
        raise _interrupted_in_place(index_dir, aside, stop) from stop


def _moved_in(staging: Path, index_dir: Path) -> None:
    """Rename the build's ``staging`` folder to ``index_dir``, then remove its
    owner mark, which has no place in the index. Marked up to the rename, a
    build killed before it left a complete index a later build can tell as
    a dead build's (:func:`_lost_index`), not a user's own folder."""
    staging.rename(index_dir)
    with suppress(OSError):
        (index_dir / OWNER_FILE).unlink()


def _put_back(index_dir: Path, aside: Path, staging: Path, stop: BaseException) -> None:
    """After ``stop`` ended :func:`_replace` part way: the old index, if it
    went aside and ``index_dir`` holds no index (neither the new one nor
    another build's, which may land there meanwhile), is renamed back to
    ``index_dir``, and the aside folder removed. Left there, marked
    finished, it was the old index's only copy, which the next build of
    it removed, even one that then failed. When it cannot go back, raises
    the error that says where it is (a KeyboardInterrupt as one, for the
    command's "interrupted:" line), its folder unmarked: no build removes
    it (see :func:`_abandoned`). A second KeyboardInterrupt as it goes back
    says where it is: its folder, still marked by this process, is put back
    by the next build once the process has ended. A KeyboardInterrupt once
    this build's index is in place is raised again saying so
    (:func:`_interrupted_in_place`)."""
    old = aside / "index"
    if os.path.lexists(old) and not _holds_index(index_dir):
        try:
            old.rename(index_dir)
        except OSError as error:
            # Whose index is there, not whether this build's folder went in:
            # another build's landing in the gap made the rename fail, and the
            # old index, taken for the only one, was kept aside for good.
            if not _holds_index(index_dir):
                with suppress(OSError):
                    (aside / OWNER_FILE).unlink()
                # Unmarked, its folder stays for good: the user removes it.
                kept = (f"the previous index could not be put back ({error.strerror or error}) and is kept at {old}: "
                        f"move that folder to {index_dir}, then delete {aside}")
                if isinstance(stop, KeyboardInterrupt):
                    raise type(stop)(f"the index was not written; {kept}.") from error
                # A SystemExit's text is its exit code ("failed (0)").
                ended = (f"failed ({getattr(stop, 'strerror', None) or str(stop) or type(stop).__name__})"
                         if isinstance(stop, Exception) else f"was stopped ({type(stop).__name__})")
                raise IndexNotFoundError(f"No Lucene index at {index_dir}: its rebuild {ended}; {kept}.") from stop
        except KeyboardInterrupt as again:
            # A second Ctrl-C (or SIGTERM) as it went back: the command said
            # "a previous one there is unchanged" over an empty path. Its
            # folder keeps this process's mark, so once the process has
            # ended the next build puts it back (see _lost_index).
            if os.path.lexists(old):
                raise type(again)(f"the index was not written; the previous one is at {old}: the next build of "
                                  f"{index_dir} puts it back (or move that folder to {index_dir}, then delete "
                                  f"{aside}).") from again
    _remove_build_folder(aside)
    # Whether this build's own folder went in, from the disk, not a flag set
    # after the rename: a Ctrl-C is raised as the rename returns, before the
    # next line runs. The command said "not written", the new index in place.
    if isinstance(stop, KeyboardInterrupt) and not os.path.lexists(staging) and _holds_index(index_dir):
        raise _interrupted_in_place(index_dir, aside, stop) from stop


def _interrupted_in_place(index_dir: Path, aside: Path, stop: KeyboardInterrupt) -> KeyboardInterrupt:
    """``stop``, of its own type (SIGTERM's :class:`~assistant.kernel.Terminated`
    keeps its exit status), saying that the new index is in place and what
    is left of the old one. An interrupted removal may have unlinked the
    aside folder's mark: it is marked finished again, so that a later
    build removes it."""
    said = f"the new index is in place at {index_dir}"
    if os.path.lexists(aside):
        said += f"; its old files at {aside} are left: {_left_for(_marked_finished(aside))}"
    return type(stop)(said + ".")


def _left_for(finished: bool) -> str:
    """Who removes an old index's files left aside: a later build when
    their folder is marked finished, else the user."""
    return "a later build of it removes them, or delete that folder" if finished else "delete that folder"


def _holds_index(index_dir: Path) -> bool:
    """:func:`._lucene.has_index`, False when the OS cannot tell: an old
    index is then kept, never taken for superseded."""
    try:
        return has_index(index_dir)
    except OSError:
        return False


def _require_replaceable(index_dir: Path) -> None:
    """Refuse, before any work, an ``index_dir`` that holds files but no
    index: the build replaces the whole folder, and removed what was there
    (``--index ~/notes``, or the collection's own folder)."""
    if not index_dir.is_dir() or has_index(index_dir) or (index_dir / "convqa.json").exists():
        return
    held = next(iter(sorted(index_dir.iterdir())), None)
    if held is not None:
        raise ConfigError(
            f"cannot write the index folder {index_dir}: it holds {held.name!r} and no index, and a build replaces "
            "the whole folder; give a new or empty folder (or an index's, to rebuild it)."
        )


# A staging folder without an owner mark (a build by a version before the
# marks) is taken for abandoned once nothing in it has changed for this long:
# a live build's Lucene writes new files every few seconds.
UNMARKED_STALE_S = 24 * 3600


def remove_stale_staging(index_dir: Path, put_in_place: Callable[[Path], bool] | None = None,
                         kept: list[Path] | None = None) -> list[Path]:
    """Remove the staging folders that dead builds of ``index_dir`` left
    next to it (``INDEX.xxxxxxxx`` with an owner mark of a process that has
    stopped, and its ``INDEX.xxxxxxxx.input.xxxxxxxx`` links); a SIGKILL, a
    machine's stop or an out-of-memory kill runs no cleanup. Inside the
    index cache (``cache_dir()/indexes``), where every such folder is one of
    ours, a staging folder with no mark at all is removed too once nothing
    in it has changed for :data:`UNMARKED_STALE_S`; elsewhere it may be a
    user's own folder, and is kept. The old index a dead rebuild left in
    its aside folder while no index is in place is renamed back to
    ``index_dir`` first (:func:`_lost_index`; of several, the one moved
    aside last). The complete index of a build killed just before its
    rename is put in place only when no index is there and
    ``put_in_place`` (given the folder) says it holds what would be built
    (the app's start, :func:`ensure_index`); else it is kept, and appended
    to ``kept``, until an index is in place, which supersedes it (the
    build removes it once its own is in): a build of another collection
    put it in, then failed, and left that collection where there was none. While
    a live build of it runs or when it cannot be put back, a lost index is
    kept. A mark a build left in ``index_dir`` itself (killed between its
    rename and the mark's removal) is removed. The folders this process
    could neither remove nor mark finished are tried again
    (:func:`_retry_left`). Returns the folders removed."""
    _retry_left()
    remove_moved_mark(index_dir)
    pattern = build_folder_pattern(index_dir)
    try:
        siblings = list(index_dir.parent.iterdir())
    except OSError:
        return []
    in_cache = _in_index_cache(index_dir)
    removed = []
    kept_lost = False
    for folder in sorted(siblings, key=_newest_aside_first):
        match = pattern.fullmatch(folder.name)
        try:
            stale = match is not None and _stale(folder, match, in_cache)
            lost = _lost_index(folder, index_dir) if stale and not match.group(2) else None
        except OSError:
            # A folder that cannot be examined (a stale NFS handle, EIO,
            # EACCES) is not known to be a dead build's: it is left alone,
            # and the build goes on (the OS's error ended it).
            continue
        if lost == folder and (put_in_place is None or not put_in_place(folder)):
            if kept is not None:  # a killed build's copy, not to be put in place: kept until an index is
                kept.append(folder)
            continue
        if lost and (kept_lost or running_build(index_dir) is not None or not _sound(lost, folder, index_dir)
                     or not _restored(lost, folder, index_dir)):
            # A live build of it runs: in its gap (the index it moved aside
            # is newer than this one) a put-back made its second rename fail,
            # and its own put-back then deleted that newer index; once its
            # index is in, this one is superseded. Or another build put it
            # back first (the rename is atomic: one wins), or the OS refused:
            # nothing is removed. Or its files' check failed: not known to be
            # damaged (one file unreadable just now, EIO), and maybe the only
            # copy: kept, as the user is told. Older ones wait too: put back
            # in its place, the newest would then be superseded and removed.
            kept_lost = True
            continue
        if stale and match.group(2):
            shutil.rmtree(folder, ignore_errors=True)  # links: no mark to keep
            removed.append(folder)
        elif stale and _remove_build_folder(folder):
            removed.append(folder)
    return removed


def _newest_aside_first(folder: Path) -> tuple:
    """The order in which :func:`remove_stale_staging` visits the folders
    beside an index: those holding an old index first, the one moved aside
    last (its folder changed last) first. Two dead rebuilds may each have
    left one aside: the most recent is put back, and the older ones, then
    superseded, removed; visited by name, the older one could be put back
    and the newer removed.

    The rule kept between an old index aside and a killed build's complete
    copy: the old index goes back, and the copy, then superseded, is
    removed. The old index was the one in place, served and the user's; the
    copy never was, and may hold another collection (a build of it given
    another ``--input``)."""
    try:
        return (not holds_old_index(folder), -folder.lstat().st_mtime, folder.name)
    except OSError:  # gone meanwhile, or not to be examined: the loop tells which
        return (True, 0.0, folder.name)


def _lost_index(folder: Path, index_dir: Path) -> Path | None:
    """The only copy of an index for ``index_dir`` that the dead build's
    ``folder`` holds, or None. Either the old index a rebuild moved aside
    (``folder/index``) and never put back, its process killed between the
    two renames (SIGKILL), or stopped again while it put it back (a second
    Ctrl-C), or unable to unmark the folder it kept it in; or ``folder``
    itself, the new index a build completed (checked, its convqa.json
    written) and was killed before renaming into place. Its mark is then
    not finished (a rebuild marks its aside folder finished only once the
    new index is in, and a finished one's index is superseded, as is one
    being removed), ``index_dir`` holds no index (with one there, a killed
    build's new index is removed, as a stopped one's is). Its files are
    checked only before it is put back or in place (:func:`_sound`). Raises
    OSError when that cannot be told."""
    if owner_finished(folder) or has_index(index_dir):
        return None
    if has_index(folder / "index"):
        found = folder / "index"
    elif has_index(folder) and isinstance(_read_record(folder).get("passages"), int):
        found = folder
    else:
        return None
    return found


def _sound(lost: Path, folder: Path, index_dir: Path) -> bool:
    """Whether every file of the ``lost`` index in ``folder`` (see
    :func:`_lost_index`) has a sound checksum, checked right before it is put
    back or in place: a removal killed part way left a folder whose commit
    and record were there, some of its files not. A failed check does not
    tell damage from a file unreadable just now (EIO, a stale NFS handle) or
    a copy another build put back meanwhile: the folder is kept, never
    removed for it, and the user told."""
    try:
        verify_checksums(lost, JAVA_LOCK)
    except (OSError, IndexNotFoundError) as error:
        _note_once(folder, f"note: {folder}, left by a stopped build of {index_dir}, is kept"
                   f" as it is: its index failed its check ({error}). Put {lost} back yourself if "
                   f"it is sound (a build of {index_dir} removes it once an index is in place), or remove "
                   f"{folder}.")
        return False
    return True


def _restored(lost: Path, folder: Path, index_dir: Path) -> bool:
    """Rename the ``lost`` index a dead build left in ``folder`` to
    ``index_dir`` (see :func:`_lost_index`); whether it went. Removed with
    its folder, it was lost: the next build of it deleted it, even one that
    then failed."""
    try:
        if lost == folder:
            _moved_in(folder, index_dir)
        else:
            lost.rename(index_dir)
    except OSError:
        return False
    if lost == folder:
        said = f"which a stopped build had completed in {folder}, is put in place"
    else:
        said = f"which a stopped rebuild had moved to {folder}, is put back"
    print(f"note: the index at {index_dir}, {said}.", file=sys.stderr)
    return True


def _stale(folder: Path, match: re.Match, in_cache: bool) -> bool:
    """Whether ``folder``, named as a build's (``match`` of
    :func:`._lucene.build_folder_pattern`), is a dead build's to remove.
    Raises OSError when it cannot be examined."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    if match.group(2):
        # Anserini's input links: stale once their staging folder is gone or stale.
        owner = folder.parent / folder.name[: -len(match.group(2))]
        return (not owner.exists() or _abandoned(owner, in_cache)) and all(
            link.is_symlink() for link in folder.iterdir())
    return _abandoned(folder, in_cache)


def _remove_build_folder(folder: Path) -> bool:
    """Remove a build's ``folder`` (staging, or an old index's aside
    folder); whether it is gone. A removal refused part way (EACCES, NFS's
    busy .nfsXXXX files) may have unlinked its mark before it failed: what
    is left is marked finished, a dead build's to every open and to the
    next build, which removes it (left unmarked, outside the index cache
    none did, and nothing said so). Marked finished and its record removed
    before the removal starts: killed part way (SIGKILL during the rmtree
    of a large folder), a complete copy's commit and record could stay, its
    mark a dead build's, some of its files gone, and be put in place as
    the index (:func:`_lost_index` checks the files too)."""
    if os.path.lexists(folder):
        with suppress(OSError):
            (folder / "convqa.json").unlink()
        mark_finished(folder)
        shutil.rmtree(folder, ignore_errors=True)
    if not os.path.lexists(folder):
        _forget(folder)
        return True
    _marked_finished(folder)
    return False


# The build folders this process is done with (a rebuild's old index, a
# failed build's staging folder, a dead build's it found) that it could
# neither remove nor mark finished (a full disk): no other process can tell
# such a folder from a user's own, and it stayed for good. This one knows
# them: its later builds try again (:func:`_retry_left`), as any build
# would once the mark was written. Each with an open descriptor of the
# folder, so that a folder made again at that path is never taken for it:
# its (device, inode) alone was handed at once to the folder made again
# (ext4 reuses a freed inode), whereas an inode held open is not freed.
# Shared by the process's threads (two uploads indexed at once): read and
# changed under _LEFT_LOCK, so that no descriptor is closed while another
# thread uses it, nor dropped unclosed.
_LEFT: dict[Path, int] = {}
_LEFT_LOCK = threading.RLock()


def _marked_finished(folder: Path) -> bool:
    """:func:`~assistant.kernel.mark_finished`, remembering in :data:`_LEFT`
    a folder it could not mark; whether it was marked."""
    with _LEFT_LOCK:
        _forget(folder)
        if mark_finished(folder):
            return True
        with suppress(OSError):  # gone meanwhile: nothing to try again
            held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            _forget(folder)  # one another call (this thread's) left meanwhile
            _LEFT[folder] = held
        return False


def _forget(folder: Path) -> None:
    """Drop ``folder`` from :data:`_LEFT`, closing its descriptor."""
    with _LEFT_LOCK:
        held = _LEFT.pop(folder, None)
        if held is not None:
            os.close(held)


def _retry_left() -> None:
    """Remove (or, failing that, mark finished) the folders in :data:`_LEFT`
    that are still the ones this process left."""
    with _LEFT_LOCK:
        for folder, held in list(_LEFT.items()):
            try:
                found = folder.lstat()
                kept = os.fstat(held)
            except FileNotFoundError:
                _forget(folder)
                continue
            except OSError:  # not to be examined now (or forgotten meanwhile): next time
                continue
            if (found.st_dev, found.st_ino) != (kept.st_dev, kept.st_ino):
                _forget(folder)
            else:
                _remove_build_folder(folder)


def _in_index_cache(index_dir: Path) -> bool:
    try:
        return index_dir.parent.resolve() == (cache_dir() / "indexes").resolve()
    except OSError:
        return False


def _umask_modes(folder: Path) -> None:
    """Give a folder ``mkdtemp`` made (0700) the modes the umask gives a
    plain ``mkdir``, keeping its setgid bit: in a group-shared folder
    (``chmod g+s``) the bit makes the index's files the folder's group,
    which the serving account may need to read them."""
    os.chmod(folder, 0o777 & ~current_umask() | folder.stat().st_mode & stat.S_ISGID)


def _abandoned(folder: Path, in_cache: bool) -> bool:
    """Whether the staging ``folder`` is a dead build's: its marked owner
    has stopped, or, in the index cache, it has no mark and has not changed
    for :data:`UNMARKED_STALE_S` and holds no index. A mark that cannot be
    told (another host's, a broken one) keeps it. Raises OSError when the
    folder cannot be examined (being removed meanwhile, a stale NFS handle)."""
    gone = owner_gone(folder)
    if gone is not None:
        return gone
    if not in_cache or (folder / OWNER_FILE).exists():
        return False
    if has_index(folder) or (folder / "convqa.json").exists() or has_index(folder / "index"):
        # An index of its own (``wiki.20240101``, a user's dated copy beside
        # ``wiki``), not a partial build: its name matches all the same. Or
        # the old index a rebuild could not put back (:func:`_put_back`),
        # its only copy.
        return False
    changed = max([folder.lstat().st_mtime, *(entry.lstat().st_mtime for entry in folder.iterdir())])
    return time.time() - changed > UNMARKED_STALE_S


def _encoded(passages: Iterable[dict]) -> Iterator[tuple[str, str]]:
    """(id, Lucene JSON) for each passage."""
    for passage in passages:
        # ASCII-escaped JSON: Java reads the escapes back to the same text,
        # and escaping is cheaper than encoding raw UTF-8 here.
        yield passage["id"], json.dumps(_lucene_doc(passage))


def _encoded_jsonl(files: list[Path]) -> Iterator[tuple[str, str]]:
    """(id, Lucene JSON) for each line of ``files``: the line itself when it
    is what :func:`_lucene_doc` would write (same fields, same text), else
    the passage read and encoded as :func:`build_index` does."""
    for file in files:
        for where, record, line in json_lines_with_text(file):
            if as_is(record, line):
                yield record["id"], line
            else:
                passage = checked_passage(where, record)
                yield passage["id"], json.dumps(_lucene_doc(passage))


def _first_refused(files: list[Path]) -> None:
    """Raise the :class:`DataFormatError` of the first line of ``files``
    that :func:`checked_passage` refuses (a place and an id), if any: after
    Anserini, reading the files itself, indexed fewer passages than there
    are lines."""
    for file in files:
        for where, record in json_lines(file):
            checked_passage(where, record)


def _batches(encoded: Iterable[tuple[str, str]], size: int, hashes: array) -> Iterator[list[str]]:
    """Lucene JSON strings, ``size`` a batch; each id's hash appended to ``hashes``."""
    batch: list[str] = []
    for doc_id, document in encoded:
        remember_id(hashes, doc_id)
        batch.append(document)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


_DONE = object()


def _prefetched(batches: Iterator[list[str]], depth: int = 2) -> Iterator[list[str]]:
    """``batches``, read and encoded on a thread of their own while Lucene
    indexes the previous one (pyjnius releases the GIL during Java calls).
    At most ``depth`` batches wait, so memory stays bounded; an error while
    reading (a bad line) is raised here, in the caller's thread."""
    waiting: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                waiting.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            for batch in batches:
                if not put(batch):
                    return
            put(_DONE)
        except BaseException as error:  # handed to the consumer, which re-raises it
            put(error)

    reader = threading.Thread(target=produce, name="index-reader", daemon=True)
    reader.start()
    try:
        while True:
            item = waiting.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join()


def _add(indexer, batch: list[str], before: int) -> int:
    # The Java call itself, because pyserini's add_batch_raw drops the count
    # of documents indexed that it returns.
    added = indexer.object.addRawDocuments(batch)
    if added != len(batch):
        # SimpleIndexer logs and skips a document it cannot parse or index.
        raise DataFormatError(
            f"Lucene refused {len(batch) - added} of passages {before + 1}-{before + len(batch)}; "
            "see the log above."
        )
    return added


def _may_repeat(hashes: array, count: int) -> bool:
    """Whether two ids may be equal: two equal hashes, or ids past the cap."""
    if len(hashes) < count:
        return True
    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    return bool((ordered[1:] == ordered[:-1]).any())


def _check_ids(staging: Path, count: int, may_repeat: bool, JavaException) -> None:
    reader = open_reader(staging)
    try:
        if reader.numDocs() != count:
            raise DataFormatError(f"Lucene holds {reader.numDocs()} passages of the {count} given.")
        # Distinct hashes mean distinct ids; equal ones may be a collision, so Lucene decides.
        repeated = duplicate_id(reader) if may_repeat else None
    except JavaException as error:
        raise DataFormatError(f"Cannot read back the new index ({str(error).splitlines()[0]}).") from None
    finally:
        reader.close()
    if repeated is not None:
        raise _DuplicateId(repeated)


def verify_index(index_dir: str | Path) -> int:
    """Verify the checksums of every file of the index at ``index_dir``.

    Returns its passage count; raises :class:`~assistant.kernel.IndexDamagedError`
    (one line naming the rebuild command) when a file is damaged, and
    :class:`~assistant.kernel.IndexNotFoundError` when there is no index.
    """
    return verify_checksums(existing_index(index_dir), JAVA_LOCK)


def ensure_index(index_dir: str | Path) -> Path:
    """The index at ``index_dir``; the default collection's is built on first
    use, and built again when an earlier version built it without the
    passages' short descriptions (:data:`INDEX_FORMAT`; its passage vectors
    are kept when the new index holds the same passages in the same order).

    An earlier index at the default path that holds another collection (a
    user's ``--input``) is left as it is, and so is one that cannot be
    rebuilt (a read-only cache): it is served without the years, said once.
    Two processes starting at once build it once: the second waits on a
    lock file beside the folder, then finds it built.

    The old index a rebuild killed between its two renames left aside is
    put back first (:func:`remove_stale_staging`), not built again, and
    so, with none aside, is the complete index of the default collection
    a build killed just before its rename left (checked, and its record's
    passage count and format the ones a build would write); a copy of
    another collection is kept until the build has put an index in place.

    Any other missing index is an error (the one of
    :meth:`BM25Retriever.from_index <assistant.retrieval.BM25Retriever.from_index>`):
    we cannot guess its collection.
    """
    path = index_path(index_dir)
    default = path.resolve() == default_index_dir().resolve()
    if default and not _holds_index(path):
        # The old index a rebuild killed between its renames left aside goes
        # back first (the cleanup a build starts with): judged missing, it
        # was said to be a "First start" and built again, its vectors lost,
        # though the build's cleanup put it back. Only here is a killed
        # build's complete copy put in place, and only one of what would be built.
        remove_stale_staging(path.resolve(), put_in_place=_as_built)
    if not default or _current(path):
        return existing_index(index_dir)
    if has_index(path) and not _of_default_collection(path):
        _note_once(path, f"The index at {path} is not the default collection's (a collection of your own built "
                         "there?): it is served as it is, without the years a person lived from the "
                         "collection's short descriptions.")
        return existing_index(path)
    try:
        with _build_lock(path):
            # Another process may have built it while this one waited.
            if not _current(path):
                _build_default(path)
    except (ConfigError, OSError) as error:
        if not has_index(path):
            raise
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        _note_once(path, f"The default collection's index at {path} has no short descriptions and cannot be "
                         f"built again ({reason}): it is served without the years a person lived.")
    return existing_index(path)


def _current(path: Path) -> bool:
    return has_index(path) and _index_format(path) >= INDEX_FORMAT


def _as_built(path: Path) -> bool:
    """Whether ``path`` holds what a build of the default collection would
    put in place: its passage count, in the current format."""
    return _current(path) and _of_default_collection(path)


def _build_default(index_dir: Path) -> None:
    kept = _stored_vectors(index_dir) if has_index(index_dir) else None
    if has_index(index_dir):
        print(f"The default collection's index at {index_dir} has no short descriptions (the years a person "
              "lived): indexing it again (once).", file=sys.stderr)
    else:
        print(f"First start: indexing the default collection into {index_dir} (once).", file=sys.stderr)
    ids: list[str] = []
    # One thread: documents in collection order, so every first start builds
    # the same index and the same ranking of tied hits.
    build_index(_noted(read_collection(), ids), index_dir, total=collection_size(),
                description="Indexing Wikipedia summaries")
    if kept is not None and kept[0] == ids:
        # The same passages in the same order: the vectors of their texts
        # are still theirs, and encoding them again takes minutes.
        (index_dir / VECTORS_FILE).write_bytes(kept[1])


# The folders a note was printed for: a process that opens its index again
# (each new chat's pipeline), or looks again at a copy it keeps (the app's
# start and then its build), says it once.
_NOTED: set[Path] = set()


def _note_once(path: Path, note: str) -> None:
    if path not in _NOTED:
        _NOTED.add(path)
        print(note, file=sys.stderr)


def _of_default_collection(index_dir: Path) -> bool:
    """Whether the index at ``index_dir`` holds the default collection: its
    passage count is the collection's (the count is all an index of the
    earlier format says of what it holds)."""
    count = _index_record(index_dir).get("passages")
    return isinstance(count, int) and count == collection_size()


@contextmanager
def _build_lock(index_dir: Path) -> Iterator[None]:
    """Held while the default index is built: an exclusive lock on a file
    beside ``index_dir``. A folder where it cannot be made goes on
    unlocked, and the build names the folder it cannot write."""
    lock = index_dir.parent / f"{index_dir.name}.lock"
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock, "a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _index_format(index_dir: Path) -> int:
    """The :data:`INDEX_FORMAT` the index at ``index_dir`` was built in (1:
    before the format was written down, or unreadable)."""
    found = _index_record(index_dir).get("format", 1)
    return found if isinstance(found, int) else 1


def _index_record(index_dir: Path) -> dict:
    """What a build wrote in the index's convqa.json (its passage count and
    format); empty when it is missing, unreadable or not an object."""
    try:
        return _read_record(index_dir)
    except OSError:
        return {}


def _read_record(index_dir: Path) -> dict:
    """:func:`_index_record`, raising the OSError of a record that is there
    but cannot be read now (EIO, a stale NFS handle): a dead build's folder
    that cannot be examined is left alone, not taken for an incomplete one."""
    try:
        record = json.loads((index_dir / "convqa.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _stored_vectors(index_dir: Path) -> tuple[list[str], bytes] | None:
    """The ids and the bytes of the passage vectors kept in ``index_dir``,
    or None (none, or unreadable: they are encoded again)."""
    path = index_dir / VECTORS_FILE
    try:
        data = path.read_bytes()
        with np.load(path, allow_pickle=False) as stored:
            return [str(i) for i in stored["ids"]], data
    except (OSError, ValueError, KeyError):
        return None


def _noted(passages: Iterable[dict], ids: list[str]) -> Iterator[dict]:
    # The passages, each id appended to ``ids`` as it goes by.
    for passage in passages:
        ids.append(str(passage["id"]))
        yield passage
