"""Minimum Bayes risk: the candidate rewrite the others agree with most.

A rewriter's N-best holds several readings of one question; the one that
shares the most words with the rest is the safest pick when no reference
is at hand (BENCHMARKS.md §10 measures it against the greedy rewrite).
Agreement is unigram F1 on the words every lexical metric of the project
sees (``tokens(text, "rouge")``), so it needs no model and no training turns.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from assistant.kernel import tokens

__all__ = ["unigram_f1", "consensus"]


def unigram_f1(a: str, b: str) -> float:
    """Unigram F1 of two texts (counts clipped, as ROUGE-1 clips them).

    >>> round(unigram_f1("When was Ada Lovelace born?", "When was she born?"), 3)
    0.667
    >>> unigram_f1("", "anything")
    0.0
    """
    left, right = Counter(tokens(a, "rouge")), Counter(tokens(b, "rouge"))
    shared = sum((left & right).values())
    if shared == 0:
        return 0.0
    recall, precision = shared / sum(left.values()), shared / sum(right.values())
    return 2 * recall * precision / (recall + precision)


def consensus(candidates: Sequence[str], voters: Sequence[str] = ()) -> int:
    """Index of the candidate with the highest summed unigram F1 against the
    others and ``voters`` (texts that count but cannot be picked); the
    earliest on ties, so callers list their preferred one first.

    >>> consensus(["Who wrote it?", "Who wrote Hamlet?", "Who wrote the play Hamlet?"])
    1
    >>> consensus(["Only one"]), consensus(["Who wrote it?", "Who wrote Hamlet?"], voters=["Who wrote the play Hamlet?"])
    (0, 1)
    """
    if not candidates:
        raise ValueError("consensus of no candidates")
    scores = [sum(unigram_f1(c, o) for j, o in enumerate(candidates) if j != i) + sum(unigram_f1(c, v) for v in voters)
              for i, c in enumerate(candidates)]
    return max(range(len(candidates)), key=lambda i: (scores[i], -i))
