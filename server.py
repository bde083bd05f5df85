"""The Gradio server the app is served on (``app.py`` wires the UI it serves).

What Gradio's ``launch`` gets beyond the Blocks: its store of sessions'
state, where one client holds a bounded share (:class:`ClientStore`), its
queue's choice of the next event to run, where one client runs a bounded
share (``S.RunningShare``), the session layer's request middleware
(``S.QueueShare``, ``S.BodyLimit``), the upkeep threads while it serves,
the folder of the exports, and the stop of a gone client's events
(:func:`stop_when_gone`). :func:`check_gradio` refuses to start on a
Gradio without the internals these rely on. The rules
(limits, shares, the upkeep itself) are the session layer's, which imports
no gradio; this module fits them into Gradio.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime
import functools
import inspect
import logging
import random
import tempfile
import weakref
from pathlib import Path
from typing import Callable

import gradio as gr
from gradio import queueing, server_messages
from gradio import utils as gradio_utils
from gradio.state_holder import StateHolder

from assistant import session as S
from assistant.kernel import DependencyError

__all__ = ["FREE_MEMORY_S", "STATE_SESSIONS", "TESTED_GRADIO", "UPLOAD_CACHE", "ClientStore", "check_gradio",
           "export_folder", "launch", "stop_when_gone"]

log = logging.getLogger("convqa.serving")

# The Gradio whose internals ClientStore and _share_running are fitted to
# (its store of sessions, its queue's lines and workers): requirements.txt
# pins it, and a test keeps the two equal.
TESTED_GRADIO = "6.31.0"

# Sessions whose state Gradio keeps in memory; the oldest go first. Closed
# tabs' states are deleted by Gradio itself (and then their uploads). One
# client holds S.UploadLimits.client_sessions of them (ClientStore).
STATE_SESSIONS = 1000
# Gradio's copies of uploads: every hour, those older than a day are deleted,
# and all of them when the server stops (Ctrl-C or SIGTERM; not a kill -9).
UPLOAD_CACHE = (3600, 86400)
# Said for each event of a page whose heartbeat's connection closed (the
# page closed or reloaded, a script's client gave up on it) but whose event
# stream still reads: stop_when_gone dropped them.
PAGE_GONE = ("This page's connection to the server closed, and what it had asked (waiting or under way) was "
             "dropped: reload the page (or reconnect) and ask again.")
# Seconds an id put back for a gone page's event (its PAGE_GONE end waiting
# for a stream) is kept for a stream that never opens: an open one delivers
# it at once, and Gradio forgets no session's ids of its own.
PAGE_GONE_KEPT_S = 60.0
# Seconds between two hand-backs of the memory the allocator keeps free
# (S.release_free_memory): rare enough to cost nothing, often enough that a
# crowd's dropped sessions do not pile up for long.
FREE_MEMORY_S = 600.0


def export_folder() -> tempfile.TemporaryDirectory:
    """The server's folder of exports, inside Gradio's upload folder, where
    Gradio serves a file as it is: it copied a file from elsewhere into that
    folder, and the copy of each session's export stayed there for a day
    after the session had deleted its own. The folder goes with the server."""
    uploads = Path(gr.utils.get_upload_folder())
    uploads.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix="convqa-export-", dir=uploads, ignore_cleanup_errors=True)


def _forget_deleted_files_hourly(demo: gr.Blocks) -> None:
    """Run ``S.forget_deleted_files`` every ``UPLOAD_CACHE[0]`` seconds
    while ``demo`` serves, half a period apart from Gradio's own deletion,
    which walks the same records."""
    S.while_serving(demo, "forget-deleted-files", lambda: S.forget_deleted_files(demo), UPLOAD_CACHE[0], UPLOAD_CACHE[0] / 2)


def _release_free_memory_periodically(demo: gr.Blocks, every_s: float = FREE_MEMORY_S) -> None:
    """Run ``S.release_free_memory`` every ``every_s`` seconds while ``demo``
    serves (not again where it cannot: no glibc)."""
    S.while_serving(demo, "release-free-memory", S.release_free_memory, every_s, every_s)


class ClientStore(StateHolder):
    """Gradio's store of sessions' state (at most ``STATE_SESSIONS``, the
    least recently used dropped first) in which one client holds at most
    ``limit`` sessions (``S.UploadLimits.client_sessions``), and the clients
    of one network (``S.client_network``) ``network_limit`` together: past
    it, the client's (the network's) own least recently used session makes
    room, never another visitor's (another network's). A session's client
    is that of the request that brought its hash first
    (``S.request_client``); the server's own host or network (None) is not
    counted. Gradio made a session for any new hash, so one script calling
    with a new hash each time pushed every visitor's session out. When the
    store is full, the least recently used session of the network holding
    the most goes, if it has been idle ``crowded_idle_s`` seconds
    (``S.UploadLimits.crowded_idle_s``); else the store's least recently
    used, as Gradio drops it."""

    def __init__(self, limit: int, shares: S.ClientShares | None = None, refusals: S.RefusalLog | None = None,
                 network_limit: int = S.UploadLimits().network_sessions,
                 crowded_idle_s: float = S.UploadLimits().crowded_idle_s):
        super().__init__()
        self.limit, self.network_limit, self.crowded_idle_s = limit, network_limit, crowded_idle_s
        self.shares = shares if shares is not None else S.ClientShares()
        self.networks = S.ClientShares()
        self.refusals = refusals if refusals is not None else S.RefusalLog()
        # Each session's shares of its client's and its network's, given back
        # when a next session replaces it, or when Gradio drops it and they are collected.
        self._held: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __getitem__(self, session_id: str):
        if session_id in self.session_data:
            return super().__getitem__(session_id)
        client = S.request_client()
        held = (self._take(self.shares, client, self.limit, "it holds", "one visitor"),
                self._take(self.networks, S.client_network(client), self.network_limit, "its visitors hold",
                           "one network"))
        state = super().__getitem__(session_id)
        self._held[state] = held
        return state

    def _take(self, shares: S.ClientShares, key: str | None, limit: int, *said: str):
        share = shares.take(key, 1, limit)
        if share is None:
            self._drop_oldest(key, limit, *said)
            # None still where the count holds sessions Gradio dropped but
            # not yet collected: this one is then not counted.
            share = shares.take(key, 1, limit)
        return share

    def update(self, session_id: str):
        # Past the store's capacity Gradio drops its least recently used
        # session, whoever's: a crowd spread over many networks, each within
        # its share, pushed a quiet visitor's session out.
        if len(self.session_data) > self.capacity:
            self._drop_crowded(session_id)
        super().update(session_id)

    def _network(self, state) -> str | None:
        held = self._held.get(state, ())
        return getattr(held[1], "client", None) if len(held) > 1 else None

    def _drop_crowded(self, newest: str) -> None:
        """Drop the least recently used session of the network holding the
        most sessions (of networks tied, the one whose session is the least
        recently used), if idle ``crowded_idle_s``: a network's active
        sessions (two people behind one office's /24) stay, and Gradio's own
        rule, the store's least recently used, makes room instead."""
        now = datetime.datetime.now()
        with self.lock:
            networks = {session: self._network(state) for session, state in self.session_data.items()}
            if newest in networks and self.session_data[newest] not in self._held:
                # Being opened (__getitem__ keeps its shares once it is in): the request's network.
                networks[newest] = S.client_network(S.request_client())
            counts = collections.Counter(network for network in networks.values() if network is not None)
            if not counts:
                return
            most = max(counts.values())
            # session_data is in order of use, the least recently used first;
            # the session being opened counts for its network but stays.
            oldest = next((session for session, network in networks.items()
                           if counts.get(network) == most and session != newest), None)
            if oldest is None:
                return
            last = self.time_last_used.get(oldest)
            if last is None or (now - last).total_seconds() < self.crowded_idle_s:
                return
            crowded = networks[oldest]
        if self._drop_session(oldest):
            self.refusals.refused("a new session (its oldest dropped, the store full)", crowded,
                                  f"its visitors hold {most} sessions, the most of any network, and the "
                                  f"server's store is full ({self.capacity})")

    def _drop_oldest(self, key: str, limit: int, holds: str, whose: str) -> None:
        if self._drop(key):
            self.refusals.refused("a new session (its oldest dropped)", key,
                                  f"{holds} {limit} sessions in the server's store, the most {whose} may")

    def _drop(self, key: str) -> bool:
        """Drop the least recently used session of ``key`` (a client or a
        network), giving its shares back; whether there was one."""
        with self.lock:
            oldest = next((session for session, state in self.session_data.items()
                           if any(getattr(share, "client", None) == key for share in self._held.get(state, ()))),
                          None)
        return oldest is not None and self._drop_session(oldest)

    def _drop_session(self, session_id: str) -> bool:
        """Drop ``session_id``, giving its shares back; whether it was still there."""
        with self.lock:
            state = self.session_data.pop(session_id, None)
            if state is None:
                return False
            self.time_last_used.pop(session_id, None)
        for share in self._held.pop(state, ()):
            if share is not None:
                share.give_back()
        return True


class _Clients:
    """Each of Gradio's queued events' client (``S.client_of`` its request),
    read once and kept on the event: the queue asks for every waiting and
    running event's each time it looks for one to run (every millisecond
    while a client's wait past its share)."""

    def __call__(self, event) -> str | None:
        try:
            return event.convqa_client
        except AttributeError:
            event.convqa_client = S.client_of(event.request.scope)
            return event.convqa_client


def _waiting(demo: gr.Blocks, clients: _Clients, *who: str) -> list[int]:
    """The events waiting in ``demo``'s queue of each of ``who`` (a client,
    or a network's clients), counted in one pass: a post to the queue asks
    for its client's and its network's."""
    counts = dict.fromkeys(who, 0)
    lines = list(demo._queue.event_queue_per_concurrency_id.values())  # list(): copies taken at once
    for line in lines:
        for client in map(clients, list(line.queue)):
            for key in (client, S.client_network(client)):
                if key in counts:
                    counts[key] += 1
    return [counts[key] for key in who]


def _crowd(demo: gr.Blocks, clients: _Clients) -> tuple[int, int]:
    """The events waiting in ``demo``'s queue, and the networks
    (``S.client_network``; a client that is no address, its own) with
    some waiting; the server's own (None) is not counted among them."""
    total, networks = 0, set()
    for line in list(demo._queue.event_queue_per_concurrency_id.values()):
        events = list(line.queue)
        total += len(events)
        networks.update(S.client_network(client) or client for client in map(clients, events))
    networks.discard(None)
    return total, len(networks)


def _share_running(queue, clients: _Clients, share: S.RunningShare) -> None:
    """Gradio's ``queue`` takes its next events to run by ``share``
    (``S.RunningShare.pick``, over every line at once: a line of its own
    for each function, and a quiet network's event in one line waited
    while another line's crowd ran). This replaces ``Queue.get_events`` and
    keeps its rule otherwise: a line at its concurrency limit passed over,
    a batched function's events taken together (the first by ``share``;
    the app batches none)."""

    def get_events():
        ready = [(concurrency_id, line) for concurrency_id, line in queue.event_queue_per_concurrency_id.items()
                 if line.queue and (line.concurrency_limit is None
                                    or line.current_concurrency < line.concurrency_limit)]
        if not ready:
            return None
        # Lines in random order, as Gradio takes them: among equally fair events none is always first.
        random.shuffle(ready)
        room = share.room(collections.Counter(clients(event) for job in queue.active_jobs if job is not None
                                              for event in job))
        picked = share.pick([line.queue for _, line in ready], clients, room)
        if picked is None:
            return None
        position, first = picked
        concurrency_id, line = ready[position]
        events = [first]
        if first.fn.batch:
            events += [event for event in line.queue
                       if event is not first and event.fn == first.fn][:first.fn.max_batch_size - 1]
        for event in events:
            line.queue.remove(event)
        return events, first.fn.batch, concurrency_id

    queue.get_events = get_events


def stop_when_gone(demo: gr.Blocks, gone: Callable[[str], None], *, kept_s: float = PAGE_GONE_KEPT_S) -> None:
    """When the event stream of a client closes before its events ended
    (its tab closed, its script killed, its network dropped), or its page's
    heartbeat does (the page closed or reloaded: Gradio's ``unload``), call
    ``gone(session_hash)`` (the app stops that session's turns, as its Stop
    does), drop its events waiting in the queue and cancel the task of each
    of its events running, as Gradio's ``/cancel``
    does (an async handler's cancel sets its work's stop:
    ``stopped_when_cancelled``). Gradio itself only marks them dead
    (``Queue.clean_events``, called on that stream's close alone): their
    results went nowhere, but each ran to its end, holding its worker while
    a crowd waited; at a heartbeat's close it left the page's events waiting
    in line, each to run later for no one. At a heartbeat's close the page's
    event stream may still read (a client whose heartbeat alone dropped):
    each event dropped or cancelled is told it ended (:data:`PAGE_GONE`).
    A batched function's task, shared with other clients' events, is left
    to run. Called on ``demo`` queued, before the app's own unload
    listeners: Gradio calls those in the order they were added, and one that
    ends some of the page's work first (its uploads' encoding) could free a
    worker for an event of the page still waiting. An end put in line for a
    stream that never reads it is forgotten at that stream's close, or
    ``kept_s`` seconds on."""
    queue = demo._queue
    clean = queue.clean_events
    send = queue.send_message
    # The events already told they ended: one whose handler raised is, and
    # stays alive (and in active_jobs) while Gradio then awaits its analytics.
    ended: weakref.WeakSet = weakref.WeakSet()
    # Per session, the ids drop_page put back, till a stream delivers them.
    put_back: dict[str, set[str]] = {}

    def send_message(event, event_message) -> None:
        if event.alive and isinstance(event_message, server_messages.ProcessCompletedMessage):
            ended.add(event)
            unread = queue.pending_event_ids_session
            if len(unread) > 2 * queue.pending_messages_per_session.max_size:
                # A session whose stream never opened (a script that joins and
                # never reads) kept its events' ids in Gradio's plain dict for
                # good; its messages are in an LRU cache of max_size sessions,
                # and once they are pushed out no stream can deliver them (its
                # /queue/data is a 404). Checked past twice the cap, so that
                # the look over every session is rare.
                for session_hash in [hashed for hashed in unread if hashed not in queue.pending_messages_per_session]:
                    del unread[session_hash]
        send(event, event_message)

    queue.send_message = send_message

    def discard(session_hash: str, ids: set[str], books: tuple[dict[str, set[str]], ...]) -> None:
        # Gradio's pending_event_ids_session is a plain dict: a session's
        # ids no stream delivers stayed there for the server's life.
        for held in books:
            if session_hash in held:
                held[session_hash] -= ids
                if not held[session_hash]:
                    del held[session_hash]

    def forget(session_hash: str, ids: set[str]) -> None:
        discard(session_hash, ids & put_back.get(session_hash, set()), (put_back, queue.pending_event_ids_session))

    async def clean_events(*, session_hash: str | None = None, event_id: str | None = None) -> None:
        # Before the first await: on a cancelled stream, the await after
        # it may be cancelled in turn, and Gradio's own cleanup with it.
        running = [event for job in list(queue.active_jobs) if job for event in job
                   if event.alive and (event.session_hash == session_hash or event._id == event_id)]
        try:
            # The stream's own session too: its questions waiting, put in line
            # in it by a direct call, were asked by a queued event just dropped.
            for hashed in dict.fromkeys([session_hash, *(event.session_hash for event in running)]):
                if hashed is not None:
                    gone(hashed)
        finally:
            names = {_task_name_end(event._id) for event in running if not event.fn.batch}
            loop = asyncio.get_running_loop()
            for task in list(queue._asyncio_tasks):
                if any(task.get_name().endswith(name) for name in names):
                    # Cancelled after the loop's next pass, not now: a task made
                    # in this pass but not yet begun, cancelled, would never run
                    # process_events, whose finally gives back its worker slot
                    # (active_jobs, current_concurrency): lost till a restart.
                    # Its first step, already scheduled, runs first (the loop
                    # runs callbacks in order) and enters that try at once (no
                    # await before it), so the cancel lands inside it; it sees
                    # its events dead (cleaned below) and ends there.
                    loop.call_soon(task.cancel)
            await clean(session_hash=session_hash, event_id=event_id)

    async def stream_closed(*, session_hash: str | None = None, event_id: str | None = None) -> None:
        # Gradio calls it at a stream's close: the ends drop_page put in line
        # for that session go unread (a tab whose heartbeat closed first).
        # So do the ends of the session's events running now: Gradio's
        # cleanup marks them dead (a dead event is sent nothing) and forgets
        # the ids of those waiting in line alone, so each running one's id
        # (a page's turn under way as its tab closed) stayed for good.
        # Not those already told they ended: their ends are in the session's
        # messages, which Gradio keeps at a stream's disconnect (and drops
        # only at its cancel), for a stream of the session opened next to
        # read, and remove the id as it does (a missing session there is
        # that stream's KeyError).
        running: dict[str, set[str]] = {}
        for job in list(queue.active_jobs):
            for event in job or ():
                if event.alive and event not in ended and (event.session_hash == session_hash or event._id == event_id):
                    running.setdefault(event.session_hash, set()).add(event._id)
        try:
            await clean_events(session_hash=session_hash, event_id=event_id)
        finally:
            if session_hash is not None:
                forget(session_hash, set(put_back.get(session_hash, ())))
                if session_hash not in queue.pending_messages_per_session:
                    # Its messages dropped (a cancelled stream): no stream
                    # delivers any of its ids, ended events' included.
                    queue.pending_event_ids_session.pop(session_hash, None)
                    put_back.pop(session_hash, None)
            for hashed, ids in running.items():
                discard(hashed, ids, (queue.pending_event_ids_session,))

    queue.clean_events = stream_closed

    async def drop_page(session_hash: str) -> None:
        # Its heartbeat closed: the page's event stream may still be open
        # (Gradio's page keeps it while it has events pending; a client whose
        # heartbeat alone dropped reads it on), or never was. An event still
        # joining (Queue.push awaits between making it and putting it in
        # line) can land after this drop, and runs.
        owed = [event._id for line in queue.event_queue_per_concurrency_id.values() for event in line.queue
                if event.session_hash == session_hash]
        # Not one already told it ended (its stream may have closed on it).
        owed += [event._id for job in list(queue.active_jobs) if job for event in job
                 if event.alive and event.session_hash == session_hash and event not in ended]
        try:
            await clean_events(session_hash=session_hash)
        finally:
            # None: its stream closed, and Gradio deleted its messages then.
            messages = queue.pending_messages_per_session.get(session_hash)
            if owed and messages is not None:
                # Each event is told it ended, as /cancel tells its own: Gradio
                # sends a dead event nothing, and a stream still open waited
                # for them forever. The stream forgets each event as it sends
                # its end and closes once none is left; the cleanup forgot the
                # ones dropped from the line (and a page left with none, which
                # the stream's lookup then failed on).
                queue.pending_event_ids_session.setdefault(session_hash, set()).update(owed)
                put_back.setdefault(session_hash, set()).update(owed)
                asyncio.get_running_loop().call_later(kept_s, forget, session_hash, set(owed))
                for event_id in owed:
                    messages.put_nowait(server_messages.ProcessCompletedMessage(
                        output={"error": PAGE_GONE, "visible": True}, success=False, event_id=event_id))

    async def page_gone(request: gr.Request) -> None:
        if request is None or not request.session_hash:
            return
        try:
            await drop_page(request.session_hash)
        except Exception:
            # Raised, Starlette would run none of the unload listeners after
            # this one (the app's own, which lets go of the page's uploads).
            log.exception("the events of the page %s, whose heartbeat closed, were not all dropped",
                          request.session_hash)

    demo.unload(page_gone)


def _task_name_end(event_id: str) -> str:
    """How the name of the task running event ``event_id`` ends (Gradio's
    ``set_task_name``, which /cancel matches too)."""
    return f"<gradio-sep>{event_id}"


def _names_tasks_as_expected() -> bool:
    """Whether Gradio's ``set_task_name`` names an event's task as
    :func:`stop_when_gone` finds it (:func:`_task_name_end`)."""
    class Task:
        name = ""

        def set_name(self, name: str) -> None:
            self.name = name

    task = Task()
    # The queue calls the name it imported, so that one is the one to check.
    set_task_name = getattr(queueing, "set_task_name", gradio_utils.set_task_name)
    try:
        set_task_name(task, "page", 0, "event", False)
    except (AttributeError, TypeError):
        return False
    return task.name.endswith(_task_name_end("event"))


def check_gradio(demo: gr.Blocks | None = None) -> None:
    """Raise :class:`DependencyError` if the installed Gradio lacks one of
    the internals this module fits the per-client shares into (checked on
    ``demo``'s queue, or a throwaway queued Blocks'), naming each and the
    version they were tested with: they are no public API, and a Gradio
    that renamed one would have served with no share at all, or failed on
    a visitor's first event. Logs a warning, once, for another version that has them."""
    missing = []

    def need(owner, what: str, *names: str) -> None:
        missing.extend(f"{what}.{name}" for name in names if not hasattr(owner, name))

    holder = StateHolder()
    need(holder, "StateHolder", "session_data", "time_last_used", "lock", "set_blocks", "update")
    if not isinstance(getattr(holder, "session_data", None), collections.OrderedDict):
        missing.append("StateHolder.session_data as an OrderedDict (least recently used first)")
    demo = demo if demo is not None else gr.Blocks().queue()
    need(demo, "Blocks", "_queue", "app", "state_session_capacity")
    need(getattr(demo, "app", None), "Blocks.app", "state_holder")
    need(getattr(demo, "_queue", None), "Blocks._queue", "event_queue_per_concurrency_id", "active_jobs",
         "get_events", "max_size", "clean_events", "send_message", "_asyncio_tasks", "pending_messages_per_session",
         "pending_event_ids_session")
    # stop_when_gone bounds the ids by the cap of the messages' cache.
    need(getattr(getattr(demo, "_queue", None), "pending_messages_per_session", None),
         "Blocks._queue.pending_messages_per_session", "max_size")
    completed = getattr(server_messages, "ProcessCompletedMessage", None)
    if not {"output", "success", "event_id"} <= set(getattr(completed, "model_fields", ())):
        missing.append("gradio.server_messages.ProcessCompletedMessage(output=..., success=..., event_id=...)")
    need(queueing.EventQueue("check", None), "EventQueue", "queue", "concurrency_limit", "current_concurrency")
    missing.extend(f"Event({name}=...)" for name in ("fn", "request")
                   if name not in inspect.signature(queueing.Event).parameters)
    if "self.get_events()" not in inspect.getsource(queueing.Queue.start_processing):
        missing.append("Queue.start_processing taking its events from self.get_events()")
    if "set_task_name(" not in inspect.getsource(queueing.Queue.start_processing):
        missing.append("Queue.start_processing naming each event's task after its id (set_task_name)")
    elif not _names_tasks_as_expected():
        missing.append(f"gradio.utils.set_task_name(task, session_hash, fn_index, event_id, batch) naming an "
                       f"event's task to end with {_task_name_end('{event_id}')!r}")
    if missing:
        raise DependencyError(
            f"gradio {gr.__version__} lacks what server.py fits each visitor's share of the server into: "
            f"{'; '.join(missing)}. It was tested with gradio {TESTED_GRADIO}: install that version "
            f"(pip install gradio=={TESTED_GRADIO}, as requirements.txt pins it), or fit server.py's ClientStore, "
            f"_share_running and stop_when_gone to this Gradio and set TESTED_GRADIO.")
    if gr.__version__ != TESTED_GRADIO:
        _warn_untested(gr.__version__)


# Once a process: a start checks twice (app.main before the models load, so
# that a Gradio without the internals costs no loading; launch on the Blocks
# it serves, for whoever calls it), and the log said the same thing twice.
@functools.cache
def _warn_untested(version: str) -> None:
    log.warning("gradio %s, not the %s server.py was tested with: the internals it uses are there, but check "
                "the per-client shares and the drop of a gone page's events, which assumes that the unload "
                "listeners run in the order they were added (tests/test_crowd.py), before serving",
                version, TESTED_GRADIO)


def launch(demo: gr.Blocks, host: str = "127.0.0.1", port: int = 7860, *,
           limits: S.UploadLimits = S.UploadLimits(), **settings):  # noqa: B008 (frozen)
    """Launch ``demo`` (``settings``: Gradio's others, the app's look among them).
    Gradio's own upload route refuses files over ``limits.max_file_mb``
    (counted as the upload panel states it) and a client's posts past
    ``limits.client_upload_mb`` or ``client_uploads`` in ``client_window_s``,
    every other route bodies over :func:`assistant.session.request_limit`.
    Each client holds at most ``limits.client_sessions`` of the sessions
    Gradio keeps (:class:`ClientStore`), ``limits.client_queued`` of
    the events waiting in its queue (``S.QueueShare``) and
    ``limits.client_running`` of those it runs (``S.RunningShare``), and
    as many direct calls under way; the clients of one network
    (``S.client_network``) ``limits.network_*`` of each together. Once the
    queue is nearly full, a network holding its fair share of it is refused
    (``limits.fair``), and the queue runs the
    fairest event first (``S.RunningShare.pick``)."""
    from starlette.middleware import Middleware

    check_gradio(demo)
    refusals = S.RefusalLog()
    store = ClientStore(limits.client_sessions, refusals=refusals, network_limit=limits.network_sessions,
                        crowded_idle_s=limits.crowded_idle_s)
    clients = _Clients()
    _share_running(demo._queue, clients, S.RunningShare(limits.client_running, refusals, limits.network_running))

    @contextlib.asynccontextmanager
    async def client_store(gradio_app):
        # At start, before any request: Gradio gives its app a store of its own.
        store.set_blocks(gradio_app.get_blocks())
        gradio_app.state_holder = store
        yield

    # The upload route's disk floor and each client's share are the served limits' (they were the defaults').
    body_limit = Middleware(S.BodyLimit, limit=S.request_limit(limits), min_free=limits.min_free_bytes,
                            quota=S.UploadQuota(limits), refusals=refusals)
    # Outermost: it names each request's client for the store, and refuses before a body is read.
    queue_share = Middleware(S.QueueShare, waiting=functools.partial(_waiting, demo, clients),
                             limit=limits.client_queued, running=limits.client_running, refusals=refusals,
                             network_queued=limits.network_queued, network_running=limits.network_running,
                             crowd=functools.partial(_crowd, demo, clients), capacity=demo._queue.max_size,
                             fair=limits.fair)
    app_kwargs = {"middleware": [queue_share, body_limit], "lifespan": client_store}
    _forget_deleted_files_hourly(demo)
    _release_free_memory_periodically(demo)
    return demo.launch(server_name=host, server_port=port, max_file_size=limits.max_file_bytes,
                       state_session_capacity=STATE_SESSIONS, app_kwargs=app_kwargs, **settings)
