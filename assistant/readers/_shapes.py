"""Answers shaped by the question: a definition from the subject's own article,
and a short span (a date, a number, a name) where the question asks for one.

QReCC's and CoQA's gold answers are short for factoid questions ("1852",
"three", "Lord Byron") and a definition for "Who was X?". The sentence
reader's best sentence carries the answer in both cases, but F1 against a
short gold answer punishes the rest of the sentence, and for "Who was X?"
the best-matching sentence is often a detail, not the article's first
sentence, which is where an encyclopaedia defines its subject. Both are
on by default, as measured (``ReaderConfig.definitions`` and
``short_answers``; ``CONVQA_DEFINITIONS`` / ``CONVQA_SHORT_ANSWERS`` turn
them off).
"""

from __future__ import annotations

import re
from typing import Sequence

from ..kernel import (AUXILIARY_VERBS, DRIFT_STOPWORDS, GENDERED_WORDS, KIN_BY_GENDER, NOT_NAMES, READER_STOPWORDS, Passage, folded_text, kin_gender, name_words, owned_kin,
                      PLACE_NOUNS, name_runs, peoples_word, porter_stem, prefix_stem, same_name, same_name_word, tokens)

__all__ = ["QUOTES", "asked_from", "definition_subject", "answer_kind", "short_span", "made_by", "discovery_asked", "discovered_by", "cast_span", "cast_spans", "nickname_holder", "full_name", "kind_span", "kind_asked", "lead_passage", "article_names", "lead_name",
           "bare_lead", "completes_lead",
           "referents", "defines",
           "listed_word", "question_names", "without_bracket", "subject_words", "names_subject", "of_kind_asked", "says_what_is_asked", "kin_asked", "says_kin", "kin_holder", "kin_span", "kin_said",
           "headcount_asked", "headcount_said", "headcount_span"]


_ARTICLES = ("the ", "a ", "an ")
# "is", "was", "are", "were": the verb that says what a subject is.
_BE = r"(?:is|was|are|were)"

# What a spoken question may open with before its question word, asking
# the same: a word of talk ("So", "And", "Ok,"), a request ("Tell me",
# "Can you tell me", "Do you know"), a phrase put first and closed by a
# comma ("In 2010,"), which opens with no question word ("Who, besides
# Kim, …" opens with its own) and no quote ("Did he sing "Oh, How Many
# Roads"?" asks no count). Only before a question word: "How Many Miles"
# inside a title, a relative clause or a quote is no question word of a
# question that opens with another ("Who wrote the novel that …?").
_QUESTION_WORD = r"(?:who|whom|whose|what|when|where|which|why|how)\b"
# The prepositions a question may open with before its question word ("in
# what year", "under which king"), after a lead-in too.
_PREPOSITION = r"(?:in|on|at|to|from|for|by|of|with|into|under|during|through|since|until)"
_AUXILIARY = "(?:" + "|".join(sorted((re.escape(verb) for verb in AUXILIARY_VERBS), key=len, reverse=True)) + ")"
_LEAD_IN = re.compile(
    rf"^\s*(?:(?:so|and|but|ok|okay|well|also|then|now|oh|alright|right)\b[\s,]*"
    rf"|(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?tell\s+me\s+(?:please\s+)?"
    rf"|(?:do|does)\s+(?:you|anyone)\s+know\s+"
    rf"|i\s+(?:wonder|want\s+to\s+know|would\s+like\s+to\s+know)\s+"
    # A fronted phrase closed by a comma ("In 2010, how many…"); not the
    # opening of a yes/no question with a clause set off ("Did she, when
    # young, live in Bergen?" asks yes or no, not when).
    rf"|(?!{_QUESTION_WORD}|{_AUXILIARY}\b)[^\s,?\"“”‘«»'](?:[^,?\"“”‘«»']|(?<=\w)'){{0,40}},\s*"
    rf")+(?=(?:{_PREPOSITION}\s+)?{_QUESTION_WORD}|tell\s+me\s+(?:more\s+)?about\b)",
    re.IGNORECASE,
)


def asked_from(question: str) -> str:
    """``question`` from its question word on, what opens it before that
    left out (:data:`_LEAD_IN`): what every reading of a question's shape
    ("how many", "when", "who plays") reads, wherever the question starts.

    >>> [asked_from(q) for q in ("So how many moons does it have?", "In 2010, who won?", "Tell me when she died.")]
    ['how many moons does it have?', 'who won?', 'when she died.']
    >>> asked_from("So, in what year did she die?"), asked_from("In Ada's time, who ruled?")
    ('in what year did she die?', 'who ruled?')
    >>> [asked_from(q) for q in ('Did he sing "Oh, How Many Roads"?', "Did he sing 'Oh, how many roads'?")]
    ['Did he sing "Oh, How Many Roads"?', "Did he sing 'Oh, how many roads'?"]
    >>> [asked_from(q) for q in ("Who, besides Kim, came?", "Did the book How Many Miles sell?", "And tell me about Oslo")]
    ['Who, besides Kim, came?', 'Did the book How Many Miles sell?', 'tell me about Oslo']
    """
    match = _LEAD_IN.match(question)
    return question[match.end():] if match else question

_DEFINITION = re.compile(
    rf"^\s*(?:(?:who|what)\s+{_BE}|tell\s+me\s+(?:more\s+)?about)\s+(?P<x>.+?)[\s?.!]*$",
    re.IGNORECASE,
)


# What follows "Who was" in a question about who did something, not about
# who someone is: a past participle ("born in Prague", "known as …").
_CLAUSE = re.compile(
    r"born\b|(?:[a-z]+ed|known|made|built|written|given|taken|won|sold|shown|seen|chosen|found|held|led|kept|"
    r"left|lost|sent|shot|struck|beaten|drawn|driven|grown|flown|stolen|spoken|hidden|thrown|sung|begun|brought|"
    r"bought|caught|taught|fought|told|paid|become)"
    r"\s+(?:in|on|at|by|for|to|from|as|with|into|during|after|before|\d)\b"
)


# The words a name given to someone is said with ("nicknamed her "the Iron
# Lady"", "known as the “King of Pop”", "often called the Bard").
_NAMING = (r"(?:(?:also|often|commonly|popularly|widely|simply|sometimes|later|affectionately|famously)\s+)*"
           r"(?:known\s+as|called|nicknamed|dubbed|named|styled)\b")
# Quote marks, straight and curly: around a name given, and closing a
# sentence (the sentence reader's test of a document's own question).
# Not derived from it, on purpose, as each takes a part of it that no
# opening/closing split gives: _LEAD_IN's fronted phrase (it lets ’ and a
# word's ' through: "In Ireland’s history, …"), completes_lead's closers,
# _SENTENCE_OPENING's and _sentence._SENTENCE_END's openers (these three
# lack « or », adding them would change what they read).
QUOTES = "\"'“”‘’«»"
# "the" and a name in quotes: "Who is the “King of Pop”?" or "Who is the
# 'Iron Lady'?" asks who was given it; "Who is “Weird Al”?" asks about the
# one so named. A straight quote is an apostrophe too, inside the name or
# after it ("the 'Lady's' own horse"): the name's quotes open it and end
# the question (_NICKNAME_ASKED).
_QUOTED = re.compile(r"the\s+[\"'“‘«].+[\"'”’»]", re.IGNORECASE)
# "Who was nicknamed X?", "Who is known as X?", "Who is the “X”?": X, the name given.
_NICKNAME_ASKED = re.compile(
    rf"^who\s+(?:{_BE}|has\s+been|had\s+been)\s+(?:{_NAMING}\s+(?P<given>[^?!]+?)|(?P<quoted>{_QUOTED.pattern}))[\s?.!]*$",
    re.IGNORECASE,
)


def definition_subject(question: str) -> str | None:
    """The X of "Who was X?" / "What is X?" / "Tell me about X", or None.

    A role ("the father of Ada", "the capital of France") is not a subject
    with an article of its own: those are factoid questions.

    >>> definition_subject("Who was Ada Lovelace?"), definition_subject("What is a quokka?")
    ('Ada Lovelace', 'a quokka')
    >>> [definition_subject(q) for q in ("Who was the father of Ada?", "Who was Ada's father?", "Who wrote it?")]
    [None, None, None]
    >>> [definition_subject(q) for q in ("Who was born in Prague?", "Who was known as Boz?", "who was alfred the great")]
    [None, None, 'alfred the great']
    >>> print(definition_subject("who is chips voice in beauty and the beast"))
    None

    Nor is a name given to someone ("Who was nicknamed "the Iron Lady"?",
    "Who is the “King of Pop”?"): it asks who was given it. A quoted title
    asked by "what" is a subject.

    >>> [definition_subject(q) for q in ('Who was nicknamed "the Iron Lady"?', "Who is the “King of Pop”?", "Who was called the Bard?")]
    [None, None, None]
    >>> definition_subject('What is "Bohemian Rhapsody"?')
    '"Bohemian Rhapsody"'
    """
    asked = asked_from(question)
    match = _DEFINITION.match(asked)
    if not match:
        return None
    subject = match.group("x").strip()
    if re.search(r"\w['’]s?\b", subject):
        return None  # "Ada Lovelace's father": a role, named through its holder
    if _CLAUSE.match(subject) or _NICKNAME_ASKED.match(asked):
        return None  # "born in Prague", "called the Bard": who was, not who someone was
    if _VOICE_OF.match(asked):
        return None  # "chips voice": a role's cast, as "Ada's father" is a role
    lowered = subject.lower()
    for article in _ARTICLES:
        if lowered.startswith(article):
            rest = subject[len(article):].split()
            # "the Beatles" names a subject; "the first man on the moon" a role.
            if len(rest) > 1 and rest[0][:1].islower():
                return None
    return subject


def nickname_asked(question: str) -> str | None:
    """The name a question asks the holder of ("Who was nicknamed "the
    Iron Lady"?", "Who is the “King of Pop”?"), its quotes and a leading
    "the" off; None for another question.

    >>> [nickname_asked(q) for q in ('So who was nicknamed "The Iron Lady"?', "Who is the “King of Pop”?", "Who was Ada?")]
    ['Iron Lady', 'King of Pop', None]
    """
    match = _NICKNAME_ASKED.match(asked_from(question))
    if not match:
        return None
    given = (match.group("given") or match.group("quoted")).strip(QUOTES + " ")
    return re.sub(r"^the\s+", "", given, flags=re.IGNORECASE).strip(QUOTES + " ") or None


def nickname_holder(question: str, sentence: str, subject: str = "") -> str | None:
    """Who ``sentence`` says holds the name ``question`` asks about
    (:func:`nickname_asked`), the name's quotes, straight or curly, aside:
    the name it is given after ("Orvell, nicknamed 'the Bridge Builder'"),
    or ``subject`` (the sentence's referent, or its article's title) where
    a pronoun holds it ("the press called her ‘the Barefoot Arrow’", "Known
    as the “King of Pop”, he …"). The name given is not who holds it:
    "Soviet", the name nearest the question's words, answered "Who was
    nicknamed the Iron Lady?". None where the sentence says neither.

    >>> nickname_holder("Who was nicknamed the Iron Lady?", 'A journalist nicknamed her "the Iron Lady".', "Margaret Thatcher")
    'Margaret Thatcher'
    >>> nickname_holder("Who was called 'the Bridge Builder'?", "Orvell, nicknamed ‘the Bridge Builder’, built it.")
    'Orvell'
    >>> print(nickname_holder("Who was called the Bridge Builder?", "The Bridge Builder is a film.", "Ada"))
    None
    """
    given = nickname_asked(question)
    if not given:
        return None
    quote = f"[{QUOTES}]*"
    found = re.search(rf"(?<!\w){quote}" + rf"{quote}\s+{quote}".join(map(re.escape, given.split())) + r"(?!\w)",
                      sentence, re.IGNORECASE)
    if not found:
        return None
    # What says the name is given, before it: "nicknamed her", "known as", "the nickname".
    before = re.sub(rf"[\s{QUOTES}]*(?:the[\s{QUOTES}]+)?$", "", sentence[: found.start()], flags=re.IGNORECASE)
    naming = re.search(rf"(?:\b{_NAMING}(?:\s+(?:him|her))?|\b(?:nickname|epithet|sobriquet)s?)$", before, re.IGNORECASE)
    if not naming:
        return None
    named = [span for span in _names(sentence, question) if span[1] <= naming.start()]
    if named and re.fullmatch(rf"\s*,?\s*(?:\(\s*)?(?:(?:who\s+)?(?:{_BE}|became|has\s+been)\s+)?",
                              sentence[named[-1][1] : naming.start()], re.IGNORECASE):
        return named[-1][2]
    if subject and re.search(r"\b(?:he|she|him|her)\b", sentence, re.IGNORECASE):
        return subject
    return None


def _title_key(text: str) -> str:
    # "The Quokka", "quokka" and "Quokka (animal)" name the same article, and
    # "Sagrada Familia" (typed without its accent) "Sagrada Família".
    text = re.sub(r"\([^)]*\)", " ", folded_text(text).lower())
    words = tokens(text, "rouge")
    if words and words[0] in ("the", "a", "an"):
        words = words[1:]
    return " ".join(words)


def _same_subject(subject: str, name: str, person: bool) -> bool:
    """Whether ``name`` (a title, a name) names ``subject``; for a person,
    also a name ending with it ("Isaac Newton" for "Newton")."""
    key, named = _title_key(subject), _title_key(name)
    return bool(key) and (named == key or person and named.endswith(" " + key))


def defines(subject: str, sentence: str, person: bool = False) -> bool:
    """Whether ``sentence`` says what ``subject`` is as an article's first
    sentence does: it opens with the subject's name and "is" or "was". A
    pasted document has no article of its own to take a lead from, and its
    sentences about the subject's birth or work, which name him only by
    "he", matched "Who was Dvořák?" best.

    >>> defines("Dvořák", "Antonín Dvořák was a Czech composer.", person=True), defines("Dvořák", "Dvořák moved to New York.")
    (True, False)
    """
    name = _opening_name(sentence)
    rest = sentence.lstrip()[sentence.lstrip().find(name) + len(name):] if name else ""
    return bool(name) and _same_subject(subject, name, person) and bool(re.match(rf"\s*(?:,[^,]*,\s*)?{_BE}\b", rest))


# A lead that gives its subject's kind in a short noun phrase ("Charles John
# Huffam Dickens was an English writer and journalist.") says what it is, not
# what it is known for, which an encyclopaedia's next sentence says ("… the
# greatest novelist of the Victorian era"); a longer one says both.
_BARE_WORDS = 6
_COPULA = re.compile(rf"\b{_BE}\b")
# Before a lead's first "is", a word that opens a clause of its own: that
# "is" says what something else is ("Health has a variety of definitions …
# and is a multidimensional concept", "… but it is also used as an
# ornamental plant", "… the knowledge that is produced by these processes").
_CLAUSE_WORD = re.compile(r"\b(?:which|that|who|whom|whose|what|when|where|while|how|why|but|and|or|although|though|because|"
                          r"whereas|since|if|it|he|she|they)\b", re.IGNORECASE)
# The sentence after a bare lead that is no part of its definition: a
# disambiguation note, or one too long to be read as half of an answer.
_NOT_A_SEQUEL = re.compile(r"^\s*(?:not\s+to\s+be\s+confused|for\s+other\s+uses|see\s+also)\b", re.IGNORECASE)
_SEQUEL_WORDS = 40


def bare_lead(sentence: str) -> bool:
    """Whether an article's first sentence says what its subject is in a few
    words alone (at most ``_BARE_WORDS`` after the "is" or "was" that
    follows its subject; one after another clause's word does not count).

    >>> bare_lead("Charles John Huffam Dickens was an English writer and journalist.")
    True
    >>> bare_lead("Cleopatra VII was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 BC.")
    False
    >>> bare_lead("Kale, also called leaf cabbage, is grown for its leaves, but it is an ornament.")
    False
    """
    match = _COPULA.search(sentence)
    return (bool(match) and not _CLAUSE_WORD.search(re.sub(r"\([^)]*\)", " ", sentence[: match.start()]))
            and len(sentence[match.end():].split()) <= _BARE_WORDS)


def completes_lead(sentence: str) -> bool:
    """Whether ``sentence``, the one after a bare lead in its paragraph,
    completes the definition: a sentence that ends as one, not a heading or
    a list's item ("History"), not a note on another subject ("Not to be
    confused with …"), and not too long to be half an answer.

    >>> completes_lead("He is regarded as the greatest novelist of the Victorian era.")
    True
    >>> [completes_lead(s) for s in ("History", "Not to be confused with the planet Mercury.", "It was long. " * 30)]
    [False, False, False]
    """
    return (bool(re.search(r"[.!?][\"'’”)]*\s*$", sentence)) and not _NOT_A_SEQUEL.match(sentence)
            and len(sentence.split()) <= _SEQUEL_WORDS)


def lead_name(passage: Passage) -> str:
    """The longer name an article's text opens with ("Joseph Frank Keaton"
    in "Buster Keaton", "Cleopatra VII Thea Philopator" in "Cleopatra"): two
    words at least, as one word alone opens many a text, and not its title;
    "" if none. It may hold other subjects' names too ("Tiberius Julius
    Caesar Augustus"): callers match it with care.

    >>> lead_name(Passage("k", "Joseph Frank Keaton was an actor.", 1.0, "Buster Keaton"))
    'Joseph Frank Keaton'
    >>> lead_name(Passage("k", "The Karlo Bridge crosses it.", 1.0, "Karlo Bridge")), lead_name(Passage("t", "Tesla was born.", 1.0, "Nikola Tesla"))
    ('', '')
    """
    lead = _opening_name(passage.text)
    return lead if len(name_words(lead)) > 1 and lead != passage.title else ""


def article_names(passage: Passage, question: str) -> str:
    """The names an article calls its subject by in ``question``: its title,
    and the longer form its text opens with ("Cleopatra VII Thea Philopator
    was …" in "Cleopatra") where the question names the subject so, as a
    follow-up's rewrite that took it from the answer it read does. Counted
    word by word, the lead's name made its sentence the best match for any
    question naming her so, whatever it asked ("What did Egypt become after
    Cleopatra VII Thea Philopator's death?" got her lead, not "After her
    death, Egypt became a province of the Roman Empire"). A question that
    names only the lead's other words asks about another subject: "Where
    was Julius Caesar born?" is not about "Tiberius Julius Caesar Augustus".

    >>> cleopatra = Passage("c", "Cleopatra VII Thea Philopator was Queen of Egypt.", 1.0, "Cleopatra")
    >>> article_names(cleopatra, "When did Cleopatra VII Thea Philopator die?"), article_names(cleopatra, "When did Cleopatra die?")
    ('Cleopatra Cleopatra VII Thea Philopator', 'Cleopatra')
    >>> article_names(Passage("t", "Tiberius Julius Caesar Augustus was an emperor.", 1.0, "Tiberius"), "Where was Julius Caesar born?")
    'Tiberius'
    """
    lead, asked, title = lead_name(passage), name_words(question), name_words(passage.title)
    named = bool(lead) and same_name(passage.title, lead) and title <= asked and bool((name_words(lead) - title) & asked)
    return f"{passage.title} {lead}" if named else passage.title


def lead_passage(subject: str, passages: Sequence[Passage], person: bool = False) -> Passage | None:
    """The first passage of the subject's own article among ``passages``:
    its title names the subject; a document's first passage (``_p0``, ``#0``)
    wins over a later one, then the retriever's order. With ``person`` (a
    "who" question), a title that ends with the subject names it too: "Who
    was Newton?" asks for "Isaac Newton" as much as for the unit "Newton",
    and the retriever's order, which read the question, picks between them.

    >>> ps = [Passage("x_p3", "Later.", 2.0, "Ada Lovelace"), Passage("x_p0", "Ada was...", 1.0, "Ada Lovelace")]
    >>> lead_passage("Ada Lovelace", ps).id, lead_passage("Charles Babbage", ps)
    ('x_p0', None)
    >>> ps = [Passage("Isaac Newton", "Sir Isaac...", 2.0, "Isaac Newton"), Passage("Newton", "The newton...", 1.0, "Newton")]
    >>> lead_passage("Newton", ps, person=True).id, lead_passage("Newton", ps).id
    ('Isaac Newton', 'Newton')
    """
    matches = [p for p in passages if _same_subject(subject, p.title, person)]
    if not matches:
        return None
    first = [p for p in matches if re.search(r"(_p|#)0$", p.id)]
    return (first or matches)[0]


_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
# Not a part of a longer number: the "848" of "8,848" or the "500" of "2.500" is no year.
# An era makes a shorter number a year ("44 BC", "AD 80"; "When was Julius
# Caesar assassinated?" found no date in "… until his assassination in 44 BC").
_YEAR = (
    r"(?:(?<![\d,.])(?:\d{1,3},\d{3}|\d{1,5})(?![,.]?\d)\s*(?:BC|BCE|AD|CE)\b"
    r"|\bAD\s+\d{1,4}(?![,.]?\d)"
    r"|(?<![\d,.])\d{3,4}(?![,.]?\d))"
)
_ERA = r"(?:\s+(?:BC|BCE|AD|CE)\b)?"
# Most specific first: a full date, then a month and year, then a year, a decade, a century.
# A tokenised text spaces its commas ("April 17 , 1982", Natural Questions' pages).
_DATE = re.compile(
    rf"\b(?:{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\s*,?\s+{_YEAR}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\s+{_YEAR}"
    rf"|{_MONTH}\s+{_YEAR}"
    rf"|\d{{4}}s"
    rf"|(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)\s+(?:century|millennium){_ERA}"
    rf"|{_YEAR})\b"
)
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand million billion dozen dozens hundreds thousands millions"
).split()
# A number is said with its percent ("12%", "5 per cent", "a 5 percentage
# increase": :data:`_PERCENT`) or its points ("4 percentage points", "50
# basis points", "5 percentage-points": not "4 percent"), the unit of a
# change in a percent.
_POINTS = r"(?:percentage|basis)[\s-]+points?\b"
_SAYS_POINTS = re.compile(_POINTS, re.IGNORECASE)
# A year is no number said in percentage ("the 2019 percentage").
_YEAR = r"(?:1\d{3}|20\d{2})"
_PERCENT = rf"percent\b|(?<!\b{_YEAR}[\s-])percentage\b|per cent\b"
# A number word whole: "seventh", "nineteenth" and "tenth" are ordinals and
# "seventeen" no "seven" (longest first, and a word's end after it), and a
# tens word opens no compound ordinal ("twenty-seventh"). Only a tens word:
# after "one" the same words make a fraction or a measure ("one-fifth of the
# vote", "a one-second delay"), still a number.
_TENS_WORDS = _NUMBER_WORDS[19:27]
_NUMBER_WORD = (r"(?:(?:" + "|".join(_TENS_WORDS) + r")\b"
                r"(?!-(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)\b)|"
                r"(?:" + "|".join(sorted((w for w in _NUMBER_WORDS if w not in _TENS_WORDS), key=len, reverse=True)) + r")\b)")
_NUMBER = re.compile(
    r"(?:[$£€]\s?)?\b(?:\d(?:[\d,]*\d)?(?:\.\d+)?|" + _NUMBER_WORD + r")"
    r"(?:[\s-]+(?:" + _NUMBER_WORD + r"|" + _POINTS + r"|" + _PERCENT + r"))*(?:\s?%)?",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|de|da|di|van|von|der|del|la|le|bin|al)\s+)?[A-Z][\w'’.-]*)*")

# A range a number opens ("six to eight", "25-35", "two or three"; "between
# 20 and 30" with its "between"): cut at its first number, "How long does a
# passport take?" was answered "six" for "six to eight weeks".
# Only a rising pair is a range (:func:`_rises`): "voted 5 to 4", "won 2-0"
# and "sold 500 to one buyer" are a score, a vote and a number and a buyer.
_RANGE_ON = re.compile(r"\s*[-–—]\s*(?=\d)|\s+(?:to|or)\s+", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)
_BETWEEN_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_WORD_VALUE = {w: i + 1 for i, w in enumerate(_NUMBER_WORDS[:19])} | {w: 10 * (i + 2) for i, w in enumerate(_NUMBER_WORDS[19:27])}
_WORD_SCALE = {"hundred": 100, "hundreds": 100, "thousand": 1000, "thousands": 1000, "million": 10**6,
               "millions": 10**6, "billion": 10**9, "dozen": 12, "dozens": 12}
# What a measure is said in after its number: "5.5 km" and "about 3 hours"
# answer "How long …?", where "5.5" and "3" say nothing. A closed list:
# the word after a count is what is counted ("39 plays"), and the one after
# a measure may be anything ("318 m tall", "2,196 km along the border").
_LENGTH_UNITS = (
    r"millimet(?:re|er)s? centimet(?:re|er)s? met(?:re|er)s? kilomet(?:re|er)s? mm cm m km inch(?:es)? feet foot ft "
    r"yards? yd miles? mi light[\s-]years? nautical\s+miles?"
).split()
_UNITS = (
    r"seconds? secs? minutes? mins? hours? hrs? days? weeks? months? years? yrs? decades? century centuries "
    r"millennium millennia "
    r"grams? g kilograms? kg tonnes? tons? pounds? lbs? ounces? oz "
    r"acres? hectares? ha km² km2 m² m2 sq\s+mi lit(?:re|er)s? ml gallons? "
    r"mph km/h kph knots? m/s degrees? °[CF]? "
    r"dollars? euros? cents? pence yen"
).split() + _LENGTH_UNITS
_UNIT_WORD = "(?:" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")(?![\w°/])"
_UNIT = re.compile(rf"[\s-]*(?:(?:square|cubic)\s+)?{_UNIT_WORD}(?:\s*(?:celsius|fahrenheit))?", re.IGNORECASE)
# A measure in two units, the second smaller ("6 ft 2 in", "2 hours 30 minutes").
_SECOND_UNIT = re.compile(rf"\s+(?:and\s+)?\d+(?:\.\d+)?\s*{_UNIT_WORD}", re.IGNORECASE)
# "in" for inches only after feet: elsewhere it is the preposition ("100 m 4 in
# a row", "5 years and 3 in the army").
_FEET = re.compile(r"(?:ft|feet|foot)$", re.IGNORECASE)
_INCHES = re.compile(r"\s+\d+(?:\.\d+)?\s*in\b", re.IGNORECASE)
# How near a number is said before it ("about 3 hours", "just under 40 m").
_NEAR = (
    r"(?:about|around|approximately|roughly|nearly|almost|(?:just\s+|well\s+)?(?:over|under)|some|circa|up\s+to"
    r"|an\s+estimated|(?:more|less|fewer)\s+than|at\s+(?:least|most))"
)
# How near a measure is said before its number (:data:`_NEAR`).
_APPROXIMATE = re.compile(rf"\b{_NEAR}\s+$", re.IGNORECASE)
# A count from one number to another has changed ("rose from 50 to 300"), as
# has one changed by a number ("grew by 5,000 to 20,000"): no range. After a
# verb of change (a closed list: "passed by 52 to 48 votes" is a tally, "is
# divided by 3 to get 4" no change), "by 5,000 to 20,000" is the change,
# then the level it reached, also said how near ("by about 5,000", the
# ``near`` group) or as a range ("by 3-4% to 9,700"; "by between 3 and 4
# percent to 9,700", the "between" read by :data:`_BETWEEN`).
# Those that also take what they change after them ("cut rates by", "grew
# its herd from": :data:`_CHANGED_WHAT`).
_CHANGE_OBJECT_VERB = (
    r"grow(?:s|n|ing)?|grew|increas(?:e[sd]?|ing)|decreas(?:e[sd]?|ing)|drop(?:s|ped|ping)?|reduc(?:e[sd]?|ing)"
    r"|cut(?:s|ting)?|shr[iau]nk|shrinks?|expand(?:s|ed|ing)?"
)
# A verb of change said with its particle ("cut down its staff from",
# "scaled back the budget by", "was pared down from"): the particle, not
# the verb, says which way it goes (:data:`_DOWN`).
_PHRASAL_CHANGE = r"(?:cut(?:s|ting)?|scal(?:e[sd]?|ing)|par(?:e[sd]?|ing)|ramp(?:s|ed|ing)?)\s+(?:down|back|up)"
_CHANGE_VERB = (
    r"ris(?:e[ns]?|ing)|rose|fall(?:s|en|ing)?|fell|declin(?:e[sd]?|ing)|climb(?:s|ed|ing)?|jump(?:s|ed|ing)?"
    r"|(?:go(?:es|ne)?|going|went)\s+(?:up|down)|" + _PHRASAL_CHANGE + "|" + _CHANGE_OBJECT_VERB
)
# Raising and lowering change a number only with what they change after
# them ("raised its budget by", "lowered rates from"): "raised by his aunt",
# "raised by 300 to 400 volunteers" name who did it.
_RAISE = r"rais(?:e[sd]?|ing)|lower(?:s|ed|ing)?"
# What a verb of change changes, said between it and its "by" or "from":
# one or two words ("cut rates by", "lowered interest rates by"), after a
# determiner where one is said ("cut its staff from", "raised the city's
# budget by"), and what they are "of" ("increased the number of seats
# from"). No other preposition, conjunction or particle opens it: "raised
# by his aunt from 1950", "grew despite visitors from 5 to 10 countries",
# "grew up from 5 to 10".
_THING = (
    r"(?:\s+(?:its|their|his|her|our|your|the|a|an|this|that|these|those))?"
    rf"(?:\s+(?!(?:{_PREPOSITION}|and|or|but|as|than|onto|over|after|before|among|amid|across|along|around|about"
    r"|against|between|beyond|near|throughout|toward|towards|upon|via|within|without|per|like|past|who|which|that"
    r"|when|where|while|if|because|despite|although|though|unless|up|down|out|off)\b)"
    r"[^\W\d][\w'’-]*){1,2}"
)
_CHANGED_WHAT = rf"(?P<what>{_THING}(?:\s+of{_THING})?)"
# A verb that says its change goes down: "cut its staff from 500 to 300"
# falls, and "cut power from 5 to 10 pm", "cut the road from 5 to 10 km
# north" rise, a range of what was cut (:func:`_quantities`).
_DOWN = re.compile(r"decreas|drop|reduc|cut|shr|lower|\w+\s+(?:down|back)\b", re.IGNORECASE)
_RAISED = re.compile(r"rais", re.IGNORECASE)
# A vote's tally after a "by" ("cut the budget by 20 votes to 10"), unless
# what was changed is counted in votes, its last word says, and the level
# after is the larger, as no tally is said ("cut her majority by 500 votes
# to 2,000"; not "cut the majority rule by 300 votes to 250", nor "the
# motion cut the majority by 20 votes to 10": :data:`_COUNTED_IN_VOTES`).
_TALLY = re.compile(r"\s*votes?\b", re.IGNORECASE)
_COUNTED_IN_VOTES = re.compile(r"\b(?:majority|margin|lead|votes?)$", re.IGNORECASE)
# An age said after a pair "from" one number "to" another ("grew children
# from 5 to 10 years old"): how old what was changed is, a range, unless
# what was changed is an age ("raised the age limit from 16 to 18 years old").
_YEARS_OLD = re.compile(rf"{_UNIT.pattern}\s+(?:old|of\s+age)\b", re.IGNORECASE)
_AN_AGE = re.compile(r"\bage\b", re.IGNORECASE)
# A word after a unit of length that says where, or how big, what is
# counted is ("from 500 to 800 metres above sea level", "from 30 to 40 miles
# away"): the pair is a range of places or sizes, the unit no level's. After
# another unit it says where the level holds ("from 50 to 60 mph north of
# the city", "from 16 to 18 years under the new law").
_LENGTH = re.compile(r"[\s-]*(?:" + "|".join(_LENGTH_UNITS) + ")", re.IGNORECASE)
_POSITION_AFTER = re.compile(
    r"\s+(?:away|apart|above|below|beneath|under(?:ground|water)?|inland|offshore|upstream|downstream|across|along|beyond"
    r"|(?:north|south)(?:[\s-]?(?:east|west))?(?:ern|wards?)?|(?:east|west)(?:ern|wards?)?"
    r"|tall|high|deep|long|wide|thick)\b",
    re.IGNORECASE,
)
# A number said as a time of day ("from 10 pm to 5 am", "from 9 o'clock"):
# what was cut from it to another is cut for that time, no change.
_TIME_OF_DAY = re.compile(r"\s*(?:[ap]\.?m\b|o['’]clock\b)", re.IGNORECASE)
# A word after a count that says what it counts ("from 30 to 40 parents"),
# not one that opens another phrase ("from 16 to 18 in 2001").
_COUNTING = re.compile(
    r"\s+(?!(?:in|on|at|by|for|during|since|until|after|before|and|but|or|while|when|with)\b)[^\W\d]", re.IGNORECASE
)
# The verb may stand a few words before its "by" ("rose in 2001 by",
# "grew steadily by", "fell over the last decade by"): up to four, each an
# -ly adverb, a year or decade, or a word of time; before its "from" only
# adverbs and years ("rose in 2001 from"). Any other word may open another
# phrase ("grew and was bought by", "fell on news given by", "fell among
# pupils from 11 to 16", "dropped at games won by 4 points to 2").
_GAP_YEAR = r"(?:(?:in|during)\s+(?:the\s+)?)?\d{4}s?"
_CHANGE_GAP = (
    r"(?:\s+(?:[^\W\d]+ly|" + _GAP_YEAR + r"|(?:in|during|over|last|past|this|the|each|every|a|an|size"
    r"|years?|months?|weeks?|decades?|quarters?|period|term|century)\b)){0,4}"
)
_FROM_GAP = r"(?:\s+(?:[^\W\d]+ly|" + _GAP_YEAR + r")\b){0,2}"
# After a verb of change, "from" one number "to" another (``way`` "from":
# "grew from about 5,000 to 20,000") says the level before and the level
# after; a plain "from" a count it started at.
_FROM = re.compile(
    rf"\b(?:(?P<change>(?:{_CHANGE_OBJECT_VERB}|{_RAISE}|{_PHRASAL_CHANGE}){_CHANGED_WHAT}|{_CHANGE_VERB})"
    rf"(?:{_CHANGE_GAP}\s+(?P<way>by)|{_FROM_GAP}\s+(?P<way_from>from))"
    rf"(?:\s+(?P<near>{_NEAR}))?|from|by)\s+$",
    re.IGNORECASE,
)
# A level said with its time ("from 5,000 in 1900 to 20,000 in 2000"), read
# in text whose dates but bare years are blanked ("in May 1900", "in the
# 1900s": blanks).
# No two unbounded runs of spaces stand side by side: a long run of blanks
# is then split one way only, not tried every way (a cost that grows with
# the cube of the run).
_AT_TIME = r"\s+(?:in|during)(?:\s+the)?"
_DATED = re.compile(_AT_TIME + r"(?:\s+\d{4}s?|\s+)", re.IGNORECASE)
# ...and one "to" the level from a change said with what it counts, its
# time, or that is a range ("grew by 5,000 members, to 20,000"; "from 5,000
# in 1900 to 20,000"; "fell by 3 to 4 percent to 9,700": the level is 9,700).
_UNIT_TO = re.compile(rf"(?:\s*(?:%|[^\W\d]+))?(?:{_AT_TIME}(?:\s+\d{{4}}s?)?)?,?\s+to\s+", re.IGNORECASE)
# A year as a question or a bare number says it ("the 2026 World Cup").
_A_YEAR = re.compile(rf"\b{_YEAR}\b")
# A question about the change itself ("How much did inflation increase?",
# "How many members joined?", "By how much …?") is answered with it, a
# range where it is one. Its verb is a lower-case whole word: a name
# ("Niagara Falls", "Fall River", "Rose's club", "Lower East Side") or a
# longer word ("additional") asks for no change.
_CHANGE_ASKED = re.compile(
    rf"(?i:\bby\s+how\s+(?:much|many)\b)|\b(?:{_CHANGE_VERB}"
    r"|gain(?:s|ed|ing)?|join(?:s|ed|ing)?|enrol(?:s|ls?|led|ling)?|recruit(?:s|ed|ing)?"
    r"|hir(?:e[sd]?|ing)|los(?:es?|ing)|lost|add(?:s|ed|ing)?|" + _RAISE + r"|chang(?:e[sd]?|ing)"
    r"|sign(?:s|ed|ing)?\s+(?:up|down))\b"
)
# A question with a verb of change may still ask for the level reached:
# "What did membership grow to?", "How high did it rise?", "What level
# did it reach?", "How many members did it have after it grew / after the
# increase?" (after the change itself: "How many joined after the war?"
# asks for the change).
_THE_CHANGE = (
    rf"(?:(?:it|they|he|she)\s+(?:had\s+)?(?:{_CHANGE_VERB})"
    r"|(?:the|its|their|this|that)\s+(?:increase|decrease|growth|rise|fall|drop|decline|cuts?|reduction|expansion"
    r"|jump|change|gain|loss))\b"
)
_LEVEL_ASKED = re.compile(rf"\bto\W*$|\bhow\s+high\b|\bwhat\s+level\b|\bafter\s+{_THE_CHANGE}", re.IGNORECASE)
# A question for the level before a change said "from" one level "to"
# another ("How many members did it have at first / before it grew /
# before?", "What did it grow from?") gets the first; one that dates
# itself otherwise ("before the war") does not.
_START_ASKED = re.compile(
    r"\b(?:at\s+first|originally|initially|previously|formerly|to\s+(?:begin|start)\s+with"
    rf"|(?:in|at)\s+the\s+(?:beginning|start|outset)|before(?:\s+{_THE_CHANGE}|\W*$)|from\W*$)",
    re.IGNORECASE,
)
# Moving and building are changes asked ("How many people moved to the
# town?", "How many houses were built?") only outside a clause that dates
# the question: "after he moved", "since the move", "when the church was
# built" ask for the level then.
_MOVED_OR_BUILT = re.compile(r"\b(?:mov(?:e[sd]?|ing)|buil(?:t|ds?))\b", re.IGNORECASE)
_DATING_CLAUSE = re.compile(r"\b(?:after|when|since|once|before|until)\b[^?]*", re.IGNORECASE)


def _change_asked(question: str) -> bool:
    """Whether a number question asks for a change rather than the level
    reached (:data:`_CHANGE_ASKED`, :data:`_LEVEL_ASKED`, :data:`_MOVED_OR_BUILT`).

    >>> [_change_asked(q) for q in ("How many people moved to the town?", "How many members did it have after it moved?",
    ...                             "How many members joined after the move?", "How many people live in the building?")]
    [True, False, True, False]
    """
    changed = _CHANGE_ASKED.search(question) or _MOVED_OR_BUILT.search(_DATING_CLAUSE.sub("", question))
    return changed is not None and not _LEVEL_ASKED.search(question)


# The nouns a "what" asks a date by ("in what year"); kind_span's _NOT_KINDS too.
_DATE_NOUNS = ("year", "date", "century", "decade")
_DATE_ASKED = re.compile(rf"^(?:when\b|(?:in|since|until)?\s*what\s+(?:{'|'.join(_DATE_NOUNS)})\b)")


# A number question that asks for a measure, said with its unit ("how
# long", "how far"); "how many" asks for a count.
_MEASURE_ASKED = re.compile(r"^how\s+(?:much|old|long|far|big|tall|high|large)\b", re.IGNORECASE)


def first_date(text: str) -> int | None:
    """Where the first date or year of ``text`` starts, None for a text
    without one.

    >>> first_date("April 1 , 1976 in Los Altos"), first_date("Michelle Robinson ( m. 1992 )"), first_date("Ulm , Germany")
    (0, 23, None)
    """
    match = _DATE.search(text)
    return match.start() if match else None


def opens_with_day(text: str) -> bool:
    """Whether ``text`` opens with a date that names its month ("15 April
    1912", "April 1912"), which no count does; a bare year-like number
    ("1517") may be one.

    >>> opens_with_day("15 April 1912"), opens_with_day("1517"), opens_with_day("1,517 ( 15 April 1912 )")
    (True, False, False)
    """
    match = _DATE.match(text.strip())
    return bool(match and re.search(_MONTH, match.group()))


def answer_kind(question: str) -> str | None:
    """"date", "number" or "name" when the question asks for one, else None.

    >>> [answer_kind(q) for q in ("When did she die?", "How many books?", "Who wrote it?", "Who was Ada?", "Why?")]
    ['date', 'number', 'name', None, None]
    >>> [answer_kind(q) for q in ("So how many books?", "In 1990, who won?", "Tell me when she died.", "Did How Many Miles sell?")]
    ['number', 'name', 'date', None]
    """
    q = asked_from(question).strip().lower()
    if _DATE_ASKED.match(q):
        return "date"
    if re.match(r"^how\s+many\b", q) or _MEASURE_ASKED.match(q):
        return "number"
    if re.match(r"^(?:who|whom)\b", q) and definition_subject(question) is None:
        return "name"
    return None


def _asked(question: str) -> set[str]:
    return set(tokens(question, "rouge"))


# Words before a name that make it a place ("on Mill Lane", "of Spain"):
# where the person "she" stands for is looked for, a name after one of these
# is passed over. A short answer passes over fewer: after "at", "of", "from"
# or "to" a name is often whom the question asks for ("married to William
# King", "the daughter of Lord Byron").
_PLACE_WORDS = ("in", "on", "near", "at", "of", "from", "to", "into", "across", "along")
_IN_A_PLACE = re.compile(rf"\b(?:{'|'.join(_PLACE_WORDS[:3])})\s+$", re.IGNORECASE)
_PLACE_BEFORE = re.compile(rf"\b(?:{'|'.join(_PLACE_WORDS)})\s+$", re.IGNORECASE)


def _name_at(match: re.Match) -> str:
    """A :data:`_NAME` match without the words that only open a sentence ("The", "In") or its "'s".

    A part of the match as written, its spaces kept: callers find it in the
    match, and "King Henry\xa0II" (a non-breaking space) rejoined with a
    plain space was not in it.

    >>> _name_at(_NAME.search("by marriage to King Henry\xa0II.")) == "King Henry\xa0II"
    True
    """
    text = match.group().rstrip(".")
    words = list(re.finditer(r"\S+", text))
    while words and words[0].group().lower() in NOT_NAMES:
        words = words[1:]
    return re.sub(r"['’]s$", "", text[words[0].start():]) if words else ""


def _names(sentence: str, question: str, *, places: bool = True) -> list[tuple[int, int, str]]:
    """(start, end, name) of each name in ``sentence`` the question does not already hold;
    with ``places`` False, one after "in", "on" or "near" too."""
    asked = _asked(question)
    singular = {re.sub(r"s$", "", w) for w in asked}
    found = []
    for match in _NAME.finditer(sentence):
        # Leading words that only start the sentence or a clause ("Her", "In")
        # are dropped, and "Charles Babbage's computer" answers "Who did she
        # work with?" with him, not "Charles Babbage's".
        name = _name_at(match)
        # One letter names a variant, not anyone: "penicillin G" gave "Who
        # discovered penicillin?" the answer "G", and "penicillin V.
        # Penicillins are …" "V. Penicillins", the question's own word.
        own = {re.sub(r"s$", "", w) for w in tokens(name, "rouge") if len(w) > 1}
        at = match.start() + match.group().index(name) if name else 0
        # A name after "in", "on" or "near" is a place ("whose birthplace on
        # Mill Lane" gave "Who was born in Brindlemere?" the lane), unless
        # it owns what follows ("work on Charles Babbage's computer").
        place = places and _IN_A_PLACE.search(sentence, 0, at) and not re.match(r"['’]s\b", sentence[at + len(name):])
        if own and not own <= singular and not re.fullmatch(_MONTH, name) and not place:
            found.append((at, at + len(name), name))
    # A one-word name before a noun and another name qualifies that noun, which
    # the other name holds: "the fifth Mughal emperor, Shah Jahan", "the German
    # mathematician Gottfried Leibniz". "Who commissioned the Taj Mahal?" got
    # "Mughal", the word nearest "commissioned".
    return [
        span for span, after in zip(found, found[1:] + [None])
        if not (after and " " not in span[2] and _qualifier(sentence[span[1] : after[0]]))
    ]


def _qualifier(between: str) -> bool:
    """Whether the text between two names is one noun they share ("emperor, "):
    a lower-case word that is no function word and, by its ending, no verb
    ("Caesar defeated Pompey", "Ada writes Babbage")."""
    match = re.fullmatch(r"\s+([a-z][a-z-]*),?\s+", between)
    return bool(match) and _a_noun(match.group(1))


def _a_noun(word: str) -> bool:
    """Whether a lower-case ``word`` after a name reads as a noun it
    qualifies: no function word, and by its ending no verb ("Caesar
    defeated Pompey", "Ada writes Babbage")."""
    return word not in READER_STOPWORDS and not re.search(r"(?:ed|s)$", word)


_AN_ARTICLE_BEFORE = re.compile(r"\b(?:the|a|an)\s+$", re.IGNORECASE)
# The endings of adjectives made from a place or a movement ("Tuscan", "Romantic", "Japanese", "English").
# A surname with that ending before a lower-case noun ("the Truman administration") would match too:
# _NOT_A_NOUN_AFTER_A_NAME keeps the nouns for a group that acts out of that test.
_ADJECTIVE_ENDING = re.compile(r"^[A-Z][a-z]+(?:an|ic|ese|ish)$")
# Lower-case words after a people's or an adjective's word that leave it a
# name of who did the thing: a group that acts ("the French team, which
# beat Brazil", "the Morgan family", "the Truman administration"), and
# words that join a clause, not a noun ("ruled by the British until 1947").
_NOT_A_NOUN_AFTER_A_NAME = frozenset(
    "team side club squad family dynasty house army navy fleet forces troops government administration "
    "regime crew band people until after before since during while though although".split()
)


def _describes(span: tuple[int, int, str], sentence: str) -> bool:
    """Whether a name span of ``sentence`` says what someone or something
    is, not who: a people's or faith's word ("Italian"), or one capitalised
    word with an adjective's ending between an article and a noun ("the
    Tuscan language", "the Romantic poet"), in either case before a
    lower-case noun. "Who wrote the Divine Comedy?" got "Italian" from "…
    as the standardized Italian language", then "Tuscan". Another word
    there names who ("the Nobel company": who he worked for), and so does
    one before a plural or a past ("the Morgan brothers"): a given name
    alone may end so ("Susan", "Eric"), in that place seldom. A people
    with no noun after it did the thing ("colonized by the Portuguese",
    "won by Celtic, who beat …"), and so does one before a group that acts
    ("the French team, which beat Brazil", "the Morgan family").

    >>> s = "It helped establish the Tuscan language as the Italian language; the Wright brothers flew."
    >>> [name for name in ("Tuscan", "Italian", "Wright") if _describes((s.index(name), s.index(name) + len(name), name), s)]
    ['Tuscan', 'Italian']
    >>> s = "He worked for the Nobel company."
    >>> _describes((s.index("Nobel"), s.index("Nobel") + 5, "Nobel"), s)
    False
    >>> s = "It was won by the French team, which beat Brazil; India was ruled by the British until 1947."
    >>> [name for name in ("French", "British") if _describes((s.index(name), s.index(name) + len(name), name), s)]
    []
    """
    start, end, name = span
    noun = re.match(r"\s+([a-z][a-z-]*)\b", sentence[end:])
    if not (noun and _a_noun(noun.group(1)) and noun.group(1) not in _NOT_A_NOUN_AFTER_A_NAME):
        return False
    return peoples_word(name) or (_ADJECTIVE_ENDING.search(name) is not None and bool(_AN_ARTICLE_BEFORE.search(sentence, 0, start)))


# The end of "7,088 kilometers (" or "82-kilometer (": a number, its unit, an opening bracket.
_RESTATED = re.compile(r"\d[\d,.]*[\s-]*[^\W\d][^\s()]*\s*\(\s*$")


# The pronouns a sentence refers back to one person by ("He was born …"),
# for the patterns below that look for one person (_CLAUSE_WORD's and
# _pronoun_sex's lists name them among other words, for other ends).
_HE_OR_SHE = r"he|she"
_PRONOUN_START = re.compile(rf"^\s*(?:{_HE_OR_SHE}|they)\b", re.IGNORECASE)
# "Who wrote it?" asks who did it; "Who did she marry?" whom she did it to.
_DOER = re.compile(r"^\s*who\s+(?!(?:did|does|do|is|was|were|are|has|have|had|will|would|can|could|should)\b)\w+", re.IGNORECASE)
# "… he wrote …", "… she later founded …": the question's verb done by a pronoun ("There he wrote his Symphony No. 9").
_PRONOUN_BEFORE = re.compile(rf"\b(?:{_HE_OR_SHE}|they)\s+(?:[a-z]+ly\s+)?$", re.IGNORECASE)
# A sentence that opens with one of these is about what an earlier one named.
_REFERS_BACK = re.compile(rf"^\s*(?:{_HE_OR_SHE}|it|they|his|her|its|their)\b", re.IGNORECASE)


# One capitalised word opening a sentence that, by its ending or as a word
# that opens sentences, is no name: "Construction began in 1887." is about
# the bridge of the sentence before it.
_NOT_A_NAME = re.compile(
    r"(?:[a-z]+(?:tion|sion|ment|ness|ity|ing|ed|ly|ance|ence|ism)"
    r"|today|later|many|most|some|both|each|several|such|one|two|three|according|although|because|since|though)",
)


def _opening_name(sentence: str) -> str:
    """The name a sentence opens with ("The Karlo Bridge crosses …": "Karlo Bridge"), or "".

    >>> [_opening_name(s) for s in ("The Karlo Bridge crosses it.", "Construction began.", "In 1892 Dvořák moved.")]
    ['Karlo Bridge', '', '']
    >>> [_opening_name(s) for s in ("Kraków lies on the Vistula.", "Among his works are these.", "Tesla was born.")]
    ['Kraków', '', 'Tesla']
    """
    match = _NAME.match(sentence.lstrip())
    words = match.group().rstrip(".").split() if match else []
    while words and words[0].lower() in NOT_NAMES:
        words = words[1:]
    # One word is a name where a verb follows it ("Kraków lies", "Tesla was
    # born"), not "Among his works are …".
    if len(words) == 1 and (
        _NOT_A_NAME.fullmatch(words[0].lower())
        or not re.match(rf"{re.escape(words[0])}\s+(?:{_BE}|has|had|have|"
                        rf"(?!(?:his|its|this|thus|as|us|plus|always|perhaps|across|[a-z]+ous)\b)[a-z]+(?:ed|s))\b",
                        sentence.lstrip())
    ):
        return ""
    return re.sub(r"['’]s$", "", " ".join(words))


def referents(sentences: Sequence[str], every: bool = False) -> list[str]:
    """For each of a passage's ``sentences``, the name it is about where it
    does not say: a sentence that opens with a pronoun ("He was born in 1841
    …") is about the name that opened the latest sentence opening with one
    ("Antonín Dvořák was a Czech composer."); with ``every``, so is any
    sentence that opens with no name of its own ("Construction began in
    1887." after "The Karlo Bridge crosses …"), as in a pasted document,
    whose title ("your text") names no subject as an article's does. Other
    sentences, and those with no such name before them, get "".

    >>> referents(["Kraków is a city.", "It lies on the Vistula.", "In 1900 Tom came.", "Its people are kind."])
    ['', 'Kraków', '', 'Kraków']
    >>> referents(["The Karlo Bridge crosses the Maren.", "Construction began in 1887.", "It is long."], every=True)
    ['', 'Karlo Bridge', 'Karlo Bridge']

    "He", "She", "His" and "Her" stand for a person: not for a name that
    "It" or "Its" (or "there" beside the pronoun) showed to be a place or a
    thing, but for the person the sentence before named (none: "").

    >>> referents(["Brindlemere is a town.", "Its native is the painter Clara Voss.", "She died in 1931."])
    ['', 'Brindlemere', 'Clara Voss']
    >>> referents(["Madrid is the capital of Spain.", "He arrived there in 1920."])
    ['', '']

    ...or, where the sentence before names no person either, for the name
    the next sentence opens with: "Verona hosts a festival. She was born
    there. Anna Ricci became a soprano." At a passage's start, where nothing
    was named before, a pronoun's person is in the passage before it, not
    the name after it.

    >>> referents(["Madrid is the capital of Spain.", "He arrived there in 1920.", "Luis Ortega became a painter."])
    ['', 'Luis Ortega', '']
    >>> referents(["He arrived in 1920.", "Luis Ortega welcomed him."])
    ['', '']

    A sentence whose subject follows a clause of its own is about that
    subject, and so are the pronouns after it, in the clause too ("When he
    arrived in Paris, Ernest Hemingway was …" is about Hemingway, not the
    name before it).

    >>> referents(["Gertrude Stein was a writer.", "When he came to Paris, Ernest Hemingway was poor.", "He wrote."])
    ['', '', 'Ernest Hemingway']

    With ``every``, a sentence that opens with "the" and a noun ("The town
    has …") is about the name the text called one ("Brindlemere is a small
    market town", "Brindlemere, a town …", "the town of Brindlemere", "the
    Karlo Bridge") or, without one, for a place (a town, a city …), about
    the place the sentence before named ("born in Brindlemere").

    >>> referents(["Clara Voss was born in Brindlemere.", "The town has a museum."], every=True)
    ['', 'Brindlemere']

    The place the sentence before named counts only where the name the
    text is about is known to be a person's ("he" or "she" stood for it, or
    it "was born"); otherwise that name may be the town itself, and the
    place named is where it lies.

    >>> referents(["Kelso lies on the river Tweed in Scotland.", "The town was founded in 1128."], every=True)
    ['', 'Kelso']
    """
    found, named, things, person, before, people, waiting = [], "", set(), "", "", set(), -1
    # Whom "she" (or "he") stands for after "his wife Mary" ("her husband
    # Tom"), until a sentence opens with a name of its own.
    # Which of "he" and "she" the text's subject has been, since it was
    # named: the spouse takes only a pronoun the subject cannot be ("his
    # mother X" after "she married Pierre" is not whom "She" means).
    partners, sexes = {}, set()
    for at, sentence in enumerate(sentences):
        partner = _partner(before, sentence, sexes) or partners.get(_pronoun_sex(sentence), "")
        if not partner:
            sexes |= _subject_sexes(sentence)
        if partner:
            found.append(partner)
            people.add(partner)
            partners[_pronoun_sex(sentence)] = partner
        elif _REFERS_BACK.match(sentence):
            # "It"/"Its" shows a thing or a place; "there" in "She was born
            # there" shows the place the sentence before named, unless that
            # name is a person's ("Marie Curie moved to Paris. She studied there.").
            there = _PERSON_BACK.match(sentence) and _THERE_PLACE.search(sentence) and named not in people
            if named and (_THING_BACK.match(sentence) or there):
                things.add(named)
            if _PERSON_BACK.match(sentence) and named in things:
                # "She" after "Brindlemere is a town. Its native is the painter Clara Voss." is Clara Voss, not the town.
                person = person or _person_named(before, named)
                found.append(person)
                if not person:
                    waiting = at
            else:
                found.append(named)
            if _PERSON_BACK.match(sentence) and found[-1]:
                people.add(found[-1])
        else:
            opening = _opening_name(sentence) or _subject_after_clause(sentence)
            if every and not opening:
                found.append(_described(sentence, sentences[:at], place_before=not named or named in people) or named)
            elif every and _THERE_PLACE.search(sentence):
                # "Romeo Montague was born there." is about him and, for
                # "Who was born in Verona?", the place the sentence before named.
                found.append(_place_named(before))
            else:
                found.append("")
            if opening:
                named, person, partners, sexes = opening, "", {}, _subject_sexes(sentence)
                if waiting >= 0 and waiting == at - 1:
                    found[waiting] = opening
                    people.add(opening)
                # A person: "X was born", or "When she was 24, X moved …".
                if re.search(rf"{re.escape(opening)}\s+(?:was|were)\s+born\b", sentence) or _PERSON_WORD.search(
                        sentence, 0, max(sentence.find(opening), 0)):
                    people.add(opening)
        before = sentence
    return found


# A clause before the sentence's subject, up to its comma: "When he arrived
# in Paris, Hemingway was …", "In 1892, Dvořák moved …", "Born in Oak Park, …".
_LEAD_CLAUSE = re.compile(
    r"^\s*(?:when|whenever|while|after|before|although|though|since|as|once|because|if|until|upon|despite|"
    r"during|following|in|on|at|by|from|with|without|born|having|however|meanwhile|later|afterwards|eventually|"
    r"subsequently|nevertheless|moreover|finally|then|today|initially|originally|instead|thus|therefore)\b[^,;]*,\s*",
    re.IGNORECASE,
)


def _subject_after_clause(sentence: str) -> str:
    """The name that opens a sentence's main clause after a clause of its
    own (:data:`_LEAD_CLAUSE`), or "".

    >>> _subject_after_clause("When he arrived in Paris in 1921, Ernest Hemingway was a reporter.")
    'Ernest Hemingway'
    >>> _subject_after_clause("When he was young, his father taught him."), _subject_after_clause("Paris, London and Rome are cities.")
    ('', '')
    """
    clause = _LEAD_CLAUSE.match(sentence)
    return _opening_name(sentence[clause.end():]) if clause else ""


# "The town has …": "the" and a lower-case noun that no name follows ("the town of Kelso", "the river Osk" name their own).
_THE_NOUN = re.compile(r"^\s*[Tt]he\s+([a-z]+)\b(?!\s+(?:of\s+)?[A-Z])")


def _described(sentence: str, earlier: Sequence[str], place_before: bool = True) -> str:
    """The name a sentence opening "The <noun>" stands for (see
    :func:`referents`), from the ``earlier`` sentences of its passage: one
    they called a <noun> or, with ``place_before``, for a place noun, the
    place the sentence before named; "" if it does not open so or no such
    name is found.

    >>> _described("The bridge was built in 1887.", ["The Karlo Bridge crosses the Maren.", "Tom lives there."])
    'Karlo Bridge'
    >>> _described("The town has a museum.", ["Brindlemere is a small market town.", "Clara moved to Paris."])
    'Brindlemere'
    >>> _described("The city has a museum.", ["Brindlemere is a small market town.", "Clara moved to Paris."])
    'Paris'
    >>> _described("The city has a museum.", ["Clara moved to Paris."], place_before=False)
    ''
    """
    match = _THE_NOUN.match(sentence)
    if not match:
        return ""
    noun = match.group(1)
    # "… is a small market town on …", not "… was the town clerk".
    called = re.compile(rf"(?:\s+(?:is|was)|,)\s+(?:a|an|the)\s+(?:(?!of\b)[\w'’-]+\s+){{0,3}}{noun}"
                        rf"(?=\s*(?:[,.;:)]|$)|\s+(?:{'|'.join(_PLACE_WORDS)}|by|with|and|that|which|where|whose)\b)")
    the_noun_of = re.compile(rf"\bthe\s+{noun}\s+of\s+$", re.IGNORECASE)
    for other in reversed(earlier):
        names = [
            name for m in _NAME.finditer(other) if (name := _name_at(m)) and (
                name.split()[-1].lower() == noun or called.match(other, m.end()) or the_noun_of.search(other, 0, m.start()))
        ]
        if names:
            return names[-1]
    # A noun for a place ("The town …") may stand for the one the sentence before named.
    if place_before and noun in PLACE_NOUNS and earlier:
        return _last_place(earlier[-1])
    return ""


def _last_place(sentence: str) -> str:
    """The last name of ``sentence`` after "in", "at", "to" … ("moved to Paris"), or ""."""
    places = [name for m in _NAME.finditer(sentence) if (name := _name_at(m)) and _PLACE_BEFORE.search(sentence, 0, m.start())]
    return places[-1] if places else ""


# "there" for a place, not "there is" / "there were" (there being some).
_THERE_PLACE = re.compile(r"\bthere\b(?!\s+(?:is|are|was|were|will|would|has|have|had|seems?|seemed|appears?|appeared|"
                          r"exists?|existed|remains?|remained|being|been)\b)", re.IGNORECASE)


def _place_named(sentence: str) -> str:
    """The place ``sentence`` names: its opening name where it says what
    that is by a place noun ("Verona is a city in northern Italy"), else
    :func:`_last_place`.

    >>> _place_named("Verona is a city in northern Italy."), _place_named("Clara moved from Leeds to Paris.")
    ('Verona', 'Paris')
    >>> _place_named("Clara Voss was a painter.")
    ''
    """
    opening = _opening_name(sentence)
    nouns = "|".join(sorted(PLACE_NOUNS))
    if opening and re.match(rf"\s*(?:the\s+)?{re.escape(opening)}(?:\s*,[^,]*,)?\s+(?:is|was)\s+(?:a|an|the)\s+"
                            rf"(?:[\w'’-]+\s+){{0,3}}(?:{nouns})\b", sentence, re.IGNORECASE):
        return opening
    return _last_place(sentence)


# The spouse or kin "she" or "he" stands for after a possessive of the
# other sex: "his wife Mary", "her husband Tom", not "her sister Anne"
# (then "she" is still the sentence's subject).
_PARTNER = {"she": re.compile(r"\bhis\s+(?:wife|widow|bride|fianc[ée]e|mother|daughter|sister|stepmother|stepdaughter)\s+",
                             re.IGNORECASE),
            "he": re.compile(r"\bher\s+(?:husband|widower|groom|fianc[ée]|father|son|brother|stepfather|stepson)\s+",
                             re.IGNORECASE)}


def _subject_sexes(text: str) -> set[str]:
    """The sexes the subject pronouns of ``text`` ("he", "she") show."""
    return {word.lower() for word in re.findall(r"\b(?:[Hh]e|[Ss]he)\b", text)}


def _pronoun_sex(sentence: str) -> str:
    """"she" for a sentence opening with "She"/"Her", "he" for "He"/"His", else ""."""
    match = re.match(r"\s*(she|her|he|his)\b", sentence, re.IGNORECASE)
    return "" if not match else "she" if match.group(1).lower() in ("she", "her") else "he"


def _partner(before: str, sentence: str, sexes: frozenset[str] | set[str] = frozenset()) -> str:
    """The name ``sentence``'s opening "She" ("He") stands for where the
    sentence before named her by a possessive of the other sex ("John
    Smith married his wife Mary in 1900.") and the subject is not a
    "she" (``sexes``: the pronouns the subject had); "" if not.

    >>> _partner("John Smith married his wife Mary Brown in 1900.", "She was a painter.")
    'Mary Brown'
    >>> _partner("John Smith married his wife Mary Brown in 1900.", "He was a banker.")
    ''
    >>> _partner("Anna Ricci lived with her sister Maria.", "She was a painter.")
    ''
    >>> _partner("In 1895 she married Pierre; his mother Ann had died.", "She won."), _partner("His wife Ann sang.", "She won.")
    ('', 'Ann')
    """
    sex = _pronoun_sex(sentence)
    kin = _PARTNER.get(sex)
    match = kin.search(before) if kin else None
    # The pronoun is the spouse's only where the text's subject is not of
    # that sex (``sexes``, and the pronouns before "his wife").
    if match and sex in sexes | _subject_sexes(before[: match.start()]):
        return ""
    name = _NAME.match(before, match.end()) if match else None
    return _name_at(name) if name else ""


_PERSON_BACK = re.compile(rf"^\s*(?:{_HE_OR_SHE}|his|her)\b", re.IGNORECASE)
_THING_BACK = re.compile(r"^\s*(?:it|its)\b", re.IGNORECASE)
_PERSON_WORD = re.compile(rf"\b(?:{_HE_OR_SHE}|him|his|her)\b", re.IGNORECASE)


def _person_named(sentence: str, thing: str) -> str:
    """The first name of two words or more in ``sentence`` that is not
    ``thing`` nor a place ("on Mill Lane"): whom "she" in the next sentence
    is, when the name sentences opened with is a place's. "" if none.

    >>> _person_named("Its most famous native is the painter Clara Voss, whose house on Mill Lane is a museum.", "Brindlemere")
    'Clara Voss'
    >>> _person_named("Madrid is the capital of Spain.", "Madrid")
    ''
    """
    for match in _NAME.finditer(sentence):
        name = _name_at(match)
        if len(name.split()) > 1 and name != thing and not _PLACE_BEFORE.search(sentence, 0, match.start()):
            return name
    return ""


# Words whose forms share no prefix: "When did she die?" is answered next to
# "her death", "When was he born?" next to "his birth".
_SAME_WORD = {"die": "death", "died": "death", "dies": "death", "dying": "death", "dead": "death",
              "born": "birth", "bore": "birth", "birthplace": "birth", "birthday": "birth",
              "burial": "bury", "marriage": "marry"}
# A verb's irregular forms ("When did the Titanic sink?" is answered next to
# "sank"), and a measure's ("How high is it?" next to "the highest … at 5,895 m").
_FORMS = {
    "sink": "sank sunk", "write": "wrote written", "begin": "began begun", "win": "won", "build": "built",
    "become": "became", "take": "took taken", "give": "gave given", "fight": "fought", "lead": "led",
    "make": "made", "run": "ran", "rise": "rose risen", "fall": "fell fallen", "fly": "flew flown",
    "grow": "grew grown", "hold": "held", "leave": "left", "meet": "met", "pay": "paid", "sell": "sold",
    "speak": "spoke spoken", "stand": "stood", "teach": "taught", "think": "thought", "throw": "threw thrown",
    "go": "went gone", "know": "knew known", "draw": "drew drawn", "choose": "chose chosen",
    "freeze": "froze frozen", "buy": "bought", "bring": "brought", "catch": "caught", "send": "sent",
    "shoot": "shot", "sing": "sang sung", "swim": "swam swum", "strike": "struck", "tell": "told",
    "wear": "wore worn", "lose": "lost", "keep": "kept", "feel": "felt", "flee": "fled", "hide": "hid hidden",
    "come": "came", "see": "saw seen", "eat": "ate eaten", "spend": "spent", "sit": "sat", "slay": "slew slain",
    "height": "high higher highest tall taller tallest heights", "depth": "deep deeper deepest",
    "length": "long longer longest", "width": "wide wider widest", "distance": "far farther furthest",
}
_SAME_WORD.update({form: word for word, forms in _FORMS.items() for form in forms.split()})
# What "how many people" counts is written as residents or a population.
_PEOPLE = frozenset({"resid", "inhab", "popul", "citiz", "peopl"})


def listed_word(word: str) -> str:
    """The word a lower-case word's listed relative stands for ("born" and
    "birthplace": "birth"; "sank": "sink"; "highest": "height"), else the
    word itself: relatives that share no prefix, and no stem.

    >>> [listed_word(w) for w in ("born", "birthplace", "sank", "interesting")]
    ['birth', 'birth', 'sink', 'interesting']
    """
    return _SAME_WORD.get(word, word)


def word_base(word: str) -> str:
    """The Porter stem of a lower-case word's base form: what its
    inflections and its listed relatives share ("died" and "death", "born"
    and "birthplace", "sank" and "sink", "work" and "worked"), and not a
    word made from it ("novelist" is not "novel", "writer" not "write").

    >>> [word_base(w) == word_base(v) for w, v in (("born", "birthplace"), ("died", "death"), ("marry", "married"), ("novel", "novelist"))]
    [True, True, True, False]
    """
    return porter_stem(listed_word(word))


def same_word(word: str) -> str:
    """The prefix stem of :func:`word_base`: looser, as where a span sits
    next to the question's word a near miss costs little ("assassinated"
    and "assassination"). Porter's stem first: a word of four letters is
    its own prefix stem, and "worked" or "moved" missed "work" and "move".

    >>> same_word("work") == same_word("worked"), same_word("discover") == same_word("discovery")
    (True, True)
    """
    return prefix_stem(word_base(word))


def without_bracket(title: str) -> str:
    """``title`` without its bracketed qualifier ("Mercury (planet)" → "Mercury")."""
    return re.sub(r"\s*\([^)]*\)", "", title).strip()


def question_names(question: str) -> list[str]:
    """The question's capitalised words after its first, lower-cased, in
    the question's order, each once: the names it asks about ("tesla" of
    "Who did Tesla work for?"), which are matched as written, not by their
    stem ("Charles" is not "Charlotte").

    Not the kernel's :func:`~assistant.kernel.name_runs`, and on purpose: the
    rewriter's guard needs a name's extent (its particles, a possessive, a
    title's or an initial's dot, where a sentence starts) to tell a name lost
    from one kept, and leaves out the function words ("The", "When"); here a
    capitalised word only has to be kept apart from the words of what is
    asked, so every word after the first that opens with a capital counts,
    a title's "On" among them, with the hyphens and apostrophes it holds or
    ends with ("al'" of "'Weird Al'"; "'Weird" opens with no capital), and
    a dot parts words ("U.S." is "u" and "s"): one pattern, no runs read.

    >>> question_names("When did Napoleon Bonaparte die?")
    ['napoleon', 'bonaparte']
    >>> question_names("Did Dr.Who sing 'Hey Jude' for the U.S.-based label?")
    ['dr', 'who', "jude'", 'u', 's']
    """
    return list(dict.fromkeys(w.lower() for w in re.findall(r"[\w'’-]+", question)[1:] if w[:1].isupper()))


# Words that many names share ("Battle of …", "… River", "University of
# …", "World Cup", "King …", a month): a text that holds one is not for that
# about the question's subject. Countries' and peoples' adjectives are
# :func:`peoples_word`'s; "French" is written "France" by many a text.
_SHARED_NAME_WORDS = frozenset(
    """battle battles war wars siege treaty world cup cups river rivers lake lakes mount mountain mountains
    island islands sea ocean bay gulf valley desert forest park street bridge tower palace castle cathedral
    church temple museum university college school academy institute king kings queen prince princess
    emperor empress empire kingdom republic city state states united nation nations national international
    federal north south east west northern southern eastern western central new old great greater little
    upper lower saint st san santa holy first second third last prize award awards nobel oscar olympic
    olympics games game league club championship party revolution civil age period era dynasty house
    president general governor lord lady sir mr mrs dr pope god day christmas easter english latin arabic
    sanskrit january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)


def subject_words(question: str) -> set[str]:
    """The words of the names ``question`` asks about that tell its subject
    from others (:func:`question_names`, accents and a possessive off): not a
    word many names share (:data:`_SHARED_NAME_WORDS`: "Battle" of "the
    Battle of Gettysburg"), a people's or country's adjective, an acronym
    ("US", "USSR", "WW2": texts write them out), a letter ("U.S.", an initial, "I")
    or a particle of two letters before a name ("La Gioconda", "El Greco"),
    which any text may hold ("Lady Di" ends in a name).

    >>> sorted(subject_words("Who won the Battle of Gettysburg?")), sorted(subject_words("How many World Cups has Brazil won?"))
    (['gettysburg'], ['brazil'])
    >>> sorted(subject_words("Which French king did the US help?")), sorted(subject_words("Where was Antonín Dvořák's home?"))
    ([], ['antonin', 'dvorak'])
    >>> sorted(subject_words("When did the U.S. enter World War I?")), sorted(subject_words("Who did J. K. Rowling marry?"))
    ([], ['rowling'])
    >>> sorted(subject_words("Who painted La Gioconda?")), sorted(subject_words("Who was Lady Di?"))
    (['gioconda'], ['di'])
    >>> sorted(subject_words("how many people died in WW2")), sorted(subject_words("Who won the 1966 FIFA World Cup?"))
    ([], [])
    """
    # Digits too: "WW2" is written "World War II" by its article.
    acronyms = {w.lower() for w in re.findall(r"\b(?=[A-Z\d]*[A-Z])[A-Z\d]{2,}s?\b", question)}
    particles = {w.lower() for w in re.findall(r"\b(\w{2})\s+[A-Z]", question)}
    words = set()
    for name in question_names(question):
        for word in name_words(name):
            if (len(word) > 1 and word not in acronyms and word not in particles and word not in _SHARED_NAME_WORDS
                    and not any(peoples_word(w) for w in (word, word.removesuffix("s")))):
                words.add(word)
    return words


def names_subject(words: set[str], text: str) -> bool:
    """Whether ``text`` holds a word of ``words`` (:func:`subject_words`),
    written as the question wrote it or otherwise (:func:`same_name_word`:
    a plural, "Beatles" and "Beatle", "Nazis" and "Nazi", accents aside),
    or names its place by its people's word (:func:`_people_of`: "the
    first Roman emperor" names Rome).

    >>> names_subject({"gettysburg"}, "Arminius was a chieftain."), names_subject({"beatles"}, "The Beatle John Lennon")
    (False, True)
    >>> names_subject({"rome"}, "the first Roman emperor"), names_subject({"britain"}, "any British monarch"), names_subject({"rome"}, "a Romanian village")
    (True, True, False)
    """
    said = name_words(text)
    return any(same_name_word(word, other) or _people_of(word, other) for word in words for other in said)


# The endings a people's word adds to its place's name ("Rom-an",
# "Egypt-ian", "Brit-ish", "Chin-ese", "Iraq-i").
_PEOPLES_ENDING = re.compile(r"(?:ian|ean|an|ish|ese|i|ic)$")


def _people_of(place: str, word: str) -> bool:
    """Whether ``word`` (lower case) is a people's word (:func:`peoples_word`)
    of ``place``: the place's name is the word's stem and at most three
    letters more ("roman" of "rome", "british" of "britain", not of
    "romania")."""
    if not peoples_word(word):
        return False
    stem = _PEOPLES_ENDING.sub("", word)
    return len(stem) >= 3 and place.startswith(stem) and len(place) - len(stem) <= 3


# A kind noun before the name it is of or in: "the currency of Germany",
# "the longest river in Egypt".
_KIND_OF_NAME = re.compile(r"\b([a-z][a-z-]+)\s+(?:of|in)\s+(?:the\s+)?[A-Z]")


def of_kind_asked(question: str, description: str) -> bool:
    """Whether an article's short ``description`` says it is a thing of the
    kind the question asks "of" or "in" a name ("currency" of "What is the
    currency of Germany?" and "Currency of the European Union"; "river" of
    "the longest river in Egypt" and "Major river in northeast Africa"): the
    name then only narrows what is asked, and the article need not name it.

    >>> of_kind_asked("What is the longest river in Egypt?", "Major river in northeast Africa")
    True
    >>> of_kind_asked("Which river flows through Paris?", "River in Colombia"), of_kind_asked("Who painted La Gioconda?", "Painting by Georges Seurat")
    (False, False)

    A kind said with a people's word is that people's ("Ancient
    Mesopotamian god" is no god of Egypt):

    >>> of_kind_asked("Who was the chief god of Egypt?", "Ancient Mesopotamian god")
    False
    """
    asked = {porter_stem(m.group(1)) for m in _KIND_OF_NAME.finditer(question)}
    words = re.findall(r"[\w-]+", description)
    return any(porter_stem(w.lower()) in asked and not (i and peoples_word(words[i - 1])) for i, w in enumerate(words))


def _relation(question: str, title: str) -> set[str]:
    """The question's content words that do not name its subject: in "When
    did Queen Victoria die?" about the article "Queen Victoria", "die". They
    sit next to the answer in a sentence that mentions several dates. Names
    are the title's words and the question's capitalised ones after its
    first ("Bonaparte" of "When did Napoleon Bonaparte die?" in "Napoleon").

    >>> sorted(_relation("When did Napoleon Bonaparte die?", "Napoleon"))
    ['death']
    >>> sorted(_relation("What does the s stand for?", ""))
    ['stand']
    """
    names = tokens(title, "rouge") + question_names(question)
    subject = {same_word(w) for w in names}
    # A word whose stem is empty (the "s" of "U.S.") would match every such word of a sentence.
    return {stem for w in tokens(question, "term") if w not in READER_STOPWORDS and (stem := same_word(w)) and stem not in subject}


def _counted(question: str) -> set[str]:
    """The stem of what a "how many X" question counts (people: their synonyms)."""
    match = re.match(r"^\s*how\s+many\s+([\w'-]+)", asked_from(question), re.IGNORECASE)
    if not match:
        return set()
    stem = same_word(match.group(1).lower())
    return set(_PEOPLE) if stem in _PEOPLE else {stem}


# An area wider than a place's own bounds ("the urban area of Berlin", "the
# Chicago metropolitan area", "Greater Tokyo", "the capital region", "its
# built-up area", which may spread past its own bounds or fill a part), and
# the words that say a figure is of its own bounds ("city proper", "within
# its city limits"). A district, and a metropolitan municipality or
# borough, is a city's own government's area ("the Accra Metropolitan
# District … had a population of 284,124", the city of Accra's; Bogotá's
# Capital District), not a wider one.
_WIDER_AREA = re.compile(
    r"(?i:\b(?:urban|metropolitan|metro|wider|larger|greater|capital|surrounding|built-up|urbani[sz]ed)\s+(?:area|region)s?\b"
    r"|\bmetropolis\b|\bmetropolitan\b(?!\s+(?:district|municipality|borough|council|assembly|corporation)\b)"
    r"|\bagglomeration\b|\bconurbation\b|\bsuburbs\b)|\bGreater\s+[A-Z]"
)
_OWN_BOUNDS = re.compile(r"\b(?:city|town)\s+(?:proper|limits)\b|\badministrative\s+(?:limits|boundaries)\b", re.IGNORECASE)
# Own bounds said as where the wider area reaches past ("stretches beyond
# the boundaries of the city proper"): the figure is still the wider area's.
_PAST_BOUNDS = re.compile(r"\b(?:beyond|outside)\s+(?:the\s+)?(?:(?:boundaries|borders|limits|bounds)\s+of\s+)?(?:the\s+|its\s+)?$",
                          re.IGNORECASE)
# The whole question, one of the few ways of asking a place's number of
# people, and nothing else: a question that says more ("How many people
# live in poverty in Berlin?", "… in Berlin without a car?") asks for a
# part of its people, which the place's own figure does not answer.
_HEADCOUNT_QUESTION = re.compile(
    r"^\s*(?:how\s+many\s+(?:people|inhabitants|residents)\s+(?:live|reside)\s+in\s+(?P<a>.+?)"
    r"|how\s+many\s+people\s+are\s+(?:there\s+)?in\s+(?P<b>.+?)"
    r"|(?:what(?:\s+is|'s|’s)|how\s+(?:big|large)\s+is)\s+the\s+(?:current\s+)?population\s+of\s+(?P<c>.+?)"
    r"|(?:what(?:\s+is|'s|’s)|how\s+(?:big|large)\s+is)\s+(?P<d>.+?)(?:'s|’s|'|’)\s+(?:current\s+)?population"
    r"|how\s+many\s+(?:people|inhabitants|residents)\s+does\s+(?P<e>.+?)\s+have)"
    r"(?:\s+(?:today|now|currently))?\s*\??\s*$",
    re.IGNORECASE,
)
# The small words a place's name may hold between its capitalised ones
# ("Rio de Janeiro", "Bosnia and Herzegovina", "the Republic of the Congo").
_NAME_PARTICLES = frozenset("of the and de da do dos das del di la le el al upon on".split())
_PEOPLE_NOUN = r"(?:people|inhabitants|residents|citizens|persons|souls)"
# A number said as a number of people ("3.7 million inhabitants", "a
# population of 3,644,826", "the population of the city is 410,000",
# "home to over 2 million"; "546,397 (2024) inhabitants", its year in
# brackets): the figure that
# :func:`headcount_said` reads, where a sentence's other numbers are years,
# areas or ranks.
# A figure starts where no number goes on before it: else a long run of
# digits and commas is tried from each of its digits, in time that grows
# with the square of its length.
_HEADCOUNT_FIGURE = re.compile(
    rf"(?<![\d,.])(?P<n>{_NUMBER.pattern})(?:\s+\(\d{{4}}\))?\s+{_PEOPLE_NOUN}\b"
    r"|(?:\bpopulation(?:\s+of\s+[^,;.\d]{1,60}?)?\s+(?:of|is|was|stood\s+at|reached|numbered|totals|totalled|totaled|(?:is|was)\s+estimated\s+at)|\bhome\s+to)"
    r"(?:\s+(?:about|around|approximately|roughly|nearly|almost|over|more\s+than|just|under|some|an|estimated|of))*"
    rf"\s+(?P<m>{_NUMBER.pattern})",
    re.IGNORECASE,
)
# Said before the figure, a part of a place's people ("12 districts, each
# with 300,000 residents", "the borough of Eastfield has 80,000"), a share
# ("15 percent of residents, or 61,000 people") or people who are not all
# its people ("45,000 students", "4 million tourists a year").
_PART_OF_PEOPLE = re.compile(
    r"\b(?:each|per|every|average|districts?|boroughs?|wards?|neighbou?rhoods?|quarters?|suburbs?|old\s+town"
    r"|of\s+whom|of\s+which|percent|per\s+cent|students?|workers?|visitors?|tourists?|commuters?|employees?"
    r"|immigrants?|migrants?|refugees?|foreign(?:ers)?|households?|speakers?|members?)\b|%",
    re.IGNORECASE,
)
# Said just after it, a flow of people ("20,000 residents a year"), not a stock.
_FLOW = re.compile(r"\b(?:each|per|every|a\s+(?:year|day|week|month)|annually|yearly|daily)\b", re.IGNORECASE)
# A figure of a past time: a year before the last few decades ("In 1850
# the city had 40,000 inhabitants") or a word that says so ("at its peak").
_PAST_WORDS = re.compile(r"\b(?:peak|height|once|formerly|former|historically|century|centuries|until)\b", re.IGNORECASE)
# A figure of a time to come ("projected to have 900,000 inhabitants by
# 2050") is not the people living there now.
_FUTURE_WORDS = re.compile(r"\b(?:projected|projections?|expected|forecasts?|forecasted|predicted|will|by\s+20[3-9]\d)\b", re.IGNORECASE)
# What may follow "N people/residents/…" for N to be how many live there:
# nothing, a verb of living, where and when ("… in the city", "… as of
# 2023", "according to …"), or what they make the place ("Its 778,589
# inhabitants make it the fifth-most populous city"); anything else says
# what the N people do or are ("… are over the age of 65", "… commute",
# "… attended the funeral", "… make up a fifth of …").
_LIVING_AFTER = re.compile(r"\s*(?:live|lives|living|lived|reside|resides|residing|in|within|as\s+of|at|according"
                           r"|(?:make|makes|making)\s+(?!up\b))\b", re.IGNORECASE)
# What may follow a "population of N" that is still the people's figure:
# the people, or a small word (not "…of 410,000 cars", another noun).
_AFTER_FIGURE = frozenset(
    "people inhabitants residents citizens persons souls in at as and with within by according of for on "
    "during living who which that making the its to from or was is were are since while when".split()
)
# The place a figure is said of, by name: "The city of Velmora has …",
# "Velmora has …", "Velmora's population is …" before the figure, "…
# people live in Velmora" after it (a country's article may give its
# capital's people so); not a place the sentence only sets it in ("the
# largest city in Germany", "the capital of India").
_NAME_RUN = r"[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)*"
_PLACE_SAID_BEFORE = re.compile(
    rf"\b(?:city|town|municipality|population)\s+of\s+(?:the\s+)?({_NAME_RUN})"
    rf"|({_NAME_RUN})(?:['’]s\s+population\b|,?\s+(?:has|had|is\s+home\s+to|was\s+home\s+to)\b)"
    rf"|^\W*({_NAME_RUN})\s+(?:is|was)\s+(?:the|a|an)\b[^,;]*?\b(?:city|town|capital|municipality)\b"
)
# "Based" after the figure only as the source of it ("246,325 based on the
# 2022 census"), not where people are ("4,000 based at the air base").
_BASED_ON = re.compile(r"\s*based\s+on\b", re.IGNORECASE)
# A share or a sum of money is no number of people, though said where one
# is ("home to about 35% of the country's residents", "home to $2 billion
# of deposits"): :data:`_NUMBER` holds both.
_NOT_A_HEADCOUNT = re.compile(r"%|\bper\s*cent\b|\bpercentage\b|[$£€]", re.IGNORECASE)
_PLACE_SAID_AFTER = re.compile(rf"^\W*\w+\s+(?:live|lived|living|reside|residing)\s+in\s+(?:the\s+)?({_NAME_RUN})")


def headcount_asked(question: str) -> str:
    """The place whose number of people a question asks, whole ("How many
    people live in Berlin?", "What's Chile's population?", "How many
    inhabitants does Peru have?", "… today?"), else "": not a part of its
    people ("How many people live in poverty in Berlin?"), not a wider
    area's ("… Greater Tokyo?", "… the Tarrow metropolitan area?"), not at a
    time ("… in 1900?"), and only a name (capitalised words, with their
    particles), not "the old town of Tarrow".

    >>> [headcount_asked(q) for q in ("How many people live in Berlin?", "What is the population of the Czech Republic?",
    ...     "What's Chile's population?", "How many inhabitants does Rio de Janeiro have?", "How many people live in Oslo today?")]
    ['Berlin', 'the Czech Republic', 'Chile', 'Rio de Janeiro', 'Oslo']
    >>> [headcount_asked(q) for q in ("How many people live in poverty in Berlin?", "How many people live in Greater London?",
    ...     "How many people lived in Berlin in 1900?", "What is the population density of Berlin?",
    ...     "How many people live in the Tarrow metropolitan area?", "How many people live in Berlin without a car?",
    ...     "How many people currently live in Berlin?", "What is the Jewish population of Berlin?")]
    ['', '', '', '', '', '', '', '']
    """
    match = _HEADCOUNT_QUESTION.match(question)
    if not match:
        return ""
    place = next(group for group in match.groups() if group)
    words = re.findall(r"[^\s,]+", place)
    if words[0].lower() == "the":
        words = words[1:]
    named = words and words[0][:1].isupper() and words[-1][:1].isupper() and all(
        word[:1].isupper() or word.lower() in _NAME_PARTICLES for word in words)
    return place if named and not _WIDER_AREA.search(place) and not re.search(r"\barea\b", place, re.IGNORECASE) else ""


def _headcount_figure(sentence: str) -> re.Match | None:
    """The first number of people :data:`_HEADCOUNT_FIGURE` finds in
    ``sentence`` that is not a year, a share or a sum of money
    (:data:`_NOT_A_HEADCOUNT`), or None.

    >>> _headcount_figure("The capital is home to about 35% of the country's roughly 90,000 residents.").group("n")
    '90,000'
    """
    return next((m for m in _HEADCOUNT_FIGURE.finditer(sentence)
                 if not _A_YEAR.fullmatch(m.group("n") or m.group("m"))
                 and not _NOT_A_HEADCOUNT.search(m.group("n") or m.group("m"))), None)


def headcount_span(question: str, sentence: str, title: str = "") -> str | None:
    """The figure that answers a whole headcount question
    (:func:`headcount_asked`) in a sentence that gives its place's own
    people (:func:`headcount_said`, the place and ``title`` its names), or
    None. That sentence's other numbers are wider areas', ranks or years
    (a city's own figure within its limits, then its province's said later
    in the sentence: the number nearest the question's words may be the
    province's), and it gives the place's own figure first.

    >>> headcount_span("How many people live in Tarrow?", "With a population of 640,000 within the city's "
    ...     "administrative limits, it is the third-largest city, while its province has 2,100,000 residents.", "Tarrow")
    '640,000'
    >>> [headcount_span(q, "Its 52,000 (2024) inhabitants make it the 13th-largest city.", "Tarrow")
    ...  for q in ("How many people live in Tarrow?", "How many people live in poverty in Tarrow?")]
    ['52,000', None]
    """
    place = headcount_asked(question)
    if not place or headcount_said(sentence, f"{place} {title}") != "own":
        return None
    figure = _headcount_figure(sentence)
    return (figure.group("n") or figure.group("m")).strip()


def headcount_said(sentence: str, names: str = "", wider: str = "") -> str | None:
    """How a sentence gives a number of people (:data:`_HEADCOUNT_FIGURE`,
    its first; None for a flow, :data:`_FLOW`: "40,000 people a year"):
    "wider" where the figure's clause says a wider area (:data:`_WIDER_AREA`)
    and not its own bounds; "own" where it is the whole of a place's people
    now: no part, share or other group said before it
    (:data:`_PART_OF_PEOPLE`), nothing said of "N people" after it but
    where they live (:data:`_LIVING_AFTER`: not "… are over 65"), no past
    or future time in the sentence (:data:`_FUTURE_WORDS`; a year older
    than ``wider``'s, the wider area's sentence, or than 2000 where it
    gives none), no other noun after "population of N", and no place said
    to have it (:data:`_PLACE_SAID_BEFORE`, :data:`_PLACE_SAID_AFTER`:
    "The capital of the state, Columbus, has …", "Velmora is the largest
    city in Ostria, with …") other than ``names`` (the question's place
    and the article's title: "The city of Paris has 2.1 million" is not
    France's); else None.

    A question for a city's people ("How many people live in Berlin?") was
    answered with "The urban area of Berlin has a population of over 5
    million" before the article's "With 3.7 million inhabitants, …": both
    name the city and its people, and the wider area's names it first.

    >>> [headcount_said(s) for s in ("The urban area of Berlin has a population of over 5 million.",
    ...     "With 3.7 million inhabitants, it is the largest city.", "The city proper has a population of 3.1 million and its urban area 16.7 million.",
    ...     "Over 18.1 million people live in the Bangkok Urban Area as of 2025.",
    ...     "The city had 5,601,911 residents in 2021, with 6.4 million in the metropolitan area.")]
    ['wider', 'own', 'own', 'wider', 'own']
    >>> [headcount_said(s, "Tarrow") for s in ("The city is divided into 12 districts, each with 30,000 residents.",
    ...     "About 15 percent of residents, or 61,000 people, were born abroad.", "In 1850 the city had 40,000 inhabitants.",
    ...     "Each year 20,000 residents move to the city.", "The city of Velmora has 1.9 million residents.",
    ...     "It has a population of 410,000 cars.", "In the metropolitan area 40,000 people visit it each year.",
    ...     "Some 400,000 residents are over the age of 65.", "The city is expected to reach 900,000 inhabitants.",
    ...     "The capital of the state, Columbus, has a population of 900,000.")]
    [None, None, None, None, None, None, None, None, None, None]
    >>> [headcount_said("The city had 400,000 residents in 2010.", "Tarrow", wider) for wider in
    ...     ("The metropolitan area had 2 million residents in 2020.", "The metropolitan area had 2 million residents in 2005.")]
    [None, 'own']

    A place named near the figure that is not said to have it is no other
    place's figure; a metropolitan borough's figure is no wider area's (nor,
    said of a borough, surely the place's own):

    >>> [headcount_said(s, "Tarrow") for s in ("It is Ohio's second city, with just over two million inhabitants.",
    ...     "Located on the Lark River, the city has a population of about 1.4 million.",
    ...     "The Tarrow Metropolitan Borough had a population of 284,124.")]
    ['own', 'own', None]
    """
    figure = _headcount_figure(sentence)
    if figure is None:
        return None
    start, end = figure.span("n") if figure.group("n") else figure.span("m")
    before = sentence[: start].rsplit(";", 1)[-1]
    after = re.split(r"[,;]|\s+(?:with|while|whereas|but|and\s+(?:its|the|a|an))\s", sentence[end:], maxsplit=1)[0]
    clause = before + sentence[start:end] + after
    if _FLOW.search(after):
        return None
    own_bounds = any(not _PAST_BOUNDS.search(clause, 0, m.start()) for m in _OWN_BOUNDS.finditer(clause))
    if _WIDER_AREA.search(clause) and not own_bounds:
        return "wider"
    if figure.group("m"):
        following = re.match(r"\s*([A-Za-z]+)", sentence[end:])
        if following and following.group(1).lower() not in _AFTER_FIGURE and not _BASED_ON.match(sentence, end):
            return None
    if figure.group("n"):
        rest = re.split(r"[,;.()]", sentence[figure.end():], maxsplit=1)[0]
        if rest.strip() and not _LIVING_AFTER.match(rest):
            return None
    # A year older than the wider area's figure's (or, where that gives
    # none, older than this century) dates a figure that is no longer now.
    since = max((int(year) for year in _A_YEAR.findall(wider)), default=2000)
    past = _PAST_WORDS.search(sentence) or _FUTURE_WORDS.search(sentence) or any(
        int(year) < since for year in _A_YEAR.findall(sentence))
    if _PART_OF_PEOPLE.search(before) or past:
        return None
    said_of = {word for match in _PLACE_SAID_BEFORE.finditer(before) for word in name_words(next(g for g in match.groups() if g))}
    said_of |= {word for match in _PLACE_SAID_AFTER.finditer(after) for word in name_words(match.group(1))}
    if said_of - READER_STOPWORDS - NOT_NAMES - name_words(names):
        return None
    return "own"


def _relation_words(question: str, sentence: str, names: str = "") -> list[re.Match] | None:
    """The words of ``sentence`` that are the question's own (:func:`_relation`,
    the words of ``names`` left out; what a "how many" question counts
    too): [] when the question has none, None when the sentence holds none
    of them, as a sentence about something else does.

    >>> [m.group() for m in _relation_words("How many people live in Leeds?", "Its population is 800,000.", "Leeds")]
    ['population']
    >>> print(_relation_words("When did Tesla die?", "Tesla was an inventor.", "Nikola Tesla"))
    None
    """
    wanted = _relation(question, names) | _counted(question)
    if not wanted:
        return []
    near = [m for m in re.finditer(r"[\w'-]+", sentence) if same_word(m.group().lower()) in wanted]
    return near or None


def says_what_is_asked(question: str, sentence: str, names: str = "") -> bool:
    """Whether ``sentence`` holds a word of the question that names no one
    (or the question has none): a sentence that holds none may say
    nothing of what is asked ("When was Ingrid Vale born?" against "She
    lives in Bergen.").

    >>> says_what_is_asked("When did she die?", "Her death came in 1852."), says_what_is_asked("When did she die?", "She wrote notes.")
    (True, False)
    """
    return _relation_words(question, sentence, names) is not None


# Kinship is said in a closed set of words, and either way round: "Who was
# Leonidas I's father?" is answered by "He was the son of king Anaxandridas
# II", "Who was her husband?" by "She married …". A sentence about the
# subject with no word of the asked relation's family does not say it
# (unlike an event, "When did he get the Nobel Prize?", said in any verb).
# Only the nouns ask ("born" and "married" say, but "Who was born in …?"
# asks for no kin).
_KIN_ASKING = (
    "father mother parent son daughter child children stepfather stepmother",
    "wife wives husband spouse",
    "brother sister sibling",
)
_KIN_SAYING = ("born fathered mothered sired", "married marry marries marriage wed wedded widow widower consort", "twin")
_KIN_FAMILY = {
    word: frozenset(f"{asking} {saying}".split())
    for asking, saying in zip(_KIN_ASKING, _KIN_SAYING)
    for word in asking.split()
}


def _plain_words(text: str) -> set[str]:
    words = re.findall(r"[a-z]+", text.lower())
    return set(words) | {w[:-1] for w in words if len(w) > 3 and w.endswith("s")}


def kin_asked(question: str) -> frozenset[str]:
    """The words that say the kin relation a question asks for (empty: it
    asks for none).

    >>> sorted(kin_asked("Who were Ada Lovelace's parents?"))[:4], kin_asked("Who was born in Leeds?")
    (['born', 'child', 'children', 'daughter'], frozenset())
    """
    asked = frozenset()
    for word in _plain_words(question):
        asked |= _KIN_FAMILY.get(word, frozenset())
    return asked


def says_kin(question: str, sentence: str) -> bool:
    """Whether ``sentence`` holds a word of the kin relation ``question``
    asks for, either way round.

    >>> says_kin("Who was Leonidas I's father?", "He was the son of king Anaxandridas II.")
    True
    >>> says_kin("Who was Ada Lovelace's father?", "She was an English mathematician.")
    False
    """
    return bool(kin_asked(question) & _plain_words(sentence))


# Which way a parent-child word points: "father" up from the one it is
# said of, "son" down. "Who were the children of Zeus?" asks down from
# Zeus; "the son of Zeus" in Heracles' article says Heracles is one, and
# "the twelve children of … Uranus" says nothing of Zeus (the reader
# answered "Uranus", a parent of other children).
_KIN_UP = frozenset("father fathers mother mothers parent parents stepfather stepmother".split())
_KIN_DOWN = frozenset("son sons daughter daughters child children offspring stepson stepdaughter".split())
_KIN_WORD = "|".join(sorted(_KIN_UP | _KIN_DOWN, key=len, reverse=True))
# "the" joins an epithet ("Catherine the Great", "Henry the Fowler").
_HOLDER = r"[A-Z][\w.-]*(?:\s+(?:(?:of|de|da|di|van|von|der|del|la|le|bin|al|the)\s+)?[A-Z][\w.-]*)*"
_KIN_OF = re.compile(rf"\b(?P<kin>{_KIN_WORD})\s+of\s+(?:the\s+)?(?P<name>{_HOLDER})")
_KIN_OWNED = re.compile(rf"(?P<name>{_HOLDER})['’]s?\s+(?:[a-z]+\s+)?(?P<kin>{_KIN_WORD})\b")
# "son of" and the names it is said of, up to the end of its clause.
_KIN_PHRASE = re.compile(rf"\b(?P<kin>{_KIN_WORD})\s+of\s+(?P<rest>[^,;:]*)")


def _kin_way(word: str) -> str:
    return "up" if word.lower() in _KIN_UP else "down"


# Which words of a question's kin word ask for one parent or child of a
# sex, and which for all of them.
_KIN_PLURAL = frozenset("parents children offspring sons daughters fathers mothers".split())


def _kin_question(question: str) -> tuple[str, str, str] | None:
    """("up"/"down", whose, the kin word asked) of a kin question, or None.

    >>> _kin_question("Who was the father of Zeus in Greek myth?")
    ('up', 'Zeus', 'father')
    >>> print(_kin_question("Who called Twain the father of American literature?"))
    None
    """
    match = _KIN_OF.search(question) or _KIN_OWNED.search(question)
    if not match:
        return None
    # A name before a noun qualifies it: "the father of American
    # literature" is no one's father.
    after = re.match(r"\s+([a-z]+)", question[match.end():]) if match.re is _KIN_OF else None
    if after and after.group(1) not in READER_STOPWORDS:
        return None
    words = match.group("name").split()
    while words and words[0].lower() in NOT_NAMES | {"who", "whom", "what", "which"}:
        words = words[1:]
    kin = match.group("kin").lower()
    return (_kin_way(kin), " ".join(words), kin) if words else None


def kin_holder(question: str) -> tuple[str, str] | None:
    """("up" or "down", whose) of a question asking for a named person's
    parents or children, else None.

    >>> kin_holder("Who were the children of Zeus?"), kin_holder("Who was Ada Lovelace's father?")
    (('down', 'Zeus'), ('up', 'Ada Lovelace'))
    >>> kin_holder("Who was Catherine the Great's mother?")
    ('up', 'Catherine the Great')
    >>> print(kin_holder("Who was Ada Lovelace's husband?"))
    None
    """
    asked = _kin_question(question)
    return asked[:2] if asked else None


# A name in a kin phrase: capitalised words, with "of", "de" … inside and
# "the" before an epithet ("Henry the Fowler").
_KIN_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|de|da|di|van|von|der|del|la|le|bin|al|the)\s+)?[A-Z][\w'’.-]*)*")


# A kin phrase set off after a name describes that name, not the
# sentence's subject: "He was a descendant of Perseus, another son of Zeus."
_APPOSED = re.compile(
    rf"\b(?P<who>{_HOLDER}),\s+(?:(?:the|a|an|another|his|her|its|their|only|first|second|third|fourth|"
    rf"eldest|youngest|elder|younger|legitimate|illegitimate|adopted|foster|twin)\s+)*$"
)


def _kin_phrases(sentence: str) -> list[tuple[str, list[tuple[str, str]], str]]:
    """("up"/"down", [(name, its sex where the sentence says it)], the name
    the phrase is set off after, or "") per "<kin word> of <names>" of
    ``sentence``: of each part between "and"s, the last name, the words
    before it describing it ("the Trojan prince Anchises" is Anchises, a
    prince).

    >>> _kin_phrases("Heracles was the son of Zeus and Alcmene, and the foster son of Amphitryon.")
    [('down', [('Zeus', ''), ('Alcmene', '')], ''), ('down', [('Amphitryon', '')], '')]
    >>> _kin_phrases("He was the son of the Trojan prince Anchises and the goddess Aphrodite.")
    [('down', [('Anchises', 'he'), ('Aphrodite', 'she')], '')]
    >>> _kin_phrases("They were the children of the Titans Cronus and Rhea; Otto was the son of Henry the Fowler.")
    [('down', [('Cronus', ''), ('Rhea', '')], ''), ('down', [('Henry the Fowler', '')], '')]
    >>> _kin_phrases("He was a descendant of Perseus, another son of Zeus.")
    [('down', [('Zeus', '')], 'Perseus')]
    >>> _kin_phrases("He was the son of the Nereid Thetis and Peleus, king of Phthia.")
    [('down', [('Thetis', ''), ('Peleus', 'he')], '')]
    >>> _kin_phrases("Isaac, the son of Abraham and Sarah, the father of Jacob and Esau, was a patriarch.")
    [('down', [('Abraham', ''), ('Sarah', '')], 'Isaac'), ('up', [('Jacob', ''), ('Esau', '')], '')]
    """
    found = []
    # A name set off before a kin phrase is after the phrase before it: in
    # "the son of Abraham and Sarah, the father of Jacob" Sarah is a parent
    # named, not the father.
    after = 0
    for m in _KIN_PHRASE.finditer(sentence):
        names = []
        for part in re.split(r"\s+and\s+", re.sub(r"\([^)]*\)", "", m.group("rest"))):
            runs = [n for n in _KIN_NAME.finditer(part)]
            if not runs:
                continue
            last = runs[-1]
            words = last.group().rstrip(".").split()
            # After "the" a capitalised word before a name describes it
            # ("the Titans Cronus", "the Emperor Augustus"); so does a
            # title-like word anywhere ("Queen Victoria" keeps her title
            # out of the name only where "the" comes first).
            after_the = part[: last.start()].rstrip().lower().endswith("the")
            while len(words) > 1 and (words[0].lower() in NOT_NAMES or after_the and words[1][:1].isupper()):
                words = words[1:]
            name = re.sub(r"['’]s$", "", " ".join(words))
            before = part[: last.start()].lower().split()[-2:] + [w.lower() for w in last.group().split()[:-len(words) or None]]
            sexes = {GENDERED_WORDS[w] for w in before if w in GENDERED_WORDS}
            sexes |= {GENDERED_WORDS[w] for w in re.findall(r"\w+", last.group().lower()) if w in GENDERED_WORDS}
            if name and name.lower() not in NOT_NAMES:
                names.append((name, sexes.pop() if len(sexes) == 1 else ""))
        # A title set off after the last name says its sex too: "the son of
        # the Nereid Thetis and Peleus, king of Phthia".
        title = _TITLE_AFTER.match(sentence, m.end())
        # A kin word there starts the next kin phrase ("Sarah, the father of
        # Jacob" is Isaac the father).
        if (names and not names[-1][1] and title and title.group(1) in GENDERED_WORDS
                and title.group(1) not in _KIN_UP | _KIN_DOWN):
            names[-1] = (names[-1][0], GENDERED_WORDS[title.group(1)])
        apposed = _APPOSED.search(sentence, after, m.start())
        after = m.end()
        found.append((_kin_way(m.group("kin")), names, apposed.group("who") if apposed else ""))
    return found


# ", king of …", ", the daughter of …" after a name: what that one is.
_TITLE_AFTER = re.compile(r",\s+(?:(?:the|a|an)\s+)?([a-z]+)\s+of\b")


def _parent_of_sex(names: list[tuple[str, str]], sex: str, up: bool) -> str | None:
    """Of the kin a kin phrase names, the one of ``sex`` the sentence says
    ("the goddess Aphrodite"), or the one left when the other is said to
    be of the other sex; a lone parent (``up``) is taken for the father
    ("the son of Robert Darwin"), never for the mother; two parents the
    sentence gives no sex ("the son of Henry VII and Elizabeth of York")
    both, as the sentence says them; None otherwise.

    >>> _parent_of_sex([("Henry VII", ""), ("Elizabeth of York", "")], "she", True)
    'Henry VII and Elizabeth of York'
    """
    said = [name for name, of in names if of == sex]
    if len(said) == 1:
        return said[0]
    unsaid = [name for name, of in names if not of]
    if len(names) == 2 and len(unsaid) == 1 and len(said) == 0:
        return unsaid[0]
    if up and len(names) == 1 and not names[0][1] and sex == "he":
        return names[0][0]
    # Which is the father a reader of one sentence cannot tell (the order
    # says nothing: "the son of Leto and Zeus"); both names are the
    # answer with the sentence beside them, never one of them guessed.
    if up and len(names) == 2 and len(unsaid) == 2:
        return " and ".join(unsaid)
    return None


# Kin said to be someone's by a possessive before the kin word: "Her
# father was the poet Lord Byron", "Ada Lovelace's father, Lord Byron,",
# "his eldest son". Only there is the name next to the kin word the kin.
_KIN_OWNER = re.compile(
    owned_kin(rf"(?:\b(?P<pronoun>[Hh]is|[Hh]er|[Tt]heir)|(?P<name>{_HOLDER})['’]s?)", rf"(?P<kin>{_KIN_WORD})", 2)
)
# The name an owned kin word is said to be: "her father, Lord Byron,",
# "her father Lord Byron", "her father was the poet Lord Byron" (a
# capitalised word before a noun describes: "the Akkadian king Sargon";
# so does a longer description: "her mother was the philosopher and
# women's rights advocate Mary Wollstonecraft"). The describing words are
# content words joined by "and", never a function word: past "of", "at" or
# "who" the name is another's ("Her father was a close friend of the
# composer Franz Liszt", "a teacher … at the University of Warsaw").
# Six words hold the longest description met ("the philosopher and women's
# rights advocate": five); more would reach names in a clause.
_KIN_DESCRIBING_WORDS = 6
_NOT_DESCRIBING = r"(?:of|at|to|for|with|in|on|from|by|as|into|who|whom|whose|which|that|when|where|the|a|an)\b"
_NAMED_AFTER = re.compile(
    rf"\s*,?\s+(?P<was>(?:is|was)\s+)?(?:(?P<article>the|a|an)\s+"
    rf"(?:(?:(?!{_NOT_DESCRIBING})[a-z][\w'’-]*|[A-Z][\w'’-]*(?=\s+[a-z]))\s+){{0,{_KIN_DESCRIBING_WORDS}}})?"
    rf"(?P<name>{_KIN_NAME.pattern}(?:\s+and\s+{_KIN_NAME.pattern})?)"
)


def _owned_kin_name(sentence: str, holder: str, about_holder: bool, way: str, word: str) -> str | None:
    """The name ``sentence`` gives the kin ``word`` asks for (its way, and
    its sex where it has one) said to be the holder's by a possessive: a
    name's ("Ada Lovelace's father, Lord Byron") or, in a sentence about
    the holder, a pronoun's ("Her father was …"); the name attached to that
    kin word, never one elsewhere in the sentence; None without one.

    >>> _owned_kin_name("Her father was the poet Lord Byron.", "Ada Lovelace", True, "up", "father")
    'Lord Byron'
    >>> print(_owned_kin_name("She married William King and had three children.", "Ada Lovelace", True, "down", "children"))
    None
    >>> print(_owned_kin_name("He and Zeus replaced their father's generation.", "Zeus", False, "up", "father"))
    None
    >>> print(_owned_kin_name("Her father Lord Byron left; her mother raised her.", "Ada Lovelace", True, "up", "mother"))
    None
    >>> print(_owned_kin_name("Her father was an Indian lawyer.", "Indira Gandhi", True, "up", "father"))
    None
    """
    sex = kin_gender(word)
    for m in _KIN_OWNER.finditer(sentence):
        owner = about_holder if m.group("pronoun") else same_name(holder, m.group("name"))
        said = kin_gender(m.group("kin"))
        if not (owner and _kin_way(m.group("kin")) == way and (not sex or not said or said == sex)):
            continue
        named = _NAMED_AFTER.match(sentence, m.end())
        if named:
            # "her father Theon's commentary": the father is Theon.
            name = re.sub(r"['’]s$", "", named.group("name").rstrip("."))
            # "was Indian", "the Indian lawyer": the name of a people
            # describes the kin; so does a name before a noun.
            adjective = peoples_word(name) or (
                named.group("article") and " " not in name and re.match(r"\s+[a-z]", sentence[named.end():]))
            if not adjective and name.split()[0].lower() not in NOT_NAMES and not same_name(holder, name):
                return name
        before = re.search(rf"(?P<name>{_KIN_NAME.pattern})\s+(?:is|was)\s+$", sentence[: m.start()])
        if before and before.group("name").split()[0].lower() not in NOT_NAMES and not same_name(holder, before.group("name")):
            return before.group("name").rstrip(".")
    return None


def _same_first(a: str, b: str) -> bool:
    """Whether names ``a`` and ``b`` are one's (:func:`same_name`) or open
    with one word ("Alexander III of Macedon", "Alexander the Great")."""
    return same_name(a, b) or bool(a.split() and b.split()) and folded_text(a.split()[0]).lower() == folded_text(b.split()[0]).lower()


# A word before a name that says its sex: "the god Zeus", "his mother Alcmene".
_SEX_BEFORE = re.compile(rf"\b(?P<word>[a-z]+)\s+(?P<name>{_KIN_NAME.pattern})")


def sexes_said(text: str) -> dict[str, str]:
    """The sex ("he"/"she") ``text`` gives each name by a gendered word
    before it, of names given one sex only.

    >>> sexes_said("Heracles was the son of Zeus. His mother Alcmene was the wife of king Amphitryon.")
    {'Alcmene': 'she', 'Amphitryon': 'he'}
    """
    said: dict[str, set[str]] = {}
    for m in _SEX_BEFORE.finditer(text):
        if m.group("word") in GENDERED_WORDS:
            said.setdefault(m.group("name").rstrip("."), set()).add(GENDERED_WORDS[m.group("word")])
    return {name: sexes.pop() for name, sexes in said.items() if len(sexes) == 1}


def kin_span(question: str, sentence: str, subject: str, known: dict[str, str] | None = None) -> tuple[str | None, set[str]] | None:
    """(the answer, the names that are none) a ``sentence`` about
    ``subject`` (its article's title, the name it refers back to, or the
    name it opens with) gives a question for someone's parents or children
    (:func:`kin_holder`): "<subject> … son of <holder>" answers "Who were
    the children of <holder>?" with the subject, "<holder> … son of X and
    Y" a question for the holder's parents with "X and Y", for the mother
    the one of them the sentence says is a woman (:func:`_parent_of_sex`);
    a name that is the kin of someone else ("children of Uranus") is none.
    A parent the sentence gives no sex has the one ``known`` (name: sex,
    :func:`sexes_said` of its passages) gives it.
    None where the sentence neither names the holder nor is about them
    (its subject is known and another's), or, with no kin phrase to
    answer, names no one as the kin it says is the holder's
    (:func:`_owned_kin_name`): no other name of it answers;
    ``(None, set())`` for any other question.

    >>> kin_span("Who were the children of Zeus?", "He was the son of Zeus and Alcmene.", "Heracles")
    ('Heracles', set())
    >>> kin_span("Who was Leonidas's father?", "He was the son of king Anaxandridas II.", "Leonidas")
    ('Anaxandridas II', set())
    >>> kin_span("Who were the parents of Heracles?", "He was the son of Zeus and Alcmene.", "Heracles")
    ('Zeus and Alcmene', set())
    >>> kin_span("Who was the mother of Heracles?", "He was the son of Zeus and Alcmene.", "Heracles")
    ('Zeus and Alcmene', set())
    >>> kin_span("Who was the mother of Heracles?", "He was the son of Zeus and Alcmene.", "Heracles", {"Zeus": "he"})
    ('Alcmene', set())
    >>> print(kin_span("Who were Zeus's children?", "They were the children of Uranus and Gaia.", "Titans"))
    None
    >>> print(kin_span("Who were Zeus's children?", "Hera, sister of Zeus, was the daughter of Cronus.", "Hera"))
    None
    >>> print(kin_span("Who were Zeus's children?", "Hera, the daughter of Cronus, bore Zeus's children.", "Hera"))
    None
    >>> kin_span("Who was Ada Lovelace's father?", "Her father, Lord Byron, left her.", "Ada Lovelace")
    ('Lord Byron', set())
    >>> kin_span("Who was the father of Alexander the Great?", "Alexander III of Macedon, son of Philip II, was king.",
    ...          "Alexander the Great")
    ('Philip II', set())
    """
    asked = _kin_question(question)
    if not asked:
        return None, set()
    way, holder, word = asked
    phrases = _kin_phrases(sentence)
    # One is not one's own kin: where a kin phrase names the holder, the
    # subject is another ("Leopold Mozart was the father of Wolfgang
    # Amadeus Mozart" for "Who was Mozart's father?").
    # In the holder's own article (the question names its subject as its
    # title does) another full name is another one, though it may be the
    # same by :func:`same_name`: "the eldest son of George H. W. Bush" in
    # George W. Bush's.
    own = folded_text(holder).lower() == folded_text(subject).lower()

    def holder_named(name: str) -> bool:
        return folded_text(name).lower() == folded_text(holder).lower() if own else same_name(holder, name)

    named = any(holder_named(name) for _, names, _ in phrases for name, _ in names)
    is_holder = same_name(holder, subject) and not named
    others = set()
    for said, names, apposed in phrases:
        of_holder = any(holder_named(name) for name, _ in names)
        # A phrase set off after a name is that one's kin ("Perseus,
        # another son of Zeus" in Heracles' article).
        # A name the sentence opens with is its subject, under another name
        # where it shares the subject's first ("Alexander III of Macedon,
        # son of Philip II" in Alexander the Great's article).
        if apposed and sentence.lstrip().startswith(apposed) and _same_first(apposed, subject):
            apposed = ""
        about, about_holder = (apposed, same_name(holder, apposed) and not named) if apposed else (subject, is_holder)
        if of_holder and said == way and about and not about_holder:
            return about, set()
        if about_holder and not of_holder and said != way and names:
            if word in _KIN_PLURAL:
                return " and ".join(name for name, _ in names), set()
            # Which parent is which another sentence may say ("the god
            # Zeus"): two names answered either question before.
            names = [(name, of or (known or {}).get(name, "")) for name, of in names]
            parent = _parent_of_sex(names, kin_gender(word), way == "up")
            if parent:
                return parent, set()
            # Which of them is asked for the sentence does not say (a
            # lone parent for the mother): none of them is the answer.
            others.update(name for name, _ in names)
            continue
        if not of_holder:
            others.update(name for name, _ in names)
    # A sentence whose subject is not known ("Her father was …" with no
    # title) may be about the one asked about.
    if subject and not is_holder and not named and not name_words(holder) <= name_words(sentence):
        return None
    # No kin phrase gave the answer: only the name attached to a kin word
    # the sentence says is theirs is their kin. The nearest name was
    # anyone's: "She married William King … and had three children" named
    # her husband for her children, "His father Robert Darwin was a doctor,
    # and his mother died …" the father for the mother.
    name = _owned_kin_name(sentence, holder, is_holder or not subject, way, word)
    return (name, set()) if name and name not in others else None


def kin_said(question: str, sentence: str, title: str = "", referent: str = "",
             known: dict[str, str] | None = None) -> tuple[str | None, set[str]] | None:
    """:func:`kin_span` of ``sentence``, its subject the name it refers
    back to, else its article's ``title``, else the name it opens with;
    the sexes ``known`` beside those the sentence says."""
    subject = without_bracket(title)
    return kin_span(question, sentence, referent or subject or _opening_name(sentence) or _subject_after_clause(sentence),
                    {**(known or {}), **sexes_said(sentence)})


# A cast, said by a list ("Kevin Kline as Maurice"), a verb ("Rhys Darby
# would play Charles", "Lea Thompson, who also plays Marty 's mother
# Lorraine") or the passive ("Maurice is played by Kevin Kline"). Where the
# role and the actor stand either way round, the nearest name to the
# question's words was as likely the other one, or a third ("Sunny
# Baudelaire" for "who plays charles", the sentence's first role).
_PLAYING = r"(?:plays?|played|playing|voices?|voiced|portrays?|portrayed)"
_CAST_QUESTION = re.compile(rf"^\s*who\s+(?:(?:is|was|will\s+be)\s+)?{_PLAYING}\b", re.IGNORECASE)
_ACTOR_QUESTION = re.compile(r"^\s*who\s+(?:does|did|will|is|was)\s+(?P<actor>.+?)\s+(?:play|voice|portray)(?:s|ed|ing)?\b",
                             re.IGNORECASE)
# "Who is the voice of X?", "who is chips voice": a voice is a role's
# cast, the noun, not the verb of "who does Y voice?" (an actor's role).
# The holder's voice ends the question or is followed by where it is heard
# ("in beauty and the beast"): "Adele's voice coach", "on the voice 2012"
# (the show), "this voice" and "his voice" ask for no role's cast.
_VOICE_OF = re.compile(
    r"^\s*who\s+(?:(?:is|was|does|did)\s+the\s+voice\s+of\b(?!['’])"
    r"|(?:is|was)\s+(?!the\b)(?P<holder>.+?)(?<!\bthe)(?<!\bthis)(?<!\bhis)(?<!\bher)(?<!\btheir)(?<!\bits)\s+voice"
    r"(?=\s*[?.!]?\s*$|\s+(?:in|on|from|for|at|of|during)\b))",
    re.IGNORECASE)
# A role a cast list gives in two forms ("Dan Stevens as The Prince /
# Beast") is either: the actor plays both.
_ACTOR_THEN_ROLE = re.compile(
    rf"\s+as\s+(?:[Tt]he\s+)?(?:(?:[A-Z][\w'’.-]*\s+)+/\s+(?:[Tt]he\s+)?)?"
    rf"|\s+(?:(?:would|will|to|also|later|then|now|who)\s+)*{_PLAYING}\s+(?:the\s+(?:role|part|voice)\s+of\s+)?(?:the\s+)?"
    rf"|\s*,\s*who\s+(?:also\s+|later\s+)?{_PLAYING}(?:\s+[\w'’]+){{0,4}}?\s+"
)
# A name cast in a role after it ("Gary Oldman as Gordon"), not "Beast as a boy".
_CAST_AFTER = re.compile(r"\s+as\s+[A-Z]")
_ROLE_THEN_ACTOR = re.compile(
    rf"\s*,?\s+(?:{_BE}|will\s+be|being)\s+(?:also\s+|later\s+)?(?:played|voiced|portrayed)\s+by\s+"
)
# A sentence that says the cast of a role (or the role of an actor) an
# earlier one named: "Jennifer Jane Parker is the girlfriend of Marty
# McFly . The character was played by Claudia Wells". Read alone, it pairs
# no two names, and "who plays jennifer" got the role's own name from the
# sentence before. "He"/"She" is the role only where it is played ("She is
# played by Lea Thompson"); in "Marty McFly is played by Michael J. Fox .
# He also plays Seamus McFly" it is the actor, and the active form stands
# for the role only for a "who does Y play?" question.
_STANDS_FOR_ROLE = re.compile(r"^\s*(?:the|this)\s+(?:character|role|part)\b", re.IGNORECASE)
_STANDS_FOR_PERSON = re.compile(rf"^\s*(?:{_HE_OR_SHE})\b", re.IGNORECASE)


def _asks_cast(question: str) -> bool:
    asked = asked_from(question)
    return bool(_VOICE_OF.match(asked) or _ACTOR_QUESTION.match(asked) or _CAST_QUESTION.match(asked))


def cast_span(question: str, sentence: str, referent: str = "") -> str | None:
    """Who plays the role a "who plays X?" question names, or the role a
    "who does Y play?" question's actor plays, as ``sentence`` says it
    (see :data:`_ACTOR_THEN_ROLE`); None for another question or where the
    sentence says no such pair. A sentence that opens with "The character",
    "He" or "She" says it of ``referent``, the name an earlier sentence
    gave (:func:`referents`).

    >>> cast_span("who played maurice in beauty and the beast", "Kevin Kline as Maurice , Belle 's widowed father .")
    'Kevin Kline'
    >>> cast_span("who plays charles a series of unfortunate events", "Presley Smith would play Sunny , and Rhys Darby would play Charles .")
    'Rhys Darby'
    >>> cast_span("who plays lorraine", "Maggie is played by Lea Thompson , who also plays Marty 's mother Lorraine .")
    'Lea Thompson'
    >>> print(cast_span("who plays lemony snicket", "Nathan Fillion as Jacques Snicket , brother of Lemony ."))
    None
    >>> print(cast_span("who played marty's sister", "Lea Thompson , who also plays Marty 's mother Lorraine ."))
    None
    >>> cast_span("Who voiced the Beast?", "The Beast was voiced by Robby Benson .")
    'Robby Benson'
    >>> cast_span("who voices beast in beauty and the beast", "Dan Stevens as The Prince / Beast , a prince .")
    'Dan Stevens'
    >>> cast_span("who plays the prince", "Dan Stevens as The Prince / Beast , a prince .")
    'Dan Stevens'
    >>> print(cast_span("who plays gary oldman", "Tom Hardy as Bane / Gary Oldman as Gordon ."))
    None
    >>> print(cast_span("who plays olivia", "Claire Foy as Queen Elizabeth II / Olivia Colman ( older ) ."))
    None
    >>> cast_span("who plays trevor slattery", "Ben Kingsley as The Mandarin / Trevor Slattery , an actor .")
    'Ben Kingsley'
    >>> cast_span("who does ewan mcgregor play in beauty and the beast", "Ewan McGregor as Lumière , a candelabrum .")
    'Lumière'
    >>> chip = "Nathan Mack as Chip , Mrs. Potts ' son ."
    >>> cast_span("who is chips voice", chip), cast_span("who is the voice of chip", chip), cast_span("who does nathan mack voice", chip)
    ('Nathan Mack', 'Nathan Mack', 'Chip')
    >>> [cast_span("who wrote it", "Kevin Kline as Maurice ."), cast_span("who played maurice", "Kline met Maurice .")]
    [None, None]
    >>> played = "The character was played by Claudia Wells ."
    >>> cast_span("who plays jennifer", played, "Jennifer Jane Parker"), cast_span("who plays jennifer", played)
    ('Claudia Wells', None)
    >>> cast_span("who does lea thompson play", "She also plays Maggie McFly .", "Lea Thompson")
    'Maggie McFly'
    >>> cast_span("who plays lorraine", "She is played by Lea Thompson .", "Lorraine Baines")
    'Lea Thompson'
    >>> print(cast_span("who plays seamus mcfly", "He also plays Seamus McFly .", "Marty McFly"))
    None
    """
    shape = asked_from(question)
    voice_of = _VOICE_OF.match(shape)
    actor_asked = None if voice_of else _ACTOR_QUESTION.match(shape)
    if not (voice_of or actor_asked or _CAST_QUESTION.match(shape)):  # _asks_cast, its matches kept
        return None
    opening = (_STANDS_FOR_ROLE.match(sentence) or _STANDS_FOR_PERSON.match(sentence)) if referent else None
    if opening and (actor_asked or not _STANDS_FOR_PERSON.match(sentence) or _ROLE_THEN_ACTOR.match(sentence, opening.end())):
        sentence = referent + sentence[opening.end():]
    asked = set(tokens(actor_asked.group("actor") if actor_asked else question, "rouge")) - READER_STOPWORDS
    # A possessive typed without its apostrophe ("chips voice") asks for "Chip".
    # Only a one-word holder: in "james earl jones voice" the "s" is the name's.
    holder = tokens(voice_of.group("holder") or "", "rouge") if voice_of else []
    asked |= {word[:-1] for word in holder if len(holder) == 1 and len(word) > 3 and word.endswith("s")}
    names = [(m.start() + m.group().index(name), name) for m in _NAME.finditer(sentence) if (name := _name_at(m))]
    names = [(at, at + len(name), name) for at, name in names]

    def asked_for(name: str, whole: bool = False) -> bool:
        # Its first word, or two of them: "Jacques Snicket" is not the
        # "lemony snicket" asked for, "Larry Your - Waiter" is "larry".
        words = tokens(name, "rouge")
        if whole:
            return bool(words) and set(words) - READER_STOPWORDS <= asked
        return bool(words) and (words[0] in asked or len(set(words) & asked) > 1)

    for (_, a_end, first), (b_start, b_end, second) in (
        (pair, later) for i, pair in enumerate(names) for later in names[i + 1:]
    ):
        between = sentence[a_end:b_start]
        # "plays Marty 's mother Lorraine": Marty holds the role, Lorraine is
        # it. A name after a role's slash that is itself cast ("Bane / Gary
        # Oldman as Gordon") is the next entry's actor, not the role's other form.
        slashed = "/" in between
        if (_ACTOR_THEN_ROLE.fullmatch(between) and not re.match(r"\s*['’]s\b", sentence[b_end:])
                and not (slashed and _CAST_AFTER.match(sentence, b_end))):
            actor, role = first, second
        elif _ROLE_THEN_ACTOR.fullmatch(between):
            actor, role = second, first
        else:
            continue
        if actor_asked and asked_for(actor) and not asked_for(role):
            return role
        # A name after a role's slash the question names only in part
        # ("Olivia Colman" to "who plays olivia") is the next entry's actor
        # as likely as the role's other form ("Trevor Slattery").
        if not actor_asked and asked_for(role, whole=slashed) and not asked_for(actor):
            return actor
    return None


def cast_spans(question: str, sentences: Sequence[str]) -> list[str | None]:
    """Per sentence of one passage, what :func:`cast_span` answers
    ``question`` with, each read with the name an earlier sentence of the
    passage opened with (:func:`referents`, every sentence's, in an article
    too: a character's section names it once, "Jennifer Parker", then says
    who played "the character"). All None for a question that asks no cast.

    >>> cast_spans("who plays jennifer", ["Jennifer Parker is Marty 's girlfriend .", "The character was played by Claudia Wells ."])
    [None, 'Claudia Wells']
    >>> cast_spans("who wrote it", ["Kevin Kline as Maurice ."])
    [None]
    """
    if not _asks_cast(question):
        return [None] * len(sentences)
    return [cast_span(question, sentence, referent) for sentence, referent in zip(sentences, referents(sentences, every=True))]


# A kin noun before a name makes it another person's ("His wife Lady Bird
# Johnson" is not the "Johnson" who signed); one of these opening a longer
# name makes it another place ("New England" is not "England").
_KIN_BEFORE = re.compile(rf"\b(?:{'|'.join(w for words in KIN_BY_GENDER.values() for w in words.split())})s?\s+$", re.IGNORECASE)
_PLACE_OPENERS = frozenset("New North South East West Northern Southern Eastern Western Upper Lower Central Greater Great "
                           "Little Saint St. San Santa Fort Port Mount Lake Cape".split())
# What may stand before a name that opens its sentence: markup, a quote or bracket.
_SENTENCE_OPENING = re.compile(r"(?:\s|<[^>]*>|[\"'“‘(\[])*")
# After a name that opens its sentence, what makes the sentence a lead
# that says who the name is ("Rhys Darby is a New Zealand actor", "Joseph
# C. Phillips ( born 1962 ) is an American actor"): the name is one, not
# "Actress Claudia Wells was cast".
_LEAD_AFTER = re.compile(r"\s*(?:\([^)]*\)\s*)?,?\s*(?:is|was)\s+(?:a|an|the)\b")


def full_name(span: str, texts: Sequence[str]) -> str:
    """The longer name ``texts`` give the name ``span`` ends, where they
    give one: an article names a person in full once, then by surname
    ("Joseph C. Phillips … Phillips played the husband of Denise"), and the
    sentence that answers is often a later one. ``texts``: sentences of
    the answer's own article, as a name read across a sentence's end is
    none and another article's ("Boris Johnson") is someone else. Its added
    words are capitalised ("University of Paris" is no longer "Paris"), and
    two longer names neither of which holds the other ("Andrew Johnson",
    "Lyndon Johnson") leave ``span`` as it is. A longer name that opens
    its sentence counts only where the sentence is a lead saying who it is
    ("Rhys Darby is a New Zealand actor"): the added words of another may
    be no name ("Then Phillips left", "Actress Claudia Wells was cast").
    Nor one after a kin noun ("his wife Lady Bird Johnson"), nor one a
    place word opens ("New England").

    >>> full_name("Phillips", ["Phillips played Sondra 's date .", "It was Joseph C. Phillips 's final season ."])
    'Joseph C. Phillips'
    >>> full_name("Johnson", ["Andrew Johnson was impeached .", "Lyndon Johnson signed it ."])
    'Johnson'
    >>> full_name("Paris", ["He studied at the University of Paris ."]), full_name("Rhys Darby", ["Rhys Darby as Charles"])
    ('Paris', 'Rhys Darby')
    >>> full_name("Hurst", ["Meanwhile Hurst became a hero ."]), full_name("Johnson", ["His wife Lady Bird Johnson came ."])
    ('Hurst', 'Johnson')
    >>> full_name("England", ["The squad later toured New England ."]), full_name("Darby", ["Rhys Darby is a New Zealand actor ."])
    ('England', 'Rhys Darby')
    """
    words = span.split()
    longer = set()
    for text in texts:
        for match in _NAME.finditer(text):
            name = _name_at(match)
            named = name.split()
            at = match.start() + match.group().index(name) if name else 0
            if (len(named) > len(words) and named[-len(words):] == words and all(w[:1].isupper() for w in named)
                    and (not _SENTENCE_OPENING.fullmatch(text[:at]) or _LEAD_AFTER.match(text, at + len(name)))
                    and not _KIN_BEFORE.search(text[:at])
                    and named[0] not in _PLACE_OPENERS):
                longer.add(name)
    longest = max(longer, key=len, default="")
    return longest if longest and all(longest.endswith(name) for name in longer) else span


# "which committee …", "in what school …": the words a which/what question
# asks a kind by, its noun and the word after it when that is no function
# word ("time zone"; or a verb, "committee holds"). At the question's start,
# after a preposition at most; later, a "which" before a capitalised word
# opens a relative clause ("the company which Jobs founded").
_KIND_ASKED = re.compile(r"\b(?:which|what)\s+([a-z][a-z-]*)(?:\s+([a-z][a-z-]*))?\b", re.IGNORECASE)
_QUESTION_START = re.compile(rf"^\s*(?:{_PREPOSITION}\s+)?$", re.IGNORECASE)
# Nouns whose answer a name headed by them does not give. A date
# (answer_kind's date nouns, and a day, month, time or era) or a year of a
# name ("the Year of Revolutions"). A title: the name says the office
# ("Holy Roman Emperor", "President of France"), not who held it. A country
# or state is named without the noun ("Spain"): a name with it is a region
# ("Basque Country").
_NOT_KINDS = frozenset(_DATE_NOUNS) | frozenset(
    "day month time era "
    "king queen emperor empress president pope prince princess duke duchess tsar czar sultan pharaoh "
    "monarch ruler chancellor minister governor general lord lady saint bishop archbishop senator earl "
    "caliph khan "
    "country nation state".split()
)


def kind_asked(question: str) -> str | None:
    """The words a "which X" / "what X" question asks a kind by: its noun,
    and the word after it when that is no function word ("committee holds"
    of "which committee holds hearings?", "time zone"); None for another
    question.

    >>> [kind_asked(q) for q in ("which committee holds hearings", "What school did he attend?", "What is it?", "Which of them?")]
    ['committee holds', 'school', None, None]
    >>> [kind_asked(q) for q in ("In which country is Bilbao?", "How did the company which Jobs founded get its name?")]
    ['country', None]
    """
    question = asked_from(question)
    match = _KIND_ASKED.search(question)
    if not match or not (_QUESTION_START.match(question, 0, match.start()) or match.group(1).islower()):
        return None
    words = [w.lower() for w in match.groups() if w]
    if words[0] in DRIFT_STOPWORDS or words[0] in AUXILIARY_VERBS or words[0] in ("kind", "type", "sort", "kinds", "types", "sorts"):
        return None
    if len(words) > 1 and (words[1] in DRIFT_STOPWORDS or words[1] in AUXILIARY_VERBS):
        words = words[:1]
    return " ".join(words)


def _head(name: str) -> list[str]:
    """The words of ``name`` that may head it: its last ("Harvard Law
    School"), a numeral after it left out ("World War II"), and the word
    before an "of" ("University of London")."""
    words = name.split()
    if len(words) > 2 and re.fullmatch(r"[IVXLC]+|\d+", words[-1]):
        words = words[:-1]
    return [words[-1]] + [word for word, after in zip(words, words[1:]) if after == "of"]


def _headed_by(name: str, noun: str) -> bool:
    """Whether ``name`` is a name of the kind ``noun``: that noun is its
    head (:func:`_head`), beside other words. A noun inside a run of
    capitalised words is not its head: a page's menu ("Home State
    Requirements Schools Job Description") answered "What school subjects
    are needed …?". A plural head names several ("United States"), not one
    state."""
    stem = same_word(noun)
    return len(name.split()) > 1 and any(
        same_word(head.lower()) == stem and (head.lower() == noun or not head.lower().endswith("s")) for head in _head(name)
    )


def _plural(noun: str) -> bool:
    return noun.endswith("s") and not noun.endswith(("ss", "us", "is"))


def _cut_after_and(sentence: str, start: int) -> bool:
    """Whether the name at ``start`` is the end of one the capitalised words
    cut after "and" ("Roll Hall of Fame" of "the Rock and Roll Hall of
    Fame"): one capitalised word before the "and". Two are a name of their
    own ("Columbia University and Harvard Law School")."""
    match = re.search(r"(\S+\s+)?[A-Z][\w'’.-]*\s+(?:and|&)\s+$", sentence[:start])
    return bool(match) and not (match.group(1) or "")[:1].isupper()


def kind_span(question: str, sentence: str) -> str | None:
    """The name in ``sentence`` that is of the kind a "which X" / "what X"
    question asks (:func:`kind_asked`): the one name headed by the noun X
    ("Senate Judiciary Committee" for "which committee", :func:`_headed_by`),
    or by its two words ("Central Time Zone" for "what time zone"). None
    when the sentence names none of that kind, or two: which of them is
    asked the sentence need not say ("longer than the Danube River and the
    Ural River"). A name with the noun says what it is; any other
    capitalised word beside the question's words may be anything
    ("Candidates are nominated by the President … before the Senate
    Judiciary Committee" named the President first). None too for a noun
    whose answer is no name headed by it (:data:`_NOT_KINDS`) and for a
    plural, which asks for several.

    >>> kind_span("which committee holds hearings", "Nominees answer questions before the Senate Judiciary Committee , which votes .")
    'Senate Judiciary Committee'
    >>> kind_span("What university did she attend?", "She studied at the University of Cambridge from 1931.")
    'University of Cambridge'
    >>> print(kind_span("which committee holds hearings", "The Committee holds hearings in the Senate ."))
    None
    """
    asked = kind_asked(question)
    if asked is None:
        return None
    words = asked.split()
    # A name in a place ("born in Kansas City") is what a "which city" asks.
    names = _names(sentence, question, places=False)
    spans = []
    if len(words) == 2 and not _plural(words[1]) and words[1] not in _NOT_KINDS:
        # Its last two words, beside another: "Central Time Zone".
        spans = [span for span in names if len(span[2].split()) > 2
                 and [same_word(w.lower()) for w in span[2].split()[-2:]] == [same_word(w) for w in words]]
    if not spans and not _plural(words[0]) and words[0] not in _NOT_KINDS:
        spans = [span for span in names if _headed_by(span[2], words[0])]
    if len({span[2] for span in spans}) != 1 or _cut_after_and(sentence, spans[0][0]):
        return None
    return spans[0][2]


def _spans(matches) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group().strip()) for m in matches]


# What ends a clause between a span and a word of the question: "moved to
# Paris in 1902 and died there in 1931" dies in 1931, not in 1902.
_CLAUSE_BREAK = re.compile(r"[,;]|\s(?:and|but|while|whereas)\s")
# "Who is the Nobel Prize named for?": the answer repeats the question's name.
_NAMED_FOR = re.compile(r"\bnamed\s+(?:after|for)\b", re.IGNORECASE)


def _names_one_of(name: str, question: str) -> bool:
    """Whether the question names ``name`` (:func:`same_name` with one of
    its name runs, "Twain" of "Mark Twain"): then it asks about that one,
    not for them. A name that only shares a word is another's ("Henry VIII"
    is not "Henry VII"), and a question for whom something is "named
    after" or "for" asks for the one whose name it repeats.

    >>> _names_one_of("Mark Twain", "Who called Twain the father of American literature?")
    True
    >>> _names_one_of("Mark Twain", "Who wrote Huckleberry Finn?"), _names_one_of("The Beatles", "Who managed the band?")
    (False, False)
    >>> _names_one_of("Henry VIII", "Who succeeded Henry VII?"), _names_one_of("Alfred Nobel", "Who is the Nobel Prize named for?")
    (False, False)
    """
    if _NAMED_FOR.search(question):
        return False
    return any(same_name(" ".join(run), name) for run in name_runs(question))


def _nearest(spans: list[tuple[int, int, str]], near: list[re.Match], sentence: str = "") -> str | None:
    """The text of the (start, end, text) span nearest to one of the words
    ``near`` in ``sentence``, one in the same clause first; the first
    span's when there are no such words.

    >>> s = "She moved to Paris in 1902 and died there in 1931."
    >>> _nearest(_spans(_DATE.finditer(s)), [re.search("died", s)], s)
    '1931'
    """
    if not spans or not near:
        return spans[0][2] if spans else None

    def gap(span: tuple[int, int, str]) -> tuple[bool, int]:
        # (another clause between, characters between) the span and the nearest such word
        start, end, _ = span
        return min(
            (bool(_CLAUSE_BREAK.search(sentence, w.end(), start)), start - w.end()) if w.end() <= start
            else (bool(_CLAUSE_BREAK.search(sentence, end, w.start())), max(w.start() - end, 0))
            for w in near
        )

    return min(spans, key=gap)[2]  # min keeps the first on a tie


def _number_words(number: str) -> list[str]:
    """The lower-case words of a :data:`_NUMBER` match ("twenty-five
    thousand": twenty, five, thousand), read by :func:`_value`,
    :func:`_changed_by` and :func:`_in_units`.

    >>> _number_words("Twenty-five  thousand")
    ['twenty', 'five', 'thousand']
    """
    return re.split(r"[\s-]+", number.lower())


def _value(number: str) -> float | None:
    """The value a :data:`_NUMBER` match says, or None.

    >>> [_value(n) for n in ("5,000", "$5", "two hundred", "twenty-five", "3 million", "dozens", "12%", "5 percentage")]
    [5000.0, 5.0, 200.0, 25.0, 3000000.0, 12.0, 12.0, 5.0]
    """
    total = current = 0.0
    bare = re.sub(r"^[$£€]\s?|\s?%$|[\s-]+(?:" + _PERCENT + r"|" + _POINTS + r")$", "", number.strip(),
                  flags=re.IGNORECASE)
    for word in _number_words(bare):
        if word[:1].isdigit():
            current = float(word.replace(",", ""))
        elif word in _WORD_VALUE:
            current += _WORD_VALUE[word]
        elif word in _WORD_SCALE and _WORD_SCALE[word] < 1000:
            current = (current or 1) * _WORD_SCALE[word]
        elif word in _WORD_SCALE:
            total, current = total + (current or 1) * _WORD_SCALE[word], 0.0
        elif word != "percent":
            return None
    return total + current


def _rises(first: str, second: str) -> bool:
    """Whether ``second`` (a number) is larger than ``first``: a range
    rises. A change in points ends no range ("fell 4 percentage points to
    6%" is a change and its level): its range says the unit once, after
    the second number ("2 to 4 percentage points").

    >>> [_rises(a, b) for a, b in (("6", "8"), ("two", "three"), ("5", "4"), ("500", "one"), ("$5", "$10 million"))]
    [True, True, False, False, True]
    >>> _rises("4 percentage points", "6%"), _rises("2", "4 percentage points")
    (False, True)
    """
    low, high = _value(first), _value(second)
    return low is not None and high is not None and high > low and not _SAYS_POINTS.search(first)


def _quantities(sentence: str, undated: str, numbers: list[re.Match], measure: bool,
                change: bool = False, first: bool = False, years: frozenset[str] = frozenset()
                ) -> list[tuple[int, int, str, int]]:
    """(start, end, text, end of its number) of each quantity ``numbers``
    (:data:`_NUMBER` matches in ``undated``, ``sentence`` with its dates
    blanked) open: a number with the range it opens (:data:`_RANGE_ON`,
    "between" before it kept); for a ``measure``, with its unit after
    (:data:`_UNIT`) and how near it is before (:data:`_APPROXIMATE`). A
    number inside another's range is no quantity of its own. A count that
    goes "from" one number to another has changed (:data:`_FROM`). A
    number after a verb of change and "by" with "to" another after it is
    the change, not the level reached ("grew by about 5,000 to 20,000":
    20,000; "fell by 3-4% to 9,700": 9,700, :func:`_changed_by`); a
    question about the ``change`` (:data:`_CHANGE_ASKED`) gets the change
    and not the level ("5,000", "3-4%"), but "How much did fees go up?"
    keeps "by 10 to 20 dollars" its range: a unit on the second number
    only is the range's (:func:`_in_units`).

    After a verb of change, "from" one number "to" another says the level
    before and the level after ("grew from about 5,000 to 20,000"): a
    question for the level gets the second, one for the level ``first``
    (:data:`_START_ASKED`) the first (both where only the second says the
    unit: "from 3 to 4 million euros"), one for the change, which is not
    said, both ("from about 5,000 to 20,000"). Levels said with their
    times ("from 5,000 in 1900 to 20,000 in 2000") are the same change: a
    question that names (in ``years``) the first's year gets the first,
    one for the change both with their times.

    >>> s = "It takes about 6 to 8 weeks, between 20 and 30 days by air, or 25-35 hours."
    >>> [q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), True)]
    ['about 6 to 8 weeks', 'between 20 and 30 days', '25-35 hours']
    >>> [q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), False)]
    ['6 to 8', 'between 20 and 30', '25-35']
    >>> s = "He stood 6 ft 2 in tall; the club grew from 50 to 300 members."
    >>> [[q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), measure, change, first)]
    ...  for measure, change, first in ((True, False, False), (False, False, False), (True, True, False), (False, False, True))]
    [['6 ft 2 in', '300'], ['6', '2', '300'], ['6 ft 2 in', 'from 50 to 300'], ['6', '2', '50']]
    >>> s = "Its membership grew by 5,000 to 20,000, and the bill passed by 52 to 48 votes."
    >>> [q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), False)]
    ['20,000', '52', '48']
    >>> [q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), True, change=True)]
    ['5,000', '52', '48']
    >>> s = "Membership fell by 3 to 4 percent to 9,700, then fell by about 300 to 9,400; fees rose by 10 to 20 dollars."
    >>> [q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), False)]
    ['9,700', '9,400', '20']
    >>> [q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), True, change=True)]
    ['3 to 4 percent', 'about 300', '10 to 20 dollars']

    The verb may stand a few words before its "by" (:data:`_CHANGE_GAP`),
    but not in another clause:

    >>> s = "It rose last year by about 5,000 to 20,000 and grew steadily by 300 to 1,200."
    >>> [[q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), False, change)] for change in (False, True)]
    [['20,000', '1,200'], ['5,000', '300']]
    >>> s = "It grew and was bought by 300 to 400 men, rose, helped by 30 to 40, rose in a wave led by 5 to 20."
    >>> [q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), False, change=True)]
    ['300', '400', '30', '40', '5', '20']

    What the verb changes may stand before its "by" or "from"
    (:data:`_CHANGED_WHAT`), a pair from it going the verb's way:

    >>> s = "It cut its staff from 500 to 300 and cut power from 5 to 10 pm."
    >>> [q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s)), True)]
    ['300', '5 to 10']
    >>> s = "It grew from 5,000 in 1900 to 20,000 in 2000."
    >>> [[q[2] for q in _quantities(s, s, list(_NUMBER.finditer(s))[::2], False, change, False, years)]
    ...  for change, years in ((False, frozenset()), (False, frozenset({"1900"})), (True, frozenset()))]
    [['20,000'], ['5,000'], ['from 5,000 in 1900 to 20,000 in 2000']]
    """
    found: list[tuple[int, int, str, int]] = []
    skip = -1
    for at, number in enumerate(numbers):
        if at <= skip or found and number.start() < found[-1][1]:
            continue
        start, end = number.start(), number.end()
        between = _BETWEEN.search(sentence, 0, start)
        changed = _FROM.search(sentence, 0, start)
        way = ("by" if changed.group("way") else "from") if changed and changed.group("change") else None
        if not changed and between:
            # "by between 3 and 4 percent" after a verb of change is a change too.
            changed = _FROM.search(sentence, 0, between.start())
            changed = changed if changed and changed.group("way") else None
            way = "by" if changed else None
        if way == "from" and changed.group("what") and at + 1 < len(numbers) and (
                _rises(number.group(), numbers[at + 1].group()) == bool(_DOWN.match(changed.group("change")))
                or _A_YEAR.fullmatch(number.group()) and _A_YEAR.fullmatch(numbers[at + 1].group())
                or _RAISED.match(changed.group("change")) and _COUNTING.match(sentence, numbers[at + 1].end())
                and not (_in_units(sentence, number) or _a_level_in_units(sentence, numbers[at + 1])
                         or number.group()[0] in "$£€")
                or any(_TIME_OF_DAY.match(sentence, level.end()) for level in numbers[at:at + 2])
                or _YEARS_OLD.match(sentence, numbers[at + 1].end()) and not _AN_AGE.search(changed.group("what"))):
            # What a verb changes goes its way ("cut its staff from 500 to
            # 300"); the other way, or from one year to another, it is a
            # range ("cut power from 5 to 10 pm", "raised her sons from 1950
            # to 1960"), as from a time of day ("cut power from 10 pm to 5
            # am"). What is raised "from" counted people or things is
            # where it came from ("raised funds from 30 to 40 parents"); from
            # a level, a change ("raised the age limit from 16 to 18",
            # "raised taxes from 20% to 25%"), as to one said in its unit
            # ("from 16 to 18 years", "from 55 to 65 mph"), unless the unit
            # says where or how big ("from 500 to 800 metres above sea
            # level": :data:`_POSITION_AFTER`). An age said
            # after is how old the things changed are ("grew children from
            # 5 to 10 years old"), unless an age was changed.
            way = None
        if way == "from":
            # "grew from about 5,000 to 20,000": the level before, then the one after.
            last = _changed_by(undated, numbers, at, between is not None)
            # Levels said with their times ("from 5,000 in 1900 to 20,000 in
            # 2000"): a question that names the first's ("in 1900") asks for it.
            dated = _A_YEAR.findall(sentence, number.end(), numbers[last + 1].start()) if last is not None else []
            if last is not None and (first or change or not years.isdisjoint(dated)):
                if first or not change and not years.isdisjoint(dated):
                    start = between.start() if between and last > at else start
                    end = _change_end(sentence, numbers, at, last)
                    # "from 3 to 4 million euros" says its unit or scale (a
                    # count's: :func:`_scaled`) once, after the level after:
                    # the first alone ("3") would lose it. Falling ("from 5 to
                    # 3 years") it is no range: the first.
                    said = (lambda m: _in_units(sentence, m)) if measure else (lambda m: _scaled(m.group()))
                    level = numbers[last + 1]
                    if (not dated and said(level) and not said(number) and not said(numbers[last])
                            and _rises(numbers[last].group(), level.group())):
                        end = level.end()
                    start, end = _measured(sentence, start, end) if measure else (start, end)
                    number_end = end
                else:
                    # The change is not said, only the two levels it lies between
                    # (with the second's time where the first says its own).
                    start, number_end = changed.start("way_from"), numbers[last + 1].end()
                    end = _measure_end(sentence, number_end) if measure else number_end
                    at_time = _DATED.match(undated, end) if dated else None
                    number_end = end = at_time.end() if at_time else end
                found.append((start, end, sentence[start:end].strip(), number_end))
                skip = last + 1
                continue
        else:
            # "cut the budget by 20 votes to 10" is the vote, not a change
            # of the budget: a tally's "by" changes nothing it names.
            tally = (way == "by" and changed.group("what") and _TALLY.match(sentence, number.end())
                     and not (_COUNTED_IN_VOTES.search(changed.group("what")) and at + 1 < len(numbers)
                              and _rises(number.group(), numbers[at + 1].group())))
            last = (_changed_by(undated, numbers, at, between is not None, changed.group("near") is not None)
                    if way == "by" and not tally else None)
        if last is not None and not change:
            skip = last
            continue
        if last is not None and (last > at or not _in_units(sentence, numbers[at + 1]) or _in_units(sentence, number)):
            # The change asked about, without the level it reached; "rose by
            # 3 to 5 percent" alone stays a range (below).
            if between and last > at:
                start = between.start()
            end = _change_end(sentence, numbers, at, last)
            skip = last + 1
            number_end = end
            if measure:
                start, end = _measured(sentence, start, end)
            found.append((start, end, sentence[start:end].strip(), number_end))
            continue
        joint = _BETWEEN_AND if between else _RANGE_ON
        # A count's "from" or "by" opens no range; a verb of change's "by"
        # without a level after it may ("fell by between 3,000 and 5,000").
        on = None if not measure and changed and way != "by" else joint.match(undated, end)
        other = _NUMBER.match(undated, on.end()) if on else None
        if other and other.group().strip() and _rises(number.group(), other.group()):
            end = other.end()
            start = between.start() if between else start
        number_end = end
        if measure:
            start, end = _measured(sentence, start, end)
        found.append((start, end, sentence[start:end].strip(), number_end))
    return found


def _change_end(sentence: str, numbers: list[re.Match], at: int, last: int) -> int:
    """Where a change or level said in ``numbers[at]`` to ``numbers[last]``
    ends (:func:`_changed_by`): a range ("by 3 to 4 percent") with its
    last number, one measure in two units ("by 2 ft 6 in to 12 ft") with
    its first number, before its units.

    >>> s = "by 3 to 4 percent to 9,700, by 2 ft 6 in to 12 ft"
    >>> numbers = list(_NUMBER.finditer(s))
    >>> s[3:_change_end(s, numbers, 0, 1)], s[31:_change_end(s, numbers, 3, 4)]
    ('3 to 4 percent', '2')
    """
    end = numbers[at].end()
    return end if _measure_end(sentence, end) >= numbers[last].end() else numbers[last].end()


def _measure_end(sentence: str, end: int) -> int:
    """Where a measure whose number ends at ``end`` ends: after its unit
    (:data:`_UNIT`) and a smaller second one ("6 ft 2 in", "2 hours 30
    minutes": :data:`_SECOND_UNIT`, :data:`_INCHES`); ``end`` without a unit.

    >>> s = "6 ft 2 in, 2 hours 30 minutes, 5 years 3 in a row, 39 plays"
    >>> [s[at:_measure_end(s, at + len(n))] for at, n in ((0, "6"), (11, "2"), (31, "5"), (51, "39"))]
    ['6 ft 2 in', '2 hours 30 minutes', '5 years', '39']
    """
    unit = _UNIT.match(sentence, end)
    if not unit:
        return end
    second = _SECOND_UNIT.match(sentence, unit.end()) or _FEET.search(unit.group()) and _INCHES.match(sentence, unit.end())
    return second.end() if second else unit.end()


def _measured(sentence: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) of a measure whose number or range spans ``start`` to
    ``end``: with its unit after (:func:`_measure_end`) and how near it is
    said before (:data:`_APPROXIMATE`: "about 3 hours").

    >>> s = "It takes about 2 hours 30 minutes."
    >>> s[slice(*_measured(s, 15, 16))]
    'about 2 hours 30 minutes'
    """
    near = _APPROXIMATE.search(sentence, 0, start)
    return near.start() if near else start, _measure_end(sentence, end)


def _changed_by(undated: str, numbers: list[re.Match], at: int, between: bool, near: bool = False) -> int | None:
    """After a verb of change and "by" (:data:`_FROM`), the index in
    ``numbers`` of the change's last number when a level follows it with
    "to", else None: ``at`` ("by 5,000 to 20,000"), or its range partner
    ("by 3-4% to 9,700", "by 3 to 4 percent to 9,700", with ``between``
    before it "by between 3 and 4 percent to 9,700").

    A pair said how near (``near``: "by about 300 to 400 seats", "by
    about 3% to 5%") whose second number is less than twice the first is
    a range of change: a hedge spans a range, and a level so near the
    change is unlikely; a level far from it ("by about 5,000 to 20,000")
    is likely. A scale word on the second number only is the pair's
    ("by about 1.5 to 2 million": 1.5 million; "by about 500 to 2
    million" is no pair). Without the hedge "by 3% to 5%" stays the
    change and the level. A change in two units ("by 2 ft 6 in to 12
    ft") ends with its second number.

    >>> s = "It fell by 3-4% to 9,700, by 5 to 9,000 and by 2 to 3 percent to 8,000; it fell by 2 or more."
    >>> numbers = list(_NUMBER.finditer(s))
    >>> [_changed_by(s, numbers, at, False) for at in (0, 3, 5, 8)]
    [1, 3, 6, None]
    >>> s = "by 300 to 400 seats, by 5,000 to 20,000, by 3% to 5%, by 1.5 to 2 million, by 500 to 2 million"
    >>> numbers = list(_NUMBER.finditer(s))
    >>> [_changed_by(s, numbers, at, False, near=True) for at in (0, 2, 4, 6, 8)], _changed_by(s, numbers, 4, False)
    ([None, 2, None, None, 8], 4)
    >>> s = "by 2 ft 6 in to 12 ft, by 1 hour 30 minutes"
    >>> numbers = list(_NUMBER.finditer(s))
    >>> [_changed_by(s, numbers, at, False) for at in (0, 4)]
    [1, None]
    """
    if at + 1 >= len(numbers):
        return None
    number, following = numbers[at], numbers[at + 1]
    measure_end = _measure_end(undated, number.end())
    if measure_end >= following.end():
        # One change in two units ("by 2 ft 6 in to 12 ft", :func:`_measure_end`).
        return at + 1 if at + 2 < len(numbers) and _UNIT_TO.fullmatch(undated, measure_end, numbers[at + 2].start()) else None
    on = (_BETWEEN_AND if between else _RANGE_ON).match(undated, number.end())
    paired = on is not None and on.end() == following.start() and _rises(number.group(), following.group())
    level = at + 2 < len(numbers) and _UNIT_TO.fullmatch(undated, following.end(), numbers[at + 2].start())
    if level and paired:
        return at + 1
    low, high = _value(number.group()), _value(following.group())
    scales = [_WORD_SCALE[word] for word in _number_words(following.group()) if word in _WORD_SCALE]
    if low is not None and scales and _WORD_SCALE.keys().isdisjoint(_number_words(number.group())):
        low *= scales[-1]
    if near and paired and low is not None and high is not None and low < high < 2 * low:
        return None
    return at if _UNIT_TO.fullmatch(undated, number.end(), following.start()) else None


def _in_units(sentence: str, number: re.Match) -> bool:
    """Whether a number is said with its unit or scale: a percent ("3%",
    "5 percent"), "thousand" and the like, or one of :data:`_UNITS` after
    it ("30 centimetres"). "By 3 to 5 percent" with the unit on the second
    number only is a range of change; "by 5,000 to 20,000" the change and
    then the level.

    >>> s = "3 to 5 percent, 12 to 15 thousand, 30 to 60 cm, 5,000 to 20,000"
    >>> [_in_units(s, m) for m in _NUMBER.finditer(s)]
    [False, True, False, True, False, True, False, False]
    """
    return _scaled(number.group()) or _UNIT.match(sentence, number.end()) is not None


def _a_level_in_units(sentence: str, number: re.Match) -> bool:
    """Whether a number is said in its unit as a level, not as where or
    how big something is (:data:`_POSITION_AFTER`): "65 mph" and "16
    years" are levels, "800 metres above sea level" and "40 miles away"
    places.

    >>> s = "from 55 to 65 mph north, from 500 to 800 metres above sea level, from 30 to 40 miles away, 10 km north"
    >>> [_a_level_in_units(s, m) for m in _NUMBER.finditer(s)]
    [False, True, False, False, False, False, False]
    """
    unit = _UNIT.match(sentence, number.end())
    return _scaled(number.group()) or unit is not None and not (
        _LENGTH.fullmatch(unit.group()) and _POSITION_AFTER.match(sentence, unit.end()))


def _scaled(number: str) -> bool:
    """Whether a :data:`_NUMBER` match says its scale: a percent or points
    (:data:`_POINTS`) or "thousand" and the like, the part of its unit a
    count keeps (:func:`_in_units`).

    >>> [_scaled(n) for n in ("3%", "5 per cent", "5 percentage", "2 percentage-points", "12 thousand", "$5", "30")]
    [True, True, True, True, True, False, False]
    """
    words = _number_words(number)
    return ("%" in number or not {"percent", "percentage", "cent"}.isdisjoint(words)
            or _SAYS_POINTS.search(number) is not None or not _WORD_SCALE.keys().isdisjoint(words))


# "X is a … by Y": the lead of a work's article names its maker after
# "by", a few words after the work's kind ("an Italian narrative poem by
# Dante Alighieri", "a ballet … by the Russian composer Igor Stravinsky").
# Six words hold a kind with its describing words ("a ballet and orchestral
# concert work": five); further on, "by" belongs to a later clause.
_KIND_WORDS = 6
# Four words after "by" hold a maker's description ("the Russian composer");
# a name further on is someone else's.
_MAKER_WITHIN = 4
_MADE_BY = re.compile(rf"^\s*(?:the\s+)?(?P<work>.+?)\s+(?:is|was)\s+(?:a|an|the)\s+(?P<kind>(?:[\w'’-]+\s+){{0,{_KIND_WORDS}}}?)"
                      r"by\s+(?P<rest>.*)$", re.IGNORECASE)
# The verbs that ask who made a work, each with the kinds of work it makes
# (an empty set: any kind). Other verbs ask for someone else: the lead's
# "by" names the author, not who translated, illustrated, published or
# directed it ("Who directed Frankenstein?" is not the novel's author).
_MAKING_VERBS = {
    "wrote": "poem novel novella book play story essay epic treatise saga tragedy comedy",
    "authored": "poem novel novella book play story essay epic treatise saga tragedy comedy",
    "composed": "ballet symphony opera concerto sonata song cantata oratorio mass requiem suite quartet",
    "painted": "painting portrait fresco mural",
    "sculpted": "sculpture statue",
    "created": "", "designed": "",
}
_MAKING_VERBS = {verb: frozenset(kinds.split()) for verb, kinds in _MAKING_VERBS.items()}
_ALL_KINDS = frozenset().union(*_MAKING_VERBS.values())
_MAKING = re.compile(rf"^\s*who\s+(?P<verb>{'|'.join(_MAKING_VERBS)})\b", re.IGNORECASE)
# A maker named past these made something else the work comes from ("a film
# based on the novel by …", "adapted from", "translated by", "a setting by").
_FROM_ANOTHER = re.compile(r"\b(?:based|adapted|translated|arranged|set|setting|after)\b", re.IGNORECASE)


def made_by(question: str, sentence: str, title: str = "") -> str | None:
    """The maker a sentence opening "<title> is a … by <name>" gives a
    question for who did something to that title's subject ("Who wrote
    the Divine Comedy?"): the first name within four words of "by" that
    is no people's word; else None. Only for the article's own subject
    that the question names whole, and only for a doer question ("Who
    wrote …?", not "Who was …?"): "by" after another noun is anyone's.

    >>> made_by("Who wrote the Divine Comedy?", "The Divine Comedy is an Italian narrative poem by Dante Alighieri, "
    ...         "begun c. 1308.", "Divine Comedy")
    'Dante Alighieri'
    >>> print(made_by("Who composed it?", "The Rite of Spring is a ballet by the Russian composer Igor Stravinsky.",
    ...               "The Rite of Spring"))
    None
    >>> made_by("Who composed The Rite of Spring?", "The Rite of Spring is a ballet by the Russian composer Igor Stravinsky.",
    ...         "The Rite of Spring")
    'Igor Stravinsky'
    >>> print(made_by("Who translated the Divine Comedy?", "The Divine Comedy is a poem by Dante Alighieri.", "Divine Comedy"))
    None
    """
    making = _MAKING.match(asked_from(question))
    if not making:
        return None
    subject = without_bracket(title)
    asked = set(tokens(question, "rouge"))
    own = set(tokens(subject, "rouge")) - {"the", "a", "an"}
    match = _MADE_BY.match(sentence)
    if not (own and own <= asked and match and set(tokens(match.group("work"), "rouge")) - {"the", "a", "an"} == own):
        return None
    kind = set(tokens(match.group("kind"), "rouge"))
    fits = _MAKING_VERBS[making.group("verb").lower()]
    # "Who composed Ode to Joy?" of "a poem by Friedrich Schiller": a kind
    # another verb makes is not what the question's verb made.
    if _FROM_ANOTHER.search(match.group("kind")) or fits and kind & _ALL_KINDS and not kind & fits:
        return None
    rest = match.group("rest")
    for name in _NAME.finditer(rest):
        if len(rest[: name.start()].split()) > _MAKER_WITHIN:
            return None
        text = _name_at(name)
        if text and not peoples_word(text) and not _names_one_of(text, question):
            return text
    return None


# "Who discovered X?" (also "Who first discovered X?"): X, the words asked
# for. A clause ("who discovered that …", "… how …") asks for no thing.
_DISCOVERY_ASKED = re.compile(r"^\s*who\s+(?:first\s+)?discovered\s+(?!(?:that|how|what|why|when|where|which)\b)"
                              r"(?P<what>[^?.!]+?)\s*[?.!]?\s*$", re.IGNORECASE)
# The words that say the one a sentence is about found something: "she
# discovered", "his discovery of", "for the discovery of" (a prize's
# citation, "[for]" as a quotation marks its word), "credited with
# discovering", "the discoverer of".
_DISCOVERED = re.compile(r"\b(?:discovered|discovering|(?:co-)?discovery\s+of|(?:co-)?discoverer\s+of)\s+",
                         re.IGNORECASE)
# The words a discovery's subject may stand past before its X: none that
# say the X is part of something else ("isotopes of radium", "the structure
# of DNA" is no discovery of radium or DNA).
_DISCOVERY_GAP = 2
# ... or past the others found with it, listed before it ("the elements
# radium and polonium").
_DISCOVERY_LIST = 2
_NOT_IN_GAP = frozenset("of in on at from by with for to into about between within isotope isotopes structure "
                        "structures role cause causes source sources properties property effect effects use uses "
                        "function mechanism nature existence".split())
# What may follow the X found: the end of a clause or a word that opens
# another ("radium in 1898", "penicillin and its curative effect"); a
# noun after it makes X a word of another thing ("radium isotopes", "the
# electron neutrino").
_AFTER_DISCOVERY = frozenset("and in at by with while when during from on which who as after for through "
                             "together along".split())
# The subject a sentence may open with, its article's person: a pronoun,
# or a word of the title ("Fleming", "Curie"), after a lead-in of time or
# place ("In 1898, she …").
_PERSON_PRONOUNS = frozenset({"he", "she", "his", "her"})
_SHARED_SUBJECT = re.compile(r"\s*[^\W\d_][\w'’-]*(?:\s+[A-Z][\w'’-]*)*\s*(?:,\s*[A-Z]|and\s)")


def discovery_asked(question: str) -> str | None:
    """What a "Who discovered X?" question asks the discoverer of (X, its
    "the" left out), or None for another question.

    >>> [discovery_asked(q) for q in ("Who discovered radium?", "Who first discovered the electron?",
    ...  "Who discovered that the Earth is round?", "Who invented the telephone?", "When was radium discovered?")]
    ['radium', 'electron', None, None, None]
    """
    match = _DISCOVERY_ASKED.match(asked_from(question))
    if not match:
        return None
    what = re.sub(r"^(?:the|a|an)\s+", "", match.group("what").strip(), flags=re.IGNORECASE)
    return what or None


def discovered_by(question: str, sentence: str, title: str) -> str | None:
    """The person ``title`` names (its bracket left out) when ``sentence``
    of that person's own article says he or she discovered what a "Who
    discovered X?" question asks (:func:`discovery_asked`): the sentence
    opens with its subject (he, she, his, her, or a word of the title,
    after a lead-in such as "In 1898,") and says "discovered X", "the
    discovery of X", "discovering X" or "the discoverer of X", X whole
    and no part of another thing. Else None. Whether the article is a
    person's is the caller's to know (its description's lifespan).

    >>> q = "Who discovered radium?"
    >>> discovered_by(q, 'She won the 1911 Nobel Prize in Chemistry "[for] the discovery of the elements '
    ...               'radium and polonium".', "Marie Curie")
    'Marie Curie'
    >>> [discovered_by(q, s, "Otto Hahn") for s in ("Hahn discovered several isotopes of radium.",
    ...  "He discovered radium isotopes.", "Einstein praised the discovery of radium.",
    ...  "Radium was discovered by the Curies.", "He discovered radium.")]
    [None, None, None, None, 'Otto Hahn']
    >>> print(discovered_by("Who discovered nuclear fission?", "Hahn, Meitner and Strassmann discovered nuclear fission.",
    ...                     "Otto Hahn"))
    None
    >>> discovered_by("Who discovered DNA?", "She contributed to the discovery of the structure of DNA.", "Rosalind Franklin")
    >>> discovered_by("Who discovered penicillin?", "In 1928, Fleming discovered penicillin in London.",
    ...               "Alexander Fleming (physician)")
    'Alexander Fleming'
    """
    what = discovery_asked(question)
    if not what or not title:
        return None
    person = without_bracket(title)
    own = {word.lower() for word in re.findall(r"[^\W\d_][\w'’-]*", person) if word[0].isupper()}
    rest = _SENTENCE_LEAD_IN.sub("", sentence, count=1)
    first = re.match(r"\s*([^\W\d_][\w'’-]*)", rest)
    if not first or not (first.group(1).lower() in _PERSON_PRONOUNS or re.sub(r"['’]s$", "", first.group(1)).lower() in own):
        return None
    # Several found it together ("Hahn, Meitner and Strassmann discovered
    # …", "He and his student discovered …"): no one of them is the answer.
    if _SHARED_SUBJECT.match(rest):
        return None
    asked = re.findall(r"[\w'’-]+", what.lower())
    for found in _DISCOVERED.finditer(rest):
        # A relative clause ("Curie, who discovered radium") is another's.
        if re.search(r"\b(?:who|which|that)\s+(?:\w+\s+)?$", rest[: found.start()], re.IGNORECASE):
            continue
        words = re.findall(r"[\w'’-]+|[^\w\s]", rest[found.end():])
        at = 1 if words and words[0].lower() in ("the", "a", "an") else 0
        for gap in range(_DISCOVERY_GAP + _DISCOVERY_LIST + 1):
            between = [w.lower() for w in words[at: at + gap]]
            content = [w for w in between if w not in ("and", ",")]
            if not all(w in ("and", ",") or w.isalpha() and w not in _NOT_IN_GAP for w in between) or (
                    len(content) > _DISCOVERY_GAP + (_DISCOVERY_LIST if len(content) < len(between) else 0)):
                break
            if not all(w == "," or w.islower() for w in words[at: at + gap]):
                break
            if [w.lower() for w in words[at + gap: at + gap + len(asked)]] == asked:
                after = words[at + gap + len(asked): at + gap + len(asked) + 1]
                if not after or not after[0][0].isalnum() or after[0].lower() in _AFTER_DISCOVERY:
                    return person
                break
    return None


# A count or amount asked ("How many titles …?", "How much of the vote …?")
# is no year said as a date ("for a seventh time in 2005"): the year
# fallback below keeps no bare year after a word that dates it.
_COUNT_ASKED = re.compile(r"how\s+(?:many|much)\b", re.IGNORECASE)
# The letters that make a number an ordinal ("23rd", "1st", "4th").
_ORDINAL_END = re.compile(r"(?:st|nd|rd|th)\b", re.IGNORECASE)
# A number's noun after it: the thing it counts ("50 years").
_COUNTS_ANOTHER = re.compile(r"\s+(?!(?:" + "|".join(sorted(READER_STOPWORDS, key=len, reverse=True)) + r")\b)[a-z]+\b")
# Nor is the year that names an event ("the 2026 World Cup", read for "How
# many World Cups …?" though it stands before the word counted) a count.
_NAMED_EVENT_YEAR = re.compile(r"(?<=\bthe\s)\d{4}\s+[A-Z]")
# A year that starts or ends a span of time ("from 2009 to 2017", "between
# 1901 and 1909") dates too: "How many terms did Barack Obama serve as the
# 44th president?" is not answered "2009" once the ordinal is refused.
_DATED_BEFORE = re.compile(r"\b(?:(?:in|since|until|till|during|from|between)\s+"
                           r"|(?:from|between)\s+\d{4}\s*(?:to|and|until|till|through|[-–])\s*)$", re.IGNORECASE)
# "How old was X when …?" / "… at his death?": the age of the one named
# (the words between, ``asked``).
_AGE_OF_SOMEONE = re.compile(r"^how\s+old\s+(?:was|were|is|are)\s+(?P<asked>\S.*?)\s+(?:when|at)\b", re.IGNORECASE)
# Another person named as kin or company of the one asked about ("His
# daughter Ada died aged 36"); the gendered kin words besides.
_OTHER_PERSON_NOUNS = frozenset(" ".join(KIN_BY_GENDER.values()).split()) | frozenset(
    "child children parent parents sibling siblings cousin spouse partner twin friend lover mistress "
    "teacher pupil student rival colleague companion".split())
# The words that may open a sentence's subject before its noun ("His
# elder daughter …", "The poet's young wife …").
_SUBJECT_OPENERS = frozenset("his her their its the a an one only elder eldest younger youngest older oldest young "
                             "first second third late".split())
# A lead-in before the subject ("In December 1791, Mozart died …").
_SENTENCE_LEAD_IN = re.compile(r"^\s*(?:in|on|at|after|by|during|before|when|while|following)\b[^,]{0,40},\s*", re.IGNORECASE)


def _age_of_another(question: str, sentence: str) -> bool:
    """Whether ``sentence``, read for how old the person ``question`` names
    was, gives the age of their kin or company: its subject holds such a
    noun ("His daughter Ada died aged 36", "Mozart's father Leopold …").
    Only that: a subject named otherwise may be the person under another
    name ("Samuel Clemens died … aged 74" for Mark Twain), and a
    sentence's capitalised first word is no one ("According to his doctor,
    Byron died aged 36").

    >>> q = "How old was Lord Byron when he died?"
    >>> [_age_of_another(q, s) for s in ("His daughter Ada died aged 36 of cancer.",
    ...  "Byron died at Missolonghi, Greece, aged 36.", "He died aged 36.", "Lord Byron's daughter Ada died aged 36.",
    ...  "In 1824, George Gordon Byron died aged 36.", "According to his doctor, Byron died aged 36.")]
    [True, False, False, True, False, False]
    >>> _age_of_another("How old is the oldest tree?", "Its neighbour Methuselah is 4,850 years old.")
    False
    >>> _age_of_another("How old was Lord Byron's daughter when she died?", "His daughter Ada died aged 36.")
    False
    >>> _age_of_another("How old was he when his father died?", "His father died in 1850 when he was 12.")
    False
    >>> [_age_of_another(q, "Her husband Albert died aged 42.") for q in (
    ...  "How old was Queen Victoria when her husband died?", "How old was Queen Victoria when her son died?")]
    [False, True]
    """
    asked = _AGE_OF_SOMEONE.match(asked_from(question).strip())
    # A question for someone's kin ("How old was Lord Byron's daughter when
    # she died?") asks about the one its sentences name as such; a kin word
    # after "when" ("… when her husband died?") does not.
    if not asked or _OTHER_PERSON_NOUNS & set(tokens(asked.group("asked"), "rouge")):
        return False
    # The kin whose event the question dates ("How old was he when his
    # father died?") may be the sentence's subject: "His father died when he was 12".
    dated = _OTHER_PERSON_NOUNS & set(tokens(asked_from(question)[asked.end():], "rouge"))
    rest = _SENTENCE_LEAD_IN.sub("", sentence, count=1)
    # The subject's names as the kernel reads them, its first word included
    # ("Mozart's father"): they only lead to the kin noun, never count alone.
    named = {word for run in name_runs(rest, first=True) for word in run}
    for word in re.findall(r"[^\W\d_][\w'’.-]*", rest):
        bare = re.sub(r"\.$", "", word)
        plain = re.sub(r"['’]s?$", "", bare).lower()
        if plain in _OTHER_PERSON_NOUNS:
            return plain not in dated
        if plain not in _SUBJECT_OPENERS and bare not in named:
            return False
    return False


def short_span(kind: str, question: str, sentence: str, title: str = "", *, referent: str = "",
               known: dict[str, str] | None = None) -> str | None:
    """The span of ``sentence`` that answers a ``kind`` question, or None.

    The span next to the question's own words (those that do not name the
    passage's subject) wins; a count followed by the thing counted comes
    first. A sentence with none of those words gives no span. A sentence
    about a person that starts "She ..." names her only in ``referent``
    (the name an earlier sentence of its passage opened with, see
    :func:`referents`) or, without one, its passage's ``title``: that is
    the name a "who" question gets. A pasted document's title ("your
    text") names no one, so the referent comes first. ``known`` gives the
    sex of names the sentence's passages say elsewhere (:func:`kin_said`).

    >>> short_span("date", "When did Ada Lovelace die?", "She died on 27 November 1852 in London.")
    '27 November 1852'
    >>> short_span("date", "When did Queen Victoria die?", "Victoria was Queen from 20 June 1837 until her death in 1901.", "Queen Victoria")
    '1901'
    >>> short_span("number", "How many children did she have?", "In 1838 she had three children.")
    'three'
    >>> short_span("number", "How high is Mount Everest?", "Mount Everest is 8,848 metres high.")
    '8,848 metres'
    >>> short_span("number", "How many people live in the Greater Tokyo Area?",
    ...            "The Greater Tokyo Area, which includes parts of six prefectures, has 33 million residents.", "Tokyo")
    '33 million'
    >>> short_span("name", "Who was Ada Lovelace's father?", "Her father was the poet Lord Byron.")
    'Lord Byron'
    >>> short_span("name", "Who wrote the notes?", "She wrote the notes for Babbage.", title="Ada Lovelace")
    'Ada Lovelace'
    >>> short_span("name", "Who did Ada Lovelace work with?", "She was known for work on Charles Babbage's computer.")
    'Charles Babbage'
    >>> short_span("name", "Who invented the telephone?", "Alexander Graham Bell was a Scottish-born inventor of the "
    ...            "telephone.", title="Alexander Graham Bell")
    'Alexander Graham Bell'
    >>> print(short_span("date", "When did Napoleon die?", "Napoleon was Emperor from 18 May 1804 until 1814.", "Napoleon"))
    None
    >>> won = "The reigning champion is Spain, who won the 2026 World Cup."
    >>> short_span("name", "Who won the 2026 World Cup?", won)
    'Spain'
    >>> print(short_span("name", "Who won the 2030 World Cup?", won))
    None
    """
    if kind not in ("date", "number", "name"):
        raise ValueError(f"unknown answer kind {kind!r}")
    # A year the question names and the sentence does not: the sentence is
    # about another time ("Who won the 2030 World Cup?" got "Spain" from
    # "… Spain, who won … the 2026 World Cup"), and only the whole sentence
    # shows the reader that.
    if set(_A_YEAR.findall(question)) - set(re.findall(r"\b\d{4}\b", sentence)):
        return None
    near = _relation_words(question, sentence, f"{title} {referent}")
    others = set()
    if kind == "name":
        cast = cast_span(question, sentence)
        if cast:
            return cast
        holder = nickname_holder(question, sentence, referent or without_bracket(title))
        if holder:
            return holder
        # Parents and children are said either way round, without the
        # question's word ("the son of Zeus" for his children): the kin
        # phrases decide, before the nearness of the question's words.
        kin = kin_said(question, sentence, title, referent, known)
        if kin is None:
            return None
        if kin[0]:
            return kin[0]
        others = kin[1]
    # A sentence without the question's own words may be about something
    # else ("Emperor from 18 May 1804" for "When did he die?"): the whole
    # sentence says more than a guessed span.
    unsure = near is None
    near = near or []
    if kind == "date":
        return None if unsure else _nearest(_spans(_DATE.finditer(sentence)), near, sentence)
    if kind == "number":
        # An age asked of a person is theirs: "How old was Lord Byron when
        # he died?" is not answered from "His daughter Ada died aged 36".
        if _age_of_another(question, sentence):
            return None
        asked = _asked(question)
        # The day and year of a date are not the count or age asked for.
        # A bare number is left to the year test below ("154 sonnets" is no date).
        # Blanks of the same length keep the offsets the sentence's.
        undated = _DATE.sub(lambda m: m.group() if m.group().isdigit() else " " * len(m.group()), sentence)
        spans = [m for m in _NUMBER.finditer(undated) if m.group().strip() and not set(tokens(m.group(), "rouge")) <= asked]
        # A number in brackets after a number and its unit restates it in other
        # units: "7,088 kilometers (4,404 mi) long" is 7,088 long, the article's
        # own figure, though "4,404" sits nearer "long".
        spans = [m for m in spans if not _RESTATED.search(undated, 0, m.start())] or spans
        # An ordinal's number ("the 23rd edition") ranks, it counts nothing:
        # "How many World Cups has Spain won?" was answered "23" by "… won
        # their second title at the 23rd edition", and "How many islands
        # …?" "26" by "the 26th-largest island …, and the surrounding 1000
        # islands" (its count a bare four digits, read as a year while
        # another number stood). A sentence that ranks gives no count of
        # another thing (below). One before the very thing
        # counted counts it up to then ("after the 33rd performance" for how
        # many performances). Only for a count asked: "What place did she
        # finish?" may be read from "the 2nd".
        ranked = False
        if _COUNT_ASKED.match(asked_from(question).strip()):
            counting = _counted(question)
            kept = [m for m in spans if not (_ORDINAL_END.match(undated, m.end()) and not any(
                same_word(w) in counting for w in tokens(undated[m.end():], "rouge")[1:2]))]
            ranked, spans = len(kept) < len(spans), kept
        # A bare four-digit number is usually a year, not the count asked for.
        # Nor is it ever someone's age at a time ("How old was Anne Frank when
        # she died?" is not answered "1945").
        # Nor is a year said as a date ("in 2005") the count or amount asked:
        # "How many times did he win the Tour?" is not answered "2005" by
        # "In 2005 he won it for a seventh time" (a year said as a count,
        # "1500 inhabitants", stays).
        plain = asked_from(question).strip()
        counted_asked = _COUNT_ASKED.match(plain) is not None
        counts = [m for m in spans if not _A_YEAR.fullmatch(m.group().strip())] or (
            [] if _AGE_OF_SOMEONE.match(plain) else
            [m for m in spans if not (counted_asked and (_DATED_BEFORE.search(sentence, 0, m.start())
                                                         or _NAMED_EVENT_YEAR.match(sentence, m.start())))])
        counted = _counted(question)
        quantities = _quantities(sentence, undated, counts, _MEASURE_ASKED.match(plain) is not None,
                                 _change_asked(question), _START_ASKED.search(question) is not None,
                                 frozenset(_A_YEAR.findall(question)))
        named = [q for q in quantities if any(same_word(w) in counted for w in tokens(sentence[q[3]:], "rouge")[:2])]
        if named:
            return named[0][2]
        # A sentence that ranks ("popes in the 11th and 12th centuries …
        # nearly 50 years of conflict") gives no count asked beside another
        # thing counted: the number nearest the words is another's. One
        # said bare ("a population of 639,111 at the 2020 census") stays.
        if ranked:
            quantities = [q for q in quantities if not _COUNTS_ANOTHER.match(sentence, q[1])]
        return None if unsure else _nearest([q[:3] for q in quantities], near, sentence)
    if unsure:
        return None
    candidates = [span for span in _names(sentence, question) if span[2] not in others and not _describes(span, sentence)]
    # A name that repeats one the question names is whom it asks about,
    # not for: "Who called Twain the father of American literature?" is
    # not answered "Mark Twain" while the sentence names William Faulkner.
    candidates = [span for span in candidates if not _names_one_of(span[2], question)] or candidates
    # Someone's parent or child is named by a kin phrase or an owned kin
    # word (above), never by nearness: "He and his brothers, Zeus …"
    # answered "Who was the father of Zeus?" with Hades.
    if _kin_question(question):
        return None
    subject = without_bracket(title)
    pronoun_did_it = _DOER.match(asked_from(question)) and any(_PRONOUN_BEFORE.search(sentence, 0, m.start()) for m in near)
    if _PRONOUN_START.match(sentence) or pronoun_did_it:
        # A question that names whom "he" stands for asks about him, not for
        # him: "Who did Tesla work for?" is not answered "Nikola Tesla".
        if referent and not set(tokens(referent, "rouge")) & _asked(question):
            return referent
        if not referent and title and not (set(tokens(title, "rouge")) <= _asked(question) or _names_one_of(title, question)):
            return subject
    # A sentence that opens with its article's subject, asked about by a
    # question that names none of it, is about that subject: "Who invented
    # the telephone?" is answered by "Alexander Graham Bell was a
    # Scottish-born Canadian-American inventor…" with him, not with the
    # words next to "inventor".
    if subject and sentence.lstrip().lower().startswith(subject.lower()) and not set(tokens(subject, "rouge")) & _asked(question):
        return subject
    return _nearest(candidates, near, sentence)
