"""QReCC's retrieval relevance heuristic and hit rate (``ml-qrecc/utils``)."""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher
from typing import Sequence

from assistant.kernel import Passage

from .metrics import normalize_answer, token_f1

__all__ = ["RELEVANCE_THRESHOLD", "closest_span", "relevant_ids", "hit_at_k"]

# QReCC's threshold: a passage is relevant when its closest span to the gold
# answer reaches this F1 (ml-qrecc utils/evaluate_retrieval.py).
RELEVANCE_THRESHOLD = 0.8


def _approximate_window(context: str, target: str) -> str:
    # QReCC: the word n-gram of the (normalised) passage most similar to the
    # (normalised) answer by difflib's quick_ratio, n = answer length + 5%.
    if target in context:
        return target
    size = len(target.split()) + int(0.05 * len(target.split()))
    words = context.split()
    matcher = SequenceMatcher()
    matcher.set_seq2(target)
    best, best_ratio = "", 0.0
    for start in range(len(words) - size + 1):
        candidate = " ".join(words[start : start + size])
        matcher.set_seq1(candidate)
        ratio = matcher.quick_ratio()
        if ratio > best_ratio:
            best, best_ratio = candidate, ratio
            if ratio == 1.0:
                break
    return best


def closest_span(passage: str, answer: str) -> tuple[str, float]:
    """QReCC's span heuristic: the span of ``passage`` closest to ``answer``
    and its F1 (``find_closest_span_match`` in ml-qrecc).

    >>> closest_span("The tower was built in 1889 for the World's Fair.", "in 1889")
    ('in 1889', 1.0)
    >>> span, f1 = closest_span("It opened to the public in May 1889.", "built in 1889")
    >>> span, round(f1, 3)
    ('in', 0.5)
    """
    window = _approximate_window(normalize_answer(passage), normalize_answer(answer)).split()
    gold = Counter(normalize_answer(answer).split())
    n_gold = sum(gold.values())
    best, best_score = (0, 0), 0.0
    if n_gold:
        for i in range(len(window)):
            seen: Counter = Counter()
            shared = 0
            for j in range(i, len(window)):
                word = window[j]
                seen[word] += 1
                if seen[word] <= gold[word]:
                    shared += 1
                if shared:
                    precision, recall = shared / (j - i + 1), shared / n_gold
                    score = 2 * precision * recall / (precision + recall)
                    if score > best_score:
                        best, best_score = (i, j + 1), score
    span = " ".join(window[best[0] : best[1]])
    return span, token_f1(answer, span)


def relevant_ids(passages: Sequence[Passage], answer: str, threshold: float = RELEVANCE_THRESHOLD) -> set[str]:
    """Ids of the passages QReCC counts as relevant to ``answer`` (none when
    the answer is empty)."""
    if not answer.strip():
        return set()
    return {p.id for p in passages if closest_span(p.text, answer)[1] >= threshold}


def hit_at_k(ranked_ids: Sequence[str], relevant: set[str], k: int) -> float:
    """QReCC's recall@k: 1.0 when any of the first ``k`` results is relevant.

    (Not :func:`eval.metrics.recall_at_k`, the share of the relevant set
    found: QReCC's relevant set is only known among the retrieved passages.)

    >>> hit_at_k(["a", "b", "c"], {"c"}, 2), hit_at_k(["a", "b", "c"], {"c"}, 3)
    (0.0, 1.0)
    """
    return float(any(doc in relevant for doc in ranked_ids[:k]))
