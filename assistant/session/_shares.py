"""What a server's sessions hold, in all and per client, and what it refuses.

A budget of the whole server (:class:`HeldText`), each client's share of
one (:class:`ClientShares`), the :class:`HeldShare` a source holds of
either, and the log of what the server refuses for want of room
(:class:`RefusalLog`). Nothing here imports gradio.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import weakref
from collections.abc import Callable

from ..kernel import do_nothing

__all__ = ["ClientShares", "HeldShare", "HeldText", "RefusalLog", "fair_share"]

log = logging.getLogger("convqa.serving")


class HeldText:
    """The bytes of document text the sessions of one server hold in memory
    (:attr:`UploadLimits.max_held_mb` bounds them). :class:`Services` owns
    one, so two apps served by one process (tests, an embedding program)
    each have their own budget."""

    def __init__(self):
        self.bytes = 0
        self._lock = threading.Lock()

    def take(self, size: int, limit: int, freed: int = 0) -> HeldShare | None:
        """A share of ``size`` bytes, if with ``freed`` bytes let go they stay
        within ``limit``; None (nothing taken) if not."""
        with self._lock:
            if self.bytes - freed + size > limit:
                return None
            self.bytes += size
        return HeldShare(functools.partial(self.give_back, size), size)

    def give_back(self, size: int) -> None:
        with self._lock:
            self.bytes -= size


def fair_share(used: float, coming: float, cap: float, holds: float, holders: int, reserve: float,
               floor: float) -> float | None:
    """The fair share a network holding ``holds`` of a server's ``cap``
    (``used`` of it in all) may not take ``coming`` more past, or None if it
    may. While what is left after ``coming`` is at least ``reserve`` of the
    cap (a fraction), anyone may; past it, each network's fair share is the
    part of the cap not reserved over the networks holding some
    (``holders``, this one among them), never below ``floor``, and the
    reserve goes to the networks holding less than theirs: had the whole
    cap been shared, the networks at their share would fill it and leave
    nothing for the next one. A ``reserve`` of 0 keeps none.

    >>> fair_share(used=90, coming=1, cap=128, holds=4, holders=40, reserve=0.25, floor=1)  # room left
    >>> fair_share(used=100, coming=1, cap=128, holds=2, holders=40, reserve=0.25, floor=1)  # past 96 / 40
    2.4
    >>> fair_share(used=100, coming=1, cap=128, holds=0, holders=41, reserve=0.25, floor=1)  # a newcomer
    >>> fair_share(used=100, coming=1, cap=128, holds=1, holders=400, reserve=0.25, floor=1)  # the floor
    1
    """
    if reserve <= 0 or used + coming <= (1 - reserve) * cap:
        return None
    fair = max(floor, (1 - reserve) * cap / max(1, holders))
    return fair if holds + coming > fair else None


class ClientShares:
    """How much each client's sessions hold at once (indexes of uploads,
    :attr:`UploadLimits.client_indexes`; bytes of document text,
    :attr:`UploadLimits.client_held_mb`), so that one client opening many
    sessions cannot hold what the server has for all. A client is named as
    :func:`~assistant.session.client_address` names it; None (the server's
    own host, a proxy that hides its visitors) is not counted. Clients that
    hold nothing are forgotten."""

    def __init__(self):
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, client: str | None, size: int, limit: int, freed: int = 0) -> HeldShare | None:
        """A share of ``size`` for ``client``, if with ``freed`` of its own let
        go it stays within ``limit``; None (nothing taken) if not."""
        if client is None:
            return HeldShare(do_nothing, size)
        with self._lock:
            held = self._held.get(client, 0)
            if held - freed + size > limit:
                return None
            self._held[client] = held + size
        return HeldShare(functools.partial(self._give_back, client, size), size, client)

    def held(self, client: str | None) -> int:
        with self._lock:
            return self._held.get(client, 0) if client is not None else 0

    def clients(self) -> int:
        """Clients holding anything."""
        with self._lock:
            return len(self._held)

    def _give_back(self, client: str, size: int) -> None:
        with self._lock:
            left = self._held.get(client, 0) - size
            if left > 0:
                self._held[client] = left
            else:
                self._held.pop(client, None)


class RefusalLog:
    """The server's log of what it refuses for want of room (a client past
    its share, a budget full, the disk near its floor): an operator sees
    who meets which limit, and how often. One warning line per kind and
    client within ``every_s`` seconds; the next one says how many went
    unsaid, so that a script hammering a limit cannot grow the log a line a
    request. Quiet keys are forgotten, as :class:`UploadQuota` forgets quiet
    clients."""

    def __init__(self, every_s: float = 60.0, clock=time.monotonic):
        self.every_s, self.clock = every_s, clock
        self._said: dict[tuple[str, str], list] = {}  # (kind, client) -> [time of its last line, refusals since]
        self._lock = threading.Lock()
        self._swept = clock()

    def refused(self, kind: str, client: str | None, what: str) -> None:
        """Note one refusal of ``kind`` (a short name: "uploads (429)",
        "documents held") to ``client`` (None: the server's own network)."""
        now, who = self.clock(), client or "the server's own network"
        with self._lock:
            said = self._said.get((kind, who))
            if said is not None and now - said[0] < self.every_s:
                said[1] += 1
                line = None
            else:
                line = (kind, who, what, said[1] if said is not None else 0)
                self._said[(kind, who)] = [now, 0]
            unsaid_lines = self._sweep(now)
        for kind_, who_, count in unsaid_lines:
            log.warning("refused %s to %s %d more time%s", kind_, who_, count, "s" if count != 1 else "")
        if line is not None:
            kind, who, what, unsaid = line
            since = f" ({unsaid} more since the last line)" if unsaid else ""
            log.warning("refused %s to %s: %s%s", kind, who, what, since)

    def _sweep(self, now: float) -> list[tuple[str, str, int]]:
        """Forget the keys quiet for ``every_s``; what they left unsaid, to log."""
        if now - self._swept <= self.every_s:
            return []
        self._swept, unsaid = now, []
        for (kind, who), (when, count) in list(self._said.items()):
            if now - when > self.every_s:
                del self._said[(kind, who)]
                if count:
                    unsaid.append((kind, who, count))
        return unsaid

    def keys(self) -> int:
        """Kinds and clients remembered (those refused within ``every_s``, or not yet swept)."""
        return len(self._said)


def together(shares, size: int, client: str | None) -> HeldShare:
    """One share of ``size`` for ``client`` standing for ``shares`` (a
    client's and its network's of one text), given back together."""
    return HeldShare(functools.partial(_give_back_all, tuple(shares)), size, client)


def _give_back_all(shares) -> None:
    for share in shares:
        share.give_back()


class HeldShare:
    """One source's share of a budget (:class:`HeldText`, a client's in
    :class:`ClientShares`), given back when the source closes or, for a
    session Gradio dropped unclosed (past its capacity), when the share is
    garbage collected. ``client``: whose share it is (None: nobody's)."""

    def __init__(self, release: Callable[[], None], size: int, client: str | None = None):
        self.size, self.client = size, client
        self._give_back = weakref.finalize(self, release)

    def give_back(self) -> None:
        self._give_back()  # once: later calls, and the finalizer, do nothing

    @property
    def held(self) -> bool:
        """Whether it still counts (not given back)."""
        return self._give_back.alive
