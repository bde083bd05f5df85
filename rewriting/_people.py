"""Whether a name is known to be a person's: by the default collection.

"And Paris?" after "When was Plato born?" asks no birth. The rewriter
tells a person from a place, a firm or a word by the short description of
the default collection's article titled with the name: a person's gives a
lifespan ("German composer (1770–1827)"), a place's or a firm's names what
it is ("Capital of France", "American multinational technology company").
Read once, when the rewriter loads (:func:`warm_people`) or at the first
question that needs it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from assistant.kernel import DataFormatError

__all__ = ["a_person", "warm_people"]


# What a description calls a place or a firm: a name titling one ("Jordan")
# is no person's even where a person's title ends with it.
_NOT_A_PERSON = re.compile(r"(?i)\b(?:city|cities|capital|country|river|mountain|mountains|lake|island|islands|sea|ocean|continent"
                           r"|town|village|desert|peninsula|municipality|volcano|archipelago|region|province|state|metropolis"
                           r"|company|corporation)\b")


@lru_cache(maxsize=1)
def _people() -> frozenset[str]:
    # The titles (lower-cased) whose description gives a lifespan, and their
    # last words ("beethoven" of "Ludwig van Beethoven"), less the titles of
    # places and firms. Without the collection installed no one is known, and
    # no birth is asked of a new name by rule.
    from assistant.readers import lifespan
    from assistant.retrieval import read_collection

    places, people = set(), set()
    try:
        for passage in read_collection():
            description, title = passage.get("description", ""), " ".join(passage["title"].split()).lower()
            if lifespan(description) is not None:
                people.update((title, title.split()[-1]))
            elif _NOT_A_PERSON.search(description):
                places.add(title)
    except DataFormatError:
        return frozenset()
    return frozenset(people - places)


def warm_people() -> None:
    """Read the default collection's descriptions now: the first read takes
    seconds, which a rewriter loading its model can spend rather than the
    first batch of questions that asks a birth of a new name."""
    _people()


def a_person(name: str) -> bool:
    """Whether the default collection gives ``name`` a lifespan: its
    article titled ``name``, or a person's whose title ends with it
    ("Beethoven"), and no place or firm is titled ``name``.
    """
    return " ".join(name.split()).lower() in _people()
