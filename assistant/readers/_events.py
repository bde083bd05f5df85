"""Short answers its own article gives about a named subject: when an event
began or ended, and which country a place is in.

The best-scored sentence for "When did World War I begin?" is its lead,
which gives no year; the short description beside it does ("Global
conflict from 1914 to 1918"). "Which country is Cusco in?" is answered by a
country's name, which its lead ("a city in southeastern Peru") or its
description ("City in Peru") says plainly. Only the subject's own article
is read for these: another article's date or country is another subject's
("Renaissance philosophy" dated the Renaissance's start by a philosopher's
book). The reader (``_sentence.py``) finds that article and hands its lead
sentence and description here.

"What is the capital of X?" is answered by the city a read sentence, of any
article, says is X's present capital ("Ottawa is the capital city of
Canada.", "its capital, Abuja," in Nigeria's own); a best sentence that names
another place's capital ("the capital of the canton of Zurich" for
Switzerland) is no answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ._lifespan import lifespan
from ._shapes import _DATE, _MONTH, asked_from

__all__ = ["capital_asked", "capital_of_another", "capital_said", "country_asked", "country_by_adjective", "country_named", "countries_written", "event_asked", "event_date", "event_said"]

# "When did X begin/end/take place?": the verb says which end of the
# event's time is asked ("when": all of it).
_EVENT_VERBS = {
    "begin": "start", "start": "start", "commence": "start", "break out": "start",
    "end": "end", "finish": "end", "conclude": "end",
    "take place": "when", "happen": "when", "occur": "when",
}
_EVENT_ASKED = re.compile(
    r"^\s*when\s+(?:did|does|do)\s+(?P<subject>.+?)\s+(?P<verb>"
    + "|".join(verb.replace(" ", r"\s+") for verb in _EVENT_VERBS)
    + r")\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def event_asked(question: str) -> tuple[str, str] | None:
    """(subject, which) for "When did X begin/end/take place?" asked of a
    name ("start", "end" or "when"), else None. A subject with no capital
    ("it", "the war") names no article.

    >>> event_asked("When did World War I begin?"), event_asked("when did the Cold War end")
    (('World War I', 'start'), ('the Cold War', 'end'))
    >>> event_asked("When did the Battle of Hastings take place?"), event_asked("When did it end?")
    (('the Battle of Hastings', 'when'), None)
    >>> print(event_asked("When did he begin painting?"))
    None
    """
    match = _EVENT_ASKED.match(asked_from(question))
    if not match or not re.search(r"[A-Z]", match.group("subject")):
        return None
    return match.group("subject"), _EVENT_VERBS[re.sub(r"\s+", " ", match.group("verb").lower())]


# Two dates joined as a time's two ends: "1914–1918", "from 1914 to 1918",
# "between 30 October 1914 and 30 October 1918" ("and" only after "between").
_JOIN = r"\s*(?:[-–—]|to|until|till|through)\s*|\s+and\s+"
_RANGE_JOIN = re.compile(_JOIN, re.IGNORECASE)
# "between 1618 and", "between the 5th and": "and" joins a range only here.
_BETWEEN_BEFORE = re.compile(r"\bbetween\s+(?:the\s+)?$", re.IGNORECASE)
_SHORT_END = re.compile(r"\s*[-–—]\s*(\d{2})(?![\d,.]?\d)")
_SURELY_A_DATE = re.compile(rf"{_MONTH}|\b(?:BC|BCE|AD|CE)\b|centur|millenni|\d{{4}}s|^(?:1\d{{3}}|20\d{{2}})$")


def _dates(text: str) -> list[re.Match]:
    # A bare number of three digits, or of four that no year of ours has,
    # is as often a count ("between 200 and 300 people") as a date.
    return [m for m in _DATE.finditer(text) if _SURELY_A_DATE.search(m.group().strip())]


# A day and month with no year ("from Sunday 2 September to … 1666"): a
# range's start the date pattern does not read.
_DAY_MONTH = re.compile(rf"\b\d{{1,2}}\s+{_MONTH}(?!\w)|\b{_MONTH}\s+\d{{1,2}}\b")
# A date after one of these ends a range whose start was not read.
_AFTER_JOIN = re.compile(r"(?:[-–—]|\b(?:to|until|till|through|and))\s*$", re.IGNORECASE)


def _first_unsure(text: str, first: re.Match) -> bool:
    """Whether ``text``'s first date may not be its time's first end: a
    number not sure to be a year ("264 to 146 BC", "722–1492", "c. 500–1500")
    or a day with no year comes before it, it follows a range's join, or it
    is in brackets after which the text gives its own dates ("fought under
    Henry VI (1421–1471), … lasting from 1455 to 1487": a person's life)."""
    before = text[: first.start()]
    if any(m.start() < first.start() for m in _DATE.finditer(text)) or _DAY_MONTH.search(before):
        return True
    if _AFTER_JOIN.search(before):
        return True
    if before.count("(") > before.count(")"):
        close = text.find(")", first.end())
        # Dates in later brackets are a part's or a person's, not the text's own.
        if close >= 0 and _dates(re.sub(r"\([^()]*\)", "", text[close + 1:])):
            return True
    return False


# A range whose era is written once, after its end: "264 to 146 BC",
# "431–404 BC", "c. 475 – 221 BC". Years BC count down, so only a first
# number larger than the second is of the same era; "146 to 264 BC" is no
# such range. The era goes on both ends ("264 BC"): a bare "264" would be AD.
_BC_RANGE = re.compile(
    r"(?<![\w,.])(?P<start>(?:c\.\s*)?(?P<first>\d{1,5}))"
    rf"(?P<join>{_JOIN})"
    r"(?P<end>(?P<last>\d{1,5})(?P<era>\s*(?:BC|BCE))\b)"
)
# Centuries, which an age's lead or description gives where it has no year:
# "14th to 17th centuries", "from the 5th to late 15th centuries",
# "16th-century movement" (the date pattern reads only "the 16th century").
_ORDINAL = r"(?:(?:early|mid|late)[\s-]+)?(?P<{}>\d{{1,2}})(?:st|nd|rd|th)"
_CENTURY_RANGE = re.compile(
    rf"(?<!\w)(?P<start>{_ORDINAL.format('first')})(?:\s+century)?"
    rf"(?P<join>(?:{_JOIN})(?:the\s+)?)"
    rf"(?P<end>{_ORDINAL.format('last')})[\s-]+centur(?:y|ies)\b(?P<era>\s+(?:BC|BCE|AD|CE)\b)?",
    re.IGNORECASE,
)
_CENTURY = re.compile(rf"(?<!\w)(?P<one>{_ORDINAL.format('n')})-century\b(?P<era>\s+(?:BC|BCE|AD|CE)\b)?", re.IGNORECASE)
# Where X's lead gives such a range as X's own: in a bracket right after
# X's name opening the lead ("The Kelvan War (431–404 BC) was …"), or
# after the words that give X's time ("from 431 to 404 BC", "during the
# period 264 to 146 BC", "between 58 and 50 BC"). Elsewhere it is as often
# another thing's: "preceded by the Qin dynasty (221–206 BC)", "from the
# Dark Ages of the 12th–9th centuries BC", "coins of 30 to 20 BC", "holds
# 5th to 10th-century manuscripts".
_OWN_TIME_BEFORE = re.compile(r"\b(?:from|between|period)\s+(?:the\s+)?$", re.IGNORECASE)
_ANOTHER_THINGS = re.compile(r"\b(?:which|who|whose|whom|preceded|succeeded|followed|replaced|after|before|until)\b",
                             re.IGNORECASE)


def _ends(which: str, start: str, end: str, whole: str) -> str:
    return start if which == "start" else end if which == "end" else whole


def _era_range(which: str, text: str, name: str | None = None) -> str | None:
    """What ``which`` asks of ``text``'s first date where that is a range
    written with its era once ("264 to 146 BC") or of centuries ("14th to
    17th centuries"), or a century written before a noun ("16th-century");
    None where the text's first date is none of these. ``name``: X's, where
    ``text`` is X's lead, which gives such a range as X's only where it
    says so (``_OWN_TIME_BEFORE``)."""
    bc = _BC_RANGE.search(text)
    century = _CENTURY_RANGE.search(text)
    found = min((m for m in (bc, century) if m), key=lambda m: m.start(), default=None)
    if found is not None and not _first_unsure(text, found):
        before = text[: found.start()]
        if "and" in found.group("join").lower() and not _BETWEEN_BEFORE.search(before):
            return None
        if name is not None and not _own_time(name, before):
            return None
        era = found.group("era") or ""
        first, last = int(found.group("first")), int(found.group("last"))
        years = found.re is _BC_RANGE
        # Years BC count down, and so do centuries BC; centuries AD count up.
        down = years or era.strip().upper() in ("BC", "BCE")
        if (first <= last) if down else (first >= last):
            return None
        # A year range's end holds its era; a century range's ends do not.
        ends = (found.group("start") + era, found.group("end")) if years else (
            found.group("start") + " century" + era, found.group("end") + " century" + era)
        return _ends(which, *ends, text[found.start():found.end()].strip())
    # "16th-century movement in Western Christianity": one century, as a
    # single year is read below, only where a description opens with it;
    # elsewhere it is as often another thing's ("the ruins of a 5th-century
    # church", "in 16th-century Europe").
    # A name after it makes a person's ("15th-century Italian painter").
    one = _CENTURY.match(text.strip())
    if one is None or _dates(text) or re.match(r"\s*(?:[-–—]|to\b|and\b|[A-Z])", text.strip()[one.end():]):
        return None
    return None if which == "end" else one.group("one") + " century" + (one.group("era") or "")


def _own_time(name: str, before: str) -> bool:
    """Whether a range after ``before`` (X's lead up to it) is X's own
    (``_OWN_TIME_BEFORE``): "… fought from", or X's name and an open
    bracket ("The Kelvan War (" for "the Kelvan War")."""
    bare = re.sub(r"^the\s+", "", name.strip(), flags=re.IGNORECASE)
    if re.fullmatch(rf"\s*(?:the\s+)?{re.escape(bare)}\s*\(\s*(?:c\.\s*)?", before, re.IGNORECASE):
        return True
    # ...not in a clause about another thing: "succeeded the Oska dynasty,
    # which ruled from 300 to 200 BC" ("The X, which lasted from" is X's).
    named = re.match(rf"\s*(?:the\s+)?{re.escape(bare)}\s*,\s*(?:which|that)\b", before, re.IGNORECASE)
    if _ANOTHER_THINGS.search(before, named.end() if named else 0):
        return False
    return bool(_OWN_TIME_BEFORE.search(before)) and before.count("(") == before.count(")")


# ...where X is what ended: "… and ending in 27 BC", "a state that fell in
# 1453"; not "arose after the Oskan Sultanate collapsed in 1299", whose
# subject is another thing (and whose date is X's start).
_ENDED_AT = re.compile(r"(?:^|[,;]|\b(?:and|that|which|it|until))\s+"
                       r"(?:end(?:ed|ing|s)?|fell|collapsed|dissolved|abolished)\s+(?:in|on|at)\s+$", re.IGNORECASE)


def event_date(which: str, text: str, name: str | None = None, eras: bool = True) -> str | None:
    """The date ``text`` (an event's lead sentence or short description)
    gives for ``which`` end of its time (:func:`event_asked`): a range's
    first date for "start", its last for "end", the range for "when". A
    single date is the start or the whole ("starting in 1917") but never
    surely the end. None where the text gives no date, or several that
    make no one range (which of them is asked it need not say). ``name``:
    X's, where ``text`` is X's lead (a range with its era once is read
    there only as X's own, :func:`_era_range`); ``eras`` False: no such
    range is read (:func:`ancient_life`).

    >>> [event_date(w, "Global conflict from 1914 to 1918") for w in ("start", "end", "when")]
    ['1914', '1918', '1914 to 1918']
    >>> event_date("end", "Scene of action between 29 October 1914 and 30 October 1918")
    '30 October 1918'
    >>> event_date("start", "A period of change in Russia, starting in 1917."), event_date("end", "A revolution in 1917.")
    ('1917', None)
    >>> event_date("start", "Born in 1900, she wrote in 1930."), event_date("start", "Between 200 and 300 people came.")
    (None, None)
    >>> [event_date(w, "Wars (1803–15) fought against the Empire under Napoleon (1804–1815)") for w in ("start", "end")]
    ['1803', '1815']
    """
    era_range = _era_range(which, text, name) if eras else None
    if era_range is not None:
        return era_range
    dates = _dates(text)
    if not dates:
        return None
    # Only the text's first date dates the subject: a later range is a
    # part's or a person's ("… against the French Empire under Napoleon
    # (1804–1815)" after the wars' own "(1803–15)").
    first = dates[0]
    if _first_unsure(text, first):
        return None
    short = _SHORT_END.match(text, first.end())
    if short and re.fullmatch(r"\d{4}", first.group().strip()):
        # "1803–15": the end written by its last two digits.
        start = first.group().strip()
        end = start[:2] + short.group(1)
        if end > start:
            return start if which == "start" else end if which == "end" else text[first.start():short.end()].strip()
    if len(dates) > 1:
        last = dates[1]
        join = text[first.end():last.start()]
        if _RANGE_JOIN.fullmatch(join) and ("and" not in join.lower() or _BETWEEN_BEFORE.search(text, 0, first.start())):
            if which == "start":
                return first.group().strip()
            if which == "end":
                return last.group().strip()
            return text[first.start():last.end()].strip()
    # "… beginning with the overthrow of the Kingdom and ending in 27 BC":
    # a single date the text says X ended at is not its start.
    if _ENDED_AT.search(text, 0, first.start()):
        return None
    if len({m.group().strip() for m in dates}) == 1 and which != "end":
        return first.group().strip()
    return None


# What a sentence says its subject did at a date, by which end of its time
# that date is: "the Reformation began in 1517", "Luther launched the
# Reformation in 1517", "the battle took place on 14 October 1066". Only
# the verb that says so is read: "X marked the beginning of …" dates
# something else.
_SAID_AFTER = {
    "start": r"began|started|commenced|broke\s+out",
    "end": r"ended|finished|concluded|came\s+to\s+an\s+end",
    "when": r"took\s+place|happened|occurred|(?:was|were)\s+fought",
}
_SAID_BEFORE = {"start": r"launch(?:ed)?|beg[ia]n|start(?:ed)?|spark(?:ed)?|trigger(?:ed)?", "end": r"end(?:ed)?"}
# Words that put a clause's events before or after the sentence's date.
_NOT_THEN = re.compile(r"\b(?:later|after|afterwards|before|then|until|since|subsequently|eventually|next|"
                       r"led\s+to|followed|preceded|prior)\b", re.IGNORECASE)


# A battle or siege is fought at one time: what happened "at" it happened
# then, where the clause says it was fought, won, lost or died in ("was
# killed at", "leading an army to victory … at", "fell to the Oskans at"),
# not what was done later for it ("a monument to the soldiers who fell at",
# "colours first carried at", "the jubilee of its victory at", "had lost an
# arm at", "awarded … for bravery shown at").
_FOUGHT_AT = re.compile(r"(?:the\s+)?(?:Battle|Siege)\s+of\s+", re.IGNORECASE)
_FOUGHT = re.compile(r"\b(?:won|winning|lost|losing|defeat(?:ed|ing)?|victory|victorious|killed|fell|died|wounded|"
                     r"fought|fighting|captured|capturing|took|leading|led)\b", re.IGNORECASE)
_NOT_FOUGHT = re.compile(r"\b(?:had|has|have|who|whom|whose|which|that|for|first|celebrat\w*|jubilee|anniversary|"
                         r"commemorat\w*|memorial|monument|award\w*|honou?r\w*|remember\w*)\b", re.IGNORECASE)


def _single_date(text: str, at: int) -> str | None:
    """The sure date that starts at ``at`` in ``text`` (a year, a day, a
    century), alone: one that opens a range ("in 1914 to 1918") is not
    the whole of the time."""
    date = _DATE.match(text, at)
    if date is None or not _SURELY_A_DATE.search(date.group().strip()):
        return None
    if re.match(r"\s*(?:[-–—]|to\b|until\b|till\b|through\b|and\s+\d)", text[date.end():]):
        return None
    return date.group().strip()


def _named(subject: str, sentence: str) -> list[re.Match]:
    """Where ``sentence`` names ``subject`` (with or without its "the"),
    not as the end of a longer name ("Counter-Reformation", "Second
    Industrial Revolution") nor as a possessive."""
    name = re.sub(r"^the\s+", "", subject.strip(), flags=re.IGNORECASE)
    found = []
    for match in re.finditer(rf"(?<![\w'’-])(?:the\s+)?{re.escape(name)}(?![\w'’-])", sentence, re.IGNORECASE):
        before = re.search(r"(?<![\w'’-])([A-Z][\w'’-]*)\s+$", sentence[: match.start()])
        if before and before.group(1) not in ("The", "In", "On", "At", "By"):
            continue
        found.append(match)
    return found


def event_named(subject: str, sentence: str) -> bool:
    """Whether ``sentence`` names ``subject`` itself (:func:`_named`)."""
    return bool(_named(subject, sentence))


def event_said(subject: str, which: str, sentence: str) -> str | None:
    """The date ``sentence`` (of any article) says ``subject`` began,
    ended or took place (``which``, as :func:`event_asked`), else None. A
    single date the event took place on is its start as well; a date it
    began on is not the whole of it. "In 1066, …, William won at the
    Battle of Hastings": a sentence that opens with its one date puts what
    happened "at" a battle or siege then, for "when" only (a battle may
    last into a next year).

    >>> event_said("the Reformation", "start", "Luther helped launch the Reformation in 1517.")
    '1517'
    >>> event_said("the Battle of Hastings", "when", "In 1066, William invaded England, winning at the Battle of Hastings.")
    '1066'
    >>> print(event_said("the Reformation", "start", "The Reformation marked the beginning of Protestantism in 1517."))
    None
    >>> print(event_said("the Battle of Hastings", "start", "In 1066, William won at the Battle of Hastings."))
    None
    """
    verbs = {"start": ("start", "when"), "when": ("when",), "end": ("end",)}[which]
    for named in _named(subject, sentence):
        # The name as a name, capitalised: "a cultural renaissance", "the
        # calendar reformation" are none.
        if not re.sub(r"^the\s+", "", named.group(), flags=re.IGNORECASE)[:1].isupper():
            continue
        # "X began in …" only where X opens the sentence, its subject: not
        # "For Brindle, the X began …", "The Siege of K during the X began …",
        # "Oskan involvement in the X began …", "The second X began …".
        for verb in verbs if not sentence[: named.start()].strip() else ():
            said = re.compile(rf"\s+(?:(?:has|had)\s+)?(?:{_SAID_AFTER[verb]})\s+(?:in|on)\s+").match(sentence, named.end())
            date = _single_date(sentence, said.end()) if said else None
            if date:
                return date
        if which in _SAID_BEFORE:
            said = re.compile(rf"\b(?:{_SAID_BEFORE[which]})\s+$").search(sentence, 0, named.start())
            after = re.compile(r"\s+(?:in|on)\s+").match(sentence, named.end())
            date = _single_date(sentence, after.end()) if said and after else None
            if date:
                return date
        # ...the battle itself, not a thing named after it ("at the Siege
        # of Kelport memorial").
        alone = re.match(r"\s*(?:[.,;:!?)]|$)", sentence[named.end():])
        if which == "when" and _FOUGHT_AT.match(named.group()) and alone:
            opening = re.match(r"\s*(?:In|On)\s+", sentence)
            date = _single_date(sentence, opening.end()) if opening else None
            at = re.search(r"\bat\s+$", sentence[: named.start()])
            if date and at and len({m.group().strip() for m in _dates(sentence)}) == 1:
                clause = re.split(r"[,;:]", sentence[: at.start()])[-1]
                if _FOUGHT.search(clause) and not _NOT_THEN.search(clause) and not _NOT_FOUGHT.search(clause):
                    return date
    return None


def range_end_missed(which: str, text: str, span: str, name: str | None = None) -> bool:
    """Whether ``text`` (X's description, or X's lead with ``name``) gives
    X a range whose ``which`` end's number ``span`` does not hold ("431 BC"
    asked, "413 BC" said). A lead's range counts only where it is X's own
    (:func:`_own_time`): "in the reign of King Oska (1690–1730)" is not."""
    start, end = event_date("start", text, name), event_date("end", text, name)
    if name is not None and _era_range("start", text, name) is None:
        dates = _dates(text)
        if not dates or not _own_time(name, text[: dates[0].start()]):
            return False
    if not start or not end or start == end:
        return False
    number = re.search(r"\d+", start if which == "start" else end).group()
    return not re.search(rf"(?<![\d,]){number}(?![\d,])", span)


def year_within(span: str, date: str) -> bool:
    """Whether ``span`` (a short answer, or a sentence that names the
    event) holds a year AD inside the century ``date`` is: "1517" is a
    truer start of a "16th century" movement than the century, where
    another article's sentence gave it.

    >>> year_within("1517", "16th century"), year_within("1637", "14th century"), year_within("1517", "1517")
    (True, False, False)
    """
    century = re.fullmatch(r"(?:(?:early|mid|late)[\s-]+)?(\d{1,2})(?:st|nd|rd|th) century", date.strip())
    if not century or re.search(r"\b(?:BC|BCE)\b", span):
        return False
    n = int(century.group(1))
    return any((n - 1) * 100 <= int(year) <= n * 100 for year in re.findall(r"(?<![\d,.])\d{3,4}(?![,.]?\d)", span))


_COUNTRY_ASKED = re.compile(
    r"^\s*(?P<in>in\s+)?(?:which|what)\s+country\s+(?:is|are)\s+(?P<subject>.+?)"
    r"(?:\s+(?:located|situated|found|based))?(?P<in2>\s+in)?\s*[?.!]*\s*$",
    re.IGNORECASE,
)


# A rewrite may put the place's kind before its name ("Which country is
# the city of Cusco in?"), which its article's title does not; a capital
# kind is the name's own ("the City of London").
_KIND_OF = re.compile(r"^(?:the\s+)?(?:city|town|village|capital|island|region|province|site|mountain|volcano|ruins|temple)"
                      r"\s+of\s+(?=[A-Z])")


def country_asked(question: str) -> str | None:
    """The place "Which country is X in?" / "In which country is X
    (located)?" asks about, else None.

    >>> country_asked("Which country is Cusco in?"), country_asked("In which country is the Taj Mahal located?")
    ('Cusco', 'the Taj Mahal')
    >>> country_asked("Which country is the city of Cusco in?"), country_asked("Which country is the City of London in?")
    ('Cusco', 'the City of London')
    >>> print(country_asked("Which country did he visit?"), country_asked("Which country is the capital of Peru?"),
    ...       country_asked("Which country was Napoleon in?"))
    None None None
    """
    match = _COUNTRY_ASKED.match(asked_from(question))
    # Only where it asks what the place is in: "Which country is the
    # capital of Peru?" asks for another place; "Which country was
    # Napoleon in?" asks about a person, or about a past border.
    if not match or not (match.group("in") or match.group("in2")) or not re.search(r"[A-Z]", match.group("subject")):
        return None
    return _KIND_OF.sub("", match.group("subject"))


# The sovereign states (and the United Kingdom's four countries) by the
# names an encyclopaedia's lead and short description write them. A closed
# list: a capitalised name after "in" is as often a state, a province or a
# region ("City in California") as a country.
_COUNTRIES = (
    "Afghanistan, Albania, Algeria, Andorra, Angola, Antigua and Barbuda, Argentina, Armenia, Australia, Austria, "
    "Azerbaijan, Bahrain, Bangladesh, Barbados, Belarus, Belgium, Belize, Benin, Bhutan, Bolivia, "
    "Bosnia and Herzegovina, Botswana, Brazil, Brunei, Bulgaria, Burkina Faso, Burundi, Cambodia, Cameroon, Canada, "
    "Cape Verde, Central African Republic, Chad, Chile, China, Colombia, Comoros, Costa Rica, Croatia, Cuba, Cyprus, "
    "Czech Republic, Czechia, Democratic Republic of the Congo, Republic of the Congo, Denmark, Djibouti, Dominica, "
    "Dominican Republic, East Timor, Timor-Leste, Ecuador, Egypt, El Salvador, Equatorial Guinea, Eritrea, Estonia, "
    "Eswatini, Ethiopia, Fiji, Finland, France, Gabon, Gambia, Georgia, Germany, Ghana, Greece, Grenada, Guatemala, "
    "Guinea, Guinea-Bissau, Guyana, Haiti, Honduras, Hungary, Iceland, India, Indonesia, Iran, Iraq, Ireland, Israel, "
    "Italy, Ivory Coast, Jamaica, Japan, Jordan, Kazakhstan, Kenya, Kiribati, Kosovo, Kuwait, Kyrgyzstan, Laos, "
    "Latvia, Lebanon, Lesotho, Liberia, Libya, Liechtenstein, Lithuania, Luxembourg, Madagascar, Malawi, Malaysia, "
    "Maldives, Mali, Malta, Marshall Islands, Mauritania, Mauritius, Mexico, Micronesia, Moldova, Monaco, Mongolia, "
    "Montenegro, Morocco, Mozambique, Myanmar, Namibia, Nauru, Nepal, Netherlands, New Zealand, Nicaragua, Niger, "
    "Nigeria, North Korea, North Macedonia, Norway, Oman, Pakistan, Palau, Palestine, Panama, Papua New Guinea, "
    "Paraguay, Peru, Philippines, Poland, Portugal, Qatar, Romania, Russia, Rwanda, Saint Kitts and Nevis, "
    "Saint Lucia, Saint Vincent and the Grenadines, Samoa, San Marino, Saudi Arabia, Senegal, Serbia, Seychelles, "
    "Sierra Leone, Singapore, Slovakia, Slovenia, Solomon Islands, Somalia, South Africa, South Korea, South Sudan, "
    "Spain, Sri Lanka, Sudan, Suriname, Sweden, Switzerland, Syria, Taiwan, Tajikistan, Tanzania, Thailand, Togo, "
    "Tonga, Trinidad and Tobago, Tunisia, Turkey, Türkiye, Turkmenistan, Tuvalu, Uganda, Ukraine, "
    "United Arab Emirates, United Kingdom, United States, Uruguay, Uzbekistan, Vanuatu, Vatican City, Venezuela, "
    "Vietnam, Yemen, Zambia, Zimbabwe, England, Scotland, Wales, Northern Ireland"
).split(", ")
# The short names a lead writes a country by ("the U.S. state of Georgia"),
# answered by its name.
_SHORT_NAMES = {"U.S.": "United States", "U.S.A.": "United States", "USA": "United States", "UK": "United Kingdom",
                "U.K.": "United Kingdom"}
# Longest first, so that "Papua New Guinea" is read before "Guinea".
_COUNTRY = re.compile(
    r"(?<![\w'’.-])(?:the\s+)?(" + "|".join(re.escape(c) for c in sorted((*_COUNTRIES, *_SHORT_NAMES), key=len, reverse=True))
    + r")(?:['’]s?)?(?![\w-])(?!\.\w)"
)
# A country's name inside a longer one is no country: "Niger River",
# "Mexico City", "New Mexico", "the U.S. state of Georgia".
_NAME_WORD_BEFORE = re.compile(r"(?:^|[^\w'’-])([A-Z][\w'’.-]*)\s+$")
_NAME_WORD_AFTER = re.compile(r"\s+[A-Z]")
_STATE_OF = re.compile(r"\bstate\s+of\s+$", re.IGNORECASE)
# "Georgia, U.S.": a name before its country's is a part of it.
_COUNTRY_AFTER = re.compile(r",\s*(?:the\s+)?(?:U\.S\.|US|USA|United\s+States|UK|United\s+Kingdom)(?!\w)")
# A country counts only where the text puts the place in it: "a city in
# (southern) Peru", "City in Peru", "… of Japan", "Baden-Württemberg,
# Germany" (a name and its country), with at most two lower-case words
# between ("in the Kansai region of Japan" reads "of Japan").
_PUT_IN = re.compile(r"(?:\b(?:in|of)\s+(?:the\s+)?(?:[a-z][\w-]*\s+){0,2}|[A-Z][\w.'’-]*,\s*(?:the\s+)?)$")
# ...and not in a clause that puts it beside, near or away from it
# ("near the coast of France", "on the border with Germany", "after the
# Volga in Russia", "emigrated to the United States", "born in Corsica").
_NOT_IN = re.compile(r"\b(?:near|nearby|border\w*|coast|shore|between|off|after|with|to|from|across|than|"
                     r"neighbou?r\w*|emigrated|born|died|exiled|like|unlike|outside|beyond)\b", re.IGNORECASE)
# Capitalised words that start a sentence or a clause, not a name.
_NOT_NAME_WORDS = frozenset("in of on at to from the a an and or near north south east west".split())

# A country's adjective, by which an article may say what its place is
# ("Bali is an Indonesian island", "U.S. state") and name no country.
# Only adjectives of one country of the list: "Korean", "Congolese",
# "Irish", "Sudanese", "Macedonian" and "Dominican" fit two, "American"
# the Americas, "Georgian" a U.S. state, "British" the Crown's
# dependencies and territories outside the United Kingdom. "U.S." is the
# short name's own (:data:`_SHORT_NAMES`).
_ADJECTIVES = {
    "U.S.": _SHORT_NAMES["U.S."], "English": "England", "Scottish": "Scotland", "Welsh": "Wales",
    "Afghan": "Afghanistan", "Albanian": "Albania", "Algerian": "Algeria", "Argentine": "Argentina",
    "Armenian": "Armenia", "Australian": "Australia", "Austrian": "Austria", "Bangladeshi": "Bangladesh",
    "Belgian": "Belgium", "Bolivian": "Bolivia", "Brazilian": "Brazil", "Bulgarian": "Bulgaria",
    "Cambodian": "Cambodia", "Canadian": "Canada", "Chilean": "Chile", "Chinese": "China",
    "Colombian": "Colombia", "Croatian": "Croatia", "Cuban": "Cuba", "Czech": "Czech Republic",
    "Danish": "Denmark", "Dutch": "Netherlands", "Ecuadorian": "Ecuador", "Egyptian": "Egypt",
    "Estonian": "Estonia", "Ethiopian": "Ethiopia", "Finnish": "Finland", "French": "France",
    "German": "Germany", "Greek": "Greece", "Hungarian": "Hungary", "Icelandic": "Iceland", "Indian": "India",
    "Indonesian": "Indonesia", "Iranian": "Iran", "Iraqi": "Iraq", "Israeli": "Israel", "Italian": "Italy",
    "Japanese": "Japan", "Kenyan": "Kenya", "Latvian": "Latvia", "Lithuanian": "Lithuania",
    "Malaysian": "Malaysia", "Mexican": "Mexico", "Mongolian": "Mongolia", "Moroccan": "Morocco",
    "Nepalese": "Nepal", "Nigerian": "Nigeria", "Norwegian": "Norway", "Pakistani": "Pakistan",
    "Peruvian": "Peru", "Philippine": "Philippines", "Polish": "Poland", "Portuguese": "Portugal",
    "Romanian": "Romania", "Russian": "Russia", "Serbian": "Serbia", "Slovak": "Slovakia",
    "Slovenian": "Slovenia", "Spanish": "Spain", "Swedish": "Sweden", "Swiss": "Switzerland",
    "Syrian": "Syria", "Tanzanian": "Tanzania", "Thai": "Thailand", "Tunisian": "Tunisia", "Turkish": "Turkey",
    "Ukrainian": "Ukraine", "Venezuelan": "Venezuela", "Vietnamese": "Vietnam",
}
_ADJECTIVE = "|".join(re.escape(a) for a in _ADJECTIVES)
# The adjective says where the place is only before the place's own kind,
# the phrase's head noun: "Okinawa is a Japanese prefecture", "Largest
# Greek island" (a description opens with it), "Svalbard is a Norwegian
# archipelago", with at most three lower-case words before it ("the
# largest", "a landlocked") and two between ("Spanish autonomous
# community"). A kind followed by another noun is that noun's ("a Chinese
# city planner", "state-owned", "department store"). No border feature
# (mountain, river, lake: "a Swiss mountain on the border with Italy"),
# and no bare "community" or "district": an enclave's ("a Russian
# community in Brooklyn", "a Cuban district of Miami").
_ADJECTIVE_KIND = re.compile(
    r"(?:(?:a|an|the)\s+)?(?P<before>(?:[\w'’-]+\s+){0,3}?)(?P<adjective>" + _ADJECTIVE
    + r")\s+(?P<between>(?:[a-z][\w-]*\s+){0,2}?)(?:island\s+chain|islands?|archipelago|states?|prefectures?|"
    r"provinces?|regions?|city|cities|towns?|villages?|municipality|municipalities|county|counties|territory|"
    r"territories|ports?|capital|peninsula|autonomous\s+community|oblast|cantons?|department)"
    r"(?=\s*(?:[,;:.()]|$)|\s+(?:in|of|on|off|at|and|lying|located|situated|consisting|comprising|north|south|east|"
    r"west)\b)"
)
# Words before or between that leave the adjective another phrase's ("a
# city with a Japanese …", "one of the …"), the place a past one ("was a
# German state", "Former German state", "an old Greek port city", "a
# one-time German city") or the adjective a part's only ("a French
# colonial town in Vietnam", "a German speaking province of Italy").
_NOT_IN_KIND = frozenset("""in of on at to from with by for near and or that which where who whose its their his her
    was were had has former formerly ancient old one-time onetime erstwhile once medieval historic historical classical
    early late colonial speaking heritage ethnic immigrant expatriate north south east west northern southern eastern
    western central new latin""".split())
# After the kind, the clause ends, or says where the place lies with no
# name but a sea's: "in the Arctic Ocean", "in the Oska Sea" (any name
# before "Sea"), "in the Mediterranean", "in the south-east of the
# country", "off the north-west coast". Any other name puts the place in
# it, which the adjective does not ("a Polish city in Wayne County,
# Michigan", "a Turkish community in Berlin").
_SEA_WORDS = frozenset("""Ocean Sea Mediterranean Caribbean Pacific Atlantic Arctic Antarctic Baltic Aegean Adriatic
    Ionian Gulf Bay Strait Channel North South East West Indian China""".split())
_SEA_NAME = re.compile(r"(?:[A-Z][\w'’-]*\s+)+(?:Ocean|Sea|Gulf|Bay|Strait|Channel)\b")
# "the Indian Ocean", "the East China Sea": no adjective of a country.
_SEA_AFTER = re.compile(r"\s+(?:Ocean|Sea)\b")


def _reads_adjective(text: str, subject: str) -> str | None:
    """The country whose adjective ``text`` (a lead sentence, or a short
    description) says its place's kind by (:data:`_ADJECTIVE_KIND`), after
    the lead's first "is"/"are" or at the description's start; None for a
    country's own article, a text that dates its place (a past state's
    "German state from 1525 to 1947") or holds two countries' adjectives
    ("an Estonian lake on the Russian border")."""
    if subject in _COUNTRIES or _dates(text):
        return None
    adjectives = {_ADJECTIVES[m.group()] for m in re.finditer(r"(?<![\w-])(?:" + _ADJECTIVE + r")(?![\w-])", text)
                  if not _SEA_AFTER.match(text, m.end())}
    if len(adjectives) != 1:
        return None
    verb = re.search(r"\b(?:is|are)\s+", text)
    match = _ADJECTIVE_KIND.match(text, verb.end() if verb else 0)
    if not match:
        return None
    before, between = match.group("before").split(), match.group("between").split()
    # Only a description's first word is capitalised: a name before the
    # adjective ("South Sudanese", "West Indian") makes another one.
    if any(w.lower() in _NOT_IN_KIND for w in before + between) or any(w[0].isupper() for w in before[bool(not verb):]):
        return None
    rest = _SEA_NAME.sub("", re.split(r"[,;:()]|\.(?:\s|$)", text[match.end():])[0])
    if any(w not in _SEA_WORDS for w in re.findall(r"\b[A-Z][\w.'’-]*", rest)):
        return None
    country = _ADJECTIVES[match.group("adjective")]
    return None if subject and country.lower() in subject.lower() else country


# Who holds or claims the place, which another text may say and its
# adjective not ("a group of islands administered by Taiwan", "Chinese
# island county").
_GOVERNED = re.compile(r"\b(?:administered|governed|ruled|controlled|occupied|claimed|disputed|annexed)\b",
                       re.IGNORECASE)


def country_by_adjective(texts: Sequence[str], subject: str = "") -> tuple[str, str] | None:
    """The one country, and the text that gives it, that a country's
    adjective before the place's kind gives in ``texts`` (X's lead sentence
    and description, :func:`_reads_adjective`), only where none of them
    names a country by name (:func:`_names_a_country`; the other may name a
    neighbour: Crete's "Largest Greek island" beside a lead that names
    Cyprus), none says who governs the place and none gives a country by
    :func:`country_named`: a fallback to that, never joined with a named
    country ("Hoi An is a French colonial town in central Vietnam" is in
    Vietnam; "Hamtramck is a Polish city", "City in Michigan, United
    States" is in the United States). Two texts' adjectives must agree.

    >>> country_by_adjective(["Svalbard is an archipelago.", "Norwegian archipelago in the Arctic Ocean"])
    ('Norway', 'Norwegian archipelago in the Arctic Ocean')
    >>> country_by_adjective(["Texas is the most populous state in the Southern United States.", "U.S. state"])
    ('United States', 'U.S. state')
    >>> print(country_by_adjective(["Sony is a Japanese multinational company."]),
    ...       country_by_adjective(["Hamtramck is a Polish city.", "City in Michigan, United States"]))
    None None
    """
    if any(_GOVERNED.search(text) or country_named(text, subject) for text in texts):
        return None
    found = [(country, text) for text in texts
             if not _names_a_country(text, subject) and (country := _reads_adjective(text, subject))]
    return found[0] if len({country for country, _ in found}) == 1 else None


def _names_a_country(text: str, subject: str) -> bool:
    """Whether ``text`` names a country other than ``subject`` by its
    name (:func:`_country_names`), wherever it puts the place ("on India's
    east coast", "administered by Taiwan"), not as the "U.S." of "U.S.
    state"."""
    return any(not (match.group(1) in _SHORT_NAMES and re.match(r"\s+[a-z]", text[match.end():]))
               for match in _country_names(text, subject))


def _country_names(text: str, subject: str) -> Iterator[re.Match]:
    """The countries ``text`` writes by their own name (:data:`_COUNTRY`,
    the name in group 1): not inside a longer name ("Niger River",
    "Mexico City", "New Mexico") and not ``subject`` itself."""
    for match in _COUNTRY.finditer(text):
        name = match.group(1)
        name_before = _NAME_WORD_BEFORE.search(text, 0, match.start(1))
        if name_before and name_before.group(1).lower() not in _NOT_NAME_WORDS:
            continue
        if _NAME_WORD_AFTER.match(text, match.end()) or (subject and name.lower() in subject.lower()):
            continue
        yield match


# The names a question may give a country, or a part that shares its
# currency, head of state and laws, that its own article and the articles of
# its things write otherwise ("the currency of Britain", "of Scotland", is
# "the currency of the United Kingdom").
_ALSO_CALLED = {"United Kingdom": ("Britain", "Great Britain", "England", "Scotland", "Wales", "Northern Ireland"),
                "United States": ("America",), "Netherlands": ("Holland",)}


def countries_written(text: str) -> list[str]:
    """The countries ``text`` writes by a name (:func:`_country_names`, a
    short name as its country's) or an adjective (:data:`_ADJECTIVES`),
    each with the other names it goes by (:data:`_ALSO_CALLED`).

    >>> countries_written("Sterling is the currency of the United Kingdom.")
    ['United Kingdom', 'Britain', 'Great Britain', 'England', 'Scotland', 'Wales', 'Northern Ireland']
    >>> countries_written("Dutch is a West Germanic language."), countries_written("The euro is the currency of the European Union.")
    (['Netherlands', 'Holland'], [])
    """
    found = [_SHORT_NAMES.get(m.group(1), m.group(1)) for m in _country_names(text, "")]
    found += [_ADJECTIVES[m.group()] for m in re.finditer(r"(?<![\w-])(?:" + _ADJECTIVE + r")(?![\w-])", text)
              if not _SEA_AFTER.match(text, m.end())]
    return list(dict.fromkeys(name for country in found for name in (country, *_ALSO_CALLED.get(country, ()))))


def country_named(text: str, subject: str = "") -> str | None:
    """The one country (a closed list) ``text`` names, not inside a longer
    name and not ``subject`` itself, or None where it names none or two
    (which of them holds the place it need not say).

    >>> country_named("Cusco or Cuzco is a city in southeastern Peru, near the Sacred Valley of the Andes."), country_named("City in Peru")
    ('Peru', 'Peru')
    >>> country_named("Kyoto is the capital city of Kyoto Prefecture in the Kansai region of Japan's largest island.")
    'Japan'
    >>> country_named("Timbuktu is an ancient city in Mali, situated 20 kilometres north of the Niger River.")
    'Mali'
    >>> print(country_named("Tijuana is a city near the border of Mexico and the United States."))
    None
    >>> country_named("Atlanta is the capital of the U.S. state of Georgia."), country_named("Capital of Georgia, U.S.")
    ('United States', 'United States')
    >>> print(country_named("Capital of the state of Georgia."), country_named("City in California"))
    None None
    """
    found = set()
    for match in _country_names(text, subject):
        name = match.group(1)
        if _STATE_OF.search(text, 0, match.start()):
            continue
        if _COUNTRY_AFTER.match(text, match.end()) and name not in _SHORT_NAMES:
            continue
        before = text[: match.start()]
        named = re.search(r"[A-Z][\w.'’-]*,\s*(?:the\s+)?$", before)
        clause = re.split(r"[,;:()]|\.\s+", before[: named.start()] if named else before)[-1]
        if not _PUT_IN.search(before) or _NOT_IN.search(clause):
            continue
        found.add(_SHORT_NAMES.get(name, name))
    return found.pop() if len(found) == 1 else None


# A bracket after a name that opens with a day ("(25 October 1881 – …",
# "(born 3 May …"): a person's birth, as a lead writes it.
_LIFE_BRACKET = re.compile(rf"\(\s*(?:born\s+)?(?:\d{{1,2}}\s+{_MONTH}|{_MONTH}\s+\d{{1,2}})")


def a_life(lead: str, description: str) -> bool:
    """Whether an article's lead and description are a person's: the
    description gives a lifespan and the lead's first bracket a birth day.
    A person's "start" or country is not an event's or a place's."""
    bracket = lead.find("(")
    return bool(lifespan(description)) and bracket >= 0 and bool(_LIFE_BRACKET.match(lead, bracket))


def ancient_life(lead: str, description: str) -> bool:
    """Whether a description's years BC may be a person's life: "King of
    Brindle (356–323 BC)", whose lead gives no days (:func:`a_life`). An
    event's lead names it with "The" ("The Peloponnesian War (431–404 BC)
    was …"), a person's seldom. Such a description's range with its era
    once is not read as an event's time; an ancient state's "(c. 808 BC –
    168 BC)", its era on both ends, is read as before."""
    return any(re.search(r"\b(?:BC|BCE)$", year) for year in lifespan(description) or ()) and not re.match(r"\s*The\b", lead)


# "What is the capital (city) of X?", "Which city is the capital of X?",
# "What's X's capital (city)?": X's present capital, asked of a name. "Was"
# asks for a past one, which a sentence says with a date this does not read.
_CAPITAL_NOUN = r"capital(?:\s+city)?"
_CAPITAL_ASKED = (
    re.compile(rf"^\s*(?:what|which\s+city)(?:\s+is|['’]s)\s+the\s+{_CAPITAL_NOUN}\s+of\s+(?P<subject>.+?)\s*[?.!]*\s*$",
               re.IGNORECASE),
    re.compile(rf"^\s*(?:what|which\s+city)(?:\s+is|['’]s)\s+(?P<subject>.+?)['’]s?\s+{_CAPITAL_NOUN}\s*[?.!]*\s*$",
               re.IGNORECASE),
)


def capital_asked(question: str) -> str | None:
    """The place whose present capital the question asks ("What is the
    capital of Canada?", "What's Canada's capital?", "Which city is the
    capital city of Canada?"), else None: a past capital ("What was …"),
    a subject with no capital letter ("its capital", "the country") and
    any other question.

    >>> capital_asked("What is the capital of Canada?"), capital_asked("What's Canada's capital?")
    ('Canada', 'Canada')
    >>> capital_asked("Which city is the capital of the United States?"), capital_asked("What is the capital city of Brazil?")
    ('the United States', 'Brazil')
    >>> capital_asked("What is the capital of the U.S.?")
    'the U.S.'
    >>> print(capital_asked("What is its capital?"), capital_asked("What was the capital of Prussia?"),
    ...       capital_asked("What is capital punishment?"))
    None None None
    """
    question = asked_from(question)
    for pattern in _CAPITAL_ASKED:
        match = pattern.match(question)
        if match and re.match(r"(?:the\s+)?[A-Z]", match.group("subject")):
            subject = match.group("subject")
            # "the U.S.?": the dot ends the abbreviation, and "the U.S"
            # would be read in "of the U.S. state of Georgia".
            if re.search(r"(?:^|\s)(?:[A-Z]\.)+[A-Z]$", subject) and question[match.end("subject"):].startswith("."):
                subject += "."
            return subject
    return None


# A capital's name: capitalised words, with the particles of a name between
# them ("Andorra la Vella", "City of San Marino" read as "San Marino");
# never from a lone initial, the end of a sentence not split ("located at
# 70°W. Iqaluit, the capital of Nunavut").
_CAPITAL_NAME = r"(?![A-Z]\.\s)[A-Z][\w'’.-]*(?:\s+(?:(?:de|da|do|del|la|el|al|es|of)\s+)?[A-Z][\w'’.-]*)*"
# The capital itself, not a part's, a past one or one of several ("the
# legislative capital", "the former capital", "the state capital"): only
# "the capital (city)", "the national capital", "the capital and largest
# city".
_AND_LARGEST = (r"(?:\s+and\s+(?:the\s+)?(?:largest|biggest|most\s+populous)\s+(?:metropolitan\s+)?"
                r"(?:city|region|area|urban\s+area))?")
_THE_CAPITAL = r"the\s+(?:national\s+)?capital(?:\s+city)?" + _AND_LARGEST
# A part of a country said with its kind: "the U.S. state of Texas", "the
# Australian state of Victoria".
_PART_OF = (r"(?:the\s+(?:[A-Z][\w.'’-]*\s+)?(?:state|province|region|canton|prefecture|department|governorate|oblast|"
            r"territory|emirate)\s+of\s+)?")
# After X, a time that makes it a past or future capital ("until 2005").
_CAPITAL_THEN = re.compile(r"\s*(?:until|till|from|between|since|before|after|in\s+\d{3,4}|during)\b")


def _place_words(place: str) -> str:
    """``place`` as a pattern: its own words, "the" optional."""
    words = re.sub(r"^the\s+", "", place.strip(), flags=re.IGNORECASE).split()
    # Not "Chiang Mai province", "Guatemala Department": a part named after X.
    return (r"(?:the\s+)?" + r"\s+".join(re.escape(w) for w in words) + r"(?![\w-])(?!\s+[A-Z])"
            + r"(?!\s+(?i:province|state|region|department|county|prefecture|governorate|district|canton|oblast|territory|"
            r"municipality|division)\b)")


def _unqualified(title: str) -> str:
    """``title`` without its qualifier after a comma or in brackets ("León,
    Guanajuato", "Georgia (country)")."""
    return re.sub(r"\s*[(,].*$", "", title).strip()


def _own_article(place: str, title: str) -> bool:
    """Whether ``title`` is ``place``'s own article ("the" and a qualifier aside)."""
    bare = re.sub(r"^the\s+", "", place.strip(), flags=re.IGNORECASE)
    return bool(title) and bare.lower() == _unqualified(title).lower()


def capital_said(sentence: str, place: str, title: str = "") -> str | None:
    """The city ``sentence`` says is ``place``'s present capital, else
    None. ``title`` is the sentence's article: in X's own article "its
    capital" and "the country's capital" are X's, and a sentence "It is
    the capital of X" is about the article's subject. The forms read: "C
    is the capital (city) of X", "C, X's capital,", "C, the capital of
    X", "the capital of X, C", "X's capital (and largest city) is C",
    "its capital, C,". Not "was" (a past capital), nor "the state
    capital", "the legislative capital" (:data:`_THE_CAPITAL`), nor a
    capital of a part of X ("the capital of the canton of Zurich").

    >>> capital_said("Ottawa is the capital city of Canada.", "Canada")
    'Ottawa'
    >>> capital_said("Nigeria is a federal republic, where its capital, Abuja, is located.", "Nigeria", "Nigeria")
    'Abuja'
    >>> capital_said("Delhi is a city containing New Delhi, the capital of India.", "India")
    'New Delhi'
    >>> capital_said("Austin is the capital city of the U.S. state of Texas.", "Texas")
    'Austin'
    >>> print(capital_said("Zurich is the largest city in Switzerland and the capital of the canton of Zurich.", "Switzerland"),
    ...       capital_said("Yangon was the capital city of Myanmar until 2005.", "Myanmar"),
    ...       capital_said("Cape Town is the legislative capital of South Africa.", "South Africa"))
    None None None
    """
    x = _place_words(place)
    bare = re.sub(r"^the\s+", "", place.strip(), flags=re.IGNORECASE)
    own = _own_article(place, title)
    # How the sentence may name X: by its name, or in its own article by
    # "its", "the country's", "the capital of the country".
    # A country's article calls it "the country" or "the nation"; a part's
    # ("the state", "the province"): "the nation's capital, Ottawa" in
    # Ontario's article is Canada's.
    kind = (r"(?:country|nation|republic|kingdom)" if bare in _COUNTRIES or "Republic" in bare
            else r"(?:state|province|republic|island|region|territory)")
    owner = rf"(?:(?P<xo>{x})['’]s?" + (rf"|(?i:its|the\s+{kind}['’]s)" if own else "") + ")"
    # "of X", "of England and the United Kingdom"; not "of X's Hebei Province".
    of_x = (rf"of\s+(?:(?:the\s+)?{_CAPITAL_NAME}\s+and\s+)?(?:{_PART_OF}{x}(?!['’])"
            + (rf"|(?i:the\s+{kind})(?![\w-])(?!\s+of\b)" if own else "") + ")")
    present = r"(?:is|serves\s+as)\s+(?:also\s+)?"
    forms = [
        # "C is the capital (city) of X", "C, formerly …, is the capital of X".
        rf"^\s*(?P<c>{_CAPITAL_NAME})(?:\s*\([^)]*\))?(?:,[^;]*?,)?\s+{present}{_THE_CAPITAL}\s+{of_x}",
        # "C is X's capital", "C is the country's national capital".
        rf"^\s*(?P<c>{_CAPITAL_NAME})(?:\s*\([^)]*\))?(?:,[^;]*?,)?\s+{present}{owner}\s+(?:national\s+)?capital\b(?!\s+of)",
        # In X's own article: "Cairo is the capital, largest city, and …".
        *([rf"^\s*(?P<c>{_CAPITAL_NAME})\s+{present}the\s+(?:national\s+)?capital(?=\s*[,;]|\s+and\b)"] if own else []),
        # "C, the capital of X", "C, X's capital".
        rf"(?P<c>{_CAPITAL_NAME}),\s+(?:{_THE_CAPITAL}\s+{of_x}|{owner}\s+capital(?:\s+city)?(?=\s*[,.;]))",
        # "the capital of X, C", "X's capital (city), C", "its capital, C".
        rf"(?:{_THE_CAPITAL}\s+{of_x}|{owner}\s+capital(?:\s+city)?{_AND_LARGEST}),\s+(?P<c>{_CAPITAL_NAME})\s*(?:[,.;)]|$)",
        # In X's own article: "Its capital city of Yamoussoukro".
        *([rf"(?i:its)\s+capital\s+city\s+of\s+(?P<c>{_CAPITAL_NAME})"] if own else []),
        # "X's capital (and largest city) is C", "The capital (city) of X is C".
        # In X's own article, "The capital is C" too.
        rf"(?:^|[,;]\s*)(?:{owner}\s+capital(?:\s+city)?|(?i:the)\s+capital(?:\s+city)?\s+{of_x}"
        + (r"|^\s*The\s+capital(?:\s+city)?" if own else "") + rf"){_AND_LARGEST}\s+is\s+(?P<c>{_CAPITAL_NAME})",
    ]
    for form in forms:
        for match in re.finditer(form, sentence):
            # "Sukhumi." at the sentence's end; "Washington, D.C." keeps its dots.
            name = re.sub(r"(?<=[^\W\d][^\W\d])\.$", "", match.group("c"))
            if _CAPITAL_THEN.match(sentence, match.end()) or name.lower() in ("it", "its", "the", "this") or name == bare:
                continue
            # "New South Wales's capital, Sydney" is not Wales's: X's name
            # is the end of a longer one ("In Ghana's capital" is Ghana's).
            if match.groupdict().get("xo") and re.search(r"(?<![\w.'’-])(?!(?:In|At|On|From|To|For|As|By|With|And|But|Since|"
                                                         r"While|When|After|Before|During|Near|Like|Unlike|Within|Today)\s)"
                                                         r"[A-Z][\w.'’-]*\s+$", sentence[:match.start("xo")]):
                continue
            return name
    # "It is the capital of X": the article's subject.
    it = re.match(rf"^\s*It\s+{present}{_THE_CAPITAL}\s+of\s+{x}", sentence)
    if it and title and not own and not _CAPITAL_THEN.match(sentence, it.end()):
        return _unqualified(title)
    return None


# "the capital (city) of Y", "the capital and most populous city of Y",
# "the state capital of Y", "and capital of Y", Y a place: a name or a part's kind ("the canton
# of Zurich"); not "the fashion capital of the world", "a share capital of".
_CAPITAL_OF = re.compile(
    r"\b(?:the\s+(?P<modifier>(?:[\w-]+\s+){0,2}?)|and\s+)capital(?:\s+city)?(?:\s+and\s+(?:the\s+)?(?:largest|biggest|most\s+populous)\s+city)?"
    r"\s+of\s+(?P<of>(?:the\s+)?(?:[A-Z]|(?:[a-z-]+\s+){0,3}?(?:state|province|canton|region|county|department|prefecture|"
    r"governorate|district|oblast|territory|empire|kingdom|republic|emirate)\b)[^,;:()]*?)"
    # ...up to the clause's end or an "and" that joins no other name to it
    # ("of Victoria and the second-most populous city in Australia").
    r"(?=\s+and\s+(?!(?:the\s+)?[A-Z])|\s*[,;:()]|\.?\s*$)")


# Any capital said "of" or "in" a place, with a modifier or none ("the
# historical capital of Bohemia", "the capital and most populated city in
# the Kurdistan Region"), the place with an abbreviation after it ("the
# United Arab Emirates (UAE)") or another name it is known by ("Fars
# province, which is historically known by the exonym Persia proper").
_CAPITAL_IN = re.compile(
    r"\bcapital(?:\s+city)?(?:\s+and\s+(?:the\s+)?(?:largest|biggest|most\s+popul(?:ous|ated))\s+city)?\s+(?:of|in)\s+"
    r"(?P<of>(?:(?!\s+and\b)[^,;:()])*(?:\s*\([A-Z][A-Za-z.]*\))?"
    r"(?:,\s+(?:which|that)\s+(?:is|was)\s+(?:\w+\s+)?(?:known|called)\s+(?:as\s+|by\s+(?:the\s+)?(?:\w+\s+)?)?"
    r"(?:(?!\s+and\b)[^,;:()])*)?)")


def capital_of_another(sentence: str, place: str, title: str = "") -> bool:
    """Whether ``sentence`` says a city is the capital of somewhere and
    each such place it names is not ``place``: a state's, a canton's, a
    province's ("Melbourne is the capital … of the Australian state of
    Victoria" asked for Australia's). One that names X ("the legislative
    capital of South Africa", "was the capital of Myanmar") is about X's
    capital and stays. In X's own article ``title`` a capital said of
    another name ("in the capital city of Suva" in Fiji's) is X's own city.

    >>> capital_of_another("Zurich is the largest city in Switzerland and the capital of the canton of Zurich.", "Switzerland")
    True
    >>> capital_of_another("Cape Town is the legislative capital of South Africa.", "South Africa")
    False
    >>> capital_of_another("Capital letters are used in Switzerland.", "Switzerland")
    False
    >>> capital_of_another("Melbourne is the capital of the Australian state of Victoria and a city in Australia.", "Australia")
    True
    >>> capital_of_another("Constantinople was the capital of the Roman and Byzantine Empire.", "the Roman Empire")
    False
    >>> capital_of_another("Its cities include Orlando and the state capital of Tallahassee.", "Florida")
    False
    >>> capital_of_another("Paris is the fashion capital of the world.", "France")
    False
    >>> capital_of_another("Prague is the capital of the Czech Republic and the historical capital of Bohemia.", "Bohemia")
    False
    """
    if _own_article(place, title):
        return False
    # "the state capital of Tallahassee": after a modifier a bare name may
    # be the capital's own.
    said = [m.group("of") for m in _CAPITAL_OF.finditer(sentence) if not (m.group("modifier") and m.group("of")[0].isupper())]
    # Any word of X's own in the place said keeps the sentence: "the Roman
    # and Byzantine Empire" is the Roman Empire's.
    words = {w.lower() for w in re.findall(r"[\w'’-]+", place) if len(w) > 2 and w.lower() != "the"}
    # Every capital the sentence says counts for X, a former or historical
    # one too: "the capital of the Czech Republic and the historical capital
    # of Bohemia" is Bohemia's.
    named = said + [m.group("of") for m in _CAPITAL_IN.finditer(sentence)]
    return bool(said) and not any(words & {w.lower() for w in re.findall(r"[\w'’-]+", of)} for of in named)
