"""Cooperative cancellation: the user's Stop, handed down to the model loops.

A turn's model calls (the rewriter's decoding, a generative reader's) run on
a server thread that Gradio's cancel cannot end: a stopped turn kept its
worker until the call returned, and a crowd's questions queued behind it.
The session gives each turn a :class:`StopSignal`; the pipeline passes it to
the stages as an argument (they keep no conversation state); each model loop
calls :meth:`StopSignal.check` between two steps, which raises
:class:`Stopped` once Stop was pressed, and the session turns that into its
"not added" ending. :data:`NO_STOP` is the signal of a call nobody stops.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from typing import Callable, TypeVar

from ._errors import AssistantError

__all__ = ["NO_STOP", "StopSignal", "Stopped", "do_nothing", "stopped_when_cancelled", "with_stop"]

T = TypeVar("T")


class Stopped(AssistantError):
    """The user pressed Stop while this call ran: its result is not wanted."""

    def __init__(self, message: str = "Stopped before it finished (you pressed Stop): ask again to run it.") -> None:
        super().__init__(message)


class StopSignal:
    """Set once, by whoever stops the work (the session's Stop); read by the
    work between its steps. Like a ``threading.Event`` that is never cleared,
    plus :meth:`check` and :meth:`on_set` (what waits for a result or a stop,
    as :meth:`~assistant.kernel.MicroBatcher.run` does, is woken by it).

    >>> stop = StopSignal()
    >>> stop.check()  # not set: the work goes on
    >>> stop.set()
    >>> stop.is_set()
    True
    >>> stop.check()
    Traceback (most recent call last):
    ...
    assistant.kernel._stop.Stopped: Stopped before it finished (you pressed Stop): ask again to run it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._callbacks: list[Callable[[], None]] = []

    def set(self) -> None:
        """Stop the work: :meth:`check` raises from now on, and each
        :meth:`on_set` callback is called (once, on this thread)."""
        self.set_deferred()()

    def set_deferred(self) -> Callable[[], None]:
        """Set the signal now (:meth:`check` raises from now on) and return
        the function that calls its :meth:`on_set` callbacks: a caller that
        sets it under a lock of its own calls that after releasing the lock,
        so that no callback runs under it. Each callback is called even if
        one before it raises (a waiter left unwoken waited for good); the
        first error is raised once all were called.

        >>> stop, woken = StopSignal(), []
        >>> _ = stop.on_set(lambda: woken.append(True))
        >>> wake = stop.set_deferred()
        >>> stop.is_set(), woken
        (True, [])
        >>> wake(); woken
        [True]
        """
        with self._lock:
            if self._set:
                return do_nothing
            self._set = True
            callbacks, self._callbacks = self._callbacks, []
        return lambda: _call_each(callbacks)

    def is_set(self) -> bool:
        return self._set

    def check(self) -> None:
        """Raise :class:`Stopped` if the work was stopped; a model loop calls
        this between two steps (it costs an attribute read)."""
        if self._set:
            raise Stopped()

    def on_set(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` when the signal is set (at once if it is);
        returns a function that forgets it (a wait that ended otherwise)."""
        with self._lock:
            if not self._set:
                self._callbacks.append(callback)
                return lambda: self._forget(callback)
        callback()
        return do_nothing

    def _forget(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

    def __deepcopy__(self, memo) -> "StopSignal":
        # A session is deep-copied for each new tab (gr.State): the copy's
        # turns are its own, and so is what stops them.
        return StopSignal()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({'set' if self._set else 'not set'})"


class _NoStop(StopSignal):
    """The signal of a call nobody stops: it is never set."""

    def on_set(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Nothing: the callback could never be called, and NO_STOP, shared
        by every such call, kept each one (and what it holds) for good."""
        return do_nothing

    def set_deferred(self) -> Callable[[], None]:
        raise TypeError("NO_STOP is shared by every call nobody stops and is never set: give the work a StopSignal() of its own")


def do_nothing() -> None:
    """The callback that has nothing to do: a wake, a forget or a give-back
    where there is nothing to wake, forget or give back."""


def _call_each(callbacks: list[Callable[[], None]]) -> None:
    """Call every one of ``callbacks``; raise the first error once all were called."""
    first: Exception | None = None
    for callback in callbacks:
        try:
            callback()
        except Exception as error:  # noqa: BLE001 - raised below, after the other callbacks' wakes
            if first is None:
                first = error
    if first is not None:
        raise first


# The default of every ``stop`` argument: the model loops check it like any
# other, so they need no "is there a signal" branch.
NO_STOP: StopSignal = _NoStop()


def with_stop(function: Callable, stop: StopSignal) -> Callable:
    """``function`` given ``stop=stop`` when it takes a ``stop`` argument,
    else ``function`` as it is: a stage plugged in by a library user, written
    to the protocol without one, still runs (to its end: it cannot be stopped).

    >>> def read(question, passages, stop=NO_STOP): return stop
    >>> signal = StopSignal()
    >>> with_stop(read, signal)("Why?", []) is signal
    True
    >>> with_stop(lambda question, passages: "read", signal)("Why?", [])
    'read'
    """
    if stop is NO_STOP:
        return function
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin or a C callable: no signature to read
        return function
    if "stop" in parameters:  # not **kwargs: a wrapper may hand them to a stage that takes none
        return lambda *args, **kwargs: function(*args, stop=stop, **kwargs)
    return function


async def stopped_when_cancelled(work: Callable[[StopSignal], T]) -> T:
    """``work(stop)`` run on a thread of its own (in a copy of the awaiting
    task's context, as ``anyio``'s ``run_sync`` runs a sync handler) and
    awaited; when the awaiting task is cancelled, ``stop`` is set, the work
    ends at its next stop check, and the cancel goes on once it has (its
    result dropped, as is its :class:`Stopped`; another error it raised is
    reported to the loop's exception handler, a bug not hidden by the
    cancel). A web framework's cancel of a request (Gradio's ``/cancel``,
    which a client's ``job.cancel()`` sends) cancels the task of an async
    handler, but only waits for a thread running a sync one: the model call
    ran to its end, its worker and its share of the batch kept meanwhile.
    Work whose stop is another's (a session's turn takes the session's)
    hooks that one to ``stop`` with :meth:`StopSignal.on_set`.

    >>> def work(stop):
    ...     stop.check()
    ...     return "done"
    >>> asyncio.run(stopped_when_cancelled(work))
    'done'
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()
    # Its error retrieved whoever awaits it: one left unawaited (its task
    # gone with its loop's shutdown) is not logged as "never retrieved".
    done.add_done_callback(_retrieve)
    stop = StopSignal()
    context = contextvars.copy_context()

    def settle(result, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def run() -> None:
        result, error = None, None
        try:
            result = context.run(work, stop)
        except BaseException as failure:  # noqa: BLE001 - re-raised in the awaiting task
            error = failure
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop was closed meanwhile: nobody awaits the work
            pass

    threading.Thread(target=run, name="stoppable-work", daemon=True).start()
    try:
        # Shielded: a cancel reaches this await, not the future the thread settles.
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        stop.set()
        # Waited for, so that what holds the request's slot (a concurrency
        # limit) holds it until the model is free: a second cancel (another
        # /cancel, the queue's shutdown) ended the wait, and the slot went to
        # the next request while the work still ran.
        while not done.done():
            try:
                await asyncio.shield(done)
            except asyncio.CancelledError:
                continue
            except BaseException:  # noqa: BLE001 - the work's own end, read below
                break
        error = None if done.cancelled() else done.exception()
        if error is not None and not isinstance(error, Stopped):
            loop.call_exception_handler({
                "message": "The work of a cancelled request failed after its cancel (not the Stop it was given)",
                "exception": error,
                "future": done,
            })
        raise


def _retrieve(future: asyncio.Future) -> None:
    if not future.cancelled():
        future.exception()
