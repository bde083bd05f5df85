"""Multiple choice over one long document (QuALITY's setting).

The article is cut into passages; BM25 over them extracts the ``k`` passages
nearest the question, and each option is scored by the embedding cosine of
the statement "question + option" with those passages (``scoring``: as it
is, or with the question's own direction removed from both), interpolated
with the option's own BM25 there. The app's multiple-choice mode and ``python -m eval.quality``
both use :class:`MultipleChoiceReader`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..kernel import ConfigError, InvalidInputError, Passage, composed_text
from ..retrieval import ChunkRetriever, split_passages

__all__ = ["QualityConfig", "Choice", "MultipleChoiceReader", "answer_multiple_choice", "CHOICE_SCORINGS"]

# How an option's statement is matched to an evidence passage (``QualityConfig.scoring``):
# "statement": the cosine of "question + option" with the passage;
# "partial": the same cosine after removing the question's direction from both
# vectors. The evidence was extracted for the question, so the question's part
# of the match is alike for every option; an option that adds nothing to the
# question ("Nobody", "None of the above") scored as high as the question
# itself under "statement", and keeps no direction of its own under "partial".
CHOICE_SCORINGS = ("statement", "partial")


@dataclass(frozen=True)
class QualityConfig:
    passage_words: int = 60  # words per article passage: a few sentences, enough context for MiniLM's 256 tokens
    k: int = 4  # passages extracted per question (BM25 on the question)
    # Weight of the embedding cosine vs the option's normalised BM25: the best of
    # a sweep on the questions it is scored on (the honest figure is
    # ``eval.quality --cross-validate``'s, in BENCHMARKS.md).
    mu: float = 1.0
    scoring: str = "statement"  # one of CHOICE_SCORINGS: how the cosine matches an option to a passage

    def __post_init__(self) -> None:
        if self.scoring not in CHOICE_SCORINGS:
            raise ConfigError(f"scoring must be one of {', '.join(CHOICE_SCORINGS)}, not {self.scoring!r}")


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

    def features(
        self, document: str, question: str, options: Sequence[str], doc_id: str = "doc", k: int | None = None
    ) -> "_Features":
        """Everything an answer needs except ``mu``: computed once, combined
        for any ``mu`` by :meth:`choose` (a mu sweep costs one pass). ``k``
        (default ``config.k``) passages are extracted; :meth:`_Features.first`
        gives the features of fewer, as if extracted with that ``k``."""
        if len(options) < 2:
            raise InvalidInputError("a multiple-choice question needs at least two options")
        doc = self.document(document, doc_id)
        # Extract: the k passages BM25 ranks highest for the question (stable
        # order, so ties and an all-zero ranking keep document order).
        rows = np.argsort(-np.asarray(doc.retriever.scores(question)), kind="stable")[: k or self.config.k]
        statements = [f"{question} {option}" for option in options]
        passages = doc.vectors[rows]
        if self.config.scoring == "partial":
            vectors = np.asarray(self.encoder.encode([question, *statements]), dtype=np.float32)
            cosines = _without(passages, vectors[0]) @ _without(vectors[1:], vectors[0]).T
        else:
            cosines = passages @ np.asarray(self.encoder.encode(statements), dtype=np.float32).T  # (k, options)
        # BM25 of each option's own words over the whole article, read at the
        # evidence rows (scaled into [0, 1] by :class:`_Features`).
        lexical = np.array([doc.retriever.scores(option) for option in options]).T[rows]
        return _Features(tuple(doc.passages[int(r)] for r in rows), cosines, lexical)

    @staticmethod
    def choose(features: "_Features", mu: float) -> Choice:
        """The option whose best evidence passage scores highest at ``mu``."""
        combined = mu * features.cosines + (1 - mu) * features.scaled_lexical
        best_rows = combined.argmax(axis=0)
        scores = tuple(float(combined[r, i]) for i, r in enumerate(best_rows))
        evidence = tuple(features.passages[int(r)] for r in best_rows)
        return Choice(index=int(np.argmax(scores)), scores=scores, evidence=evidence)

    def answer(self, document: str, question: str, options: Sequence[str], doc_id: str = "doc") -> Choice:
        return self.choose(self.features(document, question, options, doc_id), self.config.mu)


def _without(rows: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """``rows`` with their component along the unit vector ``direction``
    removed, L2-normalised; a row with (almost) nothing left is all zeros,
    so it matches nothing rather than noise."""
    rest = rows - np.outer(rows @ direction, direction)
    norms = np.linalg.norm(rest, axis=1, keepdims=True)
    return np.divide(rest, norms, out=np.zeros_like(rest), where=norms > 1e-6)


@dataclass(frozen=True)
class _Features:
    passages: tuple[Passage, ...]  # the evidence extracted for the question, best first
    cosines: np.ndarray  # (evidence, options): the embedding match of each option with each passage
    lexical: np.ndarray  # (evidence, options): the option's BM25 on the passage

    @property
    def scaled_lexical(self) -> np.ndarray:
        """``lexical`` scaled by its largest value into [0, 1]."""
        top = float(self.lexical.max(initial=0.0))
        return self.lexical / top if top > 0 else self.lexical

    def first(self, k: int) -> "_Features":
        """The features of the ``k`` best passages only (a k sweep costs one pass)."""
        return _Features(self.passages[:k], self.cosines[:k], self.lexical[:k])


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
