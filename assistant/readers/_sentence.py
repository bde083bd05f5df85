"""The extractive sentence reader: pick the answer sentence from the passages.

No SQuAD reader is installable here, so the reader ranks sentences: each
sentence of the top-k passages is scored by its embedding similarity to the
(rewritten) question (all-MiniLM-L6-v2), interpolated with its passage's BM25
score as QReCC interpolates reader and retriever scores.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Protocol, Sequence, runtime_checkable

import numpy as np

from ..encoders import CachedEncoder
from ..kernel import NO_STOP, READER_STOPWORDS, Answer, Passage, ReaderConfig, StopSignal, name_runs, name_words, names_numeral_one, tokens, with_stop, without_possessive
from ._events import (
    a_life,
    ancient_life,
    capital_asked,
    capital_of_another,
    capital_said,
    country_asked,
    country_by_adjective,
    country_named,
    countries_written,
    event_asked,
    event_date,
    event_named,
    event_said,
    range_end_missed,
    year_within,
)
from ._lifespan import holds_answer, lifespan, lived
from ._shapes import (
    _MEASURE_ASKED,
    QUOTES,
    answer_kind,
    article_names,
    asked_from,
    bare_lead,
    completes_lead,
    cast_spans,
    defines,
    discovered_by,
    discovery_asked,
    definition_subject,
    first_date,
    full_name,
    headcount_asked,
    headcount_said,
    headcount_span,
    kin_asked,
    kin_holder,
    kin_said,
    kind_asked,
    kind_span,
    lead_passage,
    listed_word,
    made_by,
    names_subject,
    of_kind_asked,
    opens_with_day,
    question_names,
    referents,
    says_kin,
    says_what_is_asked,
    sexes_said,
    short_span,
    subject_words,
    without_bracket,
)

__all__ = ["Reader", "SentenceReader", "split_sentences", "term_overlap", "NOT_FOUND"]

NOT_FOUND = "I could not find an answer to that in the collection."

# A sentence ends at . ! or ? followed by space and an upper-case letter, digit
# or quote; "e.g. the" and "St. Louis"-style abbreviations mostly survive
# because the next word is lower case or the split is harmless.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[A-Z0-9])")
# ...except after a title or an initial, which the name they begin follows:
# "Dr. Ellen Marsh", "St. Louis", "J. R. R. Tolkien". Split there, the reader
# answered "Who invented the frobnitz?" with "Dr".
_BEFORE_A_NAME = re.compile(
    r"(?:\b(?:Dr|Mr|Mrs|Ms|Mme|Prof|Sr|Jr|St|Ste|Mt|Ft|Gen|Col|Maj|Capt|Lt|Sgt|Adm|Cmdr|Gov|Sen|Rep|Rev|Fr|Hon|Pres|Messrs)"
    r"|(?<![\w.])[A-Z])\.$"
)

# ...nor after an abbreviation that a number follows: "Symphony No. 9",
# "Op. 27", "Vol. 2"; split there, "Who wrote the Symphony From the New
# World?" got "Symphony No".
_BEFORE_A_NUMBER = re.compile(r"\b(?:No|Nos|Nr|Op|Vol|Vols|Fig|Figs|pp|p|ch|Ch|art|Art|c|ca)\.$")


@runtime_checkable
class Reader(Protocol):
    """Reads an answer to ``question`` from ``passages``."""

    def read(self, question: str, passages: Sequence[Passage]) -> Answer: ...


# HTML-like markup (Natural Questions' pages keep theirs: "<Li> Kevin Kline
# as Maurice </Li>"): a block's tags end a sentence, as a full stop does, and a
# table cell's run into its row ("Created by Bruce Miller"). No tag is part of
# a sentence: a list without full stops read as one "sentence" of a whole
# cast, tags and all, and its answer showed them.
_BLOCK_TAG = re.compile(r"\s*</?(?:p|li|ul|ol|dl|dd|dt|tr|table|h[1-6]|div|br)(?:[\s_][^<>]*)?/?>\s*", re.IGNORECASE)
_CELL_TAG = re.compile(r"(?:\s*</?(?:td|th)(?:[\s_][^<>]*)?>\s*)+", re.IGNORECASE)


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (a light rule, no model); markup's blocks
    are split apart and its tags dropped.

    >>> split_sentences("Ada wrote notes. She died in 1852! Why? e.g. this.")
    ['Ada wrote notes.', 'She died in 1852!', 'Why? e.g. this.']
    >>> split_sentences("It was found by Dr. Ellen Marsh. J. R. R. Tolkien read it.")
    ['It was found by Dr. Ellen Marsh.', 'J. R. R. Tolkien read it.']
    >>> split_sentences('"Where are you going?" Mary asked. In "Where Is My Mind?" Black Francis sings.')
    ['"Where are you going?" Mary asked.', 'In "Where Is My Mind?" Black Francis sings.']
    >>> split_sentences("He wrote his Symphony No. 9 there. It was his Op. 95. He left.")
    ['He wrote his Symphony No. 9 there.', 'It was his Op. 95.', 'He left.']
    >>> split_sentences("<H2> Cast </H2> <Ul> <Li> Kevin Kline as Maurice </Li> <Tr> <Th> Created by </Th> <Td> Bruce Miller </Td> </Tr>")
    ['Cast', 'Kevin Kline as Maurice', 'Created by Bruce Miller']
    """
    return [sentence for block in _blocks(text) for sentence in _split_block(block)]


def _blocks(text: str) -> list[str]:
    """Text's blocks (paragraphs, list items, headings, table rows), tags dropped."""
    return [_CELL_TAG.sub(" ", block) for block in _BLOCK_TAG.split(text)]


# A table row's header cell: "<Th> Original release </Th> <Td> July 16 , 2017 </Td>".
_HEADER_CELL = re.compile(r"<th(?:[\s_][^<>]*)?>.*?</th>", re.IGNORECASE | re.DOTALL)
_DATA_CELL = re.compile(r"<td(?:[\s_][^<>]*)?>", re.IGNORECASE)
# A definition list's description opening: what the block before it is the label of.
_DESCRIPTION = re.compile(r"<dd\b", re.IGNORECASE)
_LABEL_OPENING = re.compile(r"\s*<(?:li|dt)\b", re.IGNORECASE)
# A description that points elsewhere ("Main article : Paris") is a note on
# the item above it, never its value.
# So does one wholly in brackets ("( see map below )"): an aside.
_POINTER_NOTE = re.compile(
    r"\s*(?:(?:main\s+articles?|see\s+also|further\s+information|further\s+reading|sources?|notes?|for\s+more)\b\s*:"
    r"|\([^()]*\)\s*$)",
    re.IGNORECASE)
# A question that says what the answer is not ("which songs were not
# written by Lennon") is restated by no label or field's name.
_NEGATED = re.compile(r"\b(?:not|never|except|other\s+than)\b|n['’]t\b", re.IGNORECASE)
# "no" is a stop word, yet a label that says it ("Countries with no army")
# restates only a question that does ("which countries have no army").
# "No." abbreviates number ("No. 1 in 1990").
_NO = re.compile(r"\bno\b(?!\s*\.)", re.IGNORECASE)
# What a question says there is none of ("no army"): a label that names it
# without "no" ("Countries with an army") lists the others. "no" before a
# word the label does not name is a name's ("albums by No Doubt").
_NO_WHAT = re.compile(r"\bno\s+([^\W\d_][\w'-]*)", re.IGNORECASE)
# A header that is a bare participle ("Founded", "Produced", "Born") over a
# date or a place says when or where a thing was done, not by whom:
# "Founded by" does. Over a name it may say who ("Owned | Jerry Jones"), and
# a field's name that only ends like one ("Seed | Roger Federer") is no
# participle.
_PARTICIPLE_HEADER = re.compile(r"\s*(?:[^\W\d_]+ed|written|born)\s*", re.IGNORECASE)
_IN_PLACE = re.compile(r"\b(?:in|at|near)\s+[A-Z]")
# A label names a field ("Most points in a quarter"); a longer item states.
LABEL_MAX_WORDS = 6
# "the father of the king": the field asked is the father, the king whose
# father it is; "what country is the capital of": the capital's value is
# the question's subject, and what it is the capital of is asked.
_OF_THE = re.compile(r"\bof\s+the\s+(?P<owner>.+)$", re.IGNORECASE)
_STRANDED_OF = re.compile(r"(?P<field>[\w'’]+)\s+of\W*$", re.IGNORECASE)
# A name's field is asked of its owner ("the name of the king" is the king's).
_NAME_FIELDS = frozenset({"name", "title"})


def _owner_terms(question: str) -> set[str]:
    """The terms of ``question`` that name what its answer is of or
    belongs to, not the answer's field: a table row so headed holds the
    question's subject ("King George VI" to "who was the father of the
    king") or the relation it asks the other end of ("Capital Ottawa" to
    "what country is the capital of").

    >>> sorted(_owner_terms("who was the father of the king")), sorted(_owner_terms("what country is the capital of"))
    (['king'], ['capital'])
    >>> _owner_terms("what is the name of the king"), _owner_terms("what is the total area of water")
    (set(), set())
    """
    stranded = _STRANDED_OF.search(question)
    if stranded:
        return _terms(stranded.group("field"))
    owner = _OF_THE.search(question)
    if not owner or not _terms(question[: owner.start()]) - _NAME_FIELDS:
        return set()
    return _terms(owner.group("owner")) - _terms(question[: owner.start()])


def answer_parts(text: str, question: str = "") -> list[str | None]:
    """Per sentence of ``text`` (as :func:`split_sentences` splits it), the
    part an answer keeps when the sentence is a label, not a statement:
    "" for a label whose value is the next sentence (a short list item or
    term a definition list's description follows, with no term the
    question lacks: "Most points in a quarter", then "37 by Klay
    Thompson"), a table row's data cells for a row whose header cell's
    terms are all in ``question`` ("Original release" of "Original release
    July 16 , 2017" for "when was it released": the field asked) and, to
    a number question, holds a number (to a who question, opens with no
    date and has a header that is no bare participle: "Founded" says
    when, "Founded by" who), None for any other sentence. A row
    whose header says more than the question names the entity (a season,
    a country) the question may ask for, and reads whole.

    >>> answer_parts("<Tr> <Th> Created by </Th> <Td> Bruce Miller </Td> </Tr> <P> It ran . </P>", "who created it")
    ['Bruce Miller', None]
    >>> answer_parts("<Tr> <Th> 2016 -- 17 </Th> <Td> Chelsea </Td> </Tr>", "who won the league in 2016")
    [None]
    >>> answer_parts("<Tr> <Th> Children </Th> <Td> Malia Sasha </Td> </Tr>", "how many children does he have")
    [None]
    >>> answer_parts("<Tr> <Th> Founded </Th> <Td> April 1 , 1976 </Td> </Tr>", "who founded the company")
    [None]
    >>> answer_parts("<Tr> <Th> Founded </Th> <Td> Spring 1976 </Td> </Tr> <Tr> <Th> Founded by </Th> <Td> Steve Jobs </Td> </Tr>",
    ...              "who founded the company")
    [None, 'Steve Jobs']
    >>> answer_parts("<Ul> <Li> Most points in a quarter </Li> </Ul> <Dl> <Dd> <Ul> <Li> 37 by Klay Thompson </Li> </Ul> </Dd> </Dl>",
    ...              "who scored the most points in a quarter")
    ['', None]
    >>> answer_parts("<Ul> <Li> Directed by Christopher Nolan </Li> </Ul> <Dl> <Dd> Produced by Emma Thomas </Dd> </Dl>",
    ...              "who directed the film")
    [None, None]
    >>> answer_parts("<Ul> <Li> Kevin Kline as Maurice </Li> <Li> Emma Watson as Belle </Li> </Ul>")
    [None, None]
    >>> answer_parts("<P> Its energy is : </P> <Dl> <Dd> E = mc2 </Dd> </Dl>")
    [None, None]
    >>> answer_parts("<Ul> <Li> The treaty was signed in 1648 . </Li> </Ul> <Dl> <Dd> See also : Westphalia </Dd> </Dl>")
    [None, None]
    >>> answer_parts("<Ul> <Li> Capital city </Li> </Ul> <Dl> <Dd> Main article : Paris </Dd> </Dl>")
    [None, None]
    >>> answer_parts("<Ul> <Li> Paris is the capital and largest city of France </Li> </Ul> <Dl> <Dd> c = 1 </Dd> </Dl>")
    [None, None]
    """
    parts: list[str | None] = []
    asked = _terms(question)
    kind = answer_kind(question)
    negated = bool(_NEGATED.search(question))
    owners = _owner_terms(question)
    denied = {term for word in _NO_WHAT.findall(question) for term in _terms(word)}
    tags = list(_BLOCK_TAG.finditer(text))
    edges = [0] + [at for match in tags for at in match.span()] + [len(text)]
    pieces = [(edges[i], edges[i + 1]) for i in range(0, len(edges), 2)]
    for at, (start, end) in enumerate(pieces):
        block = text[start:end]
        sentences = _split_block(_CELL_TAG.sub(" ", block))
        if not sentences:
            continue
        part: str | None = None
        following = next((i for i in range(at + 1, len(pieces)) if _split_block(_CELL_TAG.sub(" ", text[slice(*pieces[i])]))), None)
        # Only an item or a term labels: a paragraph's indented lines
        # after it (a formula, a quote) are its example, not its value.
        item = at > 0 and _LABEL_OPENING.match(tags[at - 1].group())
        # A label names; an item that ends as a sentence does ("The treaty
        # was signed in 1648 .") states, and so does a long one ("Paris is
        # the capital and largest city of France"): a note under it is no value.
        # A label restates the question: an item that says more than the
        # question asks ("Directed by Christopher Nolan" to "who directed
        # the film") is itself the answer, and the note under it an aside;
        # even one term more may be the value ("Highest score : 501").
        label = (item and not negated and len(sentences) == 1 and not re.search(r"[.!?]\W*$", sentences[0])
                 and len(sentences[0].split()) <= LABEL_MAX_WORDS and _terms(sentences[0]) <= asked
                 and (_NO.search(question) if _NO.search(sentences[0]) else not denied & _terms(sentences[0])))
        described = following is not None and _CELL_TAG.sub(" ", text[slice(*pieces[following])])
        if (label and described and _DESCRIPTION.search(text, end, pieces[following][0])
                and not _POINTER_NOTE.match(described) and _answers_kind(kind, asked, _split_block(described)[0])):
            part = ""
        elif len(sentences) == 1 and _HEADER_CELL.search(block) and _DATA_CELL.search(block):
            # A field's name, not a year or number ("2016 -- 17" is a season, the row's entity).
            header_text = " ".join(_CELL_TAG.sub(" ", c) for c in _HEADER_CELL.findall(block))
            header_terms = _terms(header_text)
            header = {t for t in header_terms if t.isalpha()}
            value = " ".join(_split_block(_CELL_TAG.sub(" ", _HEADER_CELL.sub(" ", block))))
            # The header is only a field's name when the question names all
            # of it: one that says more ("Most goals : Lionel Messi", "Lead
            # singer") holds the entity asked for, or names another field.
            # A who question's field is its doer's ("Founders", "Founded by"):
            # "Founded Spring 1976" says when, "Founded Garage in Los Altos"
            # where, and the row after it may say who.
            by_whom = kind != "name" or not (_PARTICIPLE_HEADER.fullmatch(header_text)
                                             and (first_date(value) is not None or _IN_PLACE.search(value)))
            owned = bool(header) and header <= owners
            if (asked & header and header_terms <= asked and not negated and by_whom and not owned
                    and _answers_kind(kind, asked, value)):
                part = value or None
        parts.extend([part] + [None] * (len(sentences) - 1))
    return parts


def _answers_kind(kind: str | None, asked: set[str], value: str) -> bool:
    """Whether a label's or a table row's ``value`` (:func:`answer_parts`)
    can answer a question of ``kind`` (:func:`answer_kind`) whose terms
    are ``asked``: to a number question one that holds a number and opens
    with no day ("Children Malia Sasha" is none; prose says "two
    daughters"; "Died 15 April 1912" says when), to a when question
    one with a date ("Place Waterloo , Belgium" is no time), to a who
    question one that opens with no date and has words ("Founded April
    1 , 1976", "Final 3 -- 1": the row after it may say who, "Founders
    …"; "37 by Klay Thompson" does), and none
    that the question names already ("Mayor Dieter Reiter" to "who was
    mayor before dieter reiter").

    >>> _answers_kind("name", {"mayor", "dieter", "reiter"}, "Dieter Reiter"), _answers_kind("name", {"produced"}, "1969")
    (False, False)
    >>> _answers_kind("date", {"place"}, "Waterloo , Belgium"), _answers_kind("name", {"spouse"}, "Michelle Robinson ( m. 1992 )")
    (False, True)
    >>> _answers_kind("number", {"people", "died"}, "15 April 1912"), _answers_kind("number", {"people", "died"}, "1517")
    (False, True)
    """
    # Its words, not a number: "7" answers "how many episodes are in season 7".
    said = {term for term in _terms(value) if not term.isdigit()}
    if said and said <= asked:
        return False
    if kind == "number":
        # "Died 15 April 1912" says when, not how many died.
        return bool(re.search(r"\d", value)) and not opens_with_day(value)
    if kind == "date":
        return first_date(value) is not None
    if kind == "name":
        return first_date(value.strip()) != 0 and bool(re.search(r"[^\W\d_]", value))
    return True


def _split_block(text: str) -> list[str]:
    """The sentences of text without block markup (see :func:`split_sentences`)."""
    text = text.strip()
    sentences, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        if _BEFORE_A_NUMBER.search(text, start, end.start()) and text[end.end()].isdigit():
            continue
        if not _BEFORE_A_NAME.search(text, start, end.start()):
            sentences.append(text[start : end.start()])
            start = end.end()
    sentences.append(text[start:])
    return [sentence.strip() for sentence in sentences if sentence.strip()]


def _terms(text: str) -> set[str]:
    """Content words, lower-cased, with a possessive "'s" and then a plural "s" stripped.

    Both in turn, so a name ending in "s" meets its possessive: "Paris's" and
    "Paris" are one term, as "Ada's" and "Ada" are.

    >>> sorted(_terms("What were Ada's father's books?"))
    ['ada', 'book', 'father']
    >>> sorted(_terms("What were Ada’s father’s books?"))
    ['ada', 'book', 'father']
    >>> _terms("Paris's nickname") & _terms("Paris is called the City of Light")
    {'pari'}

    A name's numeral "I" is a term, the pronoun is not: "World War I" is
    not "World War II".

    >>> sorted(_terms("When did World War I begin?")), sorted(_terms("World War II began, as I said."))
    (['begin', 'i', 'war', 'world'], ['began', 'ii', 'said', 'war', 'world'])
    """
    words = (without_possessive(w) for w in tokens(text, "term"))
    stems = {re.sub(r"s$", "", w) if len(w) > 3 else w for w in words}
    terms = {w for w in stems if w not in READER_STOPWORDS}
    # Only a text with the word "i" may hold the numeral: reading its names
    # costs more than the rest, and every candidate sentence comes here.
    return terms | {"i"} if "i" in stems and names_numeral_one(text) else terms


def term_overlap(question: str, title: str, sentence: str) -> float:
    """Share of the question's content words found in the sentence or its title.

    Sentence embeddings rank by topic: for "Who was Ada Lovelace's father?"
    they prefer "Ada Lovelace was an English mathematician" to "Her father was
    Lord Byron". Counting the question's words in title + sentence puts the
    father sentence first (3 of 3 words against 2 of 3).

    >>> term_overlap("Who was Ada Lovelace's father?", "Ada Lovelace", "Her father was Byron.")
    1.0
    >>> round(term_overlap("Who was Ada Lovelace's father?", "Ada Lovelace", "She was a writer."), 3)
    0.667

    A word's listed relative is its word ("born" and "birthplace", "die" and
    "death", :func:`listed_word`): "Who was born in Brindlemere?" counted
    "The town has a population …" as high as "… whose birthplace …". Their
    stems are not: counting Porter's stem here ("work" and "worked" too)
    cost the QReCC-over-SCAI run a turn. Only a sentence's "-ed" or "-ing"
    form of the question's own word counts (:func:`_base_forms`): "What is
    its nickname?" shared no term with "Nicknamed the City of Light". Not
    a name's ("Tarrow Motors Limited" says no "limit", "Peyton Manning" no
    "man"): only a lower-case word's, or the sentence's first word's when
    it is an "-ed" form no capitalised word follows (:func:`_opens_inflected`).

    >>> term_overlap("Who was born in Brindlemere?", "Brindlemere", "Its native's birthplace is a museum.")
    1.0
    """
    asked = _listed(_terms(question))
    said = _listed(_terms(f"{title} {sentence}"))
    words = re.findall(r"[\w'’]+", sentence)
    inflected = _terms(" ".join(word for at, word in enumerate(words) if word[:1].islower() or at == 0 and _opens_inflected(words)))
    said |= {base for word in inflected for base in _base_forms(word)} & asked
    return len(asked & said) / len(asked) if asked else 0.0


# Kinds a name does not say ("Kenya", not "Kenya Country"): see
# :func:`_overlap_sentence`. Not "state": a state is often named with its
# noun ("the U.S. state of Illinois").
_NAMED_WITHOUT_NOUN = frozenset({"country", "nation"})


def _overlap_sentence(question: str, sentence: str) -> str:
    """``sentence`` as :func:`term_overlap` counts its words for
    ``question``: for a "which country/nation …?" (:func:`kind_asked`),
    without the uses of that noun that name none, "the/this/that country"
    and a name that ends in it ("the Black Country"). The sentence that
    names the country says no "country" ("Lyon is a city in France"):
    counted, "It is the country's oldest city" ranked first for "Which
    country is Mombasa in?". Said of a country it still counts ("the most
    populous country", "than any other country" for "Which country has
    the most …?").

    >>> [_overlap_sentence("Which country is Tarrow in?", s) for s in (
    ...     "The country's oldest city.", "It borders the Lark Country.", "Ostria is the most populous country.")]
    [" 's oldest city.", 'It borders the  .', 'Ostria is the most populous country.']
    >>> _overlap_sentence("Which country music singer wrote Jolene?", "She is the country's best-known singer.")
    "She is the country's best-known singer."
    """
    kind = kind_asked(question)
    if kind not in _NAMED_WITHOUT_NOUN:
        return sentence
    return re.sub(rf"\b(?i:the|this|that)\s+{kind}\b|\b[A-Z][\w'’-]*\s+{kind.title()}\b", " ", sentence)


def _opens_inflected(words: list[str]) -> bool:
    """Whether a sentence's first word (of ``words``), capitalised only
    because it opens it, may be a verb's past form: "Nicknamed the City of
    Light, …", "Painted in 1890, …". An "-ing" word there is as often a
    name ("Manning", "Golding", "Redding", "Reading"), and one a
    capitalised word follows opens a name ("United States", "Limited
    Editions").

    >>> _opens_inflected(["Nicknamed", "the", "City"]), _opens_inflected(["Manning", "played"]), _opens_inflected(["United", "States"])
    (True, False, False)
    """
    return words[0].lower().endswith("ed") and not (len(words) > 1 and words[1][:1].isupper())


def _listed(terms: set[str]) -> set[str]:
    return {listed_word(term) for term in terms}


# A stem of one syllable that ends in one vowel and one consonant (not w,
# x or y, which never double): its own "-ed" or "-ing" doubles the consonant
# ("qu" is one consonant: "quipped").
_ONE_SHORT_SYLLABLE = re.compile(r"[^aeiouy]*(?:qu)?[aeiou][^aeiouwxy]")
# Words in "-ed" or "-ing" (as :func:`_terms` writes them) that are not
# made from the word their spelling gives: adjectives and nouns of their
# own ("rugged" is no "rug", "evening" no "even", "tidings" no "tide",
# "creed" no "Cree"). Only those whose false base is a word: "naked" or
# "thing" gives none. "Meaning" is "mean"'s: "What does revoked mean?" is
# answered by "…, meaning …"; and "mooring", "stocking" or "bunting" is
# its verb's as often as a noun of its own ("Its mooring was at the pier"
# answers "Where did the ship moor?"). The word is listed, not its false
# base, whose own forms are its ("dogging", "tided over").
_LOOKALIKES = frozenset(
    "rugged ragged dogged jagged wicked crooked wretched moped evening morning ceiling tiding pudding shilling herring"
    " creed tweed incoming middling whiting"
    .split()
)
# Of two bases that are both words, the one no form of the word is made
# from (key) goes where the one they are all made from (value) is given
# too: "united", "uniting" are "unite", not "unit"; "casting", "casted"
# "cast", not "caste". Spelling cannot tell these apart ("visited" is
# "visit", "ignited" "ignite"). "Overly" (no verb) goes always; "sing" and
# "singe" trade places by the ending ("sing ed"): "singed" is "singe"'s
# ("sing"'s is "sang"), "singing" "sing"'s ("singe"'s is "singeing").
_FALSE_BASES = {
    "unit": "unite", "premier": "premiere", "severe": "sever", "past": "paste", "suite": "suit", "caste": "cast",
    "overly": None, "sing ed": "singe", "singe ing": "sing",
}


def _base_forms(term: str) -> set[str]:
    """The words an "-ed" or "-ing" term may be made from, as :func:`_terms`
    writes them (a plural "s" off): "nicknamed" is "nickname", "worked"
    "work", "stopped" "stop", "carried" "carry", "naming" "name".

    A question asks with the base form (do-support: "What did she paint?",
    "What is its nickname?") where a passage tells the past ("She painted
    …", "Nicknamed the City of Light, …"); only that way round counts (see
    :func:`term_overlap`). A base under four letters is left out: "feed"
    is not "fee", nor "seed" "see", nor "died" "dy", unless a doubled
    consonant shows a short verb of three letters or more ("running":
    "run"; "adding" is no "ad"). A base that
    :func:`listed_word` writes as another word is left out too: "boring"
    is not "bore", which is "birth" (as "born" is) there.

    Spelling rules out some bases: a verb of one syllable that ends in one
    vowel and one consonant doubles it ("planned", "stripped"), so
    "planed" and "striped" are "plane" and "stripe", not "plan" and
    "strip" (nor "writing" "writ", "staring" "star"); and a doubled
    consonant after two vowels is no doubling ("earring" is not "ear"), nor
    one after a one-syllable word's vowel in "l" or "f" ("telling" is
    "tell", not "tel"); a stem in one "s" is a verb's "-se" ("pleased" is
    not "plea", "erased" not "era") unless "-us", "-ias" or "-ns" after one
    vowel ("focused", "biased", "lensed"). A
    word that only looks made from another word is listed (:data:`_LOOKALIKES`:
    "rugged" is no "rug", "evening" no "even"), and so is a false one of
    two bases that are both words (:data:`_FALSE_BASES`: "united" is
    "unite", not "unit"); one whose base would be no word ("naked",
    "hundred") meets no question's word anyway.

    >>> sorted(_base_forms("nicknamed")), "run" in _base_forms("running"), sorted(_base_forms("naming"))
    (['nicknam', 'nickname'], True, ['name'])
    >>> _base_forms("feed"), _base_forms("king"), _base_forms("nickname"), _base_forms("died"), _base_forms("boring")
    (set(), set(), set(), set(), set())
    >>> sorted(_base_forms("striped")), sorted(_base_forms("stripped")), "ear" in _base_forms("earring"), _base_forms("evening")
    (['stripe'], ['strip', 'stripp'], False, set())
    >>> sorted(_base_forms("united")), sorted(_base_forms("pleased")), sorted(_base_forms("telling")), sorted(_base_forms("stepped"))
    (['unite'], ['please'], ['tell'], ['step', 'stepp'])
    >>> sorted(_base_forms("biased")), sorted(_base_forms("staffed")), sorted(_base_forms("quipped")), sorted(_base_forms("singed"))
    (['bia', 'biase'], ['staff'], ['quip', 'quipp'], ['singe'])
    """
    match = re.fullmatch(r"(\w+?)(ed|ing)", term)
    if not match or term in _LOOKALIKES:
        return set()
    stem, ending = match.groups()
    # One syllable ending in one vowel and one consonant would have doubled it.
    forms = {stem + "e"} if _ONE_SHORT_SYLLABLE.fullmatch(stem) else {stem, stem + "e"}
    if ending == "ed" and stem.endswith("i"):
        forms.add(stem[:-1] + "y")
    # A verb ends in one "s" only after "u" ("focused"), "ia" ("biased") or
    # one vowel's "n" ("lensed"); otherwise the "s" is its "-se" ("pleased",
    # "lapsed", "teased", "cleansed" is no "clean").
    if re.search(r"[^s]s$", stem) and not re.search(r"(?:u|ia|[^aeiou][aeiou]n)s$", stem):
        forms.discard(stem)
    forms = {form for form in forms if len(form) >= 4}
    # A doubled consonant after one vowel is the short verb's ("running",
    # "stopped"); after one syllable, its "-e" word is none of its ("stepped"
    # is no "steppe"; "programmed" may be "programme"), and a doubled "l" or
    # "f" is the word's own: English writes those words with both ("telling"
    # is "tell", not "tel"; "gelled" loses "gel").
    short = stem[:-1]
    if len(short) >= 3 and stem[-1] == short[-1] and stem[-1] not in "aeiousy" and re.search(r"(?:[^aeiou]|qu)[aeiou].$", short):
        one_syllable = _ONE_SHORT_SYLLABLE.fullmatch(short) is not None
        if one_syllable:
            forms.discard(stem + "e")
        if not (stem[-1] in "lf" and one_syllable):
            forms.add(short)
    forms = {re.sub(r"s$", "", form) for form in forms}
    for form in set(forms):
        false = next((key for key in (form, f"{form} {ending}") if key in _FALSE_BASES), None)
        if false and _FALSE_BASES[false] in forms | {None}:
            forms.discard(form)
    return {form for form in forms if listed_word(form) == form}


def _asks(sentence: str) -> bool:
    """Whether a sentence is a question (it ends with a question mark,
    inside its closing quote or bracket: "„Darf ich?“", "«Puis-je ?»").

    >>> [_asks(s) for s in ("Can I renew it?", "She asked „Can I?“", "He said «Can I?»", "It is (sure?) fine.")]
    [True, True, True, False]
    """
    return sentence.rstrip(" )" + QUOTES).endswith("?")


def _with_title(title: str, sentence: str) -> str:
    return f"{title}: {sentence}" if title and title.lower() not in sentence.lower() else sentence


# Any word of finding something: what a sentence must say to answer "Who
# discovered X?" unless a person's article says it.
_DISCOVERY_WORD = re.compile(r"\b(?:discover|found\b|first\s+(?:observed|identified|isolated|described)|isolated)",
                             re.IGNORECASE)

# Someone named as the doer: "formulated by Austrian physicist Wolfgang Pauli".
_BY_SOMEONE = re.compile(r"\bby\s+(?:[a-z]+\s+){0,3}[A-Z]")

# The other words that say someone named did what is asked, said where no
# discover-word is: "named after the physicist Christian Doppler, who
# described the phenomenon", "Edward Jenner demonstrated that …", "Gregor
# Mendel … was the first to study genetics". They keep a sentence only
# beside a full name (two name words or more), and said of no thing done
# to ("new helium are created by nuclear fusion", beside "the Big Bang").
_DOER_WORD = re.compile(r"\b(?:described|demonstrated|first\s+to|named\s+(?:after|for)|created|formulated|proposed|"
                        r"postulated|pioneered|devised|invented|predicted)\b", re.IGNORECASE)
_PASSIVE_BEFORE = re.compile(r"\b(?:is|are|was|were|be|been|being)\s+(?:\w+ly\s+)?$", re.IGNORECASE)


def _subject_title(passage: Passage) -> str:
    """The title a short answer may name: a pasted document's ("your text")
    names no one, and "She was born there" in it was answered "your text"."""
    return passage.title if _names_its_subject(passage) else ""


def _names_its_subject(passage: Passage) -> bool:
    """Whether a passage's title names what its text is about, as a
    collection article's does: they share a word. A pasted document's
    title ("your text") does not; a passage without a title names nothing."""
    return bool(_terms(passage.title) & _terms(passage.text))


def _measure_by_adjective(question: str) -> bool:
    """Whether ``question`` asks a measure by its adjective ("How long …?",
    "How tall …?"; :data:`_MEASURE_ASKED`, the one list), not "how much".

    >>> [_measure_by_adjective(q) for q in ("How long can it grow?", "So how old was he?", "How much does it cost?")]
    [True, True, False]
    """
    asked = asked_from(question).strip()
    return bool(_MEASURE_ASKED.match(asked)) and not re.match(r"how\s+much\b", asked, re.IGNORECASE)


# What a measure asked by its adjective measures: the words after its verb
# (the adjective is a word of its own: "How old-fashioned is it?" asks none),
# up to a preposition ("How far is the Moon from Earth?": "the Moon") or a
# verb's particle. After "can/did/does …" the last of them is the verb ("can
# a blue whale grow", "did the dinosaurs die out").
_MEASURED = re.compile(
    r"^how\s+\w+(?:\s+ago)?\s+(?:(?P<be>is|are|was|were)|can|could|did|does|do|will|would|has|have|had|may|might|should)"
    r"\s+(?P<thing>.+?)(?=\s+(?:from|in|at|on|to|for|with|by|during|than|when|before|after|since|until|if|into|across|out|up|off|away|down|back|over)\b|[\s?.!]*$)",
    re.IGNORECASE,
)


def _measured_words(question: str, title: str) -> set[str] | None:
    """The words of what ``question`` (:func:`_measure_by_adjective`)
    measures that are not words of ``title``: a sentence about it holds
    them, while a sentence of the article about its subject as a whole does
    not ("How long is the Nile delta?" against "The Nile is about 6,650 km
    long"). None where that thing is not read.

    >>> sorted(_measured_words("How long is the Nile delta?", "Nile")), _measured_words("How long can a blue whale grow?", "Blue whale")
    (['delta'], set())
    >>> sorted(_measured_words("How far is the Moon from Earth?", "Moon")), sorted(_measured_words("How tall was Lincoln's hat?", "Abraham Lincoln"))
    ([], ['hat'])
    >>> _measured_words("How long ago did the dinosaurs die out?", "Dinosaur")
    set()
    """
    match = _MEASURED.match(asked_from(question).strip())
    if not match:
        return None
    words = match.group("thing").split()
    if not match.group("be"):
        words = words[:-1]
    return _terms(" ".join(words)) - _terms(title)


def _holds_figure(span: str, figure: str) -> bool:
    """Whether ``span`` says ``figure`` as a whole number, not a part of
    another ("21 million" in "between 17 and 21 million", not "4,000" in
    "14,000").

    >>> [_holds_figure(s, "21 million") for s in ("between 17 and 21 million", "121 million", "21")]
    [True, False, False]
    """
    return re.search(rf"(?<![\w,.]){re.escape(figure)}(?![\w]|[,.]\d)", span) is not None


def _title_names_only(title: str, place: str) -> bool:
    """Whether ``title`` (its qualifier after a comma or in brackets aside)
    names ``place`` and no more, or there is no title."""
    if not title:
        return True
    asked = name_words(place) - READER_STOPWORDS
    return bool(asked) and asked == name_words(re.split(r"\s*[(,]", title, maxsplit=1)[0]) - READER_STOPWORDS


class _Read(NamedTuple):
    """The sentences a reading scored: (passage, sentence index, sentence)
    per candidate, the name each is about where it does not say, and each
    one's combined score."""

    candidates: list[tuple[int, int, str]]
    about: list[str]
    scores: Sequence[float] = ()

    def ranked(self) -> np.ndarray:
        """The candidates' indices, best-scored first (ties in reading order)."""
        return np.argsort(-np.asarray(self.scores, dtype=float), kind="stable")


def _source(passages: Sequence[Passage], source_id: str) -> Passage | None:
    """The passage an answer came from (its ``source_id``), or None."""
    return next((p for p in passages if p.id == source_id), None)


class SentenceReader:
    """Answer = the best-scoring sentence of the retrieved passages.

    ``encoder`` is any object with ``encode(list[str]) -> np.ndarray`` returning
    L2-normalised rows (see :func:`assistant.encoders.load_minilm`).
    ``config.definitions`` and ``config.short_answers`` turn on definitions
    from the subject's article and short answers (both off by default).
    """

    def __init__(self, encoder, config: ReaderConfig = ReaderConfig()):
        self.encoder = encoder
        self.config = config
        # Sentence vectors by text: the same passages come back turn after turn.
        self.sentences = CachedEncoder(encoder, config.cache_sentences)

    @classmethod
    def from_pretrained(cls, path: str | None = None, config: ReaderConfig = ReaderConfig()) -> "SentenceReader":
        from ..encoders import load_minilm

        return cls(load_minilm(path), config)

    def candidates(self, passages: Sequence[Passage], question: str = "") -> list[tuple[int, int, str]]:
        """(passage index, sentence index, sentence) for every usable sentence:
        one of ``min_sentence_chars`` or more, or a table row whose header
        cell the question names (:func:`answer_parts`), whose answer is
        short by nature ("No. of episodes 7")."""
        return [
            (p, s, sentence)
            for p, passage in enumerate(passages)
            for s, (sentence, part) in enumerate(zip(split_sentences(passage.text), answer_parts(passage.text, question)))
            if len(sentence) >= self.config.min_sentence_chars or part
        ]

    @staticmethod
    def _referents(passages: Sequence[Passage], candidates) -> list[str]:
        """Per candidate, the name its sentence is about where it does not say
        (:func:`referents`), in a passage whose title shares no word with its
        text (a pasted document's "your text"). An article's sentences get
        none: its title is whom they are about (a referent there cost the
        held-out conversations a fact: "Her long reign …" outranked the
        sentence with the year her reign ended), and a passage without a
        title (NQ's pages with their markup) is not known to be about one
        subject."""
        by_passage = {}
        for p in {p for p, _, _ in candidates}:
            sentences = split_sentences(passages[p].text)
            pasted = bool(_terms(passages[p].title)) and not _names_its_subject(passages[p])
            by_passage[p] = referents(sentences, every=True) if pasted else [""] * len(sentences)
        return [by_passage[p][s] for p, s, _ in candidates]

    def _sentence_vectors(self, passages: Sequence[Passage], candidates, about: Sequence[str] | None = None,
                          stop: StopSignal = NO_STOP) -> np.ndarray:
        # Sentences are embedded with their passage's title in front: "Her
        # father was Lord Byron" only matches "Ada Lovelace's father" once the
        # encoder knows whose father it is.
        # In a pasted document, whose title names no one, a sentence gets the
        # name it is about instead (see _referents); an article keeps its title.
        about = self._referents(passages, candidates) if about is None else about
        titled = {p: _names_its_subject(passages[p]) for p in {p for p, _, _ in candidates}}
        texts = [_with_title(passages[p].title if titled[p] or not referent else referent, sentence)
                 for (p, _, sentence), referent in zip(candidates, about)]
        return self.sentences.encode(texts, stop)

    def scores(self, question: str, passages: Sequence[Passage], candidates,
               about: Sequence[str] | None = None, stop: StopSignal = NO_STOP) -> tuple[np.ndarray, np.ndarray]:
        """(similarity, combined score) per candidate sentence; ``about``:
        the candidates' referents, when already found (see ``_referents``).
        ``stop``: see :meth:`read`.

        The reader's score is the mean of the embedding similarity and the
        term overlap; retrieval scores are divided by the best one so that both
        terms of the interpolation lie in [0, 1] (BM25 is unbounded and its
        scale varies with the query).
        """
        # "He was born in 1841" counts the words of the name "he" stands for.
        about = self._referents(passages, candidates) if about is None else about
        vectors = self._sentence_vectors(passages, candidates, about, stop)
        similarity = vectors @ with_stop(self.encoder.encode, stop)([question])[0]
        # Every sentence of an article is about its subject by each name the
        # article gives it, not only the lead that spells the full one out.
        names = {p: article_names(passages[p], question) for p in {p for p, _, _ in candidates}}
        overlap = np.array([
            term_overlap(question, f"{names[p]} {referent}", _overlap_sentence(question, sentence))
            for (p, _, sentence), referent in zip(candidates, about)
        ])
        reader = (similarity + overlap) / 2
        top = max((p.score for p in passages), default=0.0)
        retrieval = np.array([passages[p].score / top if top > 0 else 0.0 for p, _, _ in candidates])
        mu = self.config.mu
        return similarity, mu * reader + (1 - mu) * retrieval

    def read(self, question: str, passages: Sequence[Passage], stop: StopSignal = NO_STOP) -> Answer:
        """The answer to ``question`` from ``passages``. ``stop`` (the
        user's Stop) is handed to the encoder of the sentences and the
        question: :class:`~assistant.kernel.Stopped` at its next batch (the
        app's shared encoder: at once, its queue left), the rest of the
        reading (rules on text alone) not done.

        An answer from an article that never names the question's subject
        is "not found" (:meth:`_off_subject`): "Which country is Ticino
        in?" got Kyrgyzstan's lead from a collection with no word of
        Ticino."""
        answer = self._read(question, passages, stop)
        if self.config.short_answers and answer.found and self._off_subject(question, passages, answer):
            return Answer(NOT_FOUND, answer.score, found=False)
        return answer

    @staticmethod
    def _off_subject(question: str, passages: Sequence[Passage], answer: Answer) -> bool:
        """Whether ``answer`` comes from an article (its passages, title and
        description) that holds no word telling the question's subject
        apart (:func:`subject_words`: "Gettysburg", not "Battle"). Not
        judged: a question naming nothing so (NQ's lower-case questions, "the
        US"), a passage whose title is no name of what it is about (a story
        or pasted text with no title: its "she" may be the one asked
        about)."""
        words = subject_words(question)
        source = _source(passages, answer.source_id)
        if not words or source is None or not _names_its_subject(source):
            return False
        article = [p for p in passages if p.title == source.title]
        text = " ".join([source.title, source.description, *(p.text for p in article)])
        # A country may be written by another of its names ("Britain", "the
        # United Kingdom"); the article of a thing of the kind asked that
        # puts itself in no country (the euro, for "the currency of
        # Germany") is not about another place.
        countries = countries_written(text)
        if names_subject(words, " ".join([text, *countries])):
            return False
        return bool(countries) or not of_kind_asked(question, source.description)

    def _read(self, question: str, passages: Sequence[Passage], stop: StopSignal = NO_STOP) -> Answer:
        if self.config.definitions:
            definition = self._definition(question, passages)
            if definition is not None:
                return definition
        answer, referent, read = self._best_sentences(question, passages, stop)
        if not self.config.short_answers:
            return answer
        kind = answer_kind(question)
        # "What is the capital of X?" asks for a name, which a sentence
        # saying it holds ("Ottawa is the capital city of Canada.").
        capital = capital_asked(question)
        if answer.found and capital:
            said = self._capital_answer(capital, passages, read, answer)
            if said is not None:
                return said
        # When someone was born or died, said in the short description of
        # their own article ("English mathematician (1815–1852)"), the only
        # place many a summary says it.
        years = lived(question, passages)
        if answer.found and kind == "name":
            cast = self._cast_answer(question, passages, read)
            if cast is not None:
                return cast
            found = self._discoverer(question, passages, read)
            if found is not None:
                return found
        # Which parent is which the passages may say elsewhere ("the god
        # Zeus"), where the sentence names both with no word of their sex.
        known = sexes_said(" ".join(p.text for p in passages[: self.config.read_k])) if kin_holder(question) else {}
        if answer.found:
            best = split_sentences(answer.evidence)[:1]
            source = _source(passages, answer.source_id)
            title = _subject_title(source) if source is not None else ""
            span = short_span(kind, question, best[0], title, referent=referent, known=known) if kind and best else None
            # A place's own people asked as a count, in a sentence that gives
            # them: its own figure, not the number nearest the question's
            # words (a wider area's said later in the sentence, a rank).
            # Only in the place's own article (as the swap in
            # :meth:`_best_sentences`): another place's own figure is not
            # the asked place's ("Stuttgart has …" read for Bavaria). A span
            # that already holds the figure stays whole ("between 17 and 21
            # million", a range).
            place = headcount_asked(question)
            if kind == "number" and best and place and _title_names_only(source.title if source is not None else "", place):
                own = headcount_span(question, best[0], title)
                span = own if own and not (span and _holds_figure(span, own)) else span
            # "which committee …?" asks for a name of that kind, which the
            # sentence holds whole ("Senate Judiciary Committee"); the rest
            # of the sentence is not the answer.
            if kind is None and best:
                span = kind_span(question, best[0])
            # A table row's header cell finds the span ("Born … 10 December
            # 1815" for "when was she born") but is never in it.
            if span and answer.text != answer.evidence and span not in answer.text:
                span = (short_span(kind, question, answer.text, title, referent=referent, known=known) if kind
                        else kind_span(question, answer.text))
            # "When did X begin?" and "Which country is X in?" are
            # answered from X's own article where its lead or description
            # says it (:meth:`_own_article_answer`).
            own = self._own_article_answer(question, passages, answer, span)
            if own is not None:
                return own
            # A sentence of the person's own article says more ("27 November
            # 1852") than the description when it holds the description's
            # year; one without it is about another event of the life (the
            # Nobel year read as Camus's birth), and another article's is
            # about someone else more often than the description is.
            if span and (years is None or (years[0].id == answer.source_id and holds_answer(span, years[1]))):
                if kind == "name":
                    span = self._whole_name(span, passages, answer.source_id)
                return Answer(span, answer.score, evidence=best[0], source_id=answer.source_id)
            # A measure asked by its adjective whose best sentence states
            # none ("How long can a blue whale grow?" read "The blue whale's
            # long and slender body …") is answered by the best sentence of
            # the same article that states one, with its unit. A bare date
            # or count, or "how much", taken so from a sentence ranked below
            # was as often about something else.
            # Not for a place's headcount asked whole ("How big is X's
            # population?"): its own sentence was chosen over the wider
            # area's above, and a figure taken from elsewhere in the article
            # would be that area's again.
            if not span and _measure_by_adjective(question) and best and not headcount_asked(question):
                other = self._span_elsewhere(kind, question, passages, read, answer, known)
                if other is not None and (years is None or (years[0].id == other.source_id
                                                            and holds_answer(other.text, years[1]))):
                    return other
            if not span and kind == "name" and best:
                maker = self._maker_elsewhere(question, passages, read, answer)
                if maker is not None:
                    return maker
            if kind == "name" and kin_holder(question):
                kin = self._kin_answer(question, passages, read, known)
                if kin is not None:
                    return kin
        if years is not None:
            return self._from_description(*years, passages)
        if answer.found and kind == "name" and self._discovery_unsaid(question, passages, answer):
            return Answer(NOT_FOUND, answer.score, found=False)
        # A kin question is judged even with the general rule off: its
        # words are a closed set (:func:`kin_asked`), and "Who was Ada
        # Lovelace's father?" got her lead from a summary naming no parent.
        if (answer.found and kind and (self.config.unsaid_not_found or kin_asked(question))
                and self._unanswered(question, passages, read)):
            return Answer(NOT_FOUND, answer.score, found=False)
        return answer

    def _own_article_answer(self, question: str, passages: Sequence[Passage], answer: Answer,
                            span: str | None) -> Answer | None:
        """The answer X's own article gives "When did X begin/end/take
        place?" (:func:`event_asked`) or "Which country is X in?"
        (:func:`country_asked`), or None to answer as before: its lead
        sentence's date or country, else its short description's, the
        sentence (or description) the evidence; where neither names a
        country, a country's adjective before the place's kind
        (:func:`country_by_adjective`). A date span the best sentence of
        X's own article gave stays. Where X's own article gives no date,
        the best sentence's date answers only where that sentence says X
        itself began, ended or took place then (:func:`event_said`), else
        today's answer stands: another article's date is as often another
        subject's as the right one. Of several articles titled X,
        the one the best sentence came from is read (Georgia the country or
        the U.S. state); a person's article is no event's or place's."""
        event = event_asked(question)
        place = None if event else country_asked(question)
        if event is None and place is None:
            return None
        read = passages[: self.config.read_k]
        subject = event[0] if event else place
        # The best sentence, of any article, that says X itself began (ended,
        # took place) at a date is answered by that date: "In 1066, …
        # William … at the Battle of Hastings" (:func:`event_said`), only
        # where X's own article gives no date: its own is the surer
        # ("For Brindle, the war began in 1937" is one country's view).
        best = split_sentences(answer.evidence)[:1]
        said = event_said(event[0], event[1], best[0]) if event and best else None
        said = Answer(said, answer.score, evidence=best[0], source_id=answer.source_id) if said else None
        own = lead_passage(subject, [p for p in read if p.id == answer.source_id]) or lead_passage(subject, read)
        if own is None:
            return said
        # Only an article's first passage opens with its lead.
        lead = split_sentences(own.text)[:1] if not re.search(r"(?:_p|#)[1-9]\d*$", own.id) else []
        # X's lead (read with X's name) and description; years BC in the
        # description with a lead not opening "The" may be a life, whose
        # ranges with their era once are no event's time.
        texts = [(text, subject) for text in lead] + [(own.description, None)]
        eras = not ancient_life(own.text, own.description)
        if event and span and any(p.id == answer.source_id and p.title == own.title for p in read):
            # ...unless X's lead or description gives a range with its era
            # once whose asked end the span does not hold: the span dates a
            # part of X ("413 BC" for a war of 431–404 BC) or its other end
            # ("27 BC" read for the start of "c. 509 – 27 BC").
            if event[1] == "when" or not eras or not any(range_end_missed(event[1], text, span, name)
                                                         for text, name in texts):
                return None
        # A life's dates in brackets after the name and its years in the
        # description: "Pablo Picasso (25 October 1881 – 8 April 1973)".
        if a_life(own.text, own.description):
            return None
        top = max(p.score for p in passages)
        # Another sentence's year within the century X's own article gives
        # is the more exact answer ("1517" for a "16th-century" movement),
        # as its span or said of X; one outside it is another subject's
        # ("1637" for the Renaissance's start).
        near = span or (best[0] if event and best and event_named(subject, best[0]) else "")
        for text, name in texts:
            found = event_date(event[1], text, name, eras) if event else country_named(text, place)
            if found and event and near and year_within(near, found):
                return None
            if found:
                return Answer(found, own.score / top if top > 0 else 0.0, evidence=text, source_id=own.id)
        # A country's adjective only where neither text names a country:
        # the description's "City in Michigan, United States" beats the
        # lead's "a Polish city".
        by_adjective = None if event else country_by_adjective((*lead, own.description), place)
        if by_adjective:
            return Answer(by_adjective[0], own.score / top if top > 0 else 0.0, evidence=by_adjective[1],
                          source_id=own.id)
        return said

    @staticmethod
    def _from_description(passage: Passage, year: str, passages: Sequence[Passage]) -> Answer:
        """The year :func:`lived` found, its passage's description the
        evidence (shown beside the passage's title); scored as a definition
        is, by its passage's retrieval score."""
        top = max(p.score for p in passages)
        return Answer(year, passage.score / top if top > 0 else 0.0, evidence=passage.description, source_id=passage.id)

    def _unanswered(self, question: str, passages: Sequence[Passage], read: _Read) -> bool:
        """Whether no sentence read about the question's named subject holds
        a word of what a date, number or name question asks
        (:func:`says_what_is_asked`): the passages do not say it. "Who did Tesla work for?" got Tesla's lead
        sentence, which names no employer, from a collection of summaries
        that say nothing of his work. A sentence with the question's word
        and no span ("The lake was formed after the last ice age.") still
        answers as it did. A kin question counts its relation's words
        either way round instead (:func:`says_kin`: "son of" says the
        father). A question that names nothing ("who sang …",
        NQ's lower-case questions) is not judged: which sentences are about
        its subject is not known."""
        names = {word for word in tokens(" ".join(question_names(question)), "rouge") if len(word) > 1}
        if not names:
            return False
        passages = passages[: self.config.read_k]
        kin = bool(kin_asked(question))
        for (p, _, sentence), referent in zip(read.candidates, read.about):
            subject = f"{_subject_title(passages[p])} {referent}".strip()
            # A sentence whose subject is not known (a story's "She shared
            # her bed …", no title, no referent) may be about the one asked about.
            about = not subject or names & set(tokens(f"{subject} {sentence}", "rouge"))
            if about and (says_kin(question, sentence) if kin else says_what_is_asked(question, sentence, subject)):
                return False
        return True

    def _capital_answer(self, place: str, passages: Sequence[Passage], read: _Read, answer: Answer) -> Answer | None:
        """X's capital as the best-scored read sentence that says it gives
        it (:func:`capital_said`: "C is the capital of X", "its capital,
        C," in X's own article), that sentence the evidence; else
        NOT_FOUND where the best sentence names the capital of another
        place and not X's ("Zurich is … the capital of the canton of
        Zurich" for Switzerland: :func:`capital_of_another`); else None
        to answer as before (a sentence on X's several or past capitals
        says more than a guessed name)."""
        passages = passages[: self.config.read_k]
        for at in read.ranked():
            p, _, sentence = read.candidates[at]
            city = capital_said(sentence, place, _subject_title(passages[p]))
            if city:
                return Answer(city, float(read.scores[at]), evidence=sentence, source_id=passages[p].id)
        best = split_sentences(answer.evidence)[:1]
        source = _source(passages, answer.source_id)
        if best and capital_of_another(best[0], place, _subject_title(source) if source is not None else ""):
            return Answer(NOT_FOUND, answer.score, found=False)
        return None

    def _kin_answer(self, question: str, passages: Sequence[Passage], read: _Read, known: dict[str, str]) -> Answer | None:
        """The name the best-scored sentence that states it gives a question
        for a named person's parents or children (:func:`kin_holder`), or
        None. The best sentence may be about another's kin: "Who were the
        children of Zeus?" read the Titans' "the twelve children of …
        Uranus"; Heracles' "the son of Zeus" names one. ``known``: the
        sexes the passages say (:func:`sexes_said`)."""
        passages = passages[: self.config.read_k]
        for at in read.ranked():
            p, _, sentence = read.candidates[at]
            # Only a name the kin phrases give: short_span's nearest name
            # to the question's words is anyone's ("She married William
            # King … and had three children" for her children).
            kin = kin_said(question, sentence, _subject_title(passages[p]), read.about[at], known)
            span = kin[0] if kin else None
            if span:
                return Answer(span, float(read.scores[at]), evidence=sentence, source_id=passages[p].id)
        return None

    def _discoverer(self, question: str, passages: Sequence[Passage], read: _Read) -> Answer | None:
        """The person whose own article's best-scored sentence says he or
        she discovered what "Who discovered X?" asks (:func:`discovered_by`),
        the sentence the evidence, or None. The best sentence is as often
        X's own article's ("Together with polonium, radium, and radon, …"
        read for radium, its first word the span) or another finding's,
        where the discoverer's article says it. A person's article is one
        whose description gives a lifespan (:func:`lifespan`)."""
        if discovery_asked(question) is None:
            return None
        passages = passages[: self.config.read_k]
        for at in read.ranked():
            p, _, sentence = read.candidates[at]
            if not lifespan(passages[p].description):
                continue
            person = discovered_by(question, sentence, _subject_title(passages[p]))
            if person:
                return Answer(person, float(read.scores[at]), evidence=sentence, source_id=passages[p].id)
        return None

    @staticmethod
    def _discovery_unsaid(question: str, passages: Sequence[Passage], answer: Answer) -> bool:
        """Whether "Who discovered X?", no discoverer found
        (:meth:`_discoverer`) and no name read, got a sentence that is
        neither a person's article's nor says anything was discovered:
        "Who discovered DNA?" read a sentence of the polymerase chain
        reaction's prize, "Who discovered gravity?" one of the law's
        publication. A sentence that says a discovery ("Pluto was
        discovered in 1930 …"), one that names who did what it tells ("This
        principle was formulated by Austrian physicist Wolfgang Pauli", "…
        commanded by Pedro Álvares Cabral") or a person's article (an
        explorer's) may still answer it."""
        if discovery_asked(question) is None:
            return False
        source = _source(passages, answer.source_id)
        if source is None or lifespan(source.description):
            return False
        if _DISCOVERY_WORD.search(answer.text) or _BY_SOMEONE.search(answer.text):
            return False
        # A full name with a word of doing ("Christian Doppler, who
        # described …"), or the full name of a person whose own article was
        # retrieved ("Edward Jenner", whose article says he created the
        # vaccine), names whom the question asks for in other words.
        doing = any(word.group().lower().startswith("named") or not _PASSIVE_BEFORE.search(answer.text, 0, word.start())
                    for word in _DOER_WORD.finditer(answer.text))
        if doing and any(len(run) >= 2 for run in name_runs(answer.text, first=True)):
            return False
        people = (without_bracket(p.title) for p in passages if lifespan(p.description))
        return not any(len(name.split()) >= 2 and re.search(r"\b" + re.escape(name) + r"\b", answer.text) for name in people)

    def _maker_elsewhere(self, question: str, passages: Sequence[Passage], read: _Read, answer: Answer) -> Answer | None:
        """The maker the best-scored sentence of ``answer``'s own article
        that says "<its subject> is a … by <name>" (:func:`made_by`) gives
        a "who did it" question whose best sentence named no one, or None.
        "Who wrote the Divine Comedy?" read "… in which it is written, as
        the standardized Italian language" first; its lead says "… an
        Italian narrative poem by Dante Alighieri". Another article's lead
        is about another work."""
        passages = passages[: self.config.read_k]
        source = _source(passages, answer.source_id)
        if source is None or not source.title:
            return None
        for at in read.ranked():
            p, _, sentence = read.candidates[at]
            if passages[p] is not source and passages[p].title != source.title:
                continue
            span = made_by(question, sentence, _subject_title(passages[p]))
            if span:
                return Answer(self._whole_name(span, passages, passages[p].id), float(read.scores[at]),
                              evidence=sentence, source_id=passages[p].id)
        return None

    def _span_elsewhere(self, kind: str, question: str, passages: Sequence[Passage], read: _Read, answer: Answer,
                        known: dict[str, str]) -> Answer | None:
        """The span :func:`short_span` finds in a sentence of ``answer``'s
        own article (its passages of the same title; a passage without one
        alone), or None: first in the sentences the answer already shows,
        in their order (a sentence the reader joined to the best one was
        judged to go on with it: "… a reference to the 154 sonnets" after
        "Shakespeare wrote sonnets …"), then in the others by their score.
        Another article's sentence is about another subject ("World War
        II" beside "World War I"), so it is not read here."""
        passages = passages[: self.config.read_k]
        source = _source(passages, answer.source_id)
        if source is None:
            return None
        measured = _measured_words(question, source.title)
        if measured is None:
            return None
        shown = split_sentences(answer.text)

        def shown_first(at: int) -> int:
            p, _, sentence = read.candidates[at]
            return shown.index(sentence) if passages[p] is source and sentence in shown else len(shown)

        # sorted() is stable: the score order stays within each group.
        for at in sorted(read.ranked(), key=shown_first):
            p, _, sentence = read.candidates[at]
            own = passages[p] is source or (bool(source.title) and passages[p].title == source.title)
            if not own:
                continue
            # A sentence about the article's subject as a whole, or another
            # part of it, gives another thing's measure ("How long is the
            # Nile delta?" against "The Nile is about 6,650 km long").
            if not measured <= _terms(sentence):
                continue
            span = short_span(kind, question, sentence, _subject_title(passages[p]), referent=read.about[at], known=known)
            if span:
                return Answer(span, float(read.scores[at]), evidence=sentence, source_id=passages[p].id)
        return None

    def _whole_name(self, span: str, passages: Sequence[Passage], source_id: str) -> str:
        """``span`` as the passages read of its answer's article name it in
        full (:func:`full_name`): "Phillips" is "Joseph C. Phillips" where
        the article says so. Another article's "Boris Johnson" is no one
        the answer's "Johnson" is known to be; a passage without a title is
        its own. Read sentence by sentence: across a sentence's end, "… in
        northern Italy. Romeo Montague was born there." ran into one name."""
        read = passages[: self.config.read_k]
        source = _source(read, source_id)
        if source is None:
            return span
        same = [p for p in read if p is source or (source.title and p.title == source.title)]
        return full_name(span, [sentence for p in same for sentence in split_sentences(p.text)])

    def _cast_answer(self, question: str, passages: Sequence[Passage], read: _Read) -> Answer | None:
        """The actor (or role) the best-scored sentence that pairs them gives
        a "who plays X?" ("who does Y play?") question, as its passage reads
        it (:func:`cast_spans`), or None. The best sentence is often about
        the role, not its cast ("Larry is rescued from the refrigerator …"
        for "who plays larry"), and its nearest name is anyone's."""
        passages = passages[: self.config.read_k]
        casts = {p: cast_spans(question, split_sentences(passages[p].text)) for p in {p for p, _, _ in read.candidates}}
        for at in read.ranked():
            p, s, sentence = read.candidates[at]
            span = casts[p][s]
            if span:
                return Answer(self._whole_name(span, passages, passages[p].id), float(read.scores[at]), evidence=sentence, source_id=passages[p].id)
        return None

    def _definition(self, question: str, passages: Sequence[Passage]) -> Answer | None:
        """The lead of the subject's own article, when one was retrieved;
        without one (a pasted document), the first sentence that says what
        the subject is ("Antonín Dvořák was a Czech composer.")."""
        subject = definition_subject(question)
        if not subject or not passages:
            return None
        person = asked_from(question).lstrip().lower().startswith("who")
        top = max(p.score for p in passages)
        lead = lead_passage(subject, passages, person)
        if lead is not None:
            blocks = [sentences for sentences in map(_split_block, _blocks(lead.text)) if sentences]
            wanted = self.config.definition_sentences
            sentences = [sentence for block in blocks for sentence in block][:wanted]
            # A bare lead is half a definition: the next sentence of its
            # paragraph completes it (not a heading or list item after it).
            if sentences and bare_lead(sentences[0]) and len(blocks[0]) > wanted and completes_lead(blocks[0][wanted]):
                sentences.append(blocks[0][wanted])
        else:
            lead, sentences = next(
                ((p, [s]) for p in passages[: self.config.read_k] for s in split_sentences(p.text) if defines(subject, s, person)),
                (None, []),
            )
        if not sentences:
            return None
        text = " ".join(sentences)
        return Answer(text, lead.score / top if top > 0 else 0.0, evidence=text, source_id=lead.id)

    def _best_sentences(self, question: str, passages: Sequence[Passage],
                        stop: StopSignal = NO_STOP) -> tuple[Answer, str, _Read]:
        """The answer, the name its first sentence refers back to ("" if
        none), and the sentences read (for :meth:`_unanswered`)."""
        passages = passages[: self.config.read_k]
        candidates = self.candidates(passages, question)
        if not candidates:
            return Answer(NOT_FOUND, 0.0, found=False), "", _Read([], [])
        about = self._referents(passages, candidates)
        similarity, combined = self.scores(question, passages, candidates, about, stop)
        read = _Read(candidates, about, combined.tolist())
        best = int(np.argmax(combined))
        # A place's own people, asked for, are not its wider area's
        # ("The urban area of Berlin has a population of over 5 million"):
        # the best sentence of the same passage that gives its own, if any,
        # and names no other place (a country's article may give its
        # capital's people). Only in the place's own article: another's
        # own figure (Thailand's people asked, Bangkok's article read) is
        # that place's, no nearer the answer than its area's.
        # The place's own article is one whose title (its qualifier, as in
        # "León, Guanajuato", aside) names the place and no more: "San
        # Salvador" is not Salvador's, "Papua New Guinea" not Guinea's,
        # "Quebec City" not the province's. An own sentence under the
        # similarity bar is not taken: the swap never turns an answer into
        # none.
        place = headcount_asked(question)
        title = passages[candidates[best][0]].title
        if place and headcount_said(candidates[best][2]) == "wider" and _title_names_only(title, place):
            names = f"{place} {title}"
            own = [at for at, (p, _, sentence) in enumerate(candidates)
                   if p == candidates[best][0] and similarity[at] >= self.config.min_similarity
                   and headcount_said(sentence, names, candidates[best][2]) == "own"]
            best = max(own, key=lambda at: combined[at], default=best)
        if similarity[best] < self.config.min_similarity:
            return Answer(NOT_FOUND, float(combined[best]), found=False), "", read
        p, s, sentence = candidates[best]
        # What a following sentence must nearly match to continue the answer.
        reference = similarity[best]
        # A question the document asks itself (a FAQ's "How do I renew my
        # licence?") matches the user's question best of all, and answers
        # nothing: the sentence after it, in its passage, is its answer
        # when it too is about the question (a passage packs paragraphs
        # together, and the next one's first sentence answers nothing).
        # Its short reply ("No."), too short to be read on its own, opens
        # the answer only when the document asks what the user does (every
        # content word of the user's question is in it): to "Can dogs eat
        # chocolate?" the "Yes." of "Can dogs get sunburn?" is false.
        following = candidates[best + 1] if best + 1 < len(candidates) else None
        opening: list[str] = []
        if (_asks(sentence) and following and following[0] == p and not _asks(following[2])
                and similarity[best + 1] >= self.config.min_similarity):
            if term_overlap(question, "", sentence) == 1.0:
                opening = [x for x in split_sentences(passages[p].text)[s + 1 : following[1]] if not _asks(x)]
            best += 1
            p, s, sentence = following
        sentences = [sentence]
        # A label's answer is its value (the next sentence), a table row's
        # its data cells (:func:`answer_parts`); the row or item after
        # either is another field, never its continuation.
        part = (answer_parts(passages[p].text, question) + [None])[s] if not opening else None
        if part == "":
            sentences = split_sentences(passages[p].text)[s + 1 : s + 2] or sentences
        elif part:
            sentences = [part]
        # A following sentence of the same passage that is nearly as relevant
        # usually continues the answer ("She ... . Her notes ...").
        for (p2, s2, other), sim in zip(candidates[best + 1 :], similarity[best + 1 :]):
            if part is not None or len(sentences) >= self.config.max_sentences or p2 != p or s2 != s + len(sentences):
                break
            # A question after the answer opens the next topic (a FAQ's next
            # heading), as relevant as it may look.
            if sim < 0.8 * reference or _asks(other):
                break
            sentences.append(other)
        text = " ".join(opening + sentences)
        # A row's answer is its data cells; the whole row, header and all, is its evidence.
        evidence = sentence if part else text
        return Answer(text, float(combined[best]), evidence=evidence, source_id=passages[p].id), about[best], read
