"""Micro-batching: many callers' rewrites decoded together.

When several users ask at once, each ``rewrite()`` on its own thread would
decode one question at a time (or fight over the cores). A
:class:`BatchingRewriter` queues the calls; one worker thread takes the
calls that arrive within a short window (up to ``max_batch``) and decodes
them as one ``rewrite_batch`` call, then hands each caller its own result.
Only the worker touches the wrapped rewriter, so it need not be thread-safe.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from typing import Sequence

from assistant.kernel import ConfigError, Rewrite

from ._base import Rewriter

__all__ = ["BatchingRewriter"]


class BatchingRewriter:
    """A :class:`Rewriter` that batches concurrent calls to ``rewriter``.

    ``max_batch``: most questions decoded together; 8 is
    :attr:`RewriterConfig.batch_size`, one forward pass of the causal
    rewriter. ``window_ms``: how long the first waiting question waits for
    others; short next to decoding one question, so a lone caller barely
    notices it. A batch goes as soon as it is full.

    With float32 weights every caller gets what ``rewriter.rewrite`` alone
    gives (left-padded batched greedy decoding equals one-at-a-time decoding).
    A call that fails in a batch is retried alone, so one caller's bad input
    only fails that caller. Use as a context manager or call :meth:`close`.
    """

    def __init__(self, rewriter: Rewriter, max_batch: int = 8, window_ms: float = 5.0):
        if not isinstance(max_batch, int) or max_batch < 1:
            raise ConfigError(f"max_batch must be a whole number of at least 1, not {max_batch!r}")
        if not window_ms >= 0:
            raise ConfigError(f"window_ms must be 0 or more, not {window_ms!r}")
        self.rewriter = rewriter
        self.max_batch = max_batch
        self.window_s = window_ms / 1000
        self._batch = getattr(rewriter, "rewrite_batch", None)
        self._pending: list[tuple[float, tuple[str, Sequence[str]], Future]] = []
        self._ready = threading.Condition()
        self._closed = False
        self._worker = threading.Thread(target=self._serve, name="rewrite-batcher", daemon=True)
        self._worker.start()

    def rewrite(self, question: str, history: Sequence[str]) -> Rewrite:
        return self._submit([(question, history)])[0].result()

    def rewrite_batch(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Rewrite]:
        """Queue ``items`` with everyone else's; results in ``items``' order."""
        return [future.result() for future in self._submit(items)]

    def close(self) -> None:
        """Finish the queued calls, then stop the worker."""
        with self._ready:
            self._closed = True
            self._ready.notify()
        self._worker.join()

    def __enter__(self) -> "BatchingRewriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _submit(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Future]:
        futures = [Future() for _ in items]
        with self._ready:
            if self._closed:
                raise RuntimeError("this BatchingRewriter is closed")
            now = time.monotonic()
            self._pending += [(now, (question, tuple(history)), future) for (question, history), future in zip(items, futures)]
            self._ready.notify()
        return futures

    def _next_batch(self) -> list[tuple[tuple[str, Sequence[str]], Future]]:
        """Wait for work; then for the window to pass from the oldest call's
        arrival or the batch to fill. Empty when closed and drained."""
        with self._ready:
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
            taken, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch :]
        return [(item, future) for _, item, future in taken]

    def _serve(self) -> None:
        while batch := self._next_batch():
            try:
                results = self._run([item for item, _ in batch])
            except Exception as error:  # noqa: BLE001 - forwarded to the callers, as concurrent.futures does
                if len(batch) == 1:
                    batch[0][1].set_exception(error)
                else:  # whose input failed it? each call alone gets its own result or error
                    for item, future in batch:
                        self._run_alone(item, future)
                continue
            for (_, future), result in zip(batch, results):
                future.set_result(result)

    def _run(self, items: list[tuple[str, Sequence[str]]]) -> list[Rewrite]:
        if self._batch is not None:
            return self._batch(items)
        return [self.rewriter.rewrite(question, history) for question, history in items]

    def _run_alone(self, item: tuple[str, Sequence[str]], future: Future) -> None:
        """One call by itself; its error, whatever it is, goes to its caller's thread."""
        try:
            future.set_result(self._run([item])[0])
        except Exception as error:  # noqa: BLE001 - re-raised in the caller's thread by future.result()
            future.set_exception(error)
