"""Whether a name is known not to be a person's: by the default collection.

"And Paris?" after "When was Plato born?" asks no birth. The rewriter
tells a place or a firm from a person by the short description of the
default collection's article titled with the name: a place's or a firm's
names what it is ("Capital of France", "Country in Europe", "American
multinational technology company"), a person's gives a lifespan ("German
composer (1770–1827)") or a rank ("King of Wessex"). Read once, at the
first question that needs it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from assistant.kernel import DataFormatError

__all__ = ["not_a_person"]


# What a description calls a place or a firm. A ruler's description may
# name a state or an island as well ("King of Imerina on the island of
# Madagascar"): four of the collection's 1,828 people, whose swap is left
# to the model.
_NOT_A_PERSON = re.compile(r"(?i)\b(?:city|cities|capital|country|river|mountain|mountains|lake|island|islands|sea|ocean|continent"
                           r"|town|village|desert|peninsula|municipality|volcano|archipelago|region|province|state|metropolis"
                           r"|company|corporation)\b")


@lru_cache(maxsize=1)
def _places_by_title() -> frozenset[str]:
    # The titles (lower-cased) whose description says a place or a firm and
    # gives no lifespan. Without the collection installed nothing is known
    # and no swap is refused.
    from assistant.readers import lifespan
    from assistant.retrieval import read_collection

    try:
        return frozenset(passage["title"].lower() for passage in read_collection()
                         if _NOT_A_PERSON.search(passage.get("description", "")) and lifespan(passage["description"]) is None)
    except DataFormatError:
        return frozenset()


def not_a_person(name: str) -> bool:
    """Whether the default collection's article titled ``name`` describes a
    place or a firm; False for a name it has no article of ("Beethoven":
    "Ludwig van Beethoven" is titled in full) or a person's.

    >>> not_a_person("Paris"), not_a_person("Aristotle"), not_a_person("Beethoven"), not_a_person("Moses")
    (True, False, False, False)
    """
    return " ".join(name.split()).lower() in _places_by_title()
