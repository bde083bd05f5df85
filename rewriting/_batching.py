"""Micro-batching: many callers' rewrites decoded together.

When several users ask at once, each ``rewrite()`` on its own thread would
decode one question at a time (or fight over the cores). A
:class:`BatchingRewriter` queues the calls in the kernel's
:class:`~assistant.kernel.MicroBatcher`; its one worker thread decodes the
calls that arrive within a short window (up to ``max_batch``) as one
``rewrite_batch`` call, then hands each caller its own result. Only the
worker touches the wrapped rewriter, so it need not be thread-safe.
"""

from __future__ import annotations

import inspect
from typing import Callable, Sequence

from assistant.kernel import NO_STOP, MicroBatcher, Rewrite, StopSignal, with_stop

from ._base import Rewriter

__all__ = ["BatchingRewriter"]


class BatchingRewriter:
    """A :class:`Rewriter` that batches concurrent calls to ``rewriter``
    (an :class:`assistant.kernel.MicroBatcher` in front of its ``rewrite_batch``).

    ``max_batch``: most questions decoded together; 8 is
    :attr:`RewriterConfig.batch_size`, one forward pass of the causal
    rewriter. ``window_ms``: how long the first waiting question waits for
    others; short next to decoding one question, so a lone caller barely
    notices it. A batch goes as soon as it is full.

    With float32 weights every caller gets what ``rewriter.rewrite`` alone
    gives (left-padded batched greedy decoding equals one-at-a-time decoding).
    A call that fails in a batch is retried alone, so one caller's bad input
    only fails that caller. When ``rewriter.rewrite_batch`` takes ``ready``
    (:meth:`CausalLMRewriter.rewrite_batch`), a caller whose rewrite is final
    gets it at once, while the batch's second look runs for the others.

    A caller's ``stop`` (:class:`~assistant.kernel.StopSignal`) ends its wait
    at once with :class:`~assistant.kernel.Stopped`: its question leaves the
    queue, or, in a batch under way, is decoded on with the others (a row
    more costs a step little) and its rewrite dropped, so one user's Stop
    never touches another's rewrite. A batch that none of its callers waits
    for any more stops at its next decoding step, when ``rewriter`` takes a
    ``stop`` (:meth:`CausalLMRewriter.rewrite_batch` does). Use as a context
    manager or call :meth:`close`.
    """

    def __init__(self, rewriter: Rewriter, max_batch: int = 8, window_ms: float = 5.0):
        self.rewriter = rewriter
        self._batch = getattr(rewriter, "rewrite_batch", None)
        taken = inspect.signature(self._batch or rewriter.rewrite).parameters
        early = self._batch is not None and "ready" in taken
        self._batcher = MicroBatcher(self._run_early if early else self._run, max_batch, window_ms, name="rewrite-batcher",
                                     early=early, stoppable="stop" in taken)
        self.max_batch = max_batch

    def rewrite(self, question: str, history: Sequence[str], stop: StopSignal = NO_STOP) -> Rewrite:
        return self._batcher.run([(question, tuple(history))], stop)[0]

    def rewrite_batch(self, items: Sequence[tuple[str, Sequence[str]]], stop: StopSignal = NO_STOP) -> list[Rewrite]:
        """Queue ``items`` with everyone else's; results in ``items``' order."""
        return self._batcher.run([(question, tuple(history)) for question, history in items], stop)

    def close(self) -> None:
        """Finish the queued calls, then stop the worker."""
        self._batcher.close()

    def __enter__(self) -> "BatchingRewriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _run_early(self, items: list[tuple[str, Sequence[str]]], deliver: Callable[[int, Rewrite], None],
                   stop: StopSignal = NO_STOP) -> list[Rewrite]:
        return with_stop(self._batch, stop)(items, ready=deliver)

    def _run(self, items: list[tuple[str, Sequence[str]]], stop: StopSignal = NO_STOP) -> list[Rewrite]:
        if self._batch is not None:
            return with_stop(self._batch, stop)(items)
        rewrite = with_stop(self.rewriter.rewrite, stop)
        return [rewrite(question, history) for question, history in items]
