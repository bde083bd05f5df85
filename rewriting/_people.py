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

from assistant.kernel import KIND_NOUNS, DataFormatError

__all__ = ["a_person", "a_given_name", "kinds_of", "warm_people"]


# What a description says a name is, by the first of the kernel's kind
# nouns it holds: "And London?" after "What is the capital of France?" asks
# no capital of a city.
_KIND_WORD = re.compile(r"(?i)\b(?:" + "|".join(KIND_NOUNS) + r")\b")
# A land's noun right after the first ("Island country", "City-state"):
# Singapore is a land as well as an island, Sparta one as well as a city.
_AND_A_LAND = re.compile(r"(?i)[\s-]+(?:" + "|".join(word for word, kind in KIND_NOUNS.items() if kind == "land") + r")\b")
# What a description calls a place or a firm: a name titling one ("Jordan")
# is no person's even where a person's title ends with it.
_NOT_A_PERSON = re.compile(r"(?i)\b(?:" + "|".join(word for word, kind in KIND_NOUNS.items()
                                                   if kind not in ("currency", "language", "planet", "school")) + r")\b")
_KIND_END = re.compile(r"(?i)^(?:" + "|".join(KIND_NOUNS) + r")\s+|\s+(?:" + "|".join(KIND_NOUNS) + r")$")
# An office's holder whose description gives the years in office, not a
# lifespan ("Chancellor of Germany from 2005 to 2021").
_OFFICE = re.compile(r"(?i)^(?:\d+(?:st|nd|rd|th)\s+(?:and\s+\d+(?:st|nd|rd|th)\s+)?)?(?:president|chancellor|prime\s+minister|head"
                     r"|king|queen|emperor|empress|pope|tsar|sultan|pharaoh)\b.*\b(?:from|since)\s+\d{3,4}\b")


@lru_cache(maxsize=1)
def _known() -> tuple[frozenset[str], frozenset[str], dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    # The titles (lower-cased) whose description gives a lifespan or an
    # office's years, and their last words ("beethoven" of "Ludwig van
    # Beethoven"), less the titles of places and firms: people; the first
    # words of those with a lifespan ("ludwig"): given names; and what each
    # title says its name is (:data:`KIND_NOUNS`), by the title, by it without
    # its bracket ("Georgia (country)"), before its comma ("Austin, Texas")
    # or without the kind's word ("Amazon River"), and "person" for a
    # person; and the same save what a title without its kind's word gives.
    # Without the collection installed no one and nothing is known,
    # and no birth is asked of a new name by rule.
    from assistant.readers import lifespan
    from assistant.retrieval import described_titles

    places, people, officers, given, kinds, whole = set(), set(), set(), set(), {}, {}
    try:
        for title, description in described_titles():
            title = title.lower()
            kind_word, span = _KIND_WORD.search(description), lifespan(description)
            if span is not None:
                people.update((title, title.split()[-1]))
                given.update(title.split()[:-1][:1])
            elif _OFFICE.search(description):
                officers.update((title, title.split()[-1]))
            elif kind_word:
                bare = re.sub(r"\s*\(.*\)$", "", title)
                said = {KIND_NOUNS[kind_word.group().lower()]} | ({"land"} if _AND_A_LAND.match(description, kind_word.end()) else set())
                for key in {title, bare, title.split(",")[0].strip()}:
                    kinds[key] = kinds.get(key, frozenset()) | said
                    whole[key] = whole.get(key, frozenset()) | said
                # "Amazon River" and "Lake Victoria" are "the Amazon" and
                # "Victoria" too, of the first kind only: "Solomon" of the
                # Solomon Islands ("Island country") is no land.
                cut = _KIND_END.sub("", bare)
                kinds[cut] = kinds.get(cut, frozenset()) | {KIND_NOUNS[kind_word.group().lower()]}
            if _NOT_A_PERSON.search(description) and span is None:
                places.add(title)
    except DataFormatError:
        return frozenset(), frozenset(), {}, {}
    for name in (people | officers) - places:
        kinds[name] = kinds.get(name, frozenset()) | {"person"}
        whole[name] = whole.get(name, frozenset()) | {"person"}
    return frozenset(people - places), frozenset(given - places), kinds, whole


def _people() -> frozenset[str]:
    return _known()[0]


def warm_people() -> None:
    """Read the default collection's descriptions now: the first read takes
    seconds, which a rewriter loading its model can spend rather than the
    first batch of questions that asks a birth of a new name."""
    _known()


def a_person(name: str) -> bool:
    """Whether the default collection gives ``name`` a lifespan: its
    article titled ``name``, or a person's whose title ends with it
    ("Beethoven"), and no place or firm is titled ``name``.
    """
    return " ".join(name.split()).lower() in _people()


def a_given_name(word: str) -> bool:
    """Whether ``word`` opens the name of a person the default collection
    gives a lifespan ("Edward" of "Edward Elgar"): after a title, a
    person's name ("King Edward"), not a thing's ("King Kong", "Dr Pepper").
    """
    return word.lower() in _known()[1]


def kinds_of(name: str, whole: bool = False) -> frozenset[str]:
    """What the default collection says ``name`` is: "person", "city",
    "land", "currency", "language", ... (none where it knows no article
    of that name, or its description says none of these). A name of
    several articles has several ("Jordan": a country and a river; no
    person, as a place is titled so), and so has a description naming a
    land right after its first kind ("Island country": Singapore). A
    title's name without its kind's word is of that kind too ("the Amazon"
    a river, "Solomon" of the Solomon Islands an island), unless ``whole``.
    """
    return _known()[3 if whole else 2].get(" ".join(name.split()).lower(), frozenset())
