"""The extractive sentence reader: pick the answer sentence from the passages.

No SQuAD reader is installable here, so the reader ranks sentences: each
sentence of the top-k passages is scored by its embedding similarity to the
(rewritten) question (all-MiniLM-L6-v2), interpolated with its passage's BM25
score as QReCC interpolates reader and retriever scores.
"""

from __future__ import annotations

import re
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from ._types import Answer, Passage
from .config import ReaderConfig

__all__ = ["Reader", "SentenceReader", "split_sentences", "NOT_FOUND"]

NOT_FOUND = "I could not find an answer to that in the collection."

# A sentence ends at . ! or ? followed by space and an upper-case letter, digit
# or quote; "e.g. the" and "St. Louis"-style abbreviations mostly survive
# because the next word is lower case or the split is harmless.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[A-Z0-9])")


@runtime_checkable
class Reader(Protocol):
    """Reads an answer to ``question`` from ``passages``."""

    def read(self, question: str, passages: Sequence[Passage]) -> Answer: ...


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (a light rule, no model).

    >>> split_sentences("Ada wrote notes. She died in 1852! Why? e.g. this.")
    ['Ada wrote notes.', 'She died in 1852!', 'Why? e.g. this.']
    """
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


class SentenceReader:
    """Answer = the best-scoring sentence of the retrieved passages.

    ``encoder`` is any object with ``encode(list[str]) -> np.ndarray`` returning
    L2-normalised rows (see :func:`eval.encoders.load_minilm`).
    """

    def __init__(self, encoder, config: ReaderConfig = ReaderConfig()):
        self.encoder = encoder
        self.config = config

    @classmethod
    def from_pretrained(cls, path: str | None = None, config: ReaderConfig = ReaderConfig()) -> "SentenceReader":
        from eval.encoders import load_minilm

        return cls(load_minilm(path), config)

    def candidates(self, passages: Sequence[Passage]) -> list[tuple[int, int, str]]:
        """(passage index, sentence index, sentence) for every usable sentence."""
        return [
            (p, s, sentence)
            for p, passage in enumerate(passages)
            for s, sentence in enumerate(split_sentences(passage.text))
            if len(sentence) >= self.config.min_sentence_chars
        ]

    def scores(self, question: str, passages: Sequence[Passage], candidates) -> tuple[np.ndarray, np.ndarray]:
        """(similarity, combined score) per candidate sentence.

        Retrieval scores are divided by the best one so both terms lie in [0, 1]
        (BM25 is unbounded and its scale varies with the query).
        """
        vectors = self.encoder.encode([question] + [c[2] for c in candidates])
        similarity = vectors[1:] @ vectors[0]
        top = max((p.score for p in passages), default=0.0)
        retrieval = np.array([passages[p].score / top if top > 0 else 0.0 for p, _, _ in candidates])
        mu = self.config.mu
        return similarity, mu * similarity + (1 - mu) * retrieval

    def read(self, question: str, passages: Sequence[Passage]) -> Answer:
        passages = passages[: self.config.read_k]
        candidates = self.candidates(passages)
        if not candidates:
            return Answer(NOT_FOUND, 0.0, found=False)
        similarity, combined = self.scores(question, passages, candidates)
        best = int(np.argmax(combined))
        if similarity[best] < self.config.min_similarity:
            return Answer(NOT_FOUND, float(combined[best]), found=False)
        p, s, sentence = candidates[best]
        sentences = [sentence]
        # A following sentence of the same passage that is nearly as relevant
        # usually continues the answer ("She ... . Her notes ...").
        for (p2, s2, other), sim in zip(candidates[best + 1 :], similarity[best + 1 :]):
            if len(sentences) >= self.config.max_sentences or p2 != p or s2 != s + len(sentences):
                break
            if sim < 0.8 * similarity[best]:
                break
            sentences.append(other)
        text = " ".join(sentences)
        return Answer(text, float(combined[best]), evidence=text, source_id=passages[p].id)
