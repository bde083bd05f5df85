"""Typed values that travel between pipeline stages.

Stages never share mutable state: a rewriter gets the history as a list of
texts, a retriever returns :class:`Passage` values, a reader returns an
:class:`Answer`, and the session keeps the :class:`Conversation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Passage", "Answer", "Rewrite", "Turn", "Conversation", "check_history"]


def check_history(history: Sequence[str]) -> list[str]:
    """``history`` as the list of texts a rewriter takes, or a TypeError: a
    string is a sequence too, and was taken letter by letter as earlier
    turns; None, or items that are not strings, would fail deep in a stage.

    >>> check_history(("Who was Ada?", "A mathematician."))
    ['Who was Ada?', 'A mathematician.']
    >>> check_history("Who was Ada?")
    Traceback (most recent call last):
    ...
    TypeError: the history must be a list of strings (earlier questions and answers, alternating; [] for a first turn), not str
    """
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise TypeError("the history must be a list of strings (earlier questions and answers, alternating; "
                        f"[] for a first turn), not {type(history).__name__}")
    if not all(isinstance(text, str) for text in history):
        kinds = sorted({type(text).__name__ for text in history if not isinstance(text, str)})
        raise TypeError(f"the history must be a list of strings, not a {type(history).__name__} holding {', '.join(kinds)}")
    return list(history)


@dataclass(frozen=True)
class Passage:
    """One retrieved passage; ``score`` is the retriever's: BM25's, or after
    rescoring the mix of scaled BM25 and the MiniLM cosine. ``description``
    is its collection's short description of the subject ("English
    mathematician (1815–1852)", the default collection's), shown beside
    the title and read for a person's years; it is not searched (BM25
    indexes the title and text alone), and a document has none."""

    id: str
    text: str
    score: float
    title: str = ""
    url: str = ""
    description: str = ""


@dataclass(frozen=True)
class Answer:
    """What a reader returns.

    ``evidence`` is the span of ``source_id``'s text the answer rests on, so
    the UI can highlight it. ``found`` is False when no passage was relevant
    enough: ``text`` then says so instead of inventing an answer.
    """

    text: str
    score: float
    evidence: str = ""
    source_id: str = ""
    found: bool = True


@dataclass(frozen=True)
class Rewrite:
    """A rewriter's output: the self-contained question.

    ``note`` is empty unless the rewriter had to depart from the model's
    output (e.g. it drifted from the question and the original was kept);
    the UI shows it in the turn's details, with ``rejected``, the model's
    output that was not used (empty when there was none). ``alternatives``
    are the other candidate rewrites the rewriter weighed when it picked
    ``text`` from several (``RewriterConfig.candidates``), empty otherwise:
    the search adds their words (:func:`~assistant.retrieval.expand_query`)
    and the rescorer their meaning (:class:`~assistant.retrieval.DenseRescorer`).
    """

    text: str
    note: str = ""
    rejected: str = ""
    alternatives: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Read back from JSON (a saved session) they come as a list.
        object.__setattr__(self, "alternatives", tuple(self.alternatives))


@dataclass(frozen=True)
class Turn:
    """One completed exchange, as the session stores and exports it."""

    question: str
    rewrite: Rewrite
    answer: Answer
    sources: tuple[Passage, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass
class Conversation:
    """The dialogue state. It belongs to one browser/terminal session only."""

    turns: list[Turn] = field(default_factory=list)

    def history(self, rewritten: bool = False) -> list[str]:
        """Earlier turns as texts, question and answer alternating, oldest first.

        This is QReCC's ``Context`` layout, the one every rewriter takes.
        ``rewritten``: each earlier question as its turn was rewritten (and
        searched), which resolves what the question as asked left open. A
        turn whose answer was not found has an empty answer here: the
        reader's "not found" sentence is not something the user was told
        about the topic, and a rewriter would take its words for the subject.

        >>> c = Conversation()
        >>> c.history()
        []
        >>> c.add(Turn("Who was Ada Lovelace?", Rewrite("Who was Ada Lovelace?"),
        ...            Answer("A mathematician.", 1.0)))
        >>> c.add(Turn("Who was her father?", Rewrite("Who was Ada Lovelace's father?"),
        ...            Answer("Lord Byron.", 1.0)))
        >>> c.history()[2:], c.history(rewritten=True)[2:]
        (['Who was her father?', 'Lord Byron.'], ["Who was Ada Lovelace's father?", 'Lord Byron.'])
        >>> c.add(Turn("And her son?", Rewrite("And Ada Lovelace's son?"),
        ...            Answer("I could not find an answer.", 0.0, found=False)))
        >>> c.history()[4:]
        ['And her son?', '']
        """
        texts: list[str] = []
        for turn in self.turns:
            texts += [turn.rewrite.text if rewritten else turn.question, turn.answer.text if turn.answer.found else ""]
        return texts

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)

    def undo(self) -> Turn | None:
        """Drop and return the last turn (None when there is none)."""
        return self.turns.pop() if self.turns else None
