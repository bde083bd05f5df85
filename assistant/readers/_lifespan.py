"""A person's years of birth and death from their collection's short description.

The default collection's summaries often give no years at all ("Ada
Lovelace … was an English mathematician and writer …"), while Wikipedia's
short description beside them does: "English mathematician (1815–1852)".
A passage carries it (``Passage.description``, not searched); for "When
was X born?" / "When did X die?" the reader takes the year from the
description of X's own article, the description shown as the evidence;
"How old was X when she died?" from the same two years, as the age they
allow ("36 or 37": the days are not known). A document of the user's has
no description, and reads as before.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..kernel import Passage, name_words, same_name, tokens
from ._shapes import answer_kind, asked_from, lead_name, kin_asked, listed_word, question_names

__all__ = ["holds_answer", "lifespan", "life_event", "lived", "age_at_death"]

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


def holds_answer(text: str, answer: str) -> bool:
    """Whether ``text`` holds a number :func:`lived`'s ``answer`` gives
    before its bracket: a year as a description writes it ("c. 995" is
    995, "60/61" 60 or 61), or one of the ages an age allows ("36 or 37").

    >>> holds_answer("27 November 1852", "1852"), holds_answer("1957", "1913"), holds_answer("in 60 AD", "60/61")
    (True, False, True)
    >>> holds_answer("at the age of 36", "36 or 37 (1815–1852)"), holds_answer("aged 1852", "36 or 37 (1815–1852)")
    (True, False)
    """
    said = set(re.findall(r"\d+", answer.split("(")[0]))
    return any(re.search(rf"(?<!\d){number}(?!\d)", text) for number in said)


# The years a side of a lifespan gives, as numbers with their sign (1 BC
# is 0, 2 BC -1: there is no year 0): one, or each a slash offers ("672/3"
# is 672 or 673); and whether it is only about them ("c. 390", "1544?").
def _years(side: str) -> tuple[list[int], bool] | None:
    """(the years, whether approximate), or None for a bound or a decade
    ("after 238 BCE", "1460s"), which give no age."""
    if re.match(r"(?:after|before)\b", side) or re.search(r"\ds\b", side):
        return None
    numbers = re.findall(r"\d+", side)
    # "672/3": the second year's digits end the first's.
    years = [int(numbers[0][: len(numbers[0]) - len(n)] + n) for n in numbers]
    era = _ERA.search(side)
    bc = era is not None and era.group(1) in ("BC", "BCE")
    return [1 - year if bc else year for year in years], bool(re.match(r"c\. ", side) or "?" in side)


def age_at_death(born: str, died: str) -> str | None:
    """The age a lifespan (:func:`lifespan`'s two sides) allows, said with
    its years, or None when a side is missing or gives no year to count
    from. Years alone give the age to within one: its birthday may not have
    come in the year of death ("36 or 37"); a year of two ("1729/30") widens
    it, and an uncertain year ("c. 428") gives an age only "about" it.

    >>> age_at_death("1815", "1852"), age_at_death("100 BC", "44 BC"), age_at_death("c. 428 BC", "347 BC")
    ('36 or 37 (1815–1852)', '55 or 56 (100 BC–44 BC)', 'about 81 (c. 428 BC–347 BC)')
    >>> age_at_death("4 BC", "AD 65"), age_at_death("1729/30", "1800"), age_at_death("c. 342/347", "420")
    ('67 or 68 (4 BC–AD 65)', '69 to 71 (1729/30–1800)', 'about 73 to 78 (c. 342/347–420)')
    >>> age_at_death("1940", ""), age_at_death("after 238 BCE", "180 BCE"), age_at_death("1544?", "1512")
    (None, None, None)
    """
    first, last = (_years(side) if side else None for side in (born, died))
    if first is None or last is None:
        return None
    least, most = min(last[0]) - max(first[0]), max(last[0]) - min(first[0])
    # A description's years in the wrong order, or a life too long to be
    # one, is a misread description, not an age.
    if not (0 < least and most < 130):
        return None
    if first[1] or last[1]:
        said = f"about {most}" if least == most else f"about {least} to {most}"
    else:
        said = f"{most - 1} or {most}" if least == most else f"{least - 1} to {most}"
    return f"{said} ({born}–{died})"


# "How old was X when he died?", "… at (his) death?", "At what age did X
# die?", "How long did X live?" (not "… live in Paris?": how long X lived
# there).
_AGE_AT_DEATH = re.compile(
    r"^(?:how\s+old\s+was\s+.+?\s+(?:when\s+.+?\s+(?:died|passed\s+away)|at\s+(?:(?:the\s+time\s+of\s+)?"
    r"(?:his|her|their)\s+)?death)"
    r"|(?:at\s+)?what\s+age\s+(?:did\s+.+?\s+(?:die|pass\s+away)(?:\s+at)?|was\s+.+?\s+when\s+.+?\s+(?:died|passed\s+away))"
    r"|how\s+(?:long|many\s+years)\s+did\s+.+?\s+live(?:\s+for)?"
    r"|what\s+was\s+.+?['’]s?\s+age\s+(?:at|when\s+.+?\s+died)(?:\s+(?:(?:his|her|their)\s+)?death)?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# "… when X died": X is the one whose age at death is asked only as a
# pronoun or the subject's own name; "How old was Plato when Socrates
# died?" asks Plato's age at another's death, which no lifespan gives.
_WHEN_DIED = re.compile(
    r"^(?:how\s+old|(?:at\s+)?what\s+age|what)\s+was\s+(?P<subject>.+?)(?:['’]s?\s+age)?"
    r"\s+when\s+(?P<who>.+?)\s+(?:died|passed\s+away)\b",
    re.IGNORECASE,
)


def _own_death(question: str) -> bool:
    """Whether a "… when X died" question (if it is one) asks about the
    subject's own death.

    >>> _own_death("How old was Mozart when he died?"), _own_death("How old was Plato when Socrates died?")
    (True, False)
    >>> _own_death("How old was Mozart when Wolfgang Amadeus Mozart died?"), _own_death("How long did Bohr live?")
    (True, True)
    """
    found = _WHEN_DIED.match(question)
    if found is None:
        return True
    who = found["who"].strip()
    return who.lower() in {"he", "she", "they"} or same_name(who, found["subject"])


def life_event(question: str) -> str | None:
    """"birth" or "death" when a date question asks when someone was born
    or died, "age" when a question asks how old they were when they died,
    else None (one that asks both is left to the sentences).

    >>> [life_event(q) for q in ("When was Ada Lovelace born?", "What year did she die?", "When did he marry?")]
    ['birth', 'death', None]
    >>> [life_event(q) for q in ("How old was Ada Lovelace when she died?", "At what age did he die?",
    ...                          "How long did Bohr live?", "How long did Bohr live in Copenhagen?")]
    ['age', 'age', 'age', None]
    >>> print(life_event("How old was Plato when Socrates died?"))
    None
    >>> life_event("And how old was Ada Lovelace when she died?"), life_event("So when was she born?")
    ('age', 'birth')
    """
    asked = asked_from(question).strip()
    if _AGE_AT_DEATH.match(asked):
        return "age" if _own_death(asked) else None
    if answer_kind(question) != "date":
        return None
    words = {listed_word(word) for word in tokens(question, "term")}
    if re.search(r"\bpass(?:ed|es)?\s+away\b", question, re.IGNORECASE):
        words.add("death")
    asked = words & {"birth", "death"}
    return next(iter(asked)) if len(asked) == 1 else None


# An article that gives its description's two years as a term ("the
# Ottoman sultan from 1520 to 1566", "reigned 1520–1566"): the description
# ("Sultan of the Ottoman Empire (1520–1566)") gives the office's years, not
# a life.
def _a_term(text: str, born: str, died: str) -> bool:
    """Whether ``text`` gives the years of ``born`` and ``died`` as a term.

    >>> _a_term("Suleiman I was the Ottoman sultan from 1520 to 1566.", "1520", "1566")
    True
    >>> _a_term("Ada Lovelace (1815–1852) was a mathematician.", "1815", "1852")
    False
    """
    first, last = (re.search(r"\d+", side).group() for side in (born, died))
    span = (rf"\b(?:(?:from|between)\s+(?:\w+\s+){{0,2}}?{first}\s+(?:to|and|until|till)\s+(?:\w+\s+){{0,2}}?{last}"
            rf"|(?:r\.|reigned|ruled|reign)\s*:?\s*(?:from\s+)?{first}\s*[–—-]\s*{last})(?!\d)")
    return any(not re.search(r"\b(?:lived|life)\s*$", text[: match.start()])
               for match in re.finditer(span, text, re.IGNORECASE))


def lived(question: str, passages: Sequence[Passage]) -> tuple[Passage, str] | None:
    """(the passage of the question's subject, the answer: the year asked,
    or the age at death :func:`age_at_death` says) when ``question`` asks
    when someone was born or died or how old they were when they died
    (:func:`life_event`) and the description of that person's own article
    gives it (:func:`lifespan`, not a term its text gives as one), else None.
    The subject's article is one whose title is the question's names (its
    capitalised words after the first) or one name with them
    (:func:`same_name`): the title the names, then one holding them all
    ("Newton" for "Isaac Newton"), then one held in them ("Napoleon" of
    "Napoleon Bonaparte"), then one whose text opens with a name of theirs,
    then the retriever's order. A question about a relative ("When was Ada
    Lovelace's father born?") asks about someone else.

    >>> ada = Passage("Ada Lovelace", "Ada Lovelace was an English mathematician.", 1.0, "Ada Lovelace",
    ...               description="English mathematician (1815–1852)")
    >>> lived("When did Ada Lovelace die?", [ada])[1], lived("When did Lovelace's father die?", [ada])
    ('1852', None)
    >>> lived("How old was Ada Lovelace when she died?", [ada])[1]
    '36 or 37 (1815–1852)'
    """
    event = life_event(question)
    if event is None or kin_asked(question):
        return None
    name = " ".join(re.sub(r"['’]s$", "", word) for word in question_names(question))
    names = len(name_words(name))
    found = []
    for order, passage in enumerate(passages):
        fit = _fit(name, names, passage)
        years = lifespan(passage.description) if fit is not None else None
        if not years or (all(years) and _a_term(passage.text, *years)):
            continue
        answer = age_at_death(*years) if event == "age" else years[event == "death"]
        if answer:
            found.append((fit, order, passage, answer))
    return min(found, key=lambda hit: hit[:2])[2:] if found else None


def _fit(name: str, words: int, passage: Passage) -> int | None:
    """How well ``name`` (of ``words`` words) names ``passage``'s subject:
    0 its title, 1 a title holding it, 2 one held in it, 3 the name its
    text opens with (a follow-up's rewrite takes the lead's full name,
    "Joseph Frank Keaton" of "Buster Keaton"; two words at least, as one
    word alone opens many a text), None another's."""
    title = re.sub(r"\([^)]*\)", " ", passage.title)
    if same_name(name, title):
        count = len(name_words(title))
        return 0 if count == words else 1 if count > words else 2
    lead = lead_name(passage)
    return 3 if lead and same_name(name, lead) else None
