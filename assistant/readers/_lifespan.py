"""A person's years of birth and death from their collection's short description.

The default collection's summaries often give no years at all ("Ada
Lovelace … was an English mathematician and writer …"), while Wikipedia's
short description beside them does: "English mathematician (1815–1852)".
A passage carries it (``Passage.description``, not searched); for "When
was X born?" / "When did X die?" the reader takes the year from the
description of X's own article, the description shown as the evidence.
A document of the user's has no description, and reads as before.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..kernel import Passage, folded_text, tokens
from ._shapes import answer_kind, kin_asked, listed_word, question_names

__all__ = ["holds_year", "lifespan", "life_event", "lived"]

# One side of a lifespan: "1815", "c. 390", "after 238 BCE", "672/3", "1544?", "AD 21", "1460s".
_SIDE = (r"(?:(?:c\.|ca\.|circa|after|before)\s*)?(?:AD\s+)?\d{1,4}(?:/\d{1,4})?s?\??"
         r"(?:\s*(?:BC|BCE|AD|CE)\b)?")
_ERA = re.compile(r"\s*\b(BC|BCE|AD|CE)$")
_LIFESPAN = re.compile(
    rf"(?:(?P<only>[Bb]orn:?|b\.|[Dd]ied|d\.)\s*(?P<one>{_SIDE})|(?P<born>{_SIDE})\s*[–—-]\s*(?P<died>{_SIDE}))"
)


def _side(text: str) -> str:
    return re.sub(r"^(c\.|ca\.)\s*", "c. ", text.strip())


def lifespan(description: str) -> tuple[str, str] | None:
    """(born, died) as a short description writes them, "" for a year it
    does not give, or None when it gives no lifespan: its one bracket,
    at its end, holds a year or two and nothing else. A reign ("r. 912–929")
    or several terms ("2006–2007; 2012–2020") is no lifespan; an office's
    description with plain years gives its holder's life far more often than
    the office's years ("King of Denmark, Norway and England (c.995–1035)").

    >>> lifespan("English mathematician (1815–1852)"), lifespan("American actor (born 1940)")
    (('1815', '1852'), ('1940', ''))
    >>> lifespan("Greek philosopher (c. 428-347 BC)"), lifespan("Emperor of Brazil (r. 1822–31)")
    (('c. 428 BC', '347 BC'), None)
    >>> lifespan("Polish composer (1810–49)"), lifespan("Flemish painter (died 1441)")
    (('1810', '1849'), ('', '1441'))
    >>> [lifespan(d) for d in ("Sultan of Mataram (r. 1613–1645)", "Prime Minister of Japan (2006–2007; 2012–2020)", "")]
    [None, None, None]
    """
    brackets = re.findall(r"\(([^()]*)\)", description)
    if len(brackets) != 1 or not description.rstrip().endswith(")"):
        return None
    match = _LIFESPAN.fullmatch(brackets[0].strip())
    if match is None:
        return None
    if match.group("only"):
        one = _side(match.group("one"))
        return (one, "") if match.group("only")[0] in "Bb" else ("", one)
    born, died = _side(match.group("born")), _side(match.group("died"))
    era = _ERA.search(died)
    if era and not _ERA.search(born) and "AD" not in born.split():
        born = f"{born} {era.group(1)}"  # "427–347 BC": both BC
    digits = re.fullmatch(r"(?:c\. )?(\d+)", born)
    if died.isdigit() and digits and len(died) < len(digits.group(1)):
        died = digits.group(1)[: len(digits.group(1)) - len(died)] + died  # "(c. )1810–49": 1849
    return born, died


def holds_year(text: str, year: str) -> bool:
    """Whether ``text`` holds the year of ``year`` as a description writes
    it (its first number: "c. 995" is 995, "60/61" is 60).

    >>> holds_year("27 November 1852", "1852"), holds_year("1957", "1913"), holds_year("in 60 AD", "60/61")
    (True, False, True)
    """
    number = re.search(r"\d+", year)
    return number is not None and re.search(rf"(?<!\d){number.group()}(?!\d)", text) is not None


def life_event(question: str) -> str | None:
    """"birth" or "death" when a date question asks when someone was born
    or died, else None (one that asks both is left to the sentences).

    >>> [life_event(q) for q in ("When was Ada Lovelace born?", "What year did she die?", "When did he marry?")]
    ['birth', 'death', None]
    """
    if answer_kind(question) != "date":
        return None
    words = {listed_word(word) for word in tokens(question, "term")}
    if re.search(r"\bpass(?:ed|es)?\s+away\b", question, re.IGNORECASE):
        words.add("death")
    asked = words & {"birth", "death"}
    return next(iter(asked)) if len(asked) == 1 else None


def _name_words(text: str) -> set[str]:
    return set(tokens(folded_text(re.sub(r"\([^)]*\)", " ", text)), "rouge"))


def lived(question: str, passages: Sequence[Passage]) -> tuple[Passage, str] | None:
    """(the passage of the question's subject, the year asked) when
    ``question`` asks when someone was born or died (:func:`life_event`)
    and the description of that person's own article says it
    (:func:`lifespan`), else None. The subject's article is one whose title
    is the question's names (its capitalised words after the first), or
    holds them all ("Newton" for "Isaac Newton"), or is held in them
    ("Napoleon" of "Napoleon Bonaparte"), in that order, then the
    retriever's. A question about a relative ("When was Ada Lovelace's
    father born?") asks about someone else.

    >>> ada = Passage("Ada Lovelace", "Ada Lovelace was an English mathematician.", 1.0, "Ada Lovelace",
    ...               description="English mathematician (1815–1852)")
    >>> lived("When did Ada Lovelace die?", [ada])[1], lived("When did Lovelace's father die?", [ada])
    ('1852', None)
    """
    event = life_event(question)
    if event is None or kin_asked(question):
        return None
    names = _name_words(" ".join(re.sub(r"['’]s$", "", name) for name in question_names(question)))
    if not names:
        return None
    found = []
    for order, passage in enumerate(passages):
        title = _name_words(passage.title)
        fit = 0 if title == names else 1 if names <= title else 2 if title <= names else None
        years = lifespan(passage.description) if title and fit is not None else None
        year = years[event == "death"] if years else ""
        if year:
            found.append((fit, order, passage, year))
    return min(found, key=lambda hit: hit[:2])[2:] if found else None
