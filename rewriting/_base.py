"""The rewriter protocol and the trivial baseline."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from assistant.kernel import Rewrite

__all__ = ["Rewriter", "OriginalRewriter"]


@runtime_checkable
class Rewriter(Protocol):
    """Turns a conversational question into a self-contained one.

    ``history`` holds the earlier turns' texts, question and answer
    alternating, oldest first (QReCC's ``Context``). Rewriters keep no
    conversation state of their own.
    """

    def rewrite(self, question: str, history: Sequence[str]) -> Rewrite: ...


class OriginalRewriter:
    """Baseline: the question as asked, never rewritten.

    >>> OriginalRewriter().rewrite("What did she write?", ["Who was Ada?", "A poet's daughter."])
    Rewrite(text='What did she write?', note='', rejected='', alternatives=())
    """

    def rewrite(self, question: str, history: Sequence[str]) -> Rewrite:
        if not isinstance(question, str):
            raise TypeError(f"the question must be a string, not {type(question).__name__}")
        return Rewrite(question.strip())
