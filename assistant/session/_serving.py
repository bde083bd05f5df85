"""Serving the app to strangers: the most a request may carry."""

from __future__ import annotations

import contextvars
import functools
import ipaddress
import json
import math
import os
import tempfile
import threading
import time
import weakref
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from ..kernel import FairShareConfig, counted
from ._shares import ClientShares, RefusalLog, fair_share
from ._storage import disk_free
from ._store import MAX_RESTORED_CHARS
from ._uploads import MB, UploadLimits

__all__ = ["request_limit", "BodyLimit", "QueueShare", "RunningShare", "UploadQuota", "client_address",
           "client_network", "client_of", "request_client"]

# The client of the request being served (QueueShare names it), for what is
# made in serving it with no request at hand: a session's state in Gradio's
# store (server.py's ClientStore), made when the first event of a new
# session hash arrives.
_REQUEST_CLIENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("convqa_request_client", default=None)


def request_limit(limits: UploadLimits) -> int:
    """The most bytes one request's body may hold: a pasted document (as an
    upload, ``limits.max_file_bytes``) beside the browser's saved copy (up to
    ``MAX_RESTORED_CHARS`` characters, 3 bytes each at most in UTF-8) and a
    little more for the other inputs. Gradio's upload route has its own."""
    return limits.max_file_bytes + 3 * MAX_RESTORED_CHARS + 2**20


def gradio_upload_dir() -> Path:
    """Where Gradio keeps the files uploaded to it (``GRADIO_TEMP_DIR``, else ``<tmp>/gradio``)."""
    return Path(os.environ.get("GRADIO_TEMP_DIR") or Path(tempfile.gettempdir()) / "gradio")


def client_of(scope) -> str | None:
    """Who sent an ASGI request (:func:`client_address` of its peer and its
    X-Forwarded-For header)."""
    peer = (scope.get("client") or ("", 0))[0] or ""
    forwarded = dict(scope.get("headers") or ()).get(b"x-forwarded-for", b"").decode("latin-1")
    return client_address(peer, forwarded)


def request_client() -> str | None:
    """The client (:func:`client_of`) of the request being served through
    :class:`QueueShare`; None outside one (the queue's own work, a test)."""
    return _REQUEST_CLIENT.get()


def client_address(peer: str, forwarded: str = "") -> str | None:
    """The client the per-client bounds count (the upload route's quota, the
    indexes a client's sessions hold), from a request's peer address and its
    X-Forwarded-For header: the peer's address, or, from a proxy on a
    private network (a Space's, a reverse proxy on the same host), the
    address that proxy saw (the last entry of X-Forwarded-For: a client may
    write the ones before it). An IPv6 client is its /64 network, which any
    one host may draw addresses from. None for a private peer that forwards
    no address: the server's own host or network (its owner's scripts, a
    load test), or a proxy that hides its visitors, who would all share one
    quota and be refused together."""
    try:
        address = _unmapped(ipaddress.ip_address(peer or ""))
    except ValueError:
        return peer or None
    if address.is_private or address.is_loopback:
        try:
            address = _unmapped(ipaddress.ip_address((forwarded or "").rsplit(",", 1)[-1].strip()))
        except ValueError:
            return None
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


@functools.lru_cache(maxsize=4096)  # the queue asks for each waiting event's, every time it takes one
def client_network(client: str | None) -> str | None:
    """The network a client (:func:`client_address`) is counted in beside
    itself (``UploadLimits.network_*``): an IPv4 address's /24, an IPv6
    client's /48 (a client is a /64; a site, or a tunnel broker's user for
    free, gets a /48, 65,536 of them). None for None, or a client that is
    no address.

    >>> client_network("93.184.216.34"), client_network("2001:db8:1:2::/64"), client_network(None)
    ('93.184.216.0/24', '2001:db8:1::/48', None)
    """
    try:
        network = ipaddress.ip_network(client or "", strict=False)
    except ValueError:
        return None
    return str(network.supernet(new_prefix=24 if network.version == 4 else 48))


def _unmapped(address):
    """An IPv4 client of a server listening on IPv6 as well (``--host ::``)
    is an IPv4-mapped address (::ffff:a.b.c.d): as IPv6, every IPv4 visitor
    was one /64, sharing one quota and one share of the server."""
    return getattr(address, "ipv4_mapped", None) or address


class UploadQuota:
    """What each client posted to the upload route within the last
    ``limits.client_window_s``: at most ``limits.client_uploads`` requests
    and ``limits.client_upload_mb``; the clients of one network
    (:func:`client_network`) ``limits.network_uploads`` and
    ``limits.network_upload_mb`` together. Clients and networks with
    nothing in the window are forgotten, so a crowd's addresses are not
    kept for good."""

    def __init__(self, limits: UploadLimits = UploadLimits(), clock=time.monotonic):  # noqa: B008 (frozen)
        self.limits, self.clock = limits, clock
        self._posts: dict[str, deque[list]] = {}  # client -> [[time, bytes], ...], oldest first
        self._network_posts: dict[str, deque[list]] = {}  # network -> its clients' posts (the same records)
        self._lock = threading.Lock()
        self._swept = clock()

    def _recent(self, book: dict[str, deque[list]], who: str, now: float) -> deque[list]:
        posts = book.get(who, deque())
        while posts and posts[0][0] <= now - self.limits.client_window_s:
            posts.popleft()
        return posts

    def admit(self, client: str, coming: int) -> tuple[list, None] | tuple[None, tuple[str, int, str]]:
        """(the post's record, None) for a post of ``coming`` bytes (what its
        request declares; :meth:`add` counts what arrives beyond), or (None,
        (why it is refused, seconds until the client may post again, whose
        share is used up: the client's or its network's))."""
        limits, now = self.limits, self.clock()
        network = client_network(client)
        with self._lock:
            if now - self._swept > limits.client_window_s:  # forget the clients and networks that went quiet
                for book in (self._posts, self._network_posts):
                    for other in list(book):
                        if not self._recent(book, other, now):
                            del book[other]
                self._swept = now
            posts = self._recent(self._posts, client, now)
            theirs = self._recent(self._network_posts, network, now) if network is not None else deque()
            for who, held, count, size, mb, whose in (
                    (client, posts, limits.client_uploads, limits.client_upload_bytes, limits.client_upload_mb,
                     ("You have", "one visitor")),
                    (network, theirs, limits.network_uploads, limits.network_upload_bytes, limits.network_upload_mb,
                     (f"Visitors of your network ({network}) have", "one network"))):
                used = sum(size for _, size in held)
                if len(held) >= count or (held and used + coming > size):
                    seconds = max(1, math.ceil(held[0][0] + limits.client_window_s - now))
                    wait = math.ceil(seconds / 60)
                    what = f"made {len(held)} uploads" if len(held) >= count else f"uploaded {used / MB:.0f} MB"
                    message = (f"{whose[0]} {what} in the last {limits.client_window_s / 60:g} minutes, the most "
                               f"{whose[1]} may ({count} uploads, {mb:g} MB): try again in "
                               f"{counted(wait, 'minute')}. Questions are still answered.")
                    return None, (message, seconds, who)
            record = [now, coming]  # one record in both: what add counts, both count
            posts.append(record)
            self._posts[client] = posts
            if network is not None:
                theirs.append(record)
                self._network_posts[network] = theirs
            return record, None

    def add(self, record: list, size: int) -> None:
        """Count ``size`` more bytes of the post ``record`` (a body longer than declared, or undeclared)."""
        with self._lock:
            record[1] += size

    def clients(self) -> int:
        """Clients with a post in the window (or not yet swept)."""
        return len(self._posts)

    def networks(self) -> int:
        """Networks with a post in the window (or not yet swept)."""
        return len(self._network_posts)


class BodyLimit:
    """ASGI middleware: a request whose body is over ``limit`` bytes is
    answered 413 before the app reads it. Gradio took any body (and kept an
    event's data in its queue until the event ran): a few 100 MB posts to
    the queue from a script grew the server's memory by gigabytes.

    Gradio's upload route (whose files' size ``max_file_size`` checks) is
    answered 507 while the disk of ``upload_dir`` would keep less than
    ``min_free`` bytes free: it keeps any number of files a day, so a script
    posting in a loop filled the disk, and then the labels, the exports and
    every session's index failed too. Each client's posts to it are
    bounded by ``quota`` (:class:`UploadQuota`; answered 429 past it), so
    that one client cannot bring the disk down to that floor for everyone."""

    def __init__(self, app, limit: int, upload_dir: str | os.PathLike | None = None,
                 min_free: int = UploadLimits().min_free_bytes, quota: UploadQuota | None = None,
                 refusals: RefusalLog | None = None):
        self.app, self.limit, self.min_free = app, limit, min_free
        self.upload_dir = Path(upload_dir) if upload_dir is not None else gradio_upload_dir()
        self.quota = quota if quota is not None else UploadQuota()
        self.refusals = refusals if refusals is not None else RefusalLog()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["path"].rstrip("/").endswith("/upload"):
            declared = dict(scope["headers"]).get(b"content-length", b"0")
            coming = int(declared) if declared.isdigit() else 0
            client = client_of(scope)
            if disk_free(self.upload_dir) < self.min_free + coming:
                # The server's condition, not the client's: one line a minute whoever posts.
                self.refusals.refused("uploads (507)", "every visitor", f"the disk of {self.upload_dir} is near its "
                                                                        f"floor of {self.min_free / MB:g} MB free")
                return await self._refuse(send, 507, "The server's storage is nearly full: uploads are refused for "
                                                     "now. Try again later; questions are still answered.")
            if client is None:
                return await self.app(scope, receive, send)
            record, refusal = self.quota.admit(client, coming)
            if refusal is not None:
                message, seconds, whose = refusal
                self.refusals.refused("uploads (429)", whose, message)
                return await self._refuse(send, 429, message, [(b"retry-after", str(seconds).encode())])
            arrived = 0

            async def counted():
                nonlocal arrived
                message = await receive()
                if message["type"] == "http.request":
                    before, arrived = arrived, arrived + len(message.get("body", b""))
                    # What goes past the declared length (or all of an undeclared one) counts too.
                    self.quota.add(record, max(0, arrived - max(before, coming)))
                return message

            return await self.app(scope, counted, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > self.limit:
                return await self._too_large(scope, send, f"{int(declared):,} bytes declared")
            return await self.app(scope, receive, send)  # the server reads no more than it declares
        # Chunked, length unknown: read up to the limit here, then hand it on.
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.limit:
                return await self._too_large(scope, send, "a body sent without its length")
            if not message.get("more_body", False):
                break

        async def replay():
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope, send, what: str):
        self.refusals.refused("a request body (413)", client_of(scope),
                              f"{what} to {scope['path'][:100]!r}, over {self.limit:,}")
        return await _refuse_call(send, 413, f"Request too large: at most {self.limit:,} bytes.")

    @staticmethod
    async def _refuse(send, status: int, message: str, headers: list | None = None):
        await _respond(send, status, message.encode(), b"text/plain; charset=utf-8", headers)


class QueueShare:
    """ASGI middleware: each client may have at most ``limit`` events in
    Gradio's queue at once (``waiting(client)`` counts those waiting there;
    the ones being handed to it count too), so that one client cannot fill
    the queue (``max_size``) and have every other visitor refused. Past it,
    a POST that would join the queue is answered 429, with a message the
    page shows, before its body is read. Likewise a client may have at most
    ``running`` direct calls under way at once (Gradio's run route: events
    that skip the queue run at once, each on a thread of those that run
    every handler). The clients of one network (:func:`client_network`;
    ``waiting(client, network)`` counts the client's and its clients' events
    in one pass over the queue) have at most
    ``network_queued`` and ``network_running`` together. It also names the
    client of every request for :func:`request_client`. The server's own
    host or network (client None) is not counted, as for the upload
    route's quota.

    Given ``crowd`` (a call that counts the events waiting in all and the
    networks with some waiting) and the queue's ``capacity``, a network
    is refused past its fair share of the line (:func:`fair_share`,
    ``fair``: its ``fair_reserve`` and ``fair_queued``; the joins in flight
    counted as in line) once the line is that full: a crowd
    spread over many networks, each within its share, filled the queue, and
    a visitor of a quiet network was refused by Gradio's "queue is full"."""

    # Seconds a refused client is told to wait: an event waits seconds, not minutes.
    RETRY_S = 5

    def __init__(self, app, waiting: Callable[..., Sequence[int]], limit: int, joining: ClientShares | None = None,
                 refusals: RefusalLog | None = None, running: int = UploadLimits().client_running,
                 calling: ClientShares | None = None, network_queued: int = UploadLimits().network_queued,
                 network_running: int = UploadLimits().network_running,
                 crowd: Callable[[], tuple[int, int]] | None = None, capacity: int | None = None,
                 fair: FairShareConfig = FairShareConfig()):  # noqa: B008 (frozen)
        self.app, self.waiting, self.limit, self.running = app, waiting, limit, running
        self.network_queued, self.network_running = network_queued, network_running
        self.crowd, self.capacity, self.fair = crowd, capacity, fair
        # Clients' and networks' counts in one each: their names differ (a network's ends in its prefix).
        self.joining = joining if joining is not None else ClientShares()
        self.calling = calling if calling is not None else ClientShares()
        self.refusals = refusals if refusals is not None else RefusalLog()
        self._in_flight = 0  # joins of every client between their checks and their answers (one event loop)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        client = client_of(scope)
        named = _REQUEST_CLIENT.set(client)
        try:
            if client is None or scope.get("method") != "POST":
                return await self.app(scope, receive, send)
            network = client_network(client)
            if _joins_the_queue(scope):
                # Counted from the check on, so that a burst sent at once (each
                # reading its body before it joins) is bounded too.
                kind, shares, what = "queued events (429)", self.joining, "requests waiting in line"
                who = [client] if network is None else [client, network]
                counts = self.waiting(*who)
                bounds = [(key, limit, limit - count)
                          for key, limit, count in zip(who, (self.limit, self.network_queued), counts)]
                if network is not None:
                    # With the joins in flight (their bodies read, not yet in line): a
                    # burst sent at once was each checked against the line alone.
                    refused = self._past_fair_share(network, counts[1], self.joining.held(network))
                    if refused is not None:
                        self.refusals.refused("queued events, the line nearly full (429)", network, refused)
                        return await _refuse_call(send, 429, refused, [(b"retry-after", str(self.RETRY_S).encode())])
            elif _runs_directly(scope):
                kind, shares, what = "direct calls (429)", self.calling, "requests running"
                bounds = [(client, self.running, self.running)]
                if network is not None:
                    bounds.append((network, self.network_running, self.network_running))
            else:
                return await self.app(scope, receive, send)
            taken = []
            joins = shares is self.joining
            for who, limit, room in bounds:
                share = shares.take(who, 1, room)
                if share is None:
                    for held in taken:
                        held.give_back()
                    whose = ("You already have", "one visitor") if who == client else (
                        f"Visitors of your network ({who}) already have", "one network")
                    message = (f"{whose[0]} {limit} {what}, the most {whose[1]} may: try again in a few seconds, "
                               f"when they have been answered.")
                    self.refusals.refused(kind, who, message)
                    return await _refuse_call(send, 429, message, [(b"retry-after", str(self.RETRY_S).encode())])
                taken.append(share)
            self._in_flight += joins
            released = False

            def release():
                nonlocal released
                if not released:
                    released = True
                    self._in_flight -= joins
                    for share in taken:
                        share.give_back()

            async def answering(message):
                # A join's answer starts once its event is in line (waiting
                # counts it from then on): held until its reply was sent, a
                # join was counted twice meanwhile, and its network refused
                # an event below its fair share.
                if message["type"] == "http.response.start":
                    release()
                await send(message)

            try:
                return await self.app(scope, receive, answering if joins else send)
            finally:
                release()  # an app that failed before answering
        finally:
            _REQUEST_CLIENT.reset(named)

    def _past_fair_share(self, network: str, waiting: int, joining: int = 0) -> str | None:
        """Why an event of ``network`` (``waiting`` of its own in line,
        ``joining`` more in flight) may not join a queue with little room
        left (:func:`fair_share`), or None."""
        holds = waiting + joining
        if self.crowd is None or self.capacity is None or holds + 1 <= self.fair.fair_queued:
            return None  # within the floor: the line need not be counted
        total, networks = self.crowd()  # this network among them if it has some waiting
        total += self._in_flight
        fair = fair_share(total, 1, self.capacity, holds, networks + (waiting == 0),
                          self.fair.fair_reserve, self.fair.fair_queued)
        if fair is None:
            return None
        # Whole events: "2 waiting, their fair share 2.4" read as if a third were allowed.
        return (f"The server is busy: {total} of the {self.capacity} requests its line takes are waiting, and the "
                f"last places are kept for networks with fewer in line. Visitors of your network ({network}) already "
                f"have {holds} waiting, their fair share while {networks} networks wait ({math.floor(fair)} each): "
                f"try again in a few seconds, when they have been answered.")


class Room(NamedTuple):
    """Who runs how many of the queue's events now (:meth:`RunningShare.room`)."""
    clients: Mapping[str | None, int]  # events each client runs
    networks: Mapping[str | None, int]  # events each network's clients run
    full_clients: frozenset  # clients at their share: their events wait
    full_networks: frozenset  # networks at theirs


class RunningShare:
    """Each client's share of the events Gradio's queue runs at once
    (``limit``, :attr:`UploadLimits.client_running`): the queue ran the
    events first in its lines on its workers (one thread each), so one
    client sending events from many sessions took every worker, and each
    other visitor's event, a page's load too, waited until the client's
    ended. Of the events waiting whose client runs fewer than ``limit`` and
    whose network (:func:`client_network`) fewer than ``network_limit``,
    the queue now runs the fairest (:meth:`pick`): that of the network
    running the fewest, then the one served longest ago (one never served:
    since it was first seen waiting), then the same of its client, then the
    first in line. A crowd spread over many networks
    had each of its events run first come, first served, and a visitor of
    a quiet network waited behind all of them; now a network's events take
    turns with every other network's. The server's own host or network
    (None) is not bounded, and takes its turn as one network."""

    # Networks and clients whose last turn is remembered: one forgotten is
    # counted as first seen waiting again, as a newcomer is.
    REMEMBERED = 4096

    def __init__(self, limit: int, refusals: RefusalLog | None = None,
                 network_limit: int = UploadLimits().network_running):
        self.limit, self.network_limit = limit, network_limit
        self.refusals = refusals if refusals is not None else RefusalLog()
        self._held = weakref.WeakSet()  # events already passed over once: one log line each at most
        self._served: OrderedDict = OrderedDict()  # network or client -> the pick that last ran one of its events
        self._picks = 0

    def room(self, running: Mapping[str | None, int]) -> Room:
        """Who runs how many now, given how many events each client runs
        (``running``), and who has no room: what :meth:`pick` weighs. Made
        once for each pick of the queue."""
        networks: Counter = Counter()
        for who, count in running.items():
            networks[client_network(who)] += count
        return Room(running, networks,
                    frozenset(who for who, count in running.items() if who is not None and count >= self.limit),
                    frozenset(network for network, count in networks.items()
                              if network is not None and count >= self.network_limit))

    def pick(self, lines: Iterable[Iterable], client: Callable[[object], str | None], room: Room):
        """(the position of its line in ``lines``, the event) to run next of
        those waiting in ``lines`` (each in line order) whose
        ``client(event)`` and its network have room, the fairest (see the
        class); None if none has. Counts it as served."""
        best = best_key = None
        served, clients, networks = self._served, room.clients, room.networks
        full_clients, full_networks = room.full_clients, room.full_networks
        seen = set()  # a client's later events have its first one's key: never fairer, not weighed again
        for position, line in enumerate(lines):
            for event in line:
                who = client(event)
                if who in seen:
                    continue
                seen.add(who)
                network = client_network(who)
                if who in full_clients or (full_networks and network in full_networks):
                    self._passed_over(event, who, network, full_clients)
                    continue
                # A client that is no address (None: the server's own) takes its turns as a network.
                # One never served counts as served when first seen waiting: as
                # served longest ago, a stream of newcomers (a new network each,
                # as IPv6 /48s are for the asking) went before a returning
                # visitor's next event, for as long as the stream lasted.
                key = (networks.get(network, 0), served.setdefault(network or who, self._picks),
                       clients.get(who, 0), served.setdefault(who, self._picks))
                if best_key is None or key < best_key:
                    best, best_key = (position, event), key
        if best is not None:
            who = client(best[1])
            self._picks += 1
            for key in dict.fromkeys((client_network(who) or who, who)):
                served[key] = self._picks
                served.move_to_end(key)
        while len(served) > self.REMEMBERED:
            served.popitem(last=False)
        return best

    def _passed_over(self, event, who, network, full_clients) -> None:
        if event in self._held:
            return
        self._held.add(event)
        if who in full_clients:
            said = (who, f"it has {self.limit} events running, the most one visitor may")
        else:
            said = (network, f"its visitors have {self.network_limit} events running, the most one network may")
        self.refusals.refused("running events (kept in line)", said[0], f"{said[1]}; the others wait in line")


def _joins_the_queue(scope) -> bool:
    """Whether a request puts an event in Gradio's queue: a POST to its
    queue/join route, or to call/<api name> (the simple API)."""
    path = scope["path"].rstrip("/")
    return scope.get("method") == "POST" and (path.endswith("/queue/join") or "/call/" in path)


def _runs_directly(scope) -> bool:
    """Whether a request runs an event at once, past the queue: a POST to
    Gradio's run/<api name> route (the page's events that skip the queue),
    or to its older name api/<api name>."""
    parts = scope["path"].rstrip("/").split("/")
    return scope.get("method") == "POST" and len(parts) >= 3 and parts[-2] in ("run", "api")


async def _refuse_call(send, status: int, message: str, headers: list | None = None):
    """Refuse a call of the app's (the queue's join, a direct call) with
    ``message``, as JSON: Gradio's page shows a refused join's "detail",
    and app.js a refused direct call's "error" (Gradio's page shows none of
    a direct call's); a text body it read as "Could not parse server
    response". The upload route's refusals are text, which the page shows
    after the status."""
    body = json.dumps({"detail": message, "error": message}).encode()
    await _respond(send, status, body, b"application/json", headers)


async def _respond(send, status: int, body: bytes, content_type: bytes, headers: list | None = None):
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})
