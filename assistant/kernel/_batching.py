"""Micro-batching: the calls of many threads that arrive together, run as one.

When several users ask at once, each model call on its own thread would run
one input at a time (or fight over the cores). A :class:`MicroBatcher`
queues the calls; one worker thread takes the calls that arrive within a
short window of the oldest waiting one (at most ``max_batch``) and hands
them to ``run_batch`` together, then gives each caller its own result. Only
the worker calls ``run_batch``, so the model behind it need not be
thread-safe and model calls never run side by side.

The rewriter's and the encoder's batchers (``rewriting.BatchingRewriter``,
``assistant.encoders.BatchingEncoder``) are thin faces over this one.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, InvalidStateError, wait
from typing import Callable, Generic, Sequence, TypeVar

from ._errors import ConfigError
from ._stop import NO_STOP, StopSignal

__all__ = ["MicroBatcher"]

Item = TypeVar("Item")
Result = TypeVar("Result")


class MicroBatcher(Generic[Item, Result]):
    """Runs ``run_batch(items) -> results`` (one result per item, in order)
    on the items of all callers that arrive within ``window_ms`` of each
    other, at most ``max_batch`` at a time, on one worker thread ``name``.

    ``max_batch``: items merged at most. ``window_ms``: how long the oldest
    waiting item waits for company; a batch goes as soon as it is full.
    A batch that fails is retried item by item, so an error goes back only to
    the caller whose item caused it. Use as a context manager or call
    :meth:`close`.

    With ``early``, ``run_batch`` is called as ``run_batch(items, deliver)``
    and may hand a result back before it returns: ``deliver(index, result)``
    gives the caller of ``items[index]`` its result at once, while the batch
    goes on for the others (the returned entries of items already delivered
    are ignored, and if the batch then fails only the others are retried).

    A caller that passes :meth:`run` a ``stop`` gets
    :class:`~assistant.kernel.Stopped` as soon as it is set: its items leave
    the queue, or are left to the batch under way, which goes on for the
    other callers' items (their results are not disturbed). With
    ``stoppable``, ``run_batch`` is also given ``stop=``, a
    :class:`~assistant.kernel.StopSignal` set once no caller waits for any
    of its items (each has its result, or its caller stopped), for its model
    loop to check between two steps: a batch stopped by all its callers
    frees the worker for the next.

    >>> with MicroBatcher(lambda xs: [x * 10 for x in xs]) as batcher:
    ...     batcher.run([1, 2, 3])
    [10, 20, 30]
    """

    def __init__(
        self,
        run_batch: Callable[[list[Item]], Sequence[Result]],
        max_batch: int = 8,
        window_ms: float = 5.0,
        name: str = "micro-batcher",
        early: bool = False,
        stoppable: bool = False,
    ) -> None:
        if not isinstance(max_batch, int) or max_batch < 1:
            raise ConfigError(f"max_batch must be a whole number of at least 1, not {max_batch!r}")
        if not window_ms >= 0:
            raise ConfigError(f"window_ms must be 0 or more, not {window_ms!r}")
        self.run_batch = run_batch
        self.early = early
        self.stoppable = stoppable
        self.max_batch = max_batch
        self.window_s = window_ms / 1000
        self._pending: list[tuple[float, Item, Future]] = []
        self._ready = threading.Condition()
        self._closed = False
        self._worker = threading.Thread(target=self._serve, name=name, daemon=True)
        self._worker.start()

    def run(self, items: Sequence[Item], stop: StopSignal = NO_STOP) -> list[Result]:
        """Queue ``items`` with everyone else's and wait; results in ``items``' order.
        An item's error is raised here, in its caller's thread; so is
        :class:`~assistant.kernel.Stopped` as soon as ``stop`` is set (the
        items are then given up: see the class)."""
        futures = self.submit(items)
        if stop is not NO_STOP:
            self._wait(futures, stop)
        return [future.result() for future in futures]

    @staticmethod
    def _wait(futures: list[Future], stop: StopSignal) -> None:
        """Wait until every one of ``futures`` is done, or ``stop`` is set:
        then each is cancelled (an item still queued is never run; one in a
        batch has its result dropped) and Stopped raised."""
        stopped: Future = Future()
        forget = stop.on_set(lambda: _settle(stopped, True))
        try:
            waiting = set(futures)
            while waiting and not stopped.done():
                done, _ = wait(waiting | {stopped}, return_when=FIRST_COMPLETED)
                waiting -= done
        finally:
            forget()
        if stopped.done():
            for future in futures:
                future.cancel()
            stop.check()

    def submit(self, items: Sequence[Item]) -> list[Future]:
        """Queue ``items``; one future per item."""
        futures = [Future() for _ in items]
        with self._ready:
            if self._closed:
                raise RuntimeError(f"this {self._worker.name} is closed")
            now = time.monotonic()
            self._pending += [(now, item, future) for item, future in zip(items, futures)]
            self._ready.notify()
        return futures

    def close(self) -> None:
        """Finish the queued calls, then stop the worker."""
        with self._ready:
            self._closed = True
            self._ready.notify()
        self._worker.join()

    def __enter__(self) -> "MicroBatcher[Item, Result]":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _next_batch(self) -> list[tuple[Item, Future]]:
        """Wait for work; then for the window to pass from the oldest call's
        arrival or the batch to fill. Empty when closed and drained."""
        with self._ready:
            while True:
                while not self._pending and not self._closed:
                    self._ready.wait()
                if not self._pending:
                    return []
                deadline = self._pending[0][0] + self.window_s
                while len(self._pending) < self.max_batch and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._ready.wait(left)
                # An item whose caller stopped while it waited (its future
                # cancelled) is not run.
                self._pending = [entry for entry in self._pending if not entry[2].done()]
                taken, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch :]
                if taken:
                    return [(item, future) for _, item, future in taken]

    def _serve(self) -> None:
        while batch := self._next_batch():
            if len(batch) == 1:
                self._run_alone(*batch[0])
                continue
            futures = [future for _, future in batch]
            try:
                results = list(self._call([item for item, _ in batch], futures))
            except Exception:  # noqa: BLE001 - whose item failed it? each alone gets its own result or error
                for item, future in batch:
                    if not future.done():
                        self._run_alone(item, future)
                continue
            for future, result in zip(futures, results):
                _settle(future, result)

    def _call(self, items: list[Item], futures: list[Future]) -> Sequence[Result]:
        """``run_batch`` on ``items``; with ``early``, its ``deliver`` sets
        ``futures[index]``; with ``stoppable``, its ``stop`` is set once every
        one of ``futures`` is done."""
        args: tuple = (items,)
        if self.early:
            args += (lambda index, result: _settle(futures[index], result),)
        if not self.stoppable:
            return self.run_batch(*args)
        return self.run_batch(*args, stop=_unwaited(futures))  # type: ignore[call-arg]

    def _run_alone(self, item: Item, future: Future) -> None:
        try:
            result = list(self._call([item], [future]))[0]
            _settle(future, result)
        except Exception as error:  # noqa: BLE001 - re-raised in the caller's thread by future.result()
            _settle(future, error=error)


def _settle(future: Future, result=None, error: BaseException | None = None) -> None:
    """Give ``future`` its result (or ``error``) unless it is done: it has
    one already, or its caller stopped waiting and cancelled it (which may
    happen between any check and the setting, hence no check)."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    except InvalidStateError:
        pass


def _unwaited(futures: list[Future]) -> StopSignal:
    """A signal set once every one of ``futures`` is done (has its result,
    or was cancelled by its caller's stop): nobody waits for the batch's work."""
    stop = StopSignal()

    def settled(_future: Future) -> None:
        if all(future.done() for future in futures):
            stop.set()

    for future in futures:
        future.add_done_callback(settled)
    return stop
