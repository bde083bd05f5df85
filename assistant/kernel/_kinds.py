"""Kinds: the nouns that say what a place or a thing is, and the kind each names.

A short description says what its article is by a noun ("Capital of
France", "Country in Eastern Europe", "American multinational technology
company"); a passage calls a place by one ("Brindlemere is a small market
town", then "The town has a museum"); a name carries one ("Lake Victoria",
"the Nile River", "Harvard University"). The reader uses only the
second's nouns (PLACE_NOUNS); the rewriter reads the first (KIND_NOUNS)
and the third (NAME_KIND_WORDS, PLACE_NAME_WORDS), and both nouns where
a question names a kind of place. The words are kept here, once.

>>> KIND_NOUNS["capital"], KIND_NOUNS["archipelago"], KIND_NOUNS["university"]
('city', 'island', 'school')
>>> "county" in PLACE_NOUNS, "county" in KIND_NOUNS, "state" in PLACE_NOUNS, "state" in KIND_NOUNS
(True, False, False, True)
>>> NAME_KIND_WORDS["mount"], NAME_KIND_WORDS["college"], "fort" in NAME_KIND_WORDS, "fort" in PLACE_NAME_WORDS
('mountain', 'school', False, True)
"""

from __future__ import annotations

__all__ = ["KIND_NOUNS", "PLACE_NOUNS", "NAME_KIND_WORDS", "PLACE_NAME_WORDS"]

# A place people live in, and a land: what a passage's "The town" or "The
# country" stands for as well as what a description says its article is.
_SETTLEMENTS = ("city", "town", "village", "capital", "municipality")
_LANDS = ("country", "nation", "province", "region")

# What a short description says its article is, by the first of these nouns
# it holds ("Capital city of Texas" a city, "Country in Eastern Europe" and
# "U.S. state" a land), and the kind each names.
KIND_NOUNS: dict[str, str] = {
    **dict.fromkeys((*_SETTLEMENTS, "cities", "metropolis", "commune"), "city"),
    **dict.fromkeys((*_LANDS, "state", "continent", "territory"), "land"),
    **dict.fromkeys(("company", "corporation", "conglomerate"), "company"),
    **dict.fromkeys(("university", "college"), "school"),
    **dict.fromkeys(("island", "islands", "archipelago"), "island"),
    **dict.fromkeys(("mountain", "mountains", "volcano"), "mountain"),
    **dict.fromkeys(("sea", "ocean"), "sea"),
    **{word: word for word in ("currency", "language", "planet", "river", "lake", "desert", "peninsula")},
}

# The nouns for a place a passage's "The <noun> …" may stand for the place
# the sentence before named by: a settlement, a land or an island, also a
# small one or a part of a land. Those are no description's kind ("District
# and city in Valle del Cauca" is Cali, a city; "Dam in Yiling District"),
# nor is "the state" a passage's place (a government as often as a land).
PLACE_NOUNS = frozenset(
    (*_SETTLEMENTS, *_LANDS, "island", "hamlet", "settlement", "port", "county", "district", "borough", "parish")
)

# The words a place's name is put with that name no place by themselves
# ("Mount Everest", "Lake Victoria", "the Nile River", "Cape Horn", "Fort
# Worth", "Saint Helena").
PLACE_NAME_WORDS = frozenset(("saint", "mount", "river", "lake", "cape", "fort"))

# The words in a name that say what it names, and the kind they say
# (:data:`KIND_NOUNS`'s): Lake Victoria is a lake, Harvard University a
# school; not "Fort Worth" (a city), "Cape Town" or "Saint Louis".
NAME_KIND_WORDS: dict[str, str] = {
    "mount": "mountain",
    **{word: KIND_NOUNS[word] for word in ("river", "lake", "university", "college")},
}
