"""Lucene checks: checksums of an index and duplicate ids, and whether an
index is there to open.

Both read the index files a buffer at a time (checksums in Python, ids in
Java through pyjnius), so they cost little memory whatever the index's size.

A build of ``INDEX`` works beside it, in folders named ``INDEX.xxxxxxxx``
(:func:`build_folder_pattern`; ``tempfile.mkdtemp``'s): its staging folder,
renamed into place when complete, and on a rebuild the folder the old index
is moved into just before that. Each is marked with its process
(:func:`~assistant.kernel.mark_owner`; the old index's marked finished once the
renames are over). An open that finds no index while such a folder's process
runs waits up to :data:`REBUILD_WAIT_S` for the index, then says that a
build is running (:class:`~assistant.kernel.IndexChangedError`), not "build it".
"""

from __future__ import annotations

import os
import re
import struct
import time
import zlib
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Callable, TypeVar

from ..kernel import IndexChangedError, IndexDamagedError, IndexNotFoundError, owner_gone
from ._java import import_pyserini

__all__ = [
    "java_exception", "damaged", "index_path", "has_index", "existing_index", "verify_checksums", "duplicate_id",
    "open_reader", "opened", "build_folder_pattern", "running_build", "holds_old_index",
]

_Opened = TypeVar("_Opened")

# Anserini's document generator indexes each passage's id as one untokenized
# term of this field.
_ID_FIELD = "id"


def _classes():
    import_pyserini("pyserini.pyclass")  # starts the JVM with our settings first
    from jnius import autoclass

    return autoclass


def java_exception() -> type[Exception]:
    """pyjnius' ``JavaException``: what any Lucene failure raises in Python."""
    import_pyserini("pyserini.pyclass")
    from jnius import JavaException

    return JavaException


def damaged(index_dir: str | Path, error: BaseException | str) -> IndexDamagedError:
    """The one-line error for a damaged index (``error``: Lucene's, or the
    reason in words), naming the rebuild command."""
    lines = str(error).strip().splitlines()
    reason = (lines[0] if lines else type(error).__name__).removeprefix("JVM exception occurred: ")
    # Damaged bytes may be quoted in Lucene's message; keep the line printable.
    reason = "".join(c if c.isprintable() else "?" for c in reason)
    if len(reason) > 240:
        reason = reason[:240] + "..."
    return IndexDamagedError(
        f"the index at {index_dir} is damaged ({reason}); rebuild it with "
        f"`python -m assistant.index --input COLLECTION --index {index_dir}`"
    )


def _changed(index_dir: str | Path, doing: str) -> IndexChangedError:
    return IndexChangedError(f"the index at {index_dir} changed while it was {doing} (rebuilt?); try again")


def index_path(index_dir: str | os.PathLike) -> Path:
    """``index_dir`` as a Path; anything else (None) is a TypeError saying
    what is wanted, rather than pathlib's "expected str, bytes or os.PathLike"."""
    if not isinstance(index_dir, (str, os.PathLike)):
        raise TypeError(f"the index folder must be a path (str or Path), not {type(index_dir).__name__}")
    return Path(index_dir)


def has_index(index_dir: Path) -> bool:
    """Whether a Lucene index is committed in ``index_dir``; a build renames
    its folder into place only once complete, so a commit there is whole.
    A folder removed while it is looked at (a rebuild's) holds none: the
    OS's FileNotFoundError escaped from between the two looks. Any other
    OSError (EIO, EACCES, ESTALE) is the OS's to say: "no index, build it"
    would send a rebuild at a disk or permission fault."""
    try:
        return index_dir.is_dir() and any(index_dir.glob("segments_*"))
    except (FileNotFoundError, NotADirectoryError):
        return False


def build_folder_pattern(index_dir: Path) -> re.Pattern:
    """The names of a build's folders beside ``index_dir`` (``tempfile.mkdtemp``'s
    ``INDEX.xxxxxxxx``: its staging folder, the old index's aside folder) and
    of Anserini's input links (``INDEX.xxxxxxxx.input.xxxxxxxx``, group 2)."""
    return re.compile(re.escape(index_dir.name) + r"\.([a-z0-9_]{8})(\.input\.[a-z0-9_]{8})?")


def running_build(index_dir: Path) -> Path | None:
    """The folder beside ``index_dir`` of a build of it that runs now (its
    owner mark's process lives), or None. A rebuild marks the folder the
    old index goes aside into before it moves it (``_index._replace``):
    of a rebuild's two folders, that one is named.
    A link to the index (``current -> v3``) is built as its target, whose
    name the build's folders take (``v3.xxxxxxxx``); a dangling link
    resolves all the same, as in a rebuild's gap."""
    try:
        index_dir = index_dir.resolve()
    except (OSError, RuntimeError):  # a loop of links: no build of it to find
        return None
    pattern = build_folder_pattern(index_dir)
    try:
        siblings = sorted(index_dir.parent.iterdir())
    except OSError:
        return None
    found = None
    for folder in siblings:
        match = pattern.fullmatch(folder.name)
        if match and not match.group(2) and owner_gone(folder) is False:
            if holds_old_index(folder):
                # In a rebuild's gap its staging folder is marked too (up to
                # its rename): the folder named is the one holding the
                # previous index, for the open's advice to move it back.
                return folder
            found = found or folder
    return found


def holds_old_index(folder: Path) -> bool:
    """Whether a build's ``folder`` holds a rebuild's old index (moved
    aside into its ``index``); False when the OS cannot tell."""
    try:
        return (folder / "index").is_dir()
    except OSError:
        return False


# How long an open that finds no index waits for a running build to put it
# in place: a rebuild moves the old index aside, then the new one in (two
# renames), and an open between them found none.
REBUILD_WAIT_S = 2.0
_REBUILD_POLL_S = 0.02


def existing_index(index_dir: str | os.PathLike) -> Path:
    """``index_dir`` when it holds an index, else the one
    :class:`~assistant.kernel.IndexNotFoundError` for a missing index,
    naming the command that builds it (or, for a file, that a folder is wanted).
    While a build of it runs (between a rebuild's two renames, or a first
    build), it waits up to :data:`REBUILD_WAIT_S` for the index, then says
    to try again once the build is done (:class:`~assistant.kernel.IndexChangedError`)."""
    path = index_path(index_dir)
    given = bool(str(index_dir).strip())  # "" is the working folder to pathlib
    if given and has_index(path):
        return path
    building = running_build(path) if given else None
    if building is not None:
        deadline = time.monotonic() + REBUILD_WAIT_S
        while time.monotonic() < deadline:
            time.sleep(_REBUILD_POLL_S)
            if has_index(path):
                return path
        if running_build(path) is not None:
            # In a rebuild's gap that folder holds the previous index, its
            # only copy: deleted on this advice, it was lost.
            undo = (f"move {building / 'index'} (the previous index) to {path}, then delete that folder"
                    if holds_old_index(building) else "delete that folder")
            raise IndexChangedError(
                f"No Lucene index at {path} yet: a build of it is running (the folder {building} is a live "
                f"process's build); try again when it has finished, or, if no build runs, {undo}."
            )
        if has_index(path):
            return path
    if given and path.is_file():
        # Building into a file is refused (assistant.index wants a folder), so
        # the build advice below would lead nowhere.
        raise IndexNotFoundError(
            f"{path} is a file; --index takes the folder an index was built into "
            f"(`python -m assistant.index --input COLLECTION --index DIR` builds one)."
        )
    raise IndexNotFoundError(
        f"No Lucene index at {path if given else repr('') + ' (an empty path)'}. Build it with "
        f"`python -m assistant.index --input COLLECTION --index {path if given else 'DIR'}`."
    )


def open_reader(index_dir: str | Path):
    """A Lucene ``DirectoryReader`` on ``index_dir`` (close it when done),
    for the checks: it reads through buffers (``NIOFSDirectory``), not memory
    maps, so reading a large index end to end does not map all of its files
    into this process's resident memory as ``FSDirectory.open`` would."""
    autoclass = _classes()
    path = autoclass("java.io.File")(str(index_dir)).toPath()
    directory = autoclass("org.apache.lucene.store.NIOFSDirectory")(path)
    return autoclass("org.apache.lucene.index.DirectoryReader").open(directory)


def verify_checksums(index_dir: str | Path, lock: AbstractContextManager) -> int:
    """Verify every file's checksum in the index at ``index_dir``; return its doc count.

    Lucene ends each file of a commit with a footer holding the CRC32 of the
    bytes before it; Lucene's own ``checkIntegrity()`` reads each segment's
    files end to end against it. We do that read here, in Python, over every
    file of the commit (``segments_N`` and each segment's ``.si`` and
    ``.fnm`` too), so that only listing the commit's files is a call into
    Java: ``lock`` (the process's Java lock; required, as every call into
    Java holds it) is held for that alone, and other threads' searches go
    on while a large index is read. zlib's CRC32 and file reads release the
    GIL. Raises :class:`IndexDamagedError` on any failure, unless the folder
    was rebuilt meanwhile (replaced, or its commit superseded), while Java
    opened it (:func:`opened`) or while its files were read: the new index
    is then checked once more (damaged again only if the folder stayed as
    it was), and if it changed again too, :class:`IndexChangedError` says
    to try again.
    """
    for _ in range(2):
        before = _listing(index_dir)
        names, segments, count = opened(index_dir, lock, _commit)
        problem = next(((name, why) for name in sorted(names)
                        if (why := _footer_problem(Path(index_dir) / name)) is not None), None)
        if _listing(index_dir) == before and before is not None and segments in before[-1]:
            # The files Lucene listed are still this folder's own.
            if problem is None:
                return count
            raise damaged(index_dir, f"{problem[0]}: {problem[1]}")
        # A rebuild replaced the folder (or committed anew) after Lucene
        # listed its files: what was read, failing or not, was partly the
        # old index, gone (a file of the same name may be the new one's).
        _still_there(index_dir)
    raise _changed(index_dir, "checked")


def _commit(index_dir: str | Path) -> tuple[list[str], str, int]:
    """The files of the index's commit, its ``segments_N`` and its doc
    count: the one call into Java of :func:`verify_checksums`."""
    reader = open_reader(index_dir)
    try:
        commit = reader.getIndexCommit()
        return list(commit.getFileNames().toArray()), commit.getSegmentsFileName(), reader.numDocs()
    finally:
        reader.close()


def opened(index_dir: str | Path, lock: AbstractContextManager, java_open: Callable[[str | Path], _Opened]) -> _Opened:
    """What ``java_open(index_dir)`` (Java opening the index: a reader, a
    searcher) returns, called under ``lock``. Lucene's failure is the
    index's damage (:func:`damaged`) only when the folder held an index and
    stayed as it was throughout the open. A rebuild that replaced the folder
    while Java read it failed Java's open (a file of the commit it had read
    gone, or the new index's file of that name read in its place), which was
    called damaged: the folder is opened once more (the new index); a
    failure there is damage again if the folder stayed as it was, and if
    it changed again too, :class:`IndexChangedError` says to try again."""
    JavaException = java_exception()
    for _ in range(2):
        with lock:
            before = _listing(index_dir)
            try:
                return java_open(index_dir)
            except JavaException as error:
                failure = error
            after = _listing(index_dir)
        # A rebuild moves whole folders (_index._replace), so a folder that
        # held a commit and stayed as it was while Java failed on it is the
        # index's damage, on either attempt: an unrelated file written in it
        # during the first open is no reason to say "try again".
        if after == before and before is not None and any(name.startswith("segments_") for name in before[-1]):
            raise damaged(index_dir, failure)
        _still_there(index_dir)
    raise _changed(index_dir, "opened")


def _still_there(index_dir: str | Path) -> None:
    """Before an open or check is tried again: an index deleted meanwhile
    is not found (build it), not "changed, try again"; one a rebuild is
    putting in place is waited for (:func:`existing_index`)."""
    if _listing(index_dir) is None:
        existing_index(index_dir)


def _listing(folder: str | Path) -> tuple[int, int, int, frozenset[str]] | None:
    """The folder's device, inode and change time and its files' names, or
    None when it is gone: the one test of "the folder stayed as it was"
    (:func:`opened`, :func:`verify_checksums`). A rebuild renames the old
    folder aside (before, it removed its files one by one in place) and
    the new one in. The change time tells a new folder that got the old
    one's inode number (freed by an earlier rebuild) from the old folder."""
    try:
        status = os.stat(folder)
        names = frozenset(os.listdir(folder))
    except OSError:
        return None
    return status.st_dev, status.st_ino, status.st_ctime_ns, names


# Lucene's codec footer (CodecUtil.writeFooter), big-endian: the footer magic
# (the header magic's complement), the checksum algorithm (0: CRC32), and the
# CRC32 of every byte of the file before the checksum itself.
_FOOTER = struct.Struct(">iiq")
_FOOTER_MAGIC = ~0x3FD76C17
_READ_SIZE = 1 << 20


def _footer_problem(path: Path) -> str | None:
    """Why the file at ``path`` fails Lucene's footer check, in Lucene's
    words where it has them, or None when its checksum matches."""
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < _FOOTER.size:
                return f"misplaced codec footer (file truncated?): length={size} but footerLength=={_FOOTER.size}"
            crc, left = 0, size - 8
            buffer = bytearray(_READ_SIZE)
            view = memoryview(buffer)
            while left:
                read = file.readinto(view[: min(left, _READ_SIZE)])
                if not read:
                    return "file truncated while it was read"
                crc = zlib.crc32(view[:read], crc)
                left -= read
            file.seek(size - _FOOTER.size)
            magic, algorithm, expected = _FOOTER.unpack(file.read(_FOOTER.size))
    except OSError as error:
        return f"cannot read it, {error.strerror or error}"
    if magic != _FOOTER_MAGIC:
        return f"codec footer mismatch (file truncated?): actual footer={magic} vs expected footer={_FOOTER_MAGIC}"
    if algorithm != 0:
        return f"codec footer mismatch: unknown checksum algorithm={algorithm}"
    if expected != crc:
        return f"checksum failed (hardware problem?) : expected={expected:x} actual={crc:x}"
    return None


def duplicate_id(reader) -> str | None:
    """An id that more than one document of ``reader`` carries, or None.

    Lucene keeps the ids as the sorted terms of the ``id`` field, each with
    its document frequency, so Lucene answers without Python holding any id:
    a segment's term count equal to its document count rules out duplicates
    inside it (one call); across several segments we walk the merged term
    dictionary once in sorted order and stop at the first term in more than
    one document (the "sorted external pass", done by Lucene's own files).
    """
    autoclass = _classes()
    leaves = reader.leaves().toArray()
    for leaf in leaves:
        segment = leaf.reader()
        terms = segment.terms(_ID_FIELD)
        if terms is not None and terms.size() != segment.numDocs():
            return _first_repeated(terms.iterator())
    if len(leaves) <= 1:
        return None
    from jnius import cast

    # The cast picks getTerms(IndexReader, String): jnius would otherwise try
    # the LeafReader overload with a DirectoryReader.
    merged = autoclass("org.apache.lucene.index.MultiTerms").getTerms(
        cast("org.apache.lucene.index.IndexReader", reader), _ID_FIELD
    )
    return _first_repeated(merged.iterator()) if merged is not None else None


def _first_repeated(terms_enum) -> str | None:
    while True:
        term = terms_enum.next()
        if term is None:
            return None
        if terms_enum.docFreq() > 1:
            return term.utf8ToString()
