"""A session's state: the shared Services and one browser tab's Session.

``app.py`` holds a :class:`Session` per browser tab in a ``gr.State`` (so two
users never see each other's history) and calls the plain functions of this
package with it and with the server-wide :class:`Services` (models and index,
loaded once). Nothing here imports gradio: every function can be tested directly.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
import uuid
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..encoders import load_minilm
from ..kernel import NO_STOP, Conversation, Rewrite, StopSignal, Turn
from ..pipeline import Assistant
from ..readers import MultipleChoiceReader
from ..retrieval import DeferredRescorer, Rescorer
from ._labels import LabelStore
from ._shares import ClientShares, HeldShare, HeldText, RefusalLog
from ._uploads import SessionIndex, UploadLimits

# The live rewrite-quality metrics, as QReCC's Table 3 reports them.
METRICS = ("ROUGE-1 R", "USE", "R@10")

# Longest text of a history the rewriter is given from outside (the /rewrite
# API's, a conversation read back from the browser): a long answer fits; a
# whole document does not.
MAX_HISTORY_CHARS = 10_000
# Turns one conversation holds: QReCC's and CoQA's longest have a few dozen.
# A client asking through the API in a loop grew its session's memory (and
# the JSON sent at every event) without end.
MAX_TURNS = 200
# Questions one tab may have waiting behind its running turn: each is a whole
# turn of the shared models, and a page (or a script) that sent thousands
# held one of the server's turn slots for hours.
MAX_WAITING = 10
# Lines one page may append to the server's labels file (a judgement changed
# back and forth is a line each time): far more than a person judges.
MAX_JUDGEMENTS = 200

# (reference rewrite, system rewrite, retriever) -> {metric name: value}.
Scorer = Callable[[str, str, object], dict[str, float]]


@dataclass
class Services:
    """What all sessions share: loaded once per server."""

    assistant: Assistant
    labels: LabelStore = field(default_factory=LabelStore)
    # The live metrics of a rewrite against a reference. Injected (app.py
    # builds it from eval.metrics) because nothing in assistant/ imports
    # eval/; None: turns are not scored.
    scorer: Scorer | None = None
    # The names the scorer returns, in the order the metrics panel shows them.
    metrics: tuple[str, ...] = METRICS
    # MiniLM for multiple choice (assistant.encoders.load_minilm); loaded on first use.
    choice_encoder: object = None
    limits: UploadLimits = UploadLimits()
    # Where sessions' upload indexes go (None: <cache>/sessions).
    sessions_root: Path | None = None
    # What the default index holds, for the status line.
    collection_name: str = "the Wikipedia vital-article summaries"
    # The one multiple-choice reader of all sessions (made on first use): it
    # keeps a bounded number of prepared documents (their passages' vectors)
    # server-wide. One per session kept as many per session, so a script
    # asking about a new long document each time in many sessions grew the
    # server's memory without a bound.
    choice_reader: object = field(default=None, repr=False)
    # Sessions asking their first multiple-choice question at once make one
    # reader. A copy made with dataclasses.replace shares it, as it shares
    # the reader once made.
    reader_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # The document text its sessions hold in memory (``limits.max_held_mb``).
    # A copy made with dataclasses.replace shares it, as it shares the models.
    held_text: HeldText = field(default_factory=HeldText, repr=False, compare=False)
    # The indexes of uploads each client's sessions hold (``limits.client_indexes``);
    # shared by a copy as ``held_text`` is.
    client_indexes: ClientShares = field(default_factory=ClientShares, repr=False, compare=False)
    # The same, of each network's clients together (``limits.network_indexes``).
    network_indexes: ClientShares = field(default_factory=ClientShares, repr=False, compare=False)
    # The bytes of document text each client's sessions hold (``limits.client_held_mb``).
    client_text: ClientShares = field(default_factory=ClientShares, repr=False, compare=False)
    # The same, of each network's clients together (``limits.network_held_mb``).
    network_text: ClientShares = field(default_factory=ClientShares, repr=False, compare=False)
    # The server's log of the sources refused for want of room.
    refusals: RefusalLog = field(default_factory=RefusalLog, repr=False, compare=False)
    # The files behind each browser's uploaded sources, to read them again after a reload.
    uploaded: UploadedFiles = field(default_factory=lambda: UploadedFiles(), repr=False, compare=False)

    def minilm(self):
        if self.choice_encoder is None:

            self.choice_encoder = load_minilm()
        return self.choice_encoder

    def multiple_choice_reader(self):
        """The shared :class:`~assistant.readers.MultipleChoiceReader` (over :meth:`minilm`)."""
        with self.reader_lock:
            if self.choice_reader is None:
                self.choice_reader = MultipleChoiceReader(self.minilm())
            return self.choice_reader


@dataclass
class TurnInfo:
    """What the session knows about a turn beyond the :class:`Turn` itself."""

    system_rewrite: Rewrite  # the rewriter's output, kept when the user corrects it
    history: tuple[str, ...]  # the history the rewriter saw (QReCC Context layout)
    reference: str = ""  # a human rewrite: the replayed file's, or the user's correction
    reference_kind: str = ""  # "replay" | "correction" | "confirmed"
    scores: dict[str, float] = field(default_factory=dict)  # the scorer's metrics of system_rewrite vs reference
    judgement: int | None = None  # the user's last thumbs: 1 up, 0 down
    awaiting_reference: bool = False  # thumbs down before there was a reference
    notice: str = ""  # e.g. "this does not look like English"
    example_id: str = ""  # the replayed example's id
    # Tells this turn from another asked in its place after an undo (its
    # labels-file id carries it); "" for turns saved before it existed.
    uid: str = ""


@dataclass
class SessionTurn:
    """One turn of a session: the pipeline's :class:`Turn` and what the
    session knows about it, kept together so they can never fall out of step."""

    turn: Turn
    info: TurnInfo


@dataclass(frozen=True)
class Origin:
    """What a conversation was answered from, as far as it can be told
    without holding it: its name and, where the source can be taken again,
    how (an article of the collection by its title; an uploaded document, or
    the uploads indexed together, by the server's copies of the files, which
    the browser's copy never carries: :class:`UploadedFiles` keeps them for
    a reload). The source itself (:class:`Source`) is held while memory allows."""

    kind: str  # "collection" (the default) | "document" | "uploads"
    name: str = ""  # what the status line calls it ("" for the collection, which Services names)
    title: str = ""  # an article of the collection: its title
    files: tuple[str, ...] = ()  # an uploaded document, or uploads indexed together: Gradio's copies on the server
    # An uploaded source's capability (new_token), the key UploadedFiles
    # remembers its files by: only the browser's sealed copy carries it
    # (saved_json), never an export, a labels line or a view.
    token: str = field(default="", repr=False)

    def json(self) -> dict:
        """As an export names it, and the views compare it: no path on the server, no token."""
        return {key: value for key, value in (("kind", self.kind), ("name", self.name), ("title", self.title)) if value}

    def saved_json(self) -> dict:
        """As the browser's copy (sealed with the app's secret) keeps it: its token too."""
        return {**self.json(), **({"token": self.token} if self.token else {})}


def new_token() -> str:
    """An uploaded source's token: drawn at random, unguessable (see Origin.token)."""
    return secrets.token_urlsafe(16)


# The default collection, as a conversation's origin.
COLLECTION = Origin("collection")
# Uploaded sources UploadedFiles remembers at most, the oldest forgotten first:
# each is a few paths, and a browser has at most a few dozen.
MAX_UPLOADED = 5_000
# Characters of a source's name the browser's copy is read with (the rest cut).
MAX_NAME_CHARS = 300


class UploadedFiles:
    """The server's copies of the files behind each uploaded source, by the
    source's token (:attr:`Origin.token`), which the browser's sealed copy
    carries across a reload. The copy never names a path on the server (the
    visitor can edit it), so a reloaded page could not read an upload again
    without this. Keyed by the token alone, not by the browser's id, which
    is no secret (an export's file name and each labels line show it): a
    copy without the token reads nothing back, nor overwrites another's."""

    def __init__(self, capacity: int = MAX_UPLOADED):
        self._files: OrderedDict[str, Origin] = OrderedDict()
        # The source last made of each token's files, while it lives.
        self._holders: weakref.WeakValueDictionary[str, Source] = weakref.WeakValueDictionary()
        self._capacity = capacity
        self._lock = threading.Lock()

    def remember(self, origin: Origin, holder: Source | None = None) -> None:
        """Remember ``origin``'s files by its token, and ``holder`` (the source
        made of them) as the latest: the one made before it is replaced
        (:meth:`Source.uncount`)."""
        if not origin.token or not origin.files:
            return
        with self._lock:
            self._files[origin.token] = origin
            self._files.move_to_end(origin.token)
            while len(self._files) > self._capacity:
                self._files.popitem(last=False)
            before = self._holders.get(origin.token)
            if holder is not None:
                self._holders[origin.token] = holder
        if holder is not None and before is not None and before is not holder:
            before.replaced = True
            before.uncount()

    def holder(self, token: str) -> Source | None:
        """The source last made of the files of ``token`` (None: none lives)."""
        with self._lock:
            return self._holders.get(token) if token else None

    def recall(self, origin: Origin) -> Origin:
        """``origin`` with its files, where it has none, its token is known and
        its kind and name are those remembered (the copy's name cut to MAX_NAME_CHARS)."""
        if origin.files or not origin.token:
            return origin
        with self._lock:
            known = self._files.get(origin.token)
        if known is None or known.kind != origin.kind or known.name[:MAX_NAME_CHARS] != origin.name[:MAX_NAME_CHARS]:
            return origin
        return dataclasses.replace(origin, files=known.files)


@dataclass
class Source:
    """A session's own retrieval source instead of the default index."""

    # Its kind ("uploads" | "document"), its name, and how to take it again once let go.
    origin: Origin
    retriever: object  # assistant Retriever
    text: str = ""  # the whole document (single-document mode; multiple choice reads it)
    index: SessionIndex | None = None  # on-disk index of uploads, removed on close
    # Reorders the uploads' or the document's hits (a DeferredRescorer while
    # their passages are encoded); None: BM25's order.
    rescorer: Rescorer | None = None
    # ``text``'s share of what the server's sessions hold in memory.
    held: HeldShare | None = None
    # Its share of what its client's sessions hold: an index of uploads
    # (``Services.client_indexes``), or ``text``'s bytes (``Services.client_text``);
    # one share with its network's (``Services.network_indexes``, ``network_text``).
    client_share: HeldShare | None = None
    # Its page has gone (closed or reloaded: the session layer's abandon),
    # and its uploads were read again since from the same files, by their
    # token (UploadedFiles.remember): both, and it counts no more.
    page_gone: bool = False
    replaced: bool = False

    @property
    def kind(self) -> str:
        return self.origin.kind

    def uncount(self) -> None:
        """Its client's and network's share given back once its page has gone
        and its files were read again for another page (a reload): the
        page before's session lives on for an hour, and its index and the
        one read again both counted. An open page's (another tab's) counts."""
        if self.page_gone and self.replaced and self.client_share is not None:
            self.client_share.give_back()

    @property
    def name(self) -> str:
        """What the status line calls it."""
        return self.origin.name

    def close(self) -> None:
        if isinstance(self.rescorer, DeferredRescorer):
            self.rescorer.cancel()  # no vectors for passages about to be let go
        if self.index is not None:
            self.index.close()
        if self.held is not None:
            self.held.give_back()
        if self.client_share is not None:
            self.client_share.give_back()


@dataclass
class Replay:
    """A conversations file being replayed turn by turn."""

    name: str
    conversations: dict[str, list]  # conversation id -> its RewriteExamples, in turn order
    conversation_id: str = ""
    position: int = 0  # next turn to play
    # The file's share of the text the server's sessions hold in memory, and
    # of its client's (as a one-document source's ``held``, ``client_share``).
    held: HeldShare | None = None
    client_share: HeldShare | None = None

    @property
    def turns(self) -> list:
        return self.conversations.get(self.conversation_id, [])

    def close(self) -> None:
        for share in (self.held, self.client_share):
            if share is not None:
                share.give_back()

    def remaining(self) -> int:
        return len(self.turns) - self.position


class _UploadHolders:
    """How many sessions hold each uploaded file. Gradio names an upload's
    copy by its content (a folder named by its hash), so two visitors who
    upload the same file share one copy, and the first session to end
    deleted the other's before it was indexed or replayed."""

    def __init__(self):
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, path: str) -> None:
        with self._lock:
            self._counts[path] = self._counts.get(path, 0) + 1

    def drop(self, path: str) -> bool:
        """One holder fewer; True when none is left."""
        with self._lock:
            left = self._counts.get(path, 1) - 1
            if left > 0:
                self._counts[path] = left
            else:
                self._counts.pop(path, None)
            return left <= 0


UPLOAD_HOLDERS = _UploadHolders()


@dataclass
class SessionFiles:
    """What a session keeps on the server's disk besides its uploads' index."""

    uploads: set[str] = field(default_factory=set)
    export: str = ""
    removal: weakref.finalize | None = field(default=None, repr=False, compare=False)

    def add_uploads(self, names) -> None:
        for name in names:
            if name not in self.uploads:
                UPLOAD_HOLDERS.add(name)
                self.uploads.add(name)

    def drop_uploads(self, names) -> None:
        """Hold ``names`` no more: each deleted once no session holds it
        (a folder among them is left as it is)."""
        for name in sorted(set(names) & self.uploads):
            self.uploads.discard(name)
            if not UPLOAD_HOLDERS.drop(name):
                continue  # another session holds the same copy
            path = Path(name)
            if path.is_dir() and not path.is_symlink():
                # Gradio hands files only; a folder tracked in-process is not
                # a copy of ours to delete, and unlink raised IsADirectoryError
                # (unraisable, in the finalizer).
                continue
            path.unlink(missing_ok=True)
            try:
                path.parent.rmdir()  # Gradio keeps each upload in a folder of its own
            except OSError:
                pass  # not empty, or gone

    def remove(self) -> None:
        self.drop_uploads(set(self.uploads))
        if self.export:
            Path(self.export).unlink(missing_ok=True)
            self.export = ""

    def __deepcopy__(self, memo):
        # gr.State deep-copies its default Session per tab. A copy owns none
        # of the files: deleting them with it would take them from the original.
        return SessionFiles()


class _TabLock:
    """A lock of one tab's session: gr.State deep-copies its default Session
    per tab, and a copy gets a lock of its own (a lock cannot be copied).
    A waiter may give up (:meth:`acquire` with a ``stop``): a turn waiting
    for its source to be read again, stopped, ends then, not when the
    reading does."""

    def __init__(self):
        self._free = threading.Condition()
        self._held = False

    def acquire(self, stop: StopSignal = NO_STOP) -> bool:
        """Take the lock, waiting while another holds it; False (not taken)
        once ``stop`` is set. Setting it wakes this wait (its
        :meth:`~assistant.kernel.StopSignal.on_set`): the turn's signal is
        the one way a Stop reaches a waiter, as it reaches a batcher's."""
        forget = stop.on_set(self._wake)
        try:
            with self._free:
                # Looked at first too: a free lock taken by a turn stopped before it
                # asked ran the turn its Stop had ended. Looked at under the
                # condition's lock: a set between this look and the wait is not
                # missed, since its wake waits for the lock, which wait() gives up.
                # (Only is_set here, no other lock: a wake may run on any
                # thread that sets the signal, whatever it holds.)
                while not stop.is_set():
                    if not self._held:
                        self._held = True
                        return True
                    self._free.wait()
                return False
        finally:
            forget()  # taken, or given up: the signal, which outlives this wait, keeps no wake of it

    def release(self) -> None:
        with self._free:
            self._held = False
            self._free.notify_all()

    def _wake(self) -> None:
        # The waiters look again whether they are stopped. Under the
        # condition's lock, which a waiter holds from its look at the signal
        # until wait() gives it up: a set between that look and the wait
        # notifies once the waiter waits, and is not lost.
        with self._free:
            self._free.notify_all()

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()

    def __deepcopy__(self, memo):
        return _TabLock()


@dataclass
class Session:
    """One browser tab's state. ``gr.State(Session())`` deep-copies it per tab."""

    turns: list[SessionTurn] = field(default_factory=list)
    conversation_no: int = 1
    # The user's other conversations, as saved JSON (see saved_state): number -> turns.
    archive: dict[str, list] = field(default_factory=dict)
    # What the current conversation is answered from (None: the default collection).
    source: Source | None = None
    # What each of the other conversations (archive's keys) was answered
    # from: its Source while the session holds it (several conversations may
    # hold one, counted once in the budgets), else its Origin (after a
    # reload, another tab's, or let go for room). A conversation missing
    # here was saved before conversations kept theirs.
    sources: dict[str, Source | Origin] = field(default_factory=dict)
    replay: Replay | None = None
    selected: int | None = None  # the turn the correction box and thumbs act on (None: the last)
    # Its files on the server's disk (uploads, export): see the properties.
    files: SessionFiles = field(default_factory=SessionFiles)
    # Questions sent and checked but not yet asked, oldest first: a question
    # sent while a turn runs waits here and is asked after it (take_question).
    waiting: deque[str] = field(default_factory=deque)
    # Turns of this session under way (the app counts them, so that Stop with
    # nothing running says so).
    running: int = 0
    # Stop presses (the app's streams tell a Stop by them), and the turns
    # (ask) begun and not yet ended: a turn ends added only if no Stop came
    # since it began, as its stop signal says (_turns.stop_turns decides with
    # the turn's end under one lock, so that Stop says which it was).
    stops: int = 0
    asking: int = 0
    # Those of them waiting for the conversation's source to be read again
    # (after a reload): Stop says their question was not asked.
    awaiting: int = 0
    # The signal the turns begun since the last Stop check between their model
    # steps and their stages, and whose setting ends their wait for the tab's
    # lock: the next Stop sets it (the turns end at once, Stopped) and puts a
    # fresh one in its place, for the turns begun after it.
    stop_signal: StopSignal = field(default_factory=StopSignal, repr=False, compare=False)
    # The turns (their indexes) being re-run with the user's rewrite
    # (_turns.correct), under the same lock: a re-run ends kept only if no
    # Stop came since it began, and Stop says which turn it left as it was.
    correcting: list[int] = field(default_factory=list)
    # What the latest Stop said (its status line, as drawn): a stream it
    # stopped draws it again as its last view (app.Actions.stream).
    stopped: str = ""
    # Whether the conversations the browser keeps were read in (restore_state):
    # a session Gradio made afresh for an open page (the server restarted, or
    # dropped the oldest sessions' state) has not, and must before it saves.
    restored: bool = False
    # The conversations of the browser's copy as this tab last read it (at
    # restore_state, or another tab's at merge_saved), each as _store's
    # prints of its turns: what tells a conversation this tab changed since
    # from one another tab changed.
    stored: frozenset[tuple[str, ...]] = frozenset()
    # The conversations this browser's user removed (undid every turn of),
    # each by its first turn's uid, oldest first: the saved copy carries
    # them, so that a tab still holding one unchanged drops it too, where
    # merging, which only ever adds, brought it back (_store.merge_saved).
    removed: list[str] = field(default_factory=list)
    # Statuses for the next view to show before its own (e.g. that the
    # browser's conversations were read back after a server restart).
    notes: list[str] = field(default_factory=list)
    # Lines this session appended to the labels file (MAX_JUDGEMENTS).
    judgements: int = 0
    # Held while a source is read again from its files (the session layer's
    # take_waiting): a question asked meanwhile waits for it, rather than be
    # answered from the default collection.
    taking: _TabLock = field(default_factory=lambda: _TabLock(), repr=False, compare=False)
    _id: str = ""

    @property
    def uploads(self) -> set[str]:
        """Files the user uploaded through the UI (Gradio's copies): deleted when the session ends."""
        return self.files.uploads

    @property
    def export(self) -> str:
        """The session's last exported conversation (write_export): deleted when it ends."""
        return self.files.export

    @export.setter
    def export(self, path: str) -> None:
        self.files.export = path

    def on_disk(self) -> SessionFiles:
        """Its files, to be deleted when the session ends, or when it is
        garbage collected unclosed: Gradio drops the oldest sessions past its
        capacity without closing them, and their uploads and export stayed
        on the server's disk for good."""
        if self.files.removal is None:
            # The finalizer holds the files' record only, never the session.
            self.files.removal = weakref.finalize(self, self.files.remove)
        return self.files

    @property
    def id(self) -> str:
        """A random id, drawn on first use: each deep copy of an empty session gets its own."""
        if not self._id:
            self._id = uuid.uuid4().hex[:12]
        return self._id

    def history(self, upto: int | None = None, rewritten: bool = False) -> list[str]:
        """The questions and answers of the turns before ``upto`` (all by
        default), oldest first: QReCC's Context layout; ``rewritten``: see
        :meth:`Conversation.history`."""
        return Conversation([t.turn for t in self.turns[:upto]]).history(rewritten)

    def held_sources(self, current: bool = True) -> list[Source]:
        """The sources this session holds, each once: the current
        conversation's (unless not ``current``) and those its other
        conversations keep (one may be kept by several)."""
        kept = [self.source] if current and self.source is not None else []
        kept += [source for source in self.sources.values() if isinstance(source, Source)]
        return list({id(source): source for source in kept}.values())

    def holds(self, source: Source) -> bool:
        """Whether a conversation of this session is answered from ``source``."""
        return any(kept is source for kept in self.held_sources())

    def let_go(self, source: Source | None) -> None:
        """Close ``source`` if no conversation holds it any more."""
        if source is not None and not self.holds(source):
            source.close()

    def forget_sources(self) -> None:
        """Let go of what the conversations no longer in ``archive`` held
        (trimmed, removed by another tab)."""
        current = str(self.conversation_no)
        for key in [key for key in self.sources if key not in self.archive and key != current]:
            self.let_go(_as_source(self.sources.pop(key)))

    def set_source(self, source: Source | None) -> None:
        """Answer the current conversation from ``source`` (what it waited
        to take again is forgotten); the one it replaces is closed if no
        other conversation holds it."""
        self.sources.pop(str(self.conversation_no), None)
        old, self.source = self.source, source
        if old is not source:
            self.let_go(old)

    def replaced(self) -> Source | None:
        """The current source if giving another one lets it go (no other
        conversation holds it, and the current one, empty, keeps none):
        what the budgets count as freed."""
        source = self.source
        if source is None or self.turns or any(kept is source for kept in self.held_sources(current=False)):
            return None
        return source

    def spareable(self) -> list[Source]:
        """The sources that giving the current conversation another one may
        let go for room: those only other conversations hold, and the
        current one's when it is under way (it is then left, keeping it)."""
        return self.held_sources(current=bool(self.turns))

    def spare(self, sources: list[Source]) -> None:
        """Let go of ``sources`` (of :meth:`spareable`), for room: each
        conversation that held one keeps its Origin, to take it again when
        picked again where it can be (an article, an upload still on disk)."""
        for key, kept in list(self.sources.items()):
            if any(kept is source for source in sources):
                self.sources[key] = kept.origin
        if any(self.source is source for source in sources):
            # The conversation under way, about to be left, keeps its origin as the others do.
            self.sources[str(self.conversation_no)] = self.source.origin
            self.source = None
        for source in sources:
            self.let_go(source)

    def close(self) -> None:
        """Free what the session holds: its uploads' index and the uploaded
        files on disk, its documents and replayed file in memory."""
        held = self.held_sources()
        self.source, self.sources = None, {}
        for source in held:
            source.close()
        if self.replay is not None:
            self.replay.close()
            self.replay = None
        self.files.remove()


def _as_source(kept: Source | Origin | None) -> Source | None:
    return kept if isinstance(kept, Source) else None


@dataclass(frozen=True)
class Pending:
    """A turn in progress, for streaming: the rewrite comes before the answer."""

    question: str
    rewrite: Rewrite | None = None

