"""Words: every tokeniser and stop-word set of the project, each named for its job.

They differ on purpose, and a union would change behaviour (German "also",
"so", "am" would count as English in the language check, for one), so
each purpose keeps its own set here, under a name that says what it is for.
``tokens(text, kind)`` lower-cases and splits by the pattern of that kind.

>>> tokens("Ada's father, Lord Byron (1788)", "rouge")
['ada', 's', 'father', 'lord', 'byron', '1788']
>>> tokens("Ada's father, Lord Byron (1788)", "word")
["ada's", 'father', 'lord', 'byron', '1788']
>>> tokens("Ada's father, Lord Byron (1788)", "letters")
['ada', 's', 'father', 'lord', 'byron']
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from functools import lru_cache
from typing import Iterable

__all__ = [
    "close_name",
    "composed_text",
    "folded_text",
    "TOKEN_PATTERNS",
    "tokens",
    "READER_STOPWORDS",
    "DRIFT_STOPWORDS",
    "ENGLISH_FUNCTION_WORDS",
    "LUCENE_STOPWORDS",
    "AUXILIARY_VERBS",
    "sklearn_stopwords",
    "porter_stem",
    "prefix_stem",
    "counted",
    "NOT_NAMES",
    "name_words",
    "same_name",
    "same_name_word",
    "owned_kin",
    "kin_gender",
    "peoples_word",
]

# Characters that are another character in another form: full-width Latin
# letters, digits and signs (an East Asian keyboard's), the ideographic space,
# and the Latin ligatures (a PDF's "\ufb01"). Neither the Lucene index nor the
# tokenisers fold them. Only these: NFKC at large would also turn "km\u00b2"
# into "km2" and "10\u00b2" into "102".
_COMPATIBLE_FORMS = re.compile("[\u3000\ufb00-\ufb06\uff01-\uff5e]+")


def composed_text(text: str) -> str:
    r"""``text`` with its accents composed (NFC: "e" and a combining acute,
    as a Mac's clipboard or a PDF may give them, are the one "\u00e9" the
    collection holds) and its full-width letters and Latin ligatures the
    plain ones: what a question and an uploaded document are made before any
    tokeniser sees them, so that both spellings of a word are one term.
    ASCII text is returned as it is.

    >>> composed_text("Kurt Go\u0308del") == "Kurt G\u00f6del"
    True
    >>> composed_text("\uff34\uff4f\uff4b\uff59\uff4f\u3000\ufb01nance, 10 km\u00b2") == "Tokyo finance, 10 km\u00b2"
    True
    """
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text)
    return _COMPATIBLE_FORMS.sub(lambda forms: unicodedata.normalize("NFKC", forms.group()), text)


# Latin letters that are no base letter and an accent, so that NFKD leaves
# them whole (Lucene's ASCIIFoldingFilter folds them the same way).
_UNACCENTED = str.maketrans({"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D",
                             "þ": "th", "Þ": "Th", "æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ß": "ss",
                             "ı": "i"})


def folded_text(text: str) -> str:
    r"""``text`` with the accents of its Latin letters taken off, as a user
    types a name on a keyboard without them ("Dvorak" for "Dvořák",
    "Lodz" for "Łódź"). Other scripts stay as they are; compatibility forms
    are taken apart too ("²" is "2"). For
    matching what was typed against what is written, never for showing.

    >>> folded_text("Antonín Dvořák, Łódź, Hans Ørsted, Æthelstan, São Tomé, 東京")
    'Antonin Dvorak, Lodz, Hans Orsted, Aethelstan, Sao Tome, 東京'
    """
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text.translate(_UNACCENTED))
    # Only the marks that sit on a Latin letter: a Devanagari vowel sign is a letter's part, not its accent.
    kept = []
    for char in decomposed:
        if unicodedata.combining(char) and kept and kept[-1].isascii():
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


TOKEN_PATTERNS = {
    # rouge-score's tokenisation (alphanumeric runs): "same tokens" then means
    # "every lexical metric sees the same words".
    "rouge": re.compile(r"[a-z0-9]+"),
    # Words with one inner apostrophe ("byron's"): the rewriter's drift guard.
    "word": re.compile(r"\w+(?:'\w+)?"),
    # Letters only, any script: the language check counts words, not numbers.
    "letters": re.compile(r"[^\W\d_]+"),
    # Letters and digits with a possessive 's (straight or curly) kept: the
    # sentence reader's terms. A curly one split "Lincoln’s" into "lincoln"
    # and a term "s" that no sentence holds, so the twin questions read apart.
    "term": re.compile(r"[^\W_]+(?:['’]s)?"),
    # Lucene's StandardTokenizer, near enough: inner apostrophes (straight or
    # curly) stay inside the token, for the in-memory BM25.
    "lucene": re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE),
}


def tokens(text: str, kind: str) -> list[str]:
    """``text`` lower-cased and split by ``TOKEN_PATTERNS[kind]``."""
    return TOKEN_PATTERNS[kind].findall(text.lower())


# The sentence reader's question terms: function words and the words of
# asking ("tell", "more", "also") carry no topic.
READER_STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i if in into is it its "
    "me my no not of on or she so such that the their them then there these they this to was were what "
    "when where which who whom whose why will with would you your about tell more also".split()
)

# The kin words of each gender ("he": father, son …), and the words a
# description of a person says their gender with, kin besides; words used
# of both ("actor", "chairman", "count") are left out. One list for the
# rewriter (whom a pronoun means) and the reader (which parent a name is).
KIN_BY_GENDER = {
    "he": "father son husband brother uncle nephew grandfather grandson stepfather stepson boyfriend",
    "she": "mother daughter wife sister aunt niece grandmother granddaughter stepmother stepdaughter girlfriend",
}
GENDERED_WORDS = {
    **{word: gender for gender, words in KIN_BY_GENDER.items() for word in words.split()},
    **dict.fromkeys("man boy gentleman king prince duke emperor baron earl lord sir widower monk businessman "
                    "sportsman pope tsar sultan marquess god".split(), "he"),
    **dict.fromkeys("woman girl lady actress queen princess duchess countess empress baroness widow nun heiress "
                    "businesswoman sportswoman dame abbess goddess nymph".split(), "she"),
}

def kin_gender(word: str) -> str:
    """The gender ("he", "she" or "") a kin word says, of one or many, a
    step-relation's as the relation's.

    >>> kin_gender("stepmother"), kin_gender("Sons"), kin_gender("parents")
    ('she', 'he', '')
    """
    word = word.lower().removeprefix("step")
    return GENDERED_WORDS.get(word, GENDERED_WORDS.get(word[:-1], "") if word.endswith("s") else "")


# Capitalised words that say what someone was, not who: "Her father was
# English." A nationality or faith ends so ("Indian", "English",
# "Japanese", "Catholic") or is one of the few that do not. A one-word
# given name that ends so ("Ivan") is taken for one too: the rewriter
# keeps "X's father", the reader gives no name.
# A closed list, not a suffix rule: "-an", "-ish", "-ic" also end given
# names ("Susan", "Ivan", "Eric"), which must stay names.
_FAITHS_AND_PEOPLES = frozenset(
    """muslim islamic hindu sikh jew jewish jain buddhist catholic protestant anglican lutheran
    calvinist orthodox baptist methodist quaker mormon presbyterian evangelical episcopalian
    zoroastrian pagan
    american african asian european australian austrian belgian brazilian british english irish
    scottish scots welsh canadian chinese japanese korean vietnamese burmese taiwanese tibetan
    mongolian mongol indian pakistani bangladeshi bengali nepali nepalese afghan iranian persian
    iraqi syrian lebanese jordanian israeli palestinian egyptian libyan tunisian algerian
    moroccan sudanese ethiopian somali kenyan nigerian ghanaian senegalese congolese angolan
    ugandan tanzanian rwandan zimbabwean zambian zulu maori inuit mexican cuban haitian jamaican
    guatemalan honduran salvadoran nicaraguan panamanian colombian venezuelan peruvian chilean
    argentine argentinian bolivian paraguayan uruguayan ecuadorian german prussian bavarian
    italian roman venetian florentine neapolitan sicilian spanish catalan basque galician
    castilian portuguese french dutch flemish danish swedish norwegian finnish icelandic polish
    czech slovak hungarian romanian bulgarian serbian croatian bosnian slovenian albanian
    macedonian greek turkish ottoman russian ukrainian belarusian lithuanian latvian estonian
    georgian armenian azerbaijani kazakh uzbek thai malaysian indonesian filipino singaporean
    cambodian laotian saudi kuwaiti yemeni omani arab arabian hebrew mesopotamian sumerian
    akkadian babylonian assyrian phoenician byzantine etruscan carthaginian celtic gaulish saxon
    viking athenian spartan trojan mughal aztec mayan incan scandinavian nordic slavic germanic
    hispanic caribbean polynesian hawaiian swiss""".split()
)


def peoples_word(name: str) -> bool:
    """Whether every word of ``name`` names a people or faith, not a
    person (the one test of the rewriter and the reader).

    >>> [peoples_word(name) for name in ("Indian", "Roman Catholic", "Greek", "Akkadian", "Jawaharlal Nehru")]
    [True, True, True, True, False]
    >>> [peoples_word(name) for name in ("Susan", "Ivan", "Eric", "Ethan", "Dominic", "Morgan")]
    [False, False, False, False, False, False]
    """
    words = name.split()
    return bool(words) and all(word.lower() in _FAITHS_AND_PEOPLES for word in words)


def owned_kin(owner: str, kin: str, describing: int = 0) -> str:
    """The pattern of a ``kin`` word said to be ``owner``'s (both patterns):
    the possessive, up to ``describing`` lower-case words ("his eldest
    son"), then the kin word whole. The one matcher of "whose kin" for the
    reader and the rewriter: "her father's friend" and "his father-in-law"
    are no one's father.

    >>> said = owned_kin("(?:[Hh]is|[Hh]er)", "father", 1)
    >>> [bool(re.search(said, s)) for s in ("Her late father was X.", "Her father's friend X.", "His father-in-law X.")]
    [True, False, False]
    """
    return rf"{owner}\s+(?:[a-z]+\s+){{0,{describing}}}?{kin}(?![\w'’-])"


# The rewriter's drift guard: a rewrite must keep the question's content
# words, so this list is generous (pronouns, quantifiers, "s" of "it's").
DRIFT_STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from about as into over after before
    than then so not no is are was were be been being am do does did done have has had having
    can could will would shall should may might must what which who whom whose when where why
    how that this these those there here it its it's he him his she her hers they them their
    theirs we us our you your i me my mine one ones also too very just any some all more most
    other else much many again s""".split()
)

# Capitalised words that open a sentence or clause, or a reply, without
# naming anyone: the reader passes over them at a name's start, and the
# rewriter takes no answer opening with one for a person's name.
NOT_NAMES = frozenset(
    "the a an he she it they his her its their this that these those in on at of by for from with after "
    "before during when while however also and but or as there here we i you our "
    "yes none unknown unclear nobody cannotanswer".split()
)


def name_words(text: str) -> set[str]:
    """The words of a name, lower-cased, accents and a possessive "'s" off.

    >>> sorted(name_words("Antonín Dvořák's"))
    ['antonin', 'dvorak']
    """
    return set(re.findall(r"\w+", folded_text(re.sub(r"['’]s\b", "", text)).lower()))


def same_name(a: str, b: str) -> bool:
    """Whether names ``a`` and ``b`` may be one person's: every word of
    the shorter is a word of the longer, accents aside, regnal numerals included
    ("Mozart" is "Wolfgang Amadeus Mozart"; "Elizabeth I" is not
    "Elizabeth II", nor "Charles Darwin" "Robert Darwin"). The one name
    matcher of the reader and the rewriter; one word spelt otherwise or cut
    short is :func:`same_name_word`'s.

    >>> same_name("Mozart", "Wolfgang Amadeus Mozart"), same_name("Elizabeth I", "Elizabeth II")
    (True, False)
    >>> same_name("Charles Darwin", "Robert Darwin"), same_name("", "Zeus"), same_name("Dvorak", "Antonín Dvořák")
    (False, False, True)
    """
    words_a, words_b = name_words(a), name_words(b)
    shorter, longer = sorted((words_a, words_b), key=len)
    return bool(shorter) and shorter <= longer


def same_name_word(word: str, other: str) -> bool:
    """Whether name word ``word`` may be ``other`` written otherwise (both
    as :func:`name_words` gives them): the same word, or, both of four
    letters or more, one cut short of the other ("graz" of "graziano") or
    spelt otherwise ("tchaikovski", "tchaikovsky"); of shorter words only
    the same ("ada" is no "adam"). The one test of one word of a name against
    another, looser than :func:`same_name`'s, whose words must be the same:
    a text read names people as it spells them, while the rewriter's model
    may mend a name the user typed, or cut it short.

    >>> [same_name_word(word, other) for word, other in (("graz", "graziano"), ("tchaikovski", "tchaikovsky"), ("ada", "adam"))]
    [True, True, False]
    >>> same_name_word("curie", "curie"), same_name_word("pierre", "marie")
    (True, False)
    """
    if word == other:
        return True
    if min(len(word), len(other)) < 4:
        return False
    return word.startswith(other) or other.startswith(word) or difflib.SequenceMatcher(None, word, other).ratio() >= 0.8


# The language check: a question of several words with none of these is very
# likely not English.
ENGLISH_FUNCTION_WORDS = frozenset(
    "a about after an and any are as at be been before by can could did do does for from had has have he her "
    "him his how i in is it its me more my no not of on or she tell that the their them there they this to "
    "was were what when where which who whom whose why will with would you your".split()
)

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (what Anserini indexes with).
LUCENE_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such "
    "that the their then there these they this to was will with".split()
)

# Auxiliaries that open a yes/no question ("Did she ...?").
AUXILIARY_VERBS = frozenset(
    "is are was were am do does did have has had can could will would shall should may might must "
    "isn't aren't wasn't weren't don't doesn't didn't haven't hasn't hadn't can't couldn't won't "
    "wouldn't shouldn't".split()
)


@lru_cache(maxsize=1)
def sklearn_stopwords() -> frozenset[str]:
    """scikit-learn's English list, for the metrics' stop-word option and the
    labels builder (NLTK's needs a corpus download; scikit-learn ships its
    list as data, so this works offline)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@lru_cache(maxsize=1)
def _porter():
    from nltk.stem.porter import PorterStemmer

    # Porter's original algorithm, as Lucene's PorterStemFilter implements it.
    return PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)


@lru_cache(maxsize=65536)
def porter_stem(word: str) -> str:
    """``word``'s Porter stem, as Lucene's English analyzer stems: the one
    stemmer of the in-memory BM25 and the labels builder.

    >>> porter_stem("happened"), porter_stem("happen")
    ('happen', 'happen')
    """
    return _porter().stem(word)


def prefix_stem(word: str, letters: int = 5) -> str:
    """``word``'s first ``letters`` letters: a crude stem that joins
    "assassinated" and "assassination", "countries" and "country", where
    Porter's would not and a near miss costs little (the reader's relation
    words, the rewriter's drift guard).

    >>> prefix_stem("assassinated") == prefix_stem("assassination")
    True
    """
    return word[:letters]


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless one: the one place the messages
    say "1 turn" and "2 turns" (each message wrote its own plural, and two
    said "1 turns").

    Large counts are grouped by thousands, as an index's size reads best.

    >>> counted(1, "turn"), counted(0, "other question"), counted(12345, "passage")
    ('1 turn', '0 other questions', '12,345 passages')
    """
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def close_name(typed: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``typed`` is a slip of the keys for (equal in
    another case, or close by difflib), as ``known`` spells it, or None: the
    one lookup behind every "did you mean" of the project.

    >>> close_name("Sentence", ["sentence", "generative"]), close_name("CONVQA_KK", ["CONVQA_K", "CONVQA_MU"])
    ('sentence', 'CONVQA_K')
    >>> close_name("zzz", ["sentence"]) is None
    True
    """
    spelled = {name.lower(): name for name in known}
    close = difflib.get_close_matches(typed.lower(), spelled, n=1)
    return spelled[close[0]] if close else None
