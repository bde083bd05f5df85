"""The assistant: rewrite, retrieve, read. One method, no conversation state."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ._reader import Reader, SentenceReader
from ._retriever import BM25Retriever, Retriever
from ._types import Conversation, Turn
from .config import AssistantConfig, ReaderConfig, RetrieverConfig
from .errors import InvalidInputError

__all__ = ["Assistant", "validate_question"]


def validate_question(question: str, max_chars: int) -> str:
    """The question stripped, or InvalidInputError saying what is wrong with it.

    >>> validate_question("  Who was Ada?  ", 100)
    'Who was Ada?'
    """
    question = (question or "").strip()
    if not question:
        raise InvalidInputError("Please type a question.")
    if len(question) > max_chars:
        raise InvalidInputError(
            f"That message is {len(question):,} characters long; questions are limited to "
            f"{max_chars:,}. Please ask a shorter question."
        )
    return question


@dataclass
class Assistant:
    """Answers a question in the context of a conversation the caller owns."""

    rewriter: object  # rewriting.Rewriter
    retriever: Retriever
    reader: Reader
    config: AssistantConfig = AssistantConfig()
    retriever_config: RetrieverConfig = RetrieverConfig()

    @classmethod
    def from_config(
        cls,
        config: AssistantConfig = AssistantConfig(),
        retriever_config: RetrieverConfig = RetrieverConfig(),
        reader_config: ReaderConfig = ReaderConfig(),
    ) -> "Assistant":
        """Load every stage once (index, encoders, language model)."""
        from rewriting import load_rewriter

        retriever = BM25Retriever.from_index(retriever_config.index_dir, retriever_config)
        if config.reader == "generative":
            from ._generative import GenerativeReader

            reader = GenerativeReader.from_pretrained(config=reader_config)
        else:
            reader = SentenceReader.from_pretrained(config=reader_config)
        return cls(load_rewriter(config.rewriter), retriever, reader, config, retriever_config)

    def ask(self, question: str, conversation: Conversation) -> Turn:
        """Answer ``question`` given the earlier turns; the caller adds the Turn."""
        question = validate_question(question, self.config.max_question_chars)
        keep = 2 * self.config.history_turns
        history = conversation.history()[-keep:] if keep else []
        timings = {}
        start = time.perf_counter()
        rewrite = self.rewriter.rewrite(question, history)
        timings["rewrite"] = _ms_since(start)
        mark = time.perf_counter()
        passages = self.retriever.search(rewrite.text, self.retriever_config.k)
        timings["retrieve"] = _ms_since(mark)
        mark = time.perf_counter()
        answer = self.reader.read(rewrite.text, passages)
        timings["read"] = _ms_since(mark)
        timings["total"] = _ms_since(start)
        return Turn(question, rewrite, answer, tuple(passages), timings)


def _ms_since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)
