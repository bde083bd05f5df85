"""A browser session's own documents: read uploads, index them for that session.

Uploads are .txt, .md, .html/.htm and .pdf documents (each split into
passages as the folder collections are) or a JSONL collection (``id``,
``contents``, optional ``title`` and ``url``). They are indexed with the same
Lucene BM25 as the default collection, into a folder of their own under
``<cache>/sessions/``, so retrieval, the readers and R@10 behave exactly as
on the default index. The folder is removed when the session ends
(:meth:`SessionIndex.close`); one left by a server that stopped (killed,
restarted) is removed at the next server start (:func:`remove_stale_sessions`),
as it names the process that made it.

Every problem is an :class:`~assistant.kernel.InvalidInputError` or
:class:`~assistant.kernel.DataFormatError` naming the file and what to do.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..kernel import (
    DataFormatError, FairShareConfig, InvalidInputError, RetrieverConfig, cache_dir, counted, mark_owner, owner_gone, utf8_text,
)
from ..retrieval import (
    DOCUMENT_SUFFIXES,
    READ_SUFFIXES,
    BM25Retriever,
    build_index,
    chunk_text,
    html_to_text,
    markdown_text,
    read_collection,
    read_pdf,
    titled_text,
)
from ._storage import disk_free, server_storage, storage_refusal

__all__ = [
    "UPLOAD_SUFFIXES",
    "SessionIndex",
    "UploadLimits",
    "check_uploads",
    "index_uploads",
    "read_passages",
    "read_text",
    "remove_stale_sessions",
    "sessions_dir",
    "shown_name",
]

UPLOAD_SUFFIXES = (*READ_SUFFIXES, ".jsonl")
# Disk bytes an upload's index (with its passages' vectors) may take per byte uploaded.
INDEX_BYTES_PER_BYTE = 3


# A MB of the limits is 2**20 bytes: Gradio counts so when it refuses an
# upload over the server's max_file_size ("10.0 Mb"), and the limits stated
# in the upload panel and in our messages must be the one it applies.
MB = 2**20


@dataclass(frozen=True)
class UploadLimits:
    # Per file: a 300-page book as text is ~1 MB, a PDF with figures ~10 MB.
    max_file_mb: float = 10.0
    # Per session: indexing ~20 MB of text takes about a minute on 2 cores,
    # the longest we want a user to wait; and every session's index is on disk.
    max_total_mb: float = 20.0
    # Files per upload: the file list in the UI stays readable.
    max_files: int = 20
    # One-document text (pasted, or a file read for one-document mode) that
    # all sessions of the server hold in memory at once: each session keeps
    # its document, split into passages with their BM25 statistics, several
    # times its size, so a crowd pasting 10 MB each exhausted the server's
    # memory (and every visitor lost the server). Past it, a document is
    # refused until sessions let theirs go; an upload is indexed on disk. A
    # replayed conversations file counts its size too: each session keeps
    # it read whole.
    max_held_mb: float = 400.0
    # Disk space an upload's index must leave free on the server: the labels
    # file, the exports and Gradio's copies of uploads need room too, and a
    # build that filled the disk failed with Lucene's puzzling error.
    min_free_mb: float = 256.0
    # What one client (an IP address; an IPv6 network's /64) may post to
    # Gradio's upload route within client_window_s: one script posting in a
    # loop filled the disk to the floor above, and then every visitor's
    # uploads were refused. Far more than a person uploads in an hour.
    client_upload_mb: float = 200.0
    client_uploads: int = 100
    client_window_s: float = 3600.0
    # Indexes of uploads one client's sessions may hold at once: the route's
    # quota bounds what a client posts, not how often one posted file is
    # indexed, and a script calling the app's events from many sessions
    # (Gradio keeps up to 1,000) had that many indexes on the server's disk
    # and their passages' vectors in its memory. A person has a few pages open.
    client_indexes: int = 10
    # One-document text and replayed files one client's sessions may hold in
    # memory at once (of max_held_mb): one script pasting a long document in
    # many sessions took all of it, and every other visitor's was refused.
    client_held_mb: float = 50.0
    # Sessions one client may keep in Gradio's store at once (app.py's
    # STATE_SESSIONS, the least recently used dropped first): a script
    # calling with a new session hash each time pushed every other visitor's
    # session out of the store (their conversation, document and uploads'
    # index with it). Past its share, a client's own least recently used
    # session makes room: refusing it instead would lock out a person who
    # reloaded the page that often, since Gradio keeps a closed page's
    # session until it is pushed out. A tenth of the store: an office behind
    # one address keeps its pages, and ten addresses are needed to fill it.
    client_sessions: int = 100
    # Events one client may have waiting in Gradio's queue at once (app.py's
    # QUEUE_SIZE; refused with 429 past it): a script sending events from
    # many sessions filled the queue, and every other visitor was told the
    # server is busy. A page has an event or two in line at a time (its
    # questions wait in the session, MAX_WAITING): this is a few people
    # behind one address, and eight such addresses are needed to fill it.
    client_queued: int = 16
    # Events one client may have running at once (Gradio's queue runs 40,
    # each on a thread of the 40 that run the app's handlers); its others
    # wait in line, within client_queued. The queue ran whichever events were
    # first in line, so one script sending events from many sessions had all
    # 40 workers and every other visitor's event, even a page's load,
    # waited until its ended. A page runs one or two at a time (a turn, the
    # source line's tick): this is a few people behind one address, and five
    # such addresses are needed to take every worker. Also the most direct
    # calls (Gradio's run route, the events that skip the queue) one client
    # may have under way at once (refused with 429 past it).
    client_running: int = 8
    # What the clients of one network (client_network: an IPv4 /24, an IPv6
    # /48) hold together, of the store, the queue and the workers: one
    # person may be many clients (a host with a tunnel broker's free IPv6
    # /48 has 65,536 /64s; a rented IPv4 block), and ten such clients filled
    # the store, eight the queue. Two to two and a half times a client's,
    # so that a campus or an office spread over a network's addresses keeps
    # a room's pages going, and four networks are needed to fill the store
    # or the queue, three to take every worker.
    network_sessions: int = 250
    network_queued: int = 32
    network_running: int = 16
    # Seconds a session of the network holding the most sessions must have
    # been idle before a full store drops it rather than the store's least
    # recently used (server.py's ClientStore): a crowd spread over networks
    # pushed a quiet visitor's session out, but two people behind one
    # office's /24 are that network too, and their pages in use must stay.
    # A few minutes: longer than a reader's pause between two questions.
    crowded_idle_s: float = 300.0
    # What the clients of one network may post to the upload route within
    # client_window_s together, the indexes of uploads their sessions may
    # hold, and the text they may hold in memory (of max_held_mb): a
    # client's shares bound one address, and one person with a network's
    # addresses (a /48's 65,536 clients for free) posted until the disk was
    # at its floor, held thousands of indexes, or held every visitor's room
    # for pasted documents with eight clients. Two and a half times a
    # client's, as the other network shares: a room of people behind one
    # network keeps uploading and pasting, and four networks are needed to
    # hold all of max_held_mb.
    network_upload_mb: float = 500.0
    network_uploads: int = 250
    network_indexes: int = 25
    network_held_mb: float = 125.0
    # Fair shares of the queue's line and of the held text while little of
    # either is left (the kernel's FairShareConfig says why each default;
    # the app reads CONVQA_FAIR_RESERVE, CONVQA_FAIR_QUEUED, CONVQA_FAIR_HELD_MB):
    # a crowd spread over many networks, each within its share above, took
    # both first come, first served, and a quiet network's visitor was refused.
    fair: FairShareConfig = FairShareConfig()

    @property
    def max_file_bytes(self) -> int:
        """The per-file limit in bytes (also Gradio's ``max_file_size``)."""
        return int(self.max_file_mb * MB)

    @property
    def max_total_bytes(self) -> int:
        return int(self.max_total_mb * MB)

    @property
    def max_held_bytes(self) -> int:
        return int(self.max_held_mb * MB)

    @property
    def client_held_bytes(self) -> int:
        return int(self.client_held_mb * MB)

    @property
    def network_held_bytes(self) -> int:
        return int(self.network_held_mb * MB)

    @property
    def fair_held_bytes(self) -> int:
        return int(self.fair.fair_held_mb * MB)

    @property
    def network_upload_bytes(self) -> int:
        return int(self.network_upload_mb * MB)

    @property
    def min_free_bytes(self) -> int:
        return int(self.min_free_mb * MB)

    @property
    def client_upload_bytes(self) -> int:
        return int(self.client_upload_mb * MB)


def sessions_dir() -> Path:
    """Where sessions' indexes live (``<cache>/sessions``)."""
    return cache_dir() / "sessions"


# Characters of a file's name shown in a status or a message: a name of
# hundreds (Gradio keeps up to 200 and the suffix) filled the source line.
SHOWN_NAME_CHARS = 60


def shown_name(name: str) -> str:
    """``name`` as a status or a message shows it: cut short in its middle,
    its suffix kept, when it is long.

    >>> shown_name("notes.txt")
    'notes.txt'
    >>> shown_name("a" * 100 + ".txt")
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa….txt'
    """
    if len(name) <= SHOWN_NAME_CHARS:
        return name
    suffix = Path(name).suffix if len(Path(name).suffix) < SHOWN_NAME_CHARS // 2 else ""
    return name[: SHOWN_NAME_CHARS - len(suffix) - 1] + "…" + suffix


def check_uploads(paths: Sequence[str | Path], limits: UploadLimits = UploadLimits(),
                  suffixes: Sequence[str] = UPLOAD_SUFFIXES) -> list[Path]:
    """The upload paths, or an error naming the first file that breaks a rule.
    ``suffixes``: the kinds of file taken (one document is no .jsonl)."""
    paths = [Path(p) for p in paths or []]
    if not paths:
        # Also what a file the upload area refused (a .docx, one over the size) leaves: its toast has
        # gone by the time Index is pressed, so the rules are said again here.
        raise InvalidInputError(f"Choose one or more files to upload first: {', '.join(suffixes)}, at most "
                                f"{limits.max_file_mb:g} MB each (a file the upload area refused is not kept).")
    if len(paths) > limits.max_files:
        raise InvalidInputError(f"{len(paths)} files: upload at most {limits.max_files} at a time.")
    total = 0
    for path in paths:
        name = shown_name(path.name)
        if path.suffix.lower() not in suffixes:
            raise InvalidInputError(
                f"{name}: unsupported file type {path.suffix or '(none)'!r}; "
                f"upload {', '.join(suffixes)} files."
            )
        if not path.is_file():
            raise InvalidInputError(f"{name}: the upload did not arrive; please upload it again.")
        size = path.stat().st_size
        if size > limits.max_file_bytes:
            raise InvalidInputError(
                f"{name} is {size / MB:.1f} MB; files are limited to {limits.max_file_mb:g} MB each."
            )
        if size == 0:
            raise InvalidInputError(f"{name} is empty.")
        total += size
    if total > limits.max_total_bytes:
        raise InvalidInputError(
            f"The files add up to {total / MB:.1f} MB; a session takes at most {limits.max_total_mb:g} MB."
        )
    return paths


def read_text(path: str | Path, name: str | None = None) -> str:
    """The plain text of one uploaded document (HTML stripped, PDF extracted).
    Its accents and ligatures are made plain where it is used, as a
    question's are: by the index's passage check for uploads, and by
    ``use_document`` in one-document mode."""
    return _read_upload(Path(path), name, titled=False)[1]


def read_titled(path: str | Path, name: str | None = None) -> tuple[str, str]:
    """(title or "", text) of one uploaded document, its title read as
    :func:`read_passages` reads an upload's (``titled_text``) and left out
    of the text: one-document mode titles its passages as an index does."""
    return _read_upload(Path(path), name, titled=True)


def _read_upload(path: Path, name: str | None, *, titled: bool) -> tuple[str, str]:
    # (title or "", text); titled: the title read as an indexed folder's
    # file's is (titled_text), and left out of the text.
    name = shown_name(name or path.name)
    suffix = path.suffix.lower()
    title = ""
    if suffix == ".pdf":
        text = read_pdf(path, name)
    elif suffix in DOCUMENT_SUFFIXES:
        text = utf8_text(path.read_bytes(), name)  # a binary file refused there, as in an index's folder
        if titled:
            title, text = titled_text(text, suffix)
        elif suffix in (".html", ".htm"):
            text = html_to_text(text)
        elif suffix == ".md":  # as a folder's .md is indexed: "## Keepers" was read out in answers
            text = markdown_text(text)
    else:
        raise InvalidInputError(f"{name}: one document must be {', '.join(DOCUMENT_SUFFIXES)} or .pdf.")
    if not text.strip():
        hint = " (a scanned PDF has images, not text)" if suffix == ".pdf" else ""
        raise DataFormatError(f"{name} has no text to answer from{hint}.")
    return title, text


def read_passages(paths: Sequence[Path]) -> list[dict]:
    """Passages (``id``, ``contents``, ``title``, ``url``) of all uploads.
    A page's <title>, a Markdown file's '# Heading' or a plain-text file's
    title line is its passages' title, as when ``assistant.index`` reads a folder: the heading was read
    out at the start of answers ("Garden notes The tomatoes were planted
    in May."), under the file's name."""
    passages: list[dict] = []
    for path in paths:
        if path.suffix.lower() == ".jsonl":
            try:
                passages += list(read_collection(path))
            except UnicodeDecodeError:
                raise DataFormatError(f"{path.name} is not UTF-8 text.") from None
            except DataFormatError as error:
                # The reader names the temporary path; the user knows the file by its name.
                raise DataFormatError(str(error).replace(str(path), path.name)) from None
            continue
        title, text = _read_upload(path, None, titled=True)
        for number, chunk in enumerate(chunk_text(text)):
            passages.append({"id": f"{path.name}#{number}", "contents": chunk, "title": title or path.stem, "url": ""})
    return passages


@dataclass
class SessionIndex:
    """An index of one session's uploads; :meth:`close` removes it from disk."""

    retriever: BM25Retriever
    directory: Path
    files: list[str] = field(default_factory=list)
    passages: int = 0

    def describe(self) -> str:
        names = ", ".join(shown_name(name) for name in self.files[:3]) + (f" and {len(self.files) - 3} more" if len(self.files) > 3 else "")
        return f"your upload{'s' if len(self.files) > 1 else ''} ({names}; {counted(self.passages, 'passage')})"

    def __post_init__(self) -> None:
        # Also when the index is dropped unclosed: Gradio evicts the oldest
        # sessions' state past its capacity without telling them, and the
        # folder stayed on disk until the server's next start. The finalizer
        # holds the folder's path only, so it never keeps the index alive.
        self._removal = weakref.finalize(self, shutil.rmtree, str(self.directory), ignore_errors=True)

    def close(self) -> None:
        # Removed files Lucene still holds open keep their disk space until
        # the server stops.
        self.retriever.close()
        self._removal()  # once: later calls, and the finalizer, do nothing


def index_uploads(
    paths: Sequence[str | Path],
    limits: UploadLimits = UploadLimits(),
    config: RetrieverConfig = RetrieverConfig(),
    root: Path | None = None,
) -> SessionIndex:
    """Check, read and index the uploads into a fresh folder under ``root``.

    The index build reports progress with tqdm, which the app's
    ``gr.Progress(track_tqdm=True)`` shows in the browser.
    """

    paths = check_uploads(paths, limits)
    root = root or sessions_dir()
    # The index, and the passages' vectors kept beside it, take a few times
    # the uploads' size; checked before the minutes of reading and indexing.
    needed = INDEX_BYTES_PER_BYTE * sum(path.stat().st_size for path in paths) + limits.min_free_bytes
    if disk_free(root) < needed:
        raise storage_refusal("Your files could not be indexed", "is nearly full")
    passages = read_passages(paths)
    if not passages:
        raise DataFormatError("The uploads hold no text to answer from.")
    with server_storage("Your files could not be indexed"):
        root.mkdir(parents=True, exist_ok=True)
        directory = Path(tempfile.mkdtemp(prefix="session-", dir=root))
    try:
        with server_storage("Your files could not be indexed"):
            # Its server's mark: a start removes the folders of servers that have
            # stopped and keeps those of servers running on the same cache.
            mark_owner(directory)
            count = build_index(passages, directory / "index", total=len(passages), description="Indexing your files")
            retriever = BM25Retriever.from_index(directory / "index", config)
    except BaseException as error:  # a failed build must not leave its folder behind
        shutil.rmtree(directory, ignore_errors=True)
        if isinstance(error, Exception) and disk_free(root) < needed:
            # Lucene's own error of a full disk ("no segments* file found") says nothing of it.
            raise storage_refusal("Your files could not be indexed", "is full") from None
        raise
    return SessionIndex(retriever, directory, [p.name for p in paths], count)


def remove_stale_sessions(root: Path | None = None, older_than_s: float = 24 * 3600) -> int:
    """Delete the session indexes that servers left when they stopped (the
    app calls this as it starts): each folder whose owner process no longer
    runs (its pid is gone, or is now another process's: the process's start
    differs). Folders of servers still running on the same cache are kept.
    A folder whose owner cannot be told (made by an older version, with no
    owner mark; by another host; where processes' starts cannot be read) is
    deleted once older than ``older_than_s``. A folder that cannot be
    examined (removed meanwhile by another server starting on the same
    cache, a stale network file handle) is left alone: an error here stopped
    the app before it served. Returns how many went."""
    root = root or sessions_dir()
    if not root.is_dir():
        return 0
    removed = 0
    for folder in root.glob("session-*"):
        try:
            if not folder.is_dir():
                continue
            gone = owner_gone(folder)
            stale = gone or (gone is None and time.time() - folder.stat().st_mtime > older_than_s)
        except OSError:
            continue
        if stale:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


