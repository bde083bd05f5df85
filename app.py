"""The browser app: ``python app.py [--port N] [--host H]``.

This file only wires the UI: per-panel builders make the Gradio components,
:class:`Actions` turns each event into a call of :mod:`assistant.session`
(which holds the logic, one :class:`~assistant.session.Session` per browser
tab in a ``gr.State``), and :func:`build_app` connects the two. Beside it:
``app.css`` (the look), ``app.js`` (the script the page runs at load) and
``server.py`` (the Gradio server it is served on: each client's share of
Gradio's store and queue, the upkeep while it serves). The chat is also an
API (see the README):

- ``/chat``: ``Client(URL).predict("Who was Ada Lovelace?", api_name="/chat")``
  answers in the client's own conversation (one per ``Client``) with the
  terminal chat's JSON; ``/new`` starts a new conversation.
- ``/rewrite``: ``Client(URL).predict("Who was her father?", ["Who was Ada
  Lovelace?", "An English mathematician."], api_name="/rewrite")`` gives
  ``{"rewrite": "...", "note": "..."}``, the self-contained form of the
  question after that history (QReCC's ``Context``: the earlier questions
  and answers, oldest first; ``[]`` for a first turn), or ``{"question",
  "error"}`` for bad input. No session state: each call stands alone. A
  client's ``job.cancel()`` (Gradio's ``/cancel``) ends its decoding at the
  next step, and a ``/chat`` turn's as the Stop button does (not added); a
  client that merely goes away does not (Gradio tells a running handler
  nothing of it).

The server shares its models between sessions: ``main`` builds the assistant
with ``batching=True``, so the rewrites (chat and ``/rewrite`` alike) and the
reader's sentence encodings of turns that run at the same time are decoded as
one batch, on one worker thread per model.
"""

from __future__ import annotations

import os

# Before gradio and huggingface_hub are imported: no telemetry, no downloads.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import argparse
import contextlib
import functools
import json
import logging
import threading
import weakref
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
from gradio.components.plot import PlotData
from gradio.utils import NamedString
from gradio_client import utils as client_utils

import server
from assistant import session as S
from assistant.kernel import (NO_STOP, READER_NAMES, AssistantError, CommandParser, FairShareConfig, InvalidInputError,
                              StopSignal, check_can_listen, counted, from_env, run_cli, server_port, sigterm_as_ctrl_c,
                              stopped_when_cancelled)

__all__ = ["LiveMetrics", "build_app", "live_metrics", "main", "serve"]

log = logging.getLogger("convqa.app")

# Turns in flight at once: two batches of the model batchers
# (assistant.pipeline.BATCH_SIZE), so that one batch is rewritten while the
# turns of the one before are searched and read, instead of the rewriter
# waiting for them (BENCHMARKS.md §8, session 10). The model calls are
# serialised on the batchers' threads, so more turns at once do not
# oversubscribe the two cores.
TURN_CONCURRENCY = 64
# Waiting events beyond this are refused at once (the browser says "This
# application is currently busy. Please try again.") instead of queueing
# for minutes. One client may have S.UploadLimits.client_queued of them.
QUEUE_SIZE = 128
# Seconds between refreshes of the source line while passages are encoded
# (a first start's or a session's uploads', minutes of work): often
# enough to see it move, rare enough that a crowd's browsers barely load
# the server.
SOURCE_REFRESH_S = 5.0
# Seconds a SIGTERM waits for the turns under way before the server stops:
# a turn takes a few seconds, and Docker kills a container 10 s after it.
DRAIN_S = 8.0
# Where the browser keeps the user's conversations (localStorage).
STORAGE_KEY = "convqa-conversations"
# The hidden box the page puts the copy another tab saved in (app.js), for
# the server to fold into this tab's conversations.
OTHER_COPY_ID = "cqa-other-copy"
# How the status line starts when that copy could not be read: the page then
# offers to reload (app.js).
OTHER_TAB_UNREAD = "What another tab of this browser saved could not be read"
# The lines that tell the outcome of an action: live regions, so that a
# screen reader says a refusal or a confirmation (the chat itself is one).
STATUS_IDS = ("cqa-status", "replay-status", "docs-status", "mc-result")
# The boxes whose text the page keeps across the reload it asks for when
# another tab saved (not the correction box, which the page draws anew).
DRAFTS = ("question", "doc-text", "doc-title", "replay-path", "mc-doc", "mc-question", "mc-a", "mc-b", "mc-c", "mc-d")
# Gradio's lists let go of the focus once an option is chosen with Enter
# (to the page itself, where a keyboard user starts over from the top): it
# goes on to the control that comes next instead.
AFTER_PICK = {"conversations": "#question textarea", "replay-pick": "#replay-start"}
# The script the page runs at load (its own file beside this one, read at
# start like the look): it mends Gradio's markup for a keyboard and a screen
# reader and hands another tab's save to the server; page_js gives it the
# names above.
JS_FILE = Path(__file__).with_name("app.js")
# How the plot's image is sent (gr.Plot's own default).
PLOT_FORMAT = "webp"
# The app's look, beside this file.
CSS_FILE = Path(__file__).with_name("app.css")


def page_js() -> str:
    """The script of ``JS_FILE`` (a function of one ``config`` object), as the
    function of none that Gradio runs at load: called with the ids and texts
    it shares with the server, as JSON."""
    config = {"status": list(STATUS_IDS), "after": AFTER_PICK, "drafts": list(DRAFTS), "key": STORAGE_KEY,
              "copy": OTHER_COPY_ID, "redrawn": S.BROUGHT_UP_TO_DATE, "unread": OTHER_TAB_UNREAD}
    return f"() => ({JS_FILE.read_text(encoding='utf-8')})({json.dumps(config)})"


def theme() -> gr.themes.Base:
    """Gradio's Soft theme with text that passes WCAG AA (4.5:1): Soft's grey
    for secondary text (the sources' passages, scores, the boxes' help), its
    labels' indigo on their pale badge and its links on the dark background
    were all below it."""
    return gr.themes.Soft().set(
        body_text_color_subdued="*neutral_600",
        block_label_text_color="*primary_700",
        block_title_text_color="*primary_700",
        link_text_color_dark="*secondary_300",
    )


# What the API page says of each endpoint (README's API section says the same).
API_CHAT = ("Ask the next question of this client's conversation (one gradio_client Client is one conversation). "
            "Returns {question, rewrite, answer, sources, timings_ms, turn, conversation}, with notice when the "
            "turn carries a warning; a refused question returns {question, error}.")
API_NEW = "Start a new conversation for this client. Returns {conversation}, its number."
API_REWRITE = ("Rewrite a question into a self-contained one, given the conversation so far as a list of texts, "
               "question and answer alternating, oldest first (none: a first turn). Keeps no state. "
               "Returns {rewrite, note}.")

# A conversation the default collection answers turn by turn: its Ada
# Lovelace summary does not name her father, so "Who was her father?" got
# her first sentences and then resolved the next "he" to her.
EXAMPLES = ["Who was Ada Lovelace?", "What did she write about?", "What is she often considered to be?"]
# The empty chat's invitation while the default collection is the source.
PLACEHOLDER = "Ask about anything in the collection, e.g. **Who was Ada Lovelace?** and then **What did she write about?**"


class LiveMetrics:
    """QReCC's live rewrite metrics for :attr:`assistant.session.Services.scorer`:
    ROUGE-1 recall, USE similarity and R@10 of the system's rewrite against a
    reference. Injected from here because nothing in assistant/ imports eval/."""

    names = S.METRICS

    def __init__(self):
        self._use = None
        self._lock = threading.Lock()

    def load(self):
        """The USE encoder, loaded once (sessions score from several threads)."""
        with self._lock:
            if self._use is None:
                from assistant.encoders import load_use

                self._use = load_use()
        return self._use

    def __call__(self, reference: str, candidate: str, retriever, stop: StopSignal = NO_STOP) -> dict[str, float]:
        """The three metrics; ``stop`` (the turn's) is checked before each
        step that costs (USE's encoding, each of R@10's two searches): a
        turn stopped meanwhile raises :class:`~assistant.kernel.Stopped`
        with the rest not computed."""
        from eval.metrics import embedding_similarity, r_at_k, rouge1_recall

        scores = {"ROUGE-1 R": rouge1_recall(reference, candidate)}
        stop.check()
        scores["USE"] = embedding_similarity(self.load(), reference, candidate)
        scores["R@10"] = r_at_k(_Checked(retriever, stop), reference, candidate, k=10)
        return scores


class _Checked:
    """A retriever whose every search begins with a check of ``stop``: a
    single BM25 search cannot be stopped inside, but R@10's second one
    need not begin for a turn stopped during its first."""

    def __init__(self, retriever, stop: StopSignal) -> None:
        self.retriever, self.stop = retriever, stop

    def search(self, query: str, k: int):
        self.stop.check()
        return self.retriever.search(query, k)


@functools.lru_cache(maxsize=1)
def live_metrics() -> LiveMetrics:
    """One :class:`LiveMetrics` per process: USE is loaded once."""
    return LiveMetrics()


class _DescribedPlot(PlotData):
    """A drawn plot with its text alternative: Gradio writes the image's alt
    text as "<chart> plot visualising provided data" and never sets the
    chart for matplotlib, so a screen reader said "undefined plot ..."."""

    chart: str


def _plot(session: S.Session, metrics=S.METRICS) -> _DescribedPlot:
    """The running mean of each metric across turns, drawn on the server
    (matplotlib's object API: no global pyplot state shared between sessions)."""
    from gradio.processing_utils import encode_plot_to_base64

    points = S.metrics_points(session, metrics)
    figure = _figure(points, metrics)
    return _DescribedPlot(type="matplotlib", plot=encode_plot_to_base64(figure, PLOT_FORMAT), chart=_plot_text(points, metrics))


def _figure(points: list[dict], metrics):
    """The plot's matplotlib figure, turns on the x axis."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(4.8, 2.5), dpi=110)
    axes = figure.add_subplot()
    for metric, color in zip(metrics, ("#2563eb", "#f59e0b", "#10b981")):
        mine = [p for p in points if p["metric"] == metric]
        axes.plot([p["turn"] for p in mine], [p["mean"] for p in mine], marker="o", ms=3, color=color, label=metric)
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("turn", fontsize=8)
    axes.set_ylabel("running mean", fontsize=8)
    axes.tick_params(labelsize=7)
    # min_n_ticks=1: with one scored turn the axis spans a tenth of a turn, and
    # the locator, finding fewer integers there than it wants, fell back to
    # fractional ticks ("turn 0.945 ... 1.050").
    axes.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    axes.grid(alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    if points:
        axes.legend(loc="lower left", fontsize=7, frameon=False, ncols=3)
    else:
        axes.set_xticks([])
        axes.text(0.5, 0.5, "no scored turn yet", ha="center", va="center", transform=axes.transAxes, color="gray")
    figure.tight_layout()
    return figure


def _plot_text(points: list[dict], metrics) -> str:
    """What the plot shows, in words (the table above it has every turn's figures)."""
    if not points:
        return "Rewrite quality: no scored turn yet. A line"
    last = points[-1]["turn"]
    means = ", ".join(f"{p['metric']} {S.score_text(p['mean'])}" for p in points if p["turn"] == last)
    return f"Rewrite quality, running means by turn (after turn {last}: {means}; each turn in the table above). A line"


def _status(text: str, error: bool = False) -> str:
    # Status texts quote user input: escaped like everything else shown.
    return ("⚠️ " if error else "") + S.escape_markdown(text)


def _stop(session, *, idle_too: bool = True) -> tuple[S.StoppedTurns | None, int]:
    """What a Stop stops, for Stop and for a page gone (Actions.stopped,
    Actions.gone): the turns under way (S.stop_turns: what it found; when not
    ``idle_too``, only if a turn or a re-run was, None otherwise) and the
    questions waiting (S.drop_waiting: how many)."""
    # Stop counts a Stop with nothing under way too (session.stops): a stream
    # about to begin, its count taken, ends at its first view. A page gone
    # has its events' tasks cancelled besides (server.stop_when_gone): an
    # idle session's count is left as it was.
    busy = session.running or session.asking or session.correcting
    cut = S.stop_turns(session) if idle_too or busy else None
    return cut, S.drop_waiting(session)


def _attempt(action):
    """``(result, None)``, or ``(None, message)`` when ``action`` failed: an
    AssistantError's own message, or for a bug a short apology (logged)."""
    try:
        return action(), None
    except AssistantError as error:
        return None, str(error)
    except Exception as error:  # the UI edge: the session must keep working
        log.exception("unexpected error")
        return None, f"Something went wrong ({type(error).__name__}); please try again."


def _run(action) -> str:
    """The status line after ``action`` (which returns a message)."""
    message, error = _attempt(action)
    return _status(error, error=True) if error else _status(message)


def _client(request: gr.Request | None) -> str | None:
    """Who sent an event, as the per-client bounds count them (S.client_address)."""
    if request is None:
        return None
    client = getattr(request, "client", None)
    headers = dict(getattr(request, "headers", None) or {})  # a dict already for a queued event's copy
    return S.client_address(getattr(client, "host", "") or "", headers.get("x-forwarded-for", ""))


def _index(data) -> int:
    return data.index[0] if isinstance(data.index, (list, tuple)) else data.index


def _path(file) -> str:
    return file if isinstance(file, str) else file.name


def upload_field(**kwargs) -> gr.File:
    """A ``gr.File(type="filepath", **kwargs)`` whose reading of a file makes
    no file. Gradio's made an empty file in its upload folder for each file
    an event read (a temporary file it opened and never used), which nothing
    deleted until the server stopped: one a file, for good, on a Space left
    running. Its method is replaced on the one component: a subclass of a
    Gradio component has Gradio write a stub file (``app.pyi``) beside this
    one at every import."""
    field = gr.File(type="filepath", **kwargs)

    def read_in_place(f):
        if field.file_types and not client_utils.is_valid_file(f.path, field.file_types):
            # Said as the uploads' own check says it (Gradio's showed a Python list and no file name).
            name = f.orig_name or os.path.basename(f.path)
            raise gr.Error(f"{S.shown_name(name)}: unsupported file type {Path(name).suffix or '(none)'!r}; "
                           f"upload {', '.join(field.file_types)} files.")
        return NamedString(f.path)

    field._process_single_file = read_in_place
    return field


class Actions:
    """The event handlers: each calls :mod:`assistant.session` with the tab's
    Session and the server's Services and returns what the panels show."""

    def __init__(self, services: S.Services, export_dir: str | None = None):
        # None: a folder of their own, made as the server's is (export_folder)
        # and removed with these handlers.
        self._exports = server.export_folder() if export_dir is None else None
        self.services = services
        self.export_dir = export_dir if export_dir is not None else self._exports.name
        # Turns under way (streamed or through the API), for a stop to wait on.
        self.running = 0
        self._running_lock = threading.Lock()
        # The sessions that uploaded, by Gradio's session hash: told when their
        # page goes (left), which Gradio's own cleanup learns an hour later.
        self._uploaders: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        # The sessions that ran a turn or put a question in line, by Gradio's
        # session hash: stopped when their page's connection closes (gone).
        self._turning: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    @contextlib.contextmanager
    def _turn(self, session=None):
        with self._running_lock:
            self.running += 1
            if session is not None:
                session.running += 1
        try:
            yield
        finally:
            with self._running_lock:
                self.running -= 1
                if session is not None:
                    session.running -= 1

    # ------------------------------------------------------------ views

    def views(self, session, status="", pending=None, correction=True):
        """The outputs of every turn event: chat, status, metrics table and plot,
        correction box (left as it is unless ``correction``), state, the
        conversations list and what the browser keeps."""
        if pending is not None:
            # Mid-turn only the chat changes; re-sending the plot at every
            # streamed step can leave it half drawn.
            return S.chat_messages(session, pending), status, *[gr.skip()] * 3, session, gr.skip(), gr.skip()
        if session.notes and isinstance(status, str):
            status = " ".join([*(_status(note) for note in session.notes), status]).strip()
            session.notes.clear()
        metrics = self.services.metrics
        saved = S.saved_state(session)  # once: it is JSON of every conversation, cut to the browser's room
        choices = gr.update(choices=S.conversation_choices(session, saved), value=session.conversation_no)
        chat = gr.update(value=S.chat_messages(session), feedback_value=self.feedback(session))
        return (chat, status, S.metrics_rows(session, metrics), _plot(session, metrics),
                self.correction_box(session) if correction else gr.skip(), session, choices, saved)

    @staticmethod
    def feedback(session) -> list:
        """Each turn's thumb as the chat shows it pressed (its one answer
        group per turn): drawn anew, the chat had dropped it, so a rated
        rewrite looked unrated."""
        return [{1: "Like", 0: "Dislike"}.get(entry.info.judgement) for entry in session.turns]

    @staticmethod
    def correction_box(session, text=True):
        """The correction box for the turn it corrects; ``text``: its text
        too (the turn's rewrite), else what is typed in it stays."""
        index = S.target_turn(session)
        if index < 0:
            return gr.update(value="", label="Correct the rewrite (ask a question first)", elem_classes=[])
        last = " (the last)" if index == len(session.turns) - 1 else ""
        # The panel's thumbs rate this turn: the page presses the one its judgement names.
        judged = {1: ["cqa-judged-up"], 0: ["cqa-judged-down"]}.get(session.turns[index].info.judgement, [])
        box = {"value": session.turns[index].turn.rewrite.text} if text else {}
        return gr.update(**box, label=f"Correct the rewrite of turn {index + 1}{last}", elem_classes=judged)

    @staticmethod
    def _corrected(session) -> tuple[str, str] | None:
        """The turn the correction box corrects (its uid) and its rewrite; None if none."""
        index = S.target_turn(session)
        return (session.turns[index].info.uid, session.turns[index].turn.rewrite.text) if index >= 0 else None

    @staticmethod
    def unchanged():
        """The outputs of a turn event, every one left as it is."""
        return (gr.skip(),) * 8

    def stream(self, session, steps, done, during=lambda: ""):
        """Yield the views after each stage of a streamed turn (``steps`` yields
        Pending values), with the status ``during()`` meanwhile and ``done``
        (a text, or what it returns) at its end; a failure at
        any stage ends it with its message, which is also returned. Between
        the turns of several (Play all) every panel is drawn: the metrics,
        their plot and the saved copy followed only at the end."""
        finished, stops = len(session.turns), session.stops
        with self._turn(session):
            while True:
                pending, error = _attempt(lambda: next(steps, None))
                if session.stops != stops:
                    # Stopped meanwhile: Stop's views are the last word. A
                    # cancelled stream's next views (blank status, a turn
                    # more) came after them and replaced them; a view of
                    # this stream sent before it stopped may still arrive
                    # after Stop's, so its last one says what Stop said.
                    yield self.views(session, session.stopped)
                    return None
                if error:
                    yield self.views(session, _status(error, error=True))
                    return error
                if pending is None:
                    break
                if len(session.turns) != finished:  # a turn ended before this one began
                    finished = len(session.turns)
                    yield self.views(session, during())
                    if session.stops != stops:
                        yield self.views(session, session.stopped)
                        return None
                yield self.views(session, during(), pending)
        yield self.views(session, _status(done() if callable(done) else done))
        return None

    # ------------------------------------------------------------ conversations kept in the browser

    def _restored(self, session, saved, client=None) -> str:
        """The browser's conversations read into ``session``, the one shown
        answered from its own source again where it can be (S.take_back); a status."""
        restored = S.restore_state(session, saved)
        shown = f"Conversation {session.conversation_no}"
        # A source read from its files is left to take_again, a queued event.
        taken = S.take_back(self.services, session, client, shown, later=True)
        return " ".join(filter(None, [restored, taken.strip()]))

    def restore(self, saved, session, request: gr.Request = None):
        """On page load: the conversations this browser kept (read once: an
        event that came first has read them already)."""
        status = gr.skip() if session.restored else _run(lambda: self._restored(session, saved, _client(request)))
        if status == "" and not session.notes:
            # Nothing to say (nothing was saved): a status another event set
            # while this one ran ("Loaded 2 conversations") stays.
            status = gr.skip()
        views = self.views(session, status)
        if session.running or session.waiting:
            # A question sent before this load event ended (a slow server): its
            # turn draws the chat and what the browser keeps. These views,
            # drawn before it began, arrived after its first step and wiped
            # the question from the chat until the turn ended.
            _, status, rows, plot, _, session, choices, _ = views
            return gr.skip(), status, rows, plot, gr.skip(), session, choices, gr.skip()
        return views

    def ready(self, session, saved) -> None:
        """Before an event that saves the conversations: a session that has
        not read the browser's copy yet reads it now. Gradio gives an open
        page a fresh session after a server restart, or when it drops the
        oldest of ``server.STATE_SESSIONS``; saving that one wrote over
        the copy (every conversation lost), and the next question lost its
        history."""
        if session.restored:
            return
        status, error = _attempt(lambda: self._restored(session, saved))
        if status or error:
            note = "The server restarted or let this session go: " + (
                status or f"the conversations kept in this browser could not be read back ({error})")
            session.notes.append(note)

    def refresh(self, session, saved):
        """Every turn view drawn again (after the source changed), the status
        kept; the empty chat's invitation names the source."""
        self.ready(session, saved)
        chat, *rest = self.views(session, gr.skip())
        return {**chat, "placeholder": self.placeholder(session)}, *rest

    @staticmethod
    def placeholder(session) -> str:
        if session.source is None:
            return PLACEHOLDER
        return f"Ask about {S.escape_markdown(session.source.name)}."

    def switch(self, number, session, saved, request: gr.Request = None):
        """Another conversation picked: shown, answered from its own source
        (the source line, drawn next by ``shown_source``, and the empty
        chat's invitation name it)."""
        self.ready(session, saved)
        if number is None or number == session.conversation_no:
            # The list was cleared, or it repeats the pick it was just set to:
            # the status keeps what the pick said.
            return self.views(session, gr.skip())
        status = _run(lambda: S.switch_conversation(session, int(number), self.services, _client(request), later=True))
        chat, *rest = self.views(session, status)
        return {**chat, "placeholder": self.placeholder(session)}, *rest

    def take_again(self, session, saved, request: gr.Request = None, progress=gr.Progress(track_tqdm=True)):  # noqa: B008
        """After a pick of a conversation or a page's load: the source the
        conversation shown waits for, read again from its files (S.take_waiting:
        uploads indexed again take minutes, as indexing them did), as the
        upload is, in a queued event with its progress, not in the quick
        handler of the pick. Nothing waiting: nothing changes."""
        self.ready(session, saved)
        waiting = S.waiting_for(session)
        if waiting is None:
            return self.unchanged()
        progress(0, desc=f"Reading {waiting.name} again")
        status = _run(lambda: self._read_again(session, request))
        chat, *rest = self.views(session, status or gr.skip())
        return {**chat, "placeholder": self.placeholder(session)}, *rest

    def _uploader(self, session, request: gr.Request | None) -> None:
        """``session`` holds (or is about to hold) uploads: told when its page goes (left)."""
        if request is not None and request.session_hash:
            self._uploaders[request.session_hash] = session

    def _turn_client(self, session, request: gr.Request | None) -> str | None:
        """The client of a turn (S.ask, S.correct, S.multiple_choice), which
        reads the source its conversation waits for first, as _read_again does."""
        if S.waiting_for(session) is not None:
            self._uploader(session, request)
        self._page_of(session, request)
        return _client(request)

    def _page_of(self, session, request: gr.Request | None) -> None:
        """``session`` runs a turn for the page of ``request``, or has one
        waiting: stopped when that page's connection closes (gone)."""
        if request is not None and request.session_hash:
            self._turning[request.session_hash] = session

    def _read_again(self, session, request: gr.Request | None) -> str:
        """The source ``session``'s conversation waits for, read again
        (S.take_waiting) as an upload is read: counted against its client's
        and network's shares, its encoding stopped when its page goes."""
        self._uploader(session, request)
        return S.take_waiting(self.services, session, _client(request))

    def other_tab_saved(self, copy, session, saved, *, secret: str):
        """Another tab of this browser saved its conversations (``copy``: the
        browser's copy as it keeps it, encrypted with ``secret``): they are
        folded into this tab's (S.merge_saved), and saved with them.
        Nothing new: nothing is saved, so the two tabs do not answer each
        other's saves for ever."""
        self.ready(session, saved)
        shown, before = session.turns, self._corrected(session)
        status, error = _attempt(lambda: S.merge_saved(session, S.open_browser_copy(copy, secret)))
        if error:
            # Said, and not answered with a save of this tab's own over it.
            status = _status(f"{OTHER_TAB_UNREAD}: {error.rstrip('.')}. Reload this page before going on: what it "
                             "saves next would replace it.", error=True)
            return gr.skip(), status, *[gr.skip()] * 3, session, gr.skip(), gr.skip()
        if not status and not session.notes:
            return self.unchanged()
        status = _status(status) if status else gr.skip()
        views = self.views(session, status, correction=False)
        if session.turns is not shown:
            # The conversation shown was brought up to date: the correction
            # box says which turn it corrects now, and keeps what is typed in
            # it unless that turn's rewrite changed.
            box = self.correction_box(session, text=self._corrected(session) != before)
            views = (*views[:4], box, *views[5:])
        if session.running or session.waiting:
            # A turn of this tab streams into the chat and saves when it ends
            # (what was folded in with it): as for restore.
            _, status, rows, plot, _, session, choices, _ = views
            return gr.skip(), status, rows, plot, gr.skip(), session, choices, gr.skip()
        return views

    # ------------------------------------------------------------ chat and rewrite

    def take(self, question, session, request: gr.Request = None):
        """A sent question: put in line and the box emptied, or refused with
        the text left in the box to be mended."""
        status, error = _attempt(lambda: S.take_question(self.services, session, question))
        if error:
            return gr.skip(), _status(error, error=True), session
        # Dropped if the page's connection closes before the run that asks it began (gone).
        self._page_of(session, request)
        return "", _status(status), session

    def ask(self, session, saved, request: gr.Request = None):
        """Ask the questions waiting, oldest first, until none is left: one
        sent during a turn is asked after it by the same run. A source being
        read again (take_again) is waited for by the turn (S.ask), so that
        a Stop meanwhile stops it."""
        self.ready(session, saved)
        client = self._turn_client(session, request)
        asked, failed, error = False, [], None
        while (question := S.next_question(session)) is not None:
            asked = True
            conversation = session.turns  # the status after it repeats the turn's own warning
            error = yield from self.stream(session, S.ask(self.services, session, question, client=client),
                                           lambda: conversation[-1].info.notice if conversation else "",
                                           lambda: _status(S.waiting_notice(session)))
            if error:
                failed.append(f"“{question[:60]}”: {error}")
        if not asked:  # refused, or already asked by the run before
            yield self.unchanged()
        elif failed and (len(failed) > 1 or error is None):
            # A failure's message was covered by the turns after it.
            yield self.views(session, _status("Not answered: " + " ".join(failed), error=True))

    def rerun(self, corrected, session, saved, request: gr.Request = None):
        self.ready(session, saved)
        stops = session.stops
        client = self._turn_client(session, request)
        status, error = _attempt(lambda: S.correct(self.services, session, S.target_turn(session), corrected, client))
        if error and session.stops != stops:
            # Stopped meanwhile (S.correct decides, under its lock, whether the
            # re-run is kept): Stop's views are the last word, as a stream's
            # (its cancel drops these, unless they were on their way). A Stop
            # just after a kept re-run leaves it said re-run: it was.
            return self.views(session, session.stopped, correction=False)
        if error:  # the refused correction stays in its box, to be mended
            return self.views(session, _status(error, error=True), correction=False)
        return self.views(session, _status(status))

    def like(self, session, saved, data: gr.LikeData):
        self.ready(session, saved)
        if data.liked not in (True, False, "Like", "Dislike"):  # a thumb clicked off again: drawn pressed again
            return self.views(session, _status("A judgement is not taken back (its line in the labels file stays): "
                                               "press the other thumb to change it."))
        label = 1 if data.liked in (True, "Like") else 0
        return self.views(session, _run(lambda: S.judge(self.services, session, S.turn_of_message(_index(data)), label)))

    def thumb(self, label: int, session, saved):
        self.ready(session, saved)
        return self.views(session, _run(lambda: S.judge(self.services, session, S.target_turn(session), label)))

    def select(self, session, data: gr.SelectData):
        turn, error = _attempt(lambda: S.select_turn(session, _index(data)))
        status = _status(error, error=True) if error else _status(
            f"Turn {turn + 1} selected: correct or rate its rewrite under Rewrite."
        )
        return self.correction_box(session), status, session

    def stopped(self, session, saved):
        self.ready(session, saved)
        # Said before the turns are stopped: a stream that wakes to the Stop
        # draws this status as its last, and Stop's own views (a direct call)
        # may reach the page before that last one does.
        session.stopped = _status("Stopped.")
        cut, dropped = _stop(session)
        if cut.asked or cut.corrected:
            # Numbered: the turn before it may have ended just before Stop,
            # after the page last drew the chat (a turn more than it showed).
            said = [f"turn {len(session.turns) + 1} was not added"] if cut.asked else []
            if cut.awaited:
                said = [f"turn {len(session.turns) + 1} was not asked (it waited for {cut.awaited} to be read again "
                        "from the files on the server)"]
            said += [f"turn {number} was not re-run with your rewrite (it is as it was)" for number in cut.corrected]
            status = f"Stopped: {'; '.join(said)}."
            where = " sent after it"
        elif session.running:  # between two turns (Play all), or before the first began
            status = f"Stopped after turn {len(session.turns)}, which is kept." if session.turns else "Stopped."
            where = " sent after it"
        else:  # a fresh page, or a replay already over: nothing to stop
            status, where = "Nothing was running.", " waiting"
        if dropped:
            status += f" The {counted(dropped, 'question')}{where} {'were' if dropped != 1 else 'was'} not asked."
        session.stopped = _status(status)
        # A re-run stopped leaves the rewrite typed in the box, to be run again.
        return self.views(session, session.stopped, correction=not cut.corrected)

    def undo(self, session, saved):
        self.ready(session, saved)
        return self.views(session, _run(lambda: S.undo(session)))

    def start_over(self, session, saved):
        self.ready(session, saved)
        return self.views(session, _run(lambda: S.new_conversation(session)))

    def export(self, session):
        path, error = _attempt(lambda: S.write_export(session, self.export_dir))
        if error:
            return gr.update(visible=False), _status(error, error=True)
        return gr.update(value=str(path), visible=True), _status(f"Exported {counted(len(session.turns), 'turn')}.")

    # ------------------------------------------------------------ replay

    def replay_load(self, upload, path, session, request: gr.Request = None):
        if not upload and not (path or "").strip():
            status = _status("Upload a QReCC, CANARD or CAsT file, or give its path.", error=True)
            return gr.update(), status, status, session
        # What the user gave names the file in messages, not its place on the server.
        name = os.path.basename(upload) if upload else " ".join(path.split())
        S.track_uploads(session, [upload])
        ids, error = _attempt(lambda: S.load_replay(session, upload or S.shared_data_file(path), name, self.services,
                                                    _client(request)))
        if error:
            status = _status(error, error=True)
            return gr.update(choices=[], value=None), status, status, session
        loaded = _status(f"Loaded {counted(len(ids), 'conversation')}: pick one and press Start.")
        # Each choice says what the conversation is; its value stays the id that Start replays.
        return gr.update(choices=S.replay_choices(session), value=ids[0]), loaded, loaded, session

    def replay_start(self, conversation_id, session, saved):
        self.ready(session, saved)
        return self.views(session, _run(lambda: S.start_replay(session, conversation_id or "")))

    def replay_next(self, session, saved, request: gr.Request = None):
        self.ready(session, saved)
        client = self._turn_client(session, request)
        yield from self.stream(session, S.replay_step(self.services, session, client), self._replay_status(session))

    def replay_all(self, session, saved, request: gr.Request = None):
        self.ready(session, saved)
        client = self._turn_client(session, request)
        yield from self.stream(session, S.replay_rest(self.services, session, client), "Replay finished.")

    @staticmethod
    def _replay_status(session):
        replay = session.replay
        if replay is None or not replay.conversation_id:
            return ""
        left = replay.remaining() - 1
        return f"{counted(left, 'turn')} left to replay." if left > 0 else "Replay finished."

    # ------------------------------------------------------------ documents and multiple choice

    def source(self, session):
        return _status(S.source_status(self.services, session))

    def shown_source(self, session):
        """The source line, its timer and the "Try" examples, for the source
        of the conversation shown (after a pick of another, or a reload)."""
        return *self.source_tick(session), self.examples(session)

    def source_tick(self, session):
        """The source line and its timer, which runs while passages are
        encoded (the collection's at a first start, or the uploads') and
        stops once there is nothing left to say."""
        return self.source(session), gr.Timer(active=bool(S.search_notice(self.services, session)))

    def upload(self, files, session, request: gr.Request, progress=gr.Progress(track_tqdm=True)):  # noqa: B008 (gradio's way)
        self._uploader(session, request)
        paths = [_path(f) for f in (files or [])]
        S.track_uploads(session, paths)
        status = _run(lambda: S.use_uploads(self.services, session, paths, _client(request)))
        return status, *self.source_tick(session), session, self.examples(session)

    def document(self, file, text, title, session, request: gr.Request = None):
        # The first given of file, pasted text and title is used; the others
        # were dropped without a word.
        client = _client(request)
        pasted, named = (text or "").strip(), (title or "").strip()
        given = [name for name, value in (("the file", file), ("the pasted text", pasted), ("the title", named)) if value]
        unused = f" ({' and '.join(given[1:])} left unused: one document at a time.)" if len(given) > 1 else ""

        def choose():
            if file:
                # Told when its page goes, as an index's is: a page that reads it again replaces its count.
                self._uploader(session, request)
                S.track_uploads(session, [_path(file)])
                return S.use_document_file(self.services, session, _path(file), client) + unused
            if pasted:
                return S.use_document(self.services, session, text, "your text", client) + unused
            if not named:  # e.g. a file Gradio refused for its size left nothing
                raise InvalidInputError("Upload a document, paste its text, or type an article's title first.")
            return S.use_collection_document(self.services, session, title, client)

        return _run(choose), *self.source_tick(session), session, self.examples(session)

    def default(self, session):
        status = _run(lambda: S.use_default_collection(self.services, session))
        return status, *self.source_tick(session), session, self.examples(session)

    @staticmethod
    def examples(session):
        """The "Try" examples ask about the default collection: shown only while it is the source."""
        return gr.update(visible=session.source is None)

    def choice(self, document, question, a, b, c, d, session, request: gr.Request = None):
        client = self._turn_client(session, request)
        result, error = _attempt(lambda: S.multiple_choice(self.services, session, document, question, [a, b, c, d],
                                                           client))
        return (S.notice_html(error) if error else S.choice_html(*result)), session

    def gone(self, session_hash: str) -> None:
        """The connection of the page ``session_hash`` closed before its
        events ended (server.stop_when_gone): its turns are stopped as Stop
        stops them (one being asked not added, a re-run left as it was) and
        its questions waiting dropped. Their answers could reach no page,
        and each held a worker to its end; a page that comes back (a
        network drop) asks again. No status is said: no page is left to
        draw it."""
        session = self._turning.pop(session_hash, None)
        if session is not None:
            _stop(session, idle_too=False)

    def left(self, request: gr.Request):
        """A page was closed or reloaded (its heartbeat's connection closed):
        its uploads' passages are no longer encoded. Its turns were stopped
        (gone) and its events waiting in line dropped just before, by
        server.stop_when_gone at the same close, which build_app always
        adds: its event stream's close stops its turns too, but a turn runs
        as soon as its run joins the queue, and the page opens that stream
        only once the join is answered, so a page closed between had none
        to close."""
        if request is None:
            return
        session = self._uploaders.pop(request.session_hash, None)
        if session is not None:
            S.abandon(session)

    # ------------------------------------------------------------ API

    async def api_chat(self, question, session):
        # As /rewrite: a cancel of the request is the API client's Stop (the
        # session's, which its turn takes), its turn not added.
        with self._turn(session):
            result = await stopped_when_cancelled(lambda stop: S.ask_json(self.services, session, question,
                                                                          cancelled=stop))
        return result, session

    async def api_rewrite(self, question, history):
        # Async, so that a cancel of the request (a client's job.cancel(),
        # Gradio's /cancel) reaches it: the rewrite's decoding, on a thread
        # of its own, ends at its next step. A sync handler's cancel waited
        # for the whole decoding.
        return await stopped_when_cancelled(lambda stop: S.rewrite_json(self.services, question, history, stop))

    @staticmethod
    def api_new(session):
        S.new_conversation(session)
        return {"conversation": session.conversation_no}, session


# ---------------------------------------------------------------- panels


def _chat_panel(services: S.Services) -> SimpleNamespace:
    ui = SimpleNamespace()
    ui.source = gr.Markdown(_status(S.source_status(services, S.Session())), elem_id="cqa-source")
    # Refreshes the source line while a first start encodes the passages.
    ui.source_timer = gr.Timer(SOURCE_REFRESH_S, active=bool(S.search_notice(services, S.Session())))
    ui.chatbot = gr.Chatbot(
        label="Conversation", show_label=False, elem_id="chat", height=720, latex_delimiters=[],
        feedback_options=("Like", "Dislike"), buttons=["copy"],
        placeholder=PLACEHOLDER,
    )
    with gr.Row():
        ui.question = gr.Textbox(label="Your question", show_label=False, placeholder="Ask a question…", scale=6,
                                 elem_id="question", autofocus=True)
        ui.ask = gr.Button("Ask", variant="primary", scale=1, elem_id="ask", min_width=80)
    ui.status = gr.Markdown("", elem_id="cqa-status")
    # Questions about the default collection: hidden while the session answers from its own documents.
    ui.examples = gr.Examples(EXAMPLES, inputs=ui.question, label="Try", elem_id="examples")
    with gr.Row():
        ui.stop = gr.Button("⏹ Stop", size="sm", variant="stop", elem_id="stop")
        ui.new = gr.Button("🆕 New conversation", size="sm", elem_id="new")
        ui.undo = gr.Button("↩️ Undo last turn", size="sm", elem_id="undo")
        ui.export = gr.Button("⬇️ Export JSON (QReCC)", size="sm", elem_id="export")
    ui.conversations = gr.Dropdown(label="Your conversations (kept in this browser)", choices=[],
                                   elem_id="conversations", interactive=True)
    ui.export_file = gr.File(label="Exported conversation", visible=False, elem_id="export-file")
    return ui


def _rewrite_panel(services: S.Services) -> SimpleNamespace:
    ui = SimpleNamespace()
    ui.correction = gr.Textbox(
        label="Correct the rewrite (ask a question first)",
        info="Click a turn's question in the chat, or Tab to it and press Enter, to pick it (default: the "
        "last). Edit the self-contained question and re-run the turn with it; your correction becomes the "
        "reference the metrics compare with (a replayed turn keeps its file's human rewrite).",
        lines=2, elem_id="correction",
    )
    ui.rerun = gr.Button("Re-run with this rewrite", elem_id="rerun")
    with gr.Row():
        ui.up = gr.Button("👍 Rewrite correct", size="sm", elem_id="thumbs-up")
        ui.down = gr.Button("👎 Rewrite wrong", size="sm", elem_id="thumbs-down")
    # The file's name only: its folder on the server is no visitor's business.
    gr.Markdown(f"Judgements are appended to the server's `{services.labels.path.name}` for `python -m eval.rewrites validate`.")
    return ui


def _replay_panel() -> SimpleNamespace:
    ui = SimpleNamespace()
    gr.Markdown(
        "Replay a conversation from a **QReCC, CANARD or CAsT** file: its questions are asked "
        "turn by turn (rewritten with the file's own history) and the human rewrite is shown "
        "beside ours, scored live."
    )
    ui.file = upload_field(label="Conversations file (.json)", file_types=[".json"], elem_id="replay-file")
    ui.path = gr.Textbox(label="…or its path in the server's data folder", placeholder="qrecc/qrecc_test_sample.json",
                         elem_id="replay-path")
    ui.load = gr.Button("Load", elem_id="replay-load")
    ui.pick = gr.Dropdown(label="Conversation", choices=[], elem_id="replay-pick", allow_custom_value=False)
    with gr.Row():
        ui.start = gr.Button("Start", elem_id="replay-start")
        ui.next = gr.Button("▶ Next turn", elem_id="replay-next")
        ui.all = gr.Button("⏩ Play all", elem_id="replay-all")
    # Load's outcome here as well as under the chat: on a narrow screen the
    # chat's status line is far above this tab.
    ui.status = gr.Markdown("", elem_id="replay-status")
    return ui


def _documents_panel(services: S.Services) -> SimpleNamespace:
    ui, limits = SimpleNamespace(), services.limits
    gr.Markdown(
        f"**Upload** .txt, .md, .html, .pdf files or a JSONL collection (`id`, `contents`, "
        f"optional `title`, `url`); up to {limits.max_files} files, {limits.max_file_mb:g} MB each, "
        f"{limits.max_total_mb:g} MB in all. They are indexed for this session only."
    )
    ui.uploads = upload_field(label="Documents", file_count="multiple",
                              file_types=[".txt", ".md", ".html", ".htm", ".pdf", ".jsonl"], elem_id="uploads")
    ui.index = gr.Button("Index and answer from these", elem_id="index-uploads")
    gr.Markdown("**One document** (a conversation about one text, as in CoQA): upload a file, paste "
                "text, or name an article of the collection.")
    ui.doc_file = upload_field(label="Document", file_types=[".txt", ".md", ".html", ".htm", ".pdf"], elem_id="doc-file")
    ui.doc_text = gr.Textbox(label="…or paste its text", lines=4, elem_id="doc-text")
    ui.doc_title = gr.Textbox(label="…or an article title", placeholder="Ada Lovelace", elem_id="doc-title")
    ui.use_document = gr.Button("Converse about this document", elem_id="use-document")
    ui.use_default = gr.Button("Back to the default collection", size="sm", elem_id="use-default")
    ui.status = gr.Markdown("", elem_id="docs-status")
    return ui


def _choice_panel() -> SimpleNamespace:
    ui = SimpleNamespace()
    gr.Markdown("Ask a multiple-choice question about a long document (QuALITY's setting). Leave the "
                "document empty to use the one chosen under *Your documents*.")
    ui.document = gr.Textbox(label="Document", lines=5, elem_id="mc-doc")
    ui.question = gr.Textbox(label="Question", elem_id="mc-question")
    ui.options = [gr.Textbox(label=f"({letter})", elem_id=f"mc-{letter.lower()}") for letter in "ABCD"]
    ui.choose = gr.Button("Choose", variant="primary", elem_id="mc-choose")
    ui.result = gr.HTML(elem_id="mc-result")
    return ui


def _metrics_panel(services: S.Services) -> SimpleNamespace:
    ui, metrics = SimpleNamespace(), services.metrics
    with gr.Accordion("📈 Live rewrite quality", open=True, elem_id="metrics-panel"):
        gr.Markdown("For turns with a reference rewrite (replayed, or your correction): ROUGE-1 recall, USE "
                    "similarity and R@10 of the system's rewrite against it.")
        # Named: a screen reader said "Dataframe".
        ui.table = gr.Dataframe(headers=["turn", *metrics], datatype=["str"] * (1 + len(metrics)),
                                label="Rewrite quality by turn", show_label=False, interactive=False,
                                elem_id="metrics-table", wrap=True)
        ui.plot = gr.Plot(_plot(S.Session(), metrics), show_label=False, elem_id="metrics-plot")
    return ui


def _api_panel() -> SimpleNamespace:
    # Hidden: the API (gradio_client) reaches the session through these.
    # Labelled: the API page named them by their ids ("parameter_75 Textbox").
    return SimpleNamespace(question=gr.Textbox(label="Question", visible=False),
                           result=gr.JSON(label="Reply (JSON)", visible=False),
                           history=gr.JSON(label="History: question and answer texts alternating, oldest first",
                                           visible=False),
                           chat=gr.Button(visible=False),
                           new=gr.Button(visible=False), rewrite=gr.Button(visible=False))


def _heading(text: str) -> None:
    # Heard, not seen: the page had no heading below its title for a screen
    # reader to jump between its two halves by.
    gr.Markdown(f"## {text}", elem_classes="cqa-sr-only")


def _layout(services: S.Services) -> SimpleNamespace:
    gr.Markdown(
        "# Conversational question answering\n"
        "Each question is first **rewritten** into a self-contained one (🔁, click to expand), "
        "then answered from the sources shown with it. Rate a rewrite with 👍/👎 or correct it.",
        elem_id="cqa-header",
    )
    with gr.Row(equal_height=False):
        with gr.Column(scale=3, min_width=420):
            _heading("Conversation")
            chat = _chat_panel(services)
        with gr.Column(scale=2, min_width=340):
            _heading("Rewrite, replay, documents and multiple choice")
            # On a phone the tabs that did not fit hid behind an unlabelled "…":
            # they go on a second row instead.
            with gr.Tabs(overflow_behavior="wrap"):
                with gr.Tab("Rewrite", id="rewrite"):
                    rewrite = _rewrite_panel(services)
                with gr.Tab("Replay", id="replay"):
                    replay = _replay_panel()
                with gr.Tab("Your documents", id="documents"):
                    documents = _documents_panel(services)
                with gr.Tab("Multiple choice", id="choice"):
                    choice = _choice_panel()
            metrics = _metrics_panel(services)
    return SimpleNamespace(chat=chat, rewrite=rewrite, replay=replay, documents=documents, choice=choice,
                           metrics=metrics, api=_api_panel())


# ---------------------------------------------------------------- wiring


def _wire(ui: SimpleNamespace, act: Actions, session: gr.State, store: gr.BrowserState):
    """Connect every control to its action; returns the outputs of a turn
    event and what follows an event that shows another conversation
    (``shown(event)``: its source line, and its source read again)."""
    chat, rewrite, replay, docs, choice, api = ui.chat, ui.rewrite, ui.replay, ui.documents, ui.choice, ui.api
    turn_outputs = [chat.chatbot, chat.status, ui.metrics.table, ui.metrics.plot, rewrite.correction, session,
                    chat.conversations, store]
    # A turn's progress (its place in the queue, then a spinner) is shown on the
    # chat alone: on every output it covered the metrics, the correction box and
    # the conversations list with a spinner and a timer each, hiding them
    # for the whole turn though none was being worked on.
    turn = {"concurrency_limit": TURN_CONCURRENCY, "concurrency_id": "turn", "api_visibility": "private",
            "show_progress_on": [chat.chatbot]}
    light = {"concurrency_limit": None, "api_visibility": "private"}
    # A sent question is put in line in the session at once (queue=False:
    # in the order sent) and the box emptied, so that a question typed while
    # a turn streams is never wiped; a refused one stays in the box. The run
    # that asks them asks every question waiting, so one run a tab is enough:
    # Gradio's default ("once") would drop a run triggered while one is
    # pending, and with it a question sent during a turn; "always_last" runs
    # it once more after the pending one, for a question put in line just as
    # that one found none left. One listener for Enter and the button, so
    # that both share that one run.
    running = [
        gr.on([chat.question.submit, chat.ask.click], act.take, [chat.question, session],
              [chat.question, chat.status, session], queue=False, trigger_mode="multiple", api_visibility="private")
        .then(act.ask, [session, store], turn_outputs, trigger_mode="always_last", **turn)
    ]
    running.append(rewrite.rerun.click(act.rerun, [rewrite.correction, session, store], turn_outputs, **turn))
    shown_source = [chat.source, chat.source_timer, chat.examples.dataset]
    # Each conversation is answered from its own source: the page shows which.
    # No progress shown on the source line: pending, its block scrolls, and
    # Chromium made it a tab stop between the skip link and the question box.
    # A source read again from its files (minutes for uploads indexed again)
    # is read by a queued event after the pick or the page's load, with its progress.

    def shown(event):
        return event.then(act.shown_source, [session], shown_source, show_progress="hidden", **light).then(
            act.take_again, [session, store], turn_outputs, **turn).then(
            act.shown_source, [session], shown_source, show_progress="hidden", **light)

    shown(chat.conversations.input(act.switch, [chat.conversations, session, store], turn_outputs, **light))
    chat.chatbot.like(act.like, [session, store], turn_outputs, **light)
    chat.chatbot.select(act.select, [session], [rewrite.correction, chat.status, session], **light)
    rewrite.up.click(functools.partial(act.thumb, 1), [session, store], turn_outputs, **light)
    rewrite.down.click(functools.partial(act.thumb, 0), [session, store], turn_outputs, **light)
    chat.undo.click(act.undo, [session, store], turn_outputs, **light)
    chat.new.click(act.start_over, [session, store], turn_outputs, **light)
    chat.chatbot.clear(act.start_over, [session, store], turn_outputs, **light)
    chat.export.click(act.export, [session], [chat.export_file, chat.status], **light)
    replay.load.click(act.replay_load, [replay.file, replay.path, session], [replay.pick, chat.status, replay.status, session],
                      **light)
    played = [replay.start.click(act.replay_start, [replay.pick, session, store], turn_outputs, **light),
              replay.next.click(act.replay_next, [session, store], turn_outputs, **turn),
              replay.all.click(act.replay_all, [session, store], turn_outputs, **turn)]
    running += played[1:]
    # Start's, Next's and Play all's outcome (a refusal too) under the buttons
    # as well: on a phone the chat's status line is a screen above them, and
    # pressing Start with nothing loaded showed nothing.
    # Copied in the browser: a trip to the server to hand the status back was
    # a queued event for each press.
    for event in played:
        event.then(None, chat.status, replay.status, js="(status) => status", api_visibility="private")
    source_outputs = [docs.status, chat.source, chat.source_timer, session, chat.examples.dataset]
    # Another source starts a new conversation when one is under way: the
    # chat and the conversations list are drawn again after each.
    # Reading a document shows its progress where its outcome is said, not on the chat nor the source line.
    reading = {**turn, "show_progress_on": [docs.status]}
    uploading = docs.index.click(act.upload, [docs.uploads, session], source_outputs, **reading)
    running.append(uploading)
    for chosen in (uploading,
                   # Enter in the title box does what the button does.
                   gr.on([docs.use_document.click, docs.doc_title.submit], act.document,
                         [docs.doc_file, docs.doc_text, docs.doc_title, session], source_outputs, **reading),
                   docs.use_default.click(act.default, [session], source_outputs, **light)):
        chosen.then(act.refresh, [session, store], turn_outputs, **light)
    chat.source_timer.tick(act.source_tick, [session], [chat.source, chat.source_timer], **light)
    choice.choose.click(act.choice, [choice.document, choice.question, *choice.options, session],
                        [choice.result, session], **{**turn, "show_progress_on": [choice.result]})
    # The API: one JSON object per turn, the session kept per client.
    # Described: the API page showed these endpoints with no word on what they do or return.
    api.chat.click(act.api_chat, [api.question, session], [api.result, session], api_name="chat",
                   concurrency_limit=TURN_CONCURRENCY, concurrency_id="turn", api_description=API_CHAT)
    api.new.click(act.api_new, [session], [api.result, session], api_name="new", concurrency_limit=None,
                  api_description=API_NEW)
    # No session: a rewrite of the given question and history, batched with the chat's.
    api.rewrite.click(act.api_rewrite, [api.question, api.history], [api.result], api_name="rewrite",
                      concurrency_limit=TURN_CONCURRENCY, concurrency_id="turn", api_description=API_REWRITE)
    # Stop ends a running turn (or replay, or indexing); the finished turns stay.
    # The asking run is stopped by the session (S.stop_turns: its turn is not
    # added, and its stream ends with Stop's views), not cancelled by the
    # browser: Gradio's cancel of a run blocked in a model call returns only
    # when the call does, and a question sent meanwhile had its run deferred
    # behind the cancelled one, which the page then never ran, so the
    # question was never asked. Not cancelled, that run ends by itself and
    # asks a question sent after Stop (or Gradio runs the deferred one).
    # Not queued (queue=False, as the question's take): in the queue, Stop
    # waited behind every other network's events while its own turn ran
    # (the queue runs first the networks that run the fewest), and a
    # network at its fair share of a nearly full line could not queue it.
    # A direct call runs at once, within the client's and network's share
    # of direct calls.
    chat.stop.click(act.stopped, [session, store], turn_outputs, cancels=running[1:], queue=False,
                    api_visibility="private")
    return turn_outputs, shown


def build_app(services: S.Services, *, export_dir: str | None = None, secret: str | None = None,
              actions: Actions | None = None) -> gr.Blocks:
    """The Blocks for ``services`` (loaded once, shared by all sessions).

    ``secret`` encrypts the conversations the browser keeps; it must outlive
    the server for them to survive a restart (None: a new one, for tests).
    ``actions``: the event handlers (None: made here); the server passes its
    own, whose turns a SIGTERM waits for (``S.drain``).
    """
    if services.scorer is None:  # the app always shows the live metrics
        services.scorer, services.metrics = live_metrics(), LiveMetrics.names
    act = actions or Actions(services, export_dir)
    with gr.Blocks(title="Conversational QA · question rewriting", fill_width=False, delete_cache=server.UPLOAD_CACHE) as demo:
        session = gr.State(S.Session(), delete_callback=lambda s: s.close() if s is not None else None)
        store = gr.BrowserState(None, storage_key=STORAGE_KEY, secret=secret)
        turn_outputs, shown = _wire(_layout(services), act, session, store)
        other_copy = gr.Textbox(visible="hidden", elem_id=OTHER_COPY_ID, container=False)
        # The latest copy is all that counts (each holds everything its tab has).
        other_copy.change(functools.partial(act.other_tab_saved, secret=store.secret), [other_copy, session, store],
                          turn_outputs, concurrency_limit=None, api_visibility="private", trigger_mode="always_last")
        # The conversation shown is answered from its own source again: the source line says which.
        shown(demo.load(act.restore, [store, session], turn_outputs, concurrency_limit=None, api_visibility="private"))
    demo.queue(default_concurrency_limit=TURN_CONCURRENCY, max_size=QUEUE_SIZE)
    # A closed connection stops its page's turns (and an API request's work)
    # as Stop (a cancel) does, and drops the page's events waiting: Gradio
    # let them run on to no one. Before left: see stop_when_gone.
    server.stop_when_gone(demo, act.gone)
    demo.unload(act.left)
    return demo


def serve(demo: gr.Blocks, host: str = "127.0.0.1", port: int = 7860, *,
          limits: S.UploadLimits = S.UploadLimits(), **launch):  # noqa: B008 (frozen)
    """Launch ``demo`` with the app's look on the app's server
    (:func:`server.launch`: ``limits``, each client's shares, the
    upkeep); tests pass prevent_thread_lock=True."""
    css = CSS_FILE.read_text(encoding="utf-8")
    return server.launch(demo, host, port, limits=limits, css=css, js=page_js(), theme=theme(), show_error=False,
                             **launch)


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="python app.py", description="Serve the conversational QA demo.")
    # Text, checked by server_port in _main (with PORT and GRADIO_SERVER_PORT), so --help works whatever they say.
    parser.add_argument("--port", help="port (env PORT or GRADIO_SERVER_PORT; 7860)")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
                        help="interface to listen on (env GRADIO_SERVER_NAME; 127.0.0.1, use 0.0.0.0 to share)")
    # None: not given, so build_assistant takes CONVQA_* or the default.
    parser.add_argument("--index", help="Lucene index folder (env CONVQA_INDEX_DIR)")
    parser.add_argument("--rewriter", help="trained | prompted | original | model path (env CONVQA_REWRITER)")
    parser.add_argument("--reader", choices=READER_NAMES, help="answer reader (env CONVQA_READER)")
    return parser


def _main(argv: list[str] | None) -> int:
    from assistant.pipeline import build_assistant
    from assistant.retrieval import use_serving_java

    args = _parser().parse_args(argv)
    port = server_port(args.port)  # before anything loads
    server.check_gradio()  # a Gradio other than the tested one, before minutes of loading models
    check_can_listen(args.host, port)
    # The operator's fair shares of the crowd (CONVQA_FAIR_*), checked before anything loads.
    limits = S.UploadLimits(fair=from_env(FairShareConfig()))
    use_serving_java()  # before the default index is built or searched
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # gradio polls itself at start
    # background: a first start answers at once while the passages are encoded.
    assistant = build_assistant(rewriter=args.rewriter, reader=args.reader, index_dir=args.index, batching=True,
                                background=True)
    S.remove_stale_sessions()
    metrics = live_metrics()
    # Multiple choice encodes through the reader's batched MiniLM when it has one.
    services = S.Services(assistant, S.LabelStore(), scorer=metrics, metrics=metrics.names,
                          choice_encoder=getattr(assistant.reader, "encoder", None), limits=limits)
    # USE (for the live metrics) loads in the background instead of on the first scored turn.
    threading.Thread(target=metrics.load, name="load-use", daemon=True).start()
    # The exports' folder goes with the server (each start made one that
    # stayed in the temporary folder for good); a kill -9 leaves it to the OS.
    with server.export_folder() as exports:
        act = Actions(services, exports)
        # Gradio's launch() closes the server on the KeyboardInterrupt it raises.
        with sigterm_as_ctrl_c(lambda: S.drain(act, DRAIN_S)):
            serve(build_app(services, secret=S.browser_secret(), actions=act), args.host, port, limits=services.limits)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Serve the app; a bad setting or a missing index is one ``error:`` line, exit 2."""
    return run_cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
