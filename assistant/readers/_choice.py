"""Multiple choice over one long document (QuALITY's setting).

The article is cut into passages; BM25 over them extracts the ``k`` passages
nearest the question, and each option is scored by the embedding cosine of
"question + option" with those passages, interpolated with the option's own
BM25 there. The app's multiple-choice mode and ``python -m eval.quality``
both use :class:`MultipleChoiceReader`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..kernel import InvalidInputError, Passage, composed_text
from ..retrieval import ChunkRetriever, split_passages

__all__ = ["QualityConfig", "Choice", "MultipleChoiceReader", "answer_multiple_choice"]


@dataclass(frozen=True)
class QualityConfig:
    passage_words: int = 60  # words per article passage: a few sentences, enough context for MiniLM's 256 tokens
    k: int = 4  # passages extracted per question (BM25 on the question)
    mu: float = 1.0  # weight of the embedding cosine vs the option's normalised BM25; best of the sweep


@dataclass(frozen=True)
class Choice:
    """A multiple-choice answer: the chosen option, every option's score, and
    for each option the evidence passage its score rests on (the UI can
    highlight ``evidence[index]``)."""

    index: int
    scores: tuple[float, ...]
    evidence: tuple[Passage | None, ...] = field(default=())


class _Document:
    """One article's passages, BM25 over them, and their vectors (computed once)."""

    def __init__(self, text: str, encoder, config: QualityConfig, doc_id: str = "doc") -> None:
        self.passages = split_passages(text, doc_id, max_words=config.passage_words)
        if not self.passages:
            raise InvalidInputError("the document has no text to answer from")
        self.retriever = ChunkRetriever(self.passages)
        self.index = {p.id: i for i, p in enumerate(self.passages)}
        self.vectors = np.asarray(encoder.encode([p.text for p in self.passages]), dtype=np.float32)


# Prepared documents kept per reader: a whole QuALITY file (~15-115 articles
# of ~80 passages x 384 floats, ~120 kB each) or a user's few uploads.
_CACHED_DOCUMENTS = 128


class MultipleChoiceReader:
    """Scores the options of a multiple-choice question against a document."""

    def __init__(self, encoder, config: QualityConfig = QualityConfig()) -> None:
        self.encoder = encoder  # assistant.encoders.Encoder: L2-normalised rows
        self.config = config
        # Bounded; the lock makes sessions asking about one document at once
        # prepare it once (encoding its passages is the slow part, and the
        # 2 cores would be shared by parallel preparations anyway).
        self._prepared = lru_cache(maxsize=_CACHED_DOCUMENTS)(self._prepare)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, config: QualityConfig = QualityConfig()) -> "MultipleChoiceReader":
        from ..encoders import load_minilm

        return cls(load_minilm(), config)

    def document(self, text: str, doc_id: str = "doc") -> _Document:
        """The prepared document (kept for the next question on the same text)."""
        with self._lock:
            return self._prepared(text, doc_id)

    def _prepare(self, text: str, doc_id: str) -> _Document:
        return _Document(text, self.encoder, self.config, doc_id)

    def features(self, document: str, question: str, options: Sequence[str], doc_id: str = "doc") -> "_Features":
        """Everything an answer needs except ``mu``: computed once, combined
        for any ``mu`` by :meth:`choose` (a mu sweep costs one pass)."""
        if len(options) < 2:
            raise InvalidInputError("a multiple-choice question needs at least two options")
        doc = self.document(document, doc_id)
        # Extract: the k passages BM25 ranks highest for the question (stable
        # order, so ties and an all-zero ranking keep document order).
        rows = np.argsort(-np.asarray(doc.retriever.scores(question)), kind="stable")[: self.config.k]
        statements = [f"{question} {option}" for option in options]
        vectors = np.asarray(self.encoder.encode(statements), dtype=np.float32)
        cosines = doc.vectors[rows] @ vectors.T  # (k, options)
        # BM25 of each option's own words over the whole article, read at the
        # evidence rows and scaled by the best value there into [0, 1].
        lexical = np.array([doc.retriever.scores(option) for option in options]).T[rows]
        top = float(lexical.max(initial=0.0))
        return _Features(tuple(doc.passages[int(r)] for r in rows), cosines, lexical / top if top > 0 else lexical)

    @staticmethod
    def choose(features: "_Features", mu: float) -> Choice:
        """The option whose best evidence passage scores highest at ``mu``."""
        combined = mu * features.cosines + (1 - mu) * features.lexical
        best_rows = combined.argmax(axis=0)
        scores = tuple(float(combined[r, i]) for i, r in enumerate(best_rows))
        evidence = tuple(features.passages[int(r)] for r in best_rows)
        return Choice(index=int(np.argmax(scores)), scores=scores, evidence=evidence)

    def answer(self, document: str, question: str, options: Sequence[str], doc_id: str = "doc") -> Choice:
        return self.choose(self.features(document, question, options, doc_id), self.config.mu)


@dataclass(frozen=True)
class _Features:
    passages: tuple[Passage, ...]  # the evidence extracted for the question
    cosines: np.ndarray  # (evidence, options): cosine of question + option with the passage
    lexical: np.ndarray  # (evidence, options): the option's BM25 on the passage, scaled to [0, 1]


def answer_multiple_choice(
    article: str,
    question: str,
    options: Sequence[str],
    reader: MultipleChoiceReader | None = None,
) -> Choice:
    """Answer one multiple-choice question about ``article`` (plain text).

    The app's multiple-choice mode calls this; pass a loaded ``reader`` to
    reuse the encoder (and the prepared article) across questions. The texts
    are read as a question and an upload are
    (:func:`~assistant.kernel.composed_text`): a document pasted from a PDF
    writes "\ufb01nance", an option typed on a Mac may write "e\u0301".
    """
    article, question = composed_text(article), composed_text(question)
    options = [composed_text(option) for option in options]
    return (reader or MultipleChoiceReader.load()).answer(article, question, options)
