"""What the rewriter decides from the text alone, without the model.

The first turn, a follow-up that asks nothing ("ok", "a":
:func:`asks_nothing`) and a question that names its new subject in full
(:func:`names_new_subject`) are kept as asked; "the two" after two such
questions gets both names put in (:func:`the_two_named`); a follow-up is
shown the turns since the last new person (:func:`since_new_person`); and
the drift guard (:func:`drift_reason`) keeps the user's own question
whenever the model's output no longer carries its intent (among it, a
name the user typed lost or run into a name from the history,
:func:`name_damage`); a "he" the
model took for a woman (or a "she" for a man) is put back as the kin the
history asked about, by the name its answer gave where it clearly gave one
(:func:`kin_for_pronoun`); a he/she/it the model took for another name
than the one the previous question asked about is looked at again and,
failing a candidate naming that one, a he/she of that one's gender gets
its name put in where the candidates disagree
(:func:`previous_subject`, :func:`strays_from`, :func:`with_subject`);
an exclusion the model added of a name no
text gives ("… other than the Red Door?") is cut
(:func:`without_invented_exclusion`); and the rewriter reads and writes
no emoji (:func:`without_emoji`).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Sequence

from assistant.kernel import (AUXILIARY_VERBS, DRIFT_STOPWORDS, GENDERED_WORDS, KIN_BY_GENDER, KIND_NOUNS, NAME_KIND_WORDS, NAME_PARTICLES,
                              NAME_PIECE, NOT_NAMES, PLACE_NAME_WORDS, PLACE_NOUNS, POSSESSIVE_END, SHORT_TITLES, InvalidInputError, bare_piece,
                              check_history, name_runs, name_word, name_words, owned_kin, peoples_word, porter_stem, prefix_stem, same_name,
                              same_name_word, tokens, without_possessive)

from ._config import RewriterConfig
from ._people import a_given_name, a_person, kinds_of
from ._prompt import turns

__all__ = ["drift_reason", "name_damage", "names_new_subject", "the_two_named", "since_new_person", "same_words", "clean_output",
           "refuse_non_text", "kin_for_pronoun", "asks_nothing", "without_invented_exclusion", "without_emoji",
           "previous_subject", "strays_from", "names_only", "with_subject", "with_name_swapped", "asked_again",
           "for_the_new_name"]


def _words(text: str) -> list[str]:
    return tokens(text, "word")


def _stem(word: str) -> str:
    # Crude on purpose: "countries"/"country" and "Byron's"/"Byron" must match;
    # a lenient guard only falls back when the question is clearly lost.
    return prefix_stem(re.sub(r"'s$", "", word))


def _content(text: str) -> set[str]:
    return {_stem(w) for w in _words(text) if w not in DRIFT_STOPWORDS}


def same_words(a: str, b: str) -> bool:
    return _words(a) == _words(b)


# What a user types between questions ("ok", "hmm", "thanks") or by mistake
# ("a", "?x") asks nothing: given it with a history, the trained model made
# a question up out of the history, and the search ran on that. Only these
# words alone: "Why?", "How so?" and "Yes, ideologically." are follow-ups,
# and so is a yes or no asked back ("No?" after "Was she ever married?").
# "Nice" and "Ty" are names as often.
_ACKNOWLEDGEMENTS = frozenset("""ok okay kk hmm hm hmmm mm um uh huh ah oh wow cool great yes yeah yep no nope
    sure thanks thank thx lol haha""".split())
_ANSWERS = frozenset("yes yeah yep no nope".split())
# One letter of a script with capitals and nothing else but punctuation ("a",
# "?x"): "U.S.?" and "p.m.?" are abbreviations, a lone Chinese character a word.
_LONE_LETTER = re.compile(r"[\W_]*([^\W\d_])[\W_]*")


def asks_nothing(question: str) -> bool:
    """Whether ``question`` has nothing for a rewrite to make self-contained:
    no word at all ("?!"), only acknowledgements ("ok", "hmm, thanks"), or
    one lone letter of a script with capitals ("a", "?x").

    >>> [asks_nothing(q) for q in ("a", "Ok.", "hmm, thanks", "?!", "?x", "Why?", "How so?", "5?", "Yes, ideologically.")]
    [True, True, True, True, True, False, False, False, False]
    >>> [asks_nothing(q) for q in ("U.S.?", "p.m.?", "No?", "no", "Nice?", "\u8c01?")]
    [False, False, False, True, False, False]
    """
    letter = _LONE_LETTER.fullmatch(question.strip())
    if letter:
        return letter[1].lower() != letter[1].upper()
    words = _words(question)
    return all(word in _ACKNOWLEDGEMENTS and not (word in _ANSWERS and "?" in question) for word in words)


def drift_reason(question: str, history: Sequence[str], candidate: str, config: RewriterConfig = RewriterConfig()) -> str:
    """Why ``candidate`` cannot stand for ``question`` ("" when it can).

    >>> drift_reason("What did she write?", ["Who was Ada?", "A mathematician."], "What did Ada write?")
    ''
    >>> drift_reason("What did she write?", ["Who was Ada?", "A mathematician."], "Who was Ada?")
    'the rewrite repeats an earlier question'
    """
    if not _words(candidate):
        return "the rewrite was empty"
    if same_words(candidate, question):
        return ""
    if any(same_words(candidate, past) for past, _ in turns(history)):
        return "the rewrite repeats an earlier question"
    if len(_words(candidate)) > len(_words(question)) + config.max_added_words:
        return "the rewrite was much longer than the question"
    wanted = _content(question)
    if wanted:
        kept = len(wanted & _content(candidate)) / len(wanted)
        if kept < config.min_content_overlap:
            return f"the rewrite kept only {kept:.0%} of the question's content words"
    return name_damage(question, history, candidate)


# A name the user typed is the subject the user chose: the trained model at
# times put the history's subject in its place ("Who called Twain ...?" ->
# "Who called Ernest Hemingway ...?") or beside it ("Where was Michelangelo
# Leonardo da Vinci born?"), and the search then looked for the wrong person.
# A name's words are the kernel's :func:`~assistant.kernel.name_runs`
# (capitalised words, the particles inside a name, a possessive ending one;
# a sentence's first word and the function words "The", "When", "I" no
# name). Titles and the words a place's name is put with (the kernel's
# PLACE_NAME_WORDS: "Dr. Fauci", "Mount Everest", "the Nile River") name no
# one by themselves: the model adding or dropping one keeps the name, and
# one the history wrote beside another name ("President Grant") is not that
# person's name.
_TITLES = frozenset(title.lower() for title in SHORT_TITLES) | PLACE_NAME_WORDS | frozenset("""miss mme mlle sir dame lord lady
    king queen prince princess duke duchess emperor empress pope president general captain university college""".split())


def _acronym(word: str) -> bool:
    # "NP", "U.S.", "VCs": the model spelling one out ("nurse practitioner") keeps it.
    letters = re.sub(r"(?<=[A-Z])s$|[.'’]", "", word)
    return len(letters) > 1 and letters.isalpha() and letters.isupper()


def _name_piece(piece: str) -> bool:
    return bool(name_runs(piece, first=True)) or piece in NAME_PARTICLES


def name_damage(question: str, history: Sequence[str], candidate: str) -> str:
    """Why ``candidate`` no longer names what ``question`` named ("" when it
    does): a name the user typed (a capitalised word not opening a sentence,
    an acronym, a title and an initial aside) is missing from it, or it put
    right beside one a whole name the history gives someone else
    ("Michelangelo Leonardo da Vinci"), or another one's first name before a
    surname the history gave with its own ("Andy Chilton" after "Alex
    Chilton"). A typed surname made the full name the history gives
    ("Twain" -> "Mark Twain"), and a name completed where the history gives
    no other ("Einstein" -> "Albert Einstein"), still name the one the user
    typed. Words are
    compared as the kernel's :func:`~assistant.kernel.name_words` gives them
    (case, accents and a possessive aside) and by the guard's crude stem
    ("Africa" is kept in "African"). Where the conversation names no one
    at all, a name the rewrite puts in that no text of it gives is
    damage too: the model's own choice of a subject.

    >>> history = ["Who was Mark Twain?", "An American writer.", "Who was Ernest Hemingway?", "An American novelist."]
    >>> name_damage("Who called Twain the father of American literature?", history,
    ...             "Who called Ernest Hemingway the father of American literature?")
    'the rewrite lost the name Twain'
    >>> name_damage("Who called Twain the father of American literature?", history,
    ...             "Who called Mark Twain the father of American literature?")
    ''
    >>> name_damage("Where was Michelangelo born?", ["Who was Leonardo da Vinci?", "A painter."],
    ...             "Where was Michelangelo Leonardo da Vinci born?")
    'the rewrite put Leonardo da Vinci beside the name Michelangelo'
    >>> name_damage("What about her?", ["only one"], "What about Grigory Potemkin?")
    'the rewrite put in the name Grigory Potemkin, which the conversation never gave'
    """
    # In the question's order, so that the note names the first one lost.
    runs = name_runs(question)
    typed = [word for run in runs for word in run if _typed_name(word)]
    if not typed:  # most questions
        return _invented_name(question, history, candidate)
    texts = [question, *history]
    written = {_stem(word) for word in name_words(candidate)}
    for word in typed:
        if not {_stem(w) for w in name_words(word)} <= written and not _common_noun(word, texts):
            # A numeral alone says little: "lost the name World War I".
            lost = next((" ".join(run) for run in runs if word in run), word) if name_words(word) == {"i"} else word
            return "the rewrite lost the name " + without_possessive(lost)
    asked = NAME_PIECE.findall(question)
    given = NAME_PIECE.findall(candidate)
    matcher = SequenceMatcher(None, [p.lower() for p in asked], [p.lower() for p in given], autojunk=False)
    known: list[set[str]] | None = None  # the history's names, read only when a name went in beside a typed one
    surnames: list[set[str]] = []
    for op, q_start, _, r_start, r_end in matcher.get_opcodes():
        inserted = given[r_start:r_end]
        if op != "insert" or not all(_name_piece(piece) for piece in inserted):
            continue
        # An owner put before a name ("Napalm Death's Time Waits for No Slave",
        # "Uncle Tupelo's Jay Farrar") is no part of it.
        owners = [i for i, piece in enumerate(inserted) if POSSESSIVE_END.search(piece)]
        inserted = inserted[owners[-1] + 1:] if owners else inserted
        added = _person_words(" ".join(inserted))
        if not added:
            continue
        beside = [word for word in (bare_piece(asked[i]) for i in (q_start - 1, q_start) if 0 <= i < len(asked))
                  if word in typed and not _common_noun(word, texts)]
        if not beside:
            continue
        if known is None:
            runs = [(run, _person_words(" ".join(run))) for text in history for run in name_runs(text, first=True)]
            known = [name for _, name in runs if name]
            # The last words of the history's names of more than one word ("Chilton" of "Alex Chilton's").
            surnames = [_person_words(run[-1]) for run, name in runs if len(name) > 1]
        # Only a whole name of another person in the history is refused: a
        # single word of one ("Ford" from "Henry Ford" in "the Ford Mustang",
        # "Obama" from "Barack Obama" in "Michelle Obama") may well be the
        # typed one's own, unless the typed word is itself a whole name there
        # ("Michelangelo" in an answer). A name the history gives whole, of the
        # typed word and what went in beside it, is that one's name.
        if any(added | name_words(word) <= name for word in beside for name in known):
            continue
        whole = added in known and (len(added) > 1 or any(_person_words(word) in known for word in beside))
        # A surname with its particle ("da Vinci") is one family's or place's, not a name shared by marriage or birth.
        borrowed = any(piece in NAME_PARTICLES for piece in inserted) and any(added < name for name in known)
        # A surname the history gave with its first name ("Alex Chilton") got
        # another one's first name put before it ("Andy Chilton", from "Andy Hummel").
        after = bare_piece(asked[q_start]) if q_start < len(asked) else ""
        retitled = after in beside and _person_words(after) in surnames and added <= set().union(*known)
        if whole or borrowed or retitled:
            return f"the rewrite put {' '.join(inserted)} beside the name {beside[0]}"
    return ""


def _typed_name(word: str) -> bool:
    # A title ("Dr.", "Mount") or an initial ("J.") is no name the user chose
    # on its own; a name's numeral "I" ("World War I", which name_runs
    # keeps apart from the pronoun) is: "World War II" is another name.
    return word not in NAME_PARTICLES and not _acronym(word) and word.lower() not in _TITLES and (len(word) > 1 or word == "I")


def _person_words(text: str) -> set[str]:
    return name_words(text) - NAME_PARTICLES - _TITLES


# Where the conversation names no one at all, a name the rewrite puts in came
# from the model alone: on the training turns it was the wrong subject each
# time ("its operational costs" after "Which is the biggest commercial
# plane?" became the Boeing 777-300ER's, the people asked about the Airbus
# A380's), and "What about her?" after "only one" became "What about Grigory
# Potemkin?". A name the user or an answer gave, or any of its words written
# in the conversation in whatever case, is not put in.
def _invented_name(question: str, history: Sequence[str], candidate: str) -> str:
    texts = [*history, question]
    # Cheapest first: a rewrite with no capital past its first letter, and a
    # conversation with a name word (its first one ends the look, an early
    # question's most often), are most.
    if candidate[1:] == candidate[1:].lower() or any(
            name_word(bare_piece(piece.group())) for text in texts for piece in NAME_PIECE.finditer(text)):
        return ""
    runs = [run for run in name_runs(candidate) if any(word not in NAME_PARTICLES and not _acronym(word) for word in run)]
    said = {_stem(word) for text in texts for word in name_words(text)}
    for run in runs:
        if not any({_stem(part) for part in name_words(word)} <= said for word in run if word not in NAME_PARTICLES):
            return "the rewrite put in the name " + without_possessive(" ".join(run)) + ", which the conversation never gave"
    return ""


# "did she sing in any other clubs?" became "did Billie Holiday sing in any
# other clubs other than the Red Door?", "Any other children?" "Any other
# children besides Mirwais, Malik, and Zeenat Quraishi?": an exclusion the
# model added, naming what no text of the conversation gives (the history
# said Covan's; Malik was no child of theirs), and the search then looked
# for the made-up name. The human rewrites of the training turns add such an
# exclusion often, but almost always of what the history gave.
_EXCLUSION = r"(?:besides|other than|apart from|aside from|except(?: for)?|excluding|in addition to)"
_ANY_EXCLUSION = re.compile(rf"\b{_EXCLUSION}\b", re.IGNORECASE)
_EXCLUSION_AT = {
    # "…, other than X?" at the end: cut up to the final punctuation.
    "end": re.compile(rf",?\s+{_EXCLUSION}\b(?P<phrase>[^?!.;:]*?)(?P<end>[?!.]*)$", re.IGNORECASE),
    # "Besides X, did …?" at the start: cut up to the comma.
    "start": re.compile(rf"^{_EXCLUSION}\b(?P<phrase>[^,?!.;:]*),\s*", re.IGNORECASE),
}


def without_invented_exclusion(question: str, history: Sequence[str], candidate: str) -> str:
    """``candidate`` without the exclusion it added at its start or end
    ("besides X", "other than X", …; the question has none) where that
    names someone or something no text of the conversation gives: a name run
    none of whose words (particles and acronyms aside) is written in it ("" when
    there is none to cut). Where the user's own words follow the names
    ("… besides the Red Door in 1935?"), only the exclusion and its names go.

    >>> history = ["Where did Billie Holiday sing?", "She began singing in nightclubs in Harlem, at Covan's."]
    >>> without_invented_exclusion("did she sing in any other clubs?", history,
    ...                            "did Billie Holiday sing in any other clubs other than the Red Door?")
    'did Billie Holiday sing in any other clubs?'
    >>> without_invented_exclusion("did she sing in any other clubs?", history,
    ...                            "did Billie Holiday sing in any other clubs besides Covan's?")
    ''
    >>> without_invented_exclusion("did she sing in other clubs in 1935?", history,
    ...                            "did Billie Holiday sing in other clubs besides the Red Door in 1935?")
    'did Billie Holiday sing in other clubs in 1935?'
    """
    if not _ANY_EXCLUSION.search(candidate) or _ANY_EXCLUSION.search(question):  # most rewrites
        return ""
    for at, pattern in _EXCLUSION_AT.items():
        found = pattern.search(candidate)
        runs = [[word for word in run if word not in NAME_PARTICLES and not _acronym(word)]
                for run in (name_runs(found["phrase"], first=True) if found else [])]
        if not any(runs):
            continue
        said = {_stem(word) for text in [question, *history] for word in name_words(text)}
        if any(run and not any({_stem(part) for part in name_words(word)} <= said for word in run) for run in runs):
            # The names alone where the user's own words follow them ("…
            # besides the Red Door in 1935?"); else the phrase, which runs
            # to the end (or the comma), so it may take words the user typed
            # after the made-up name: losing the user's words is worse than
            # keeping the model's name.
            kept = _without_excluded_names(question, candidate, found, at)
            if not kept and at == "end":
                kept = candidate[:found.start()] + found["end"]
            elif not kept:
                rest = candidate[found.end():]
                kept = rest[:1].upper() + rest[1:]
            if (_content(question) & _content(found[0])) - _content(kept):
                return ""
            return kept
    return ""


# What an exclusion names: names, "the" or "a" before one, and the commas,
# "and" and "or" of a list of them ("besides Mirwais, Malik, and Zeenat Quraishi").
_EXCLUDED_LINKS = frozenset("the a an and or & ,".split())


def _without_excluded_names(question: str, candidate: str, found: re.Match, at: str) -> str:
    """``candidate`` without the exclusion ``found`` (at its ``at``, "end"
    or "start") and the names after it, up to the words the user typed
    after them, which stay ("" where those are not words of the question as
    typed, in its order, or no name comes first)."""
    pieces = list(NAME_PIECE.finditer(found["phrase"]))
    named = 0  # pieces up to the last name word of the names' list
    for count, piece in enumerate(pieces, 1):
        word = bare_piece(piece.group())
        if name_word(word) or _acronym(word):
            named = count
        elif word.lower() not in _EXCLUDED_LINKS and word not in NAME_PARTICLES:
            break
    if not named or named == len(pieces):
        return ""
    after = _words(" ".join(piece.group() for piece in pieces[named:]))
    # The user's words, and not already written elsewhere in the rewrite (the
    # model repeating them before the exclusion, or after a fronted one).
    if not _within(after, _words(question)) or any(
            _within(after, _words(outside)) for outside in (candidate[:found.start()], candidate[found.end():])):
        return ""
    rest = candidate[found.start("phrase") + pieces[named - 1].end():]
    if at == "start":
        rest = rest.lstrip()
        return rest[:1].upper() + rest[1:]
    # The comma after the names (", besides X, in 1935?", "besides X, in
    # 1935?") goes with them, unless the user typed one before those words.
    if rest.lstrip().startswith(",") and not re.search(rf",\s*{re.escape(after[0])}(?!\w)", question, re.IGNORECASE):
        rest = rest.lstrip()[1:]
    return candidate[:found.start()] + rest


def _within(words: list[str], text: list[str]) -> bool:
    return bool(words) and any(text[start:start + len(words)] == words for start in range(len(text) - len(words) + 1))


def _common_noun(word: str, texts: Sequence[str]) -> bool:
    # A capitalised word the conversation also writes in lower case is a
    # common noun the user stressed ("the Dinosaur era" after "dinosaurs").
    stem = _stem(word.lower())
    written = re.compile(rf"(?<![\w'’.-]){re.escape(stem)}[\w'’.-]*")
    return any(piece.islower() and _stem(bare_piece(piece)) == stem for text in texts for piece in written.findall(text))


# A question that names its new subject in full leaves nothing to resolve,
# and in mid-conversation it starts a new topic: one asking who or what a
# name is ("Who was Ernest Hemingway?", "What is the Danube?"), and one that
# opens by naming whom it goes on to ("And Marco Polo, when did he travel?",
# "Back to Leonardo: which period was he of?"). QReCC, CANARD and CAsT
# hold very few such turns to learn from, and the trained model glued the
# earlier subject on ("Who was Ernest Hemingway, Mark Twain?"), took the
# fronted name's "he" for the earlier subject, and went on taking "he" for
# the earlier subject in the turns after.
_NAME = r"[A-Z][\w'’.-]*"
# The particles inside a name (the kernel's, which the drift guard reads names by), and "of", "the", "and" of a title.
_NAME_LINKS = "|".join(["of", "the", "and", *sorted(NAME_PARTICLES, key=lambda p: (-len(p), p))])
_FULL_NAME = rf"{_NAME}(?:\s+(?:{_NAME}|{_NAME_LINKS}))*"
_DEFINED = r"(?i:is|was|are|were)\s+(?:(?i:the|a|an)\s+)?(?P<defined>" + _FULL_NAME + r")\s*\??"
_NEW_SUBJECT = re.compile(rf"(?i:who|what)\s+{_DEFINED}")
# Whom a later "he" or "she" means: a new person, or a name put first. "What
# was the British Music Experience?" leaves "What did she do next?" about the
# singer before it.
_NEW_PERSON = re.compile(
    rf"(?i:who)\s+{_DEFINED}"
    rf"|(?i:and|but|now|back\s+to|what\s+about|how\s+about|as\s+for)\s+{_FULL_NAME}\s*[,:]\s+\S.*"
)


def names_new_subject(question: str) -> bool:
    """Whether ``question`` asks who or what a capitalised name is, or
    opens by naming whom it is about after "and", "back to" or the like.

    >>> names_new_subject("Who was Vasco da Gama?"), names_new_subject("And Marco Polo, when did he travel?")
    (True, True)
    >>> names_new_subject("What is its population?"), names_new_subject("Who was Ada's father?")
    (False, False)
    """
    question = " ".join(question.split())
    return bool(_NEW_SUBJECT.fullmatch(question) or _NEW_PERSON.fullmatch(question))


# "Which of the two was older?" after "Who was X?" and later "Who was Y?"
# asks about both of them: the trained model named one of them, or neither
# ("Which of Marie Curie's two ..."), and a search for the question as asked
# finds neither. The two are the latest two subjects the questions named as
# new ones (asked who or what a name is, or opened with it).
# Verbs ending in "s" that follow "the two" where a plural noun ("the two
# poets") may stand: the names go before them ("the two, X and Y, was ...").
_S_VERBS = "(?:is|was|has|does|goes|says|gets|makes|comes|lives|seems|remains|appears|looks|holds|takes|gives|wins|uses)"
_TWO = re.compile(rf"(?i)\b(?P<which>which|who|either|neither|each|both)\s+of\s+them\b"
                  rf"|\bthe\s+two(?P<kind>\s+(?!{_S_VERBS}\b)[a-z]+s\b)?(?P<end>\s*[?.!])?")
_NAMED = re.compile(
    rf"(?P<asked>(?i:who|what))\s+{_DEFINED}"
    rf"|(?i:and|but|now|back\s+to|what\s+about|how\s+about|as\s+for)\s+(?P<fronted>{_FULL_NAME})\s*[,:]\s+\S.*"
)


def the_two_named(question: str, history: Sequence[str]) -> str:
    """``question`` with the two subjects it compares put in for "the two"
    or "which of them" ("" when it compares none, or the history's
    questions named fewer than two subjects).

    >>> history = ["Who was Isaac Newton?", "An English polymath.", "Who was Gottfried Wilhelm Leibniz?", "A German polymath."]
    >>> the_two_named("Which of the two developed calculus first?", history)
    'Which of the two, Isaac Newton and Gottfried Wilhelm Leibniz, developed calculus first?'
    >>> the_two_named("Which of them was German?", history), the_two_named("Which of the two was older?", history[2:])
    ('Which of Isaac Newton and Gottfried Wilhelm Leibniz was German?', '')
    """
    question = " ".join(question.split())
    lowered = question.lower()
    found = _TWO.search(question) if "two" in lowered or "them" in lowered else None
    if not found:
        return ""
    subjects: list[str] = []
    for asked, _ in turns(history):
        named = _NAMED.fullmatch(" ".join(asked.split()))
        if named:
            name = named["defined"] or named["fronted"]
            subjects = [subject for subject in subjects if subject != name] + [name]
    if len(subjects) < 2:
        return ""
    pair = f"{subjects[-2]} and {subjects[-1]}"
    if found["which"]:
        named = f"both {pair}" if found["which"].lower() == "both" else f"{found['which']} of {pair}"
    else:
        named = f"the two{found['kind'] or ''}, {pair}" + (found["end"].strip() if found["end"] else ",")
    return question[: found.start()] + named + question[found.end():]


# "And Aristotle?" after "When was Plato born?": a name alone after "and" or
# "what about" asks the previous question again of it. The trained model
# wrote the previous name back ("And Plato?", which the drift guard refused)
# or dropped the predicate's end ("When was Aristotle?").
_ELLIPSIS = re.compile(rf"(?i:and|what\s+about|how\s+about)\s+(?P<the>(?i:the)\s+)?(?P<name>{_FULL_NAME})\s*\?")
_TRAILING_LINKS = re.compile(rf"(?:\s+(?:{_NAME_LINKS}))+$")


def with_name_swapped(question: str, history: Sequence[str]) -> str:
    """For ``question`` that is only "And" (or "What about") and a name,
    the previous question asked of that name instead of the one it named,
    its possessive written for the new name ("" where the previous question
    named no name, or more than one, or this one, or its answer named this
    one; where ``question`` asks more than the name, or of its possession:
    "And Aristotle's teacher?" is no one's birth).

    >>> with_name_swapped("And Aristotle?", ["Where did Plato teach?", "At the Academy"])
    'Where did Aristotle teach?'
    >>> with_name_swapped("What about the Amazon?", ["How long is the Nile?", "7,088 km"])
    'How long is the Amazon?'
    >>> with_name_swapped("And Beethoven?", ["What was Moses' mission?", "The Exodus"])
    "What was Beethoven's mission?"
    >>> [with_name_swapped(q, ["Who taught Plato?", "Socrates"]) for q in ("And Aristotle's teacher?", "And Plato?")]
    ['', '']

    Only where the name was all of a name of its own the previous question
    was about: not a word of a title ("The Lord of the Rings"), nor a thing
    "the" goes before where the new name has none ("the World Cup"), nor
    what a "who" did something to ("Who won Wimbledon?": "And Nadal?" asks
    what he won).

    >>> [with_name_swapped("And Argentina?", [q, "Germany"]) for q in ("Who won the World Cup in 2014?", "Who won Wimbledon?")]
    ['', '']
    >>> with_name_swapped("What about The Hobbit?", ["Who wrote The Lord of the Rings?", "J. R. R. Tolkien"])
    ''

    What only a person has (a birth, a death, a wife) is asked only of a
    name the default collection gives a lifespan
    (:func:`~rewriting._people.a_person`) or the conversation said is a
    person: "And Paris?" after "When was Plato born?" asks no birth.

    >>> born = ["When was Plato born?", "c. 428 BC"]
    >>> with_name_swapped("And Paris?", born), with_name_swapped("And Paris?", ["Who was Paris?", "A Trojan prince.", *born])
    ('', 'When was Paris born?')

    Where that was had in the old name ("died in World War II", "born in
    Paris in 2020"), the new name must be where such things are had, of the
    old one's kind (:func:`_another_kind`): an event for an event, a city
    for a city; not a person. A person's possession ("died in Napoleon's
    wars") is no such where; nor a name a noun follows ("died during the
    Union Army campaign").

    >>> died = ["How many people died in World War II?", "About 70 million."]
    >>> with_name_swapped("And World War I?", died), with_name_swapped("And Einstein?", died)
    ('How many people died in World War I?', '')
    """
    found = _ELLIPSIS.fullmatch(" ".join(question.split()))
    name = found["name"] if found else ""
    typed = name_runs(name, first=True)
    # One name, all of it ("And I?", "And The?" name no one), no owner of something unsaid.
    if len(typed) != 1 or len(typed[0]) != len(name.split()) or not any(map(_typed_name, typed[0])) or POSSESSIVE_END.search(name):
        return ""
    asked = [(" ".join(earlier.split()), answer) for earlier, answer in turns(history) if not asks_nothing(earlier)]
    if not asked or _ELLIPSIS.fullmatch(asked[-1][0]):
        return ""
    latest, answer = asked[-1]
    # "What is the capital of France?" "Paris." "And Paris?" asks about the answer.
    if _person_words(name) <= name_words(latest) | name_words(answer) or _asks_for_the_doer(latest):
        return ""
    old = _the_one_name(latest)
    if old is None or bool(found["the"]) != bool(re.search(r"(?i:\bthe)\s+$", latest[: old.start()])):
        return ""
    # "How many people died in World War II?": the deaths are the people's,
    # in the war, so the new name is asked of where things happen too
    # (:func:`_another_kind` decides), not of a person. Only where the old
    # name ends the question, or a when does ("in 2020"): not a person's
    # possession ("died in Napoleon's wars"), nor a name before what it
    # happened in ("died during the Union Army campaign").
    within = _WITHIN.search(latest[: old.start()])
    if within and not _SIZE_AFTER.fullmatch(latest[old.end():]):
        within = None
    # "When was Plato born?" "And Paris?" is no question of a birth: where
    # only a person has what was asked, only of a name the default collection
    # gives a lifespan ("When was Georgia born?", "When was Apple born?" ask
    # nothing), a title gives a person's, or the conversation said is a
    # person (asked "Who was …?" of it, or gave it a he or a she). The old
    # name's own words count ("When was Born in the U.S.A. released?").
    around = latest[: within.start()] + latest[within.end():] if within else latest
    if _ONLY_A_PERSON.search(around) and not (a_person(name) or _persons_title(name) or _said_to_be_a_person(name, history)):
        return ""
    written = old.group()
    unmarked = without_possessive(written)
    # "What is Platonism?" and "What is Newtonian mechanics?" name Plato's
    # teaching and Newton's, not a name "And Aristotle?" stands for.
    if (_DERIVED.search(written) or _of_a_person(unmarked)) and not _DERIVED.search(name):
        return ""
    if _another_kind(name, old, latest, answer, history, within=bool(within)):
        return ""
    # "When was Cambridge University founded?": "And Oxford?" asks of the
    # university, "When was Oxford founded?" of the town.
    # A person's name may open with a kind's word ("River Phoenix", "Lake
    # Bell"): where only a person has what was asked (not a death in the
    # place: "How many people died in Lake Tanganyika?"), that word says none.
    name = _with_the_kind_word(name, unmarked, first=not _ONLY_A_PERSON.search(around))
    if not name:
        return ""
    mark = written[len(unmarked):]
    # "Moses' mission" → "Aristotle's mission": the mark alone after an "s" only.
    if mark and len(mark) == 1 and not name.endswith("s"):
        mark += "s"
    rest = latest[old.end():]
    if name.endswith(".") and rest.startswith("."):
        rest = rest[1:]
    return latest[: old.start()] + name + mark + rest


# A word made of a name and an ending: a teaching or its follower ("Platonism", "Marxist").
_DERIVED = re.compile(r"\B(?:ism|isms|ist|ists)$")
# A title only a person has and one given name, a regnal number aside
# ("Queen Elizabeth II", "Prince Edward"); not "St." ("St. Louis"), nor a
# place's or a thing's name a title opens ("Prince Edward Island", "King
# Kong", "Dr Pepper", "Lady Liberty", "Princess Cruises").
_A_PERSONS_TITLE = r"(?:King|Queen|Prince|Princess|Emperor|Empress|Pope|Sir|Dame|Lady|Lord|Mr|Mrs|Ms|Dr)\.?\s+"
_PERSONS_TITLE = re.compile(_A_PERSONS_TITLE + r"(?P<given>[A-Z][a-z]+)(?:\s+[IVX]+)?")
# A person's title and a whole name ("Sir Isaac Newton").
_TITLED_NAME = re.compile(_A_PERSONS_TITLE + r"(?P<name>[A-Z]\S*(?:\s+\S+)+)")
# A person's name and an ending: what is named after the person ("Newtonian",
# "Shakespearean", "Platonic", "Kafkaesque"); not a given name ("Julian",
# "Eric"), whose stem is no one's.
_OF_A_PERSON = ("ian", "ean", "an", "ic", "nic", "esque")


def _persons_title(name: str) -> bool:
    titled = _PERSONS_TITLE.fullmatch(name)
    # The given name one of a person the default collection knows ("Edward"),
    # or the whole one's ("Queen Victoria"); or a title before the whole name
    # of a person the collection knows ("Sir Isaac Newton"; not "Prince Edward Island").
    whole = _TITLED_NAME.fullmatch(name)
    return (bool(titled) and (a_given_name(titled["given"]) or "person" in kinds_of(titled["given"]) | kinds_of(name))
            or bool(whole) and a_person(whole["name"]))


def _with_the_kind_word(new: str, old: str, first: bool = True) -> str:
    # ``new`` put for ``old``, a name whose first or last word says what it
    # names (the kernel's NAME_KIND_WORDS: "Lake Tanganyika", "Harvard
    # University"), where ``new`` lacks that word: with the word where the
    # default collection knows that name of that kind ("Lake Victoria", not
    # "Victoria", a city and a queen too), as typed where it knows ``new``
    # of that kind ("Yale", "the Nile"), else "". A name after the word is
    # that name without it too ("Mount Everest" is Everest), so one the
    # collection knows nothing of is taken as typed ("Burj Khalifa"); a
    # name before the word is no name of it alone ("Cambridge University":
    # "When was Oxford founded?" asks of the town). Only the last word where
    # not ``first``.
    words = old.split()
    if len(words) < 2:
        return new
    # A word of ``new`` saying the same kind keeps it ("And Trinity College?" after Oxford University).
    typed = {NAME_KIND_WORDS.get(word) for word in new.lower().split()}
    put = new
    # Both words where both say a kind ("Mount Holyoke College": a town's
    # word and a college's), either refusing refuses.
    for word, named, after in ((words[0], f"{words[0]} {new}", True), (words[-1], f"{new} {words[-1]}", False))[0 if first else 1:]:
        kind = NAME_KIND_WORDS.get(word.lower())
        if kind is None or kind in typed:
            continue
        if kind in kinds_of(named):
            # One word put in, not both ("Mount Wellesley College" is no one's name).
            if put != new:
                return ""
            put = named
            continue
        known = kinds_of(new)
        if not (kind in known or after and not known):
            return ""
    return put


def _of_a_person(name: str) -> bool:
    # One word made of a person's name and an ending ("Newtonian", "Hegelian").
    return len(name.split()) == 1 and any(name.endswith(end) and len(name) > len(end) + 2 and a_person(name[: -len(end)])
                                          for end in _OF_A_PERSON)


def _another_kind(new: str, old: re.Match[str], previous: str, answer: str, history: Sequence[str], within: bool = False) -> bool:
    # Whether ``new`` is of another kind than ``old`` (the name as written
    # in ``previous``, the previous question), so ``previous`` asked of it
    # asks nothing: "What is the capital of London?",
    # "Who is the president of Merkel?", "What currency does Euro use?",
    # "How many people speak China?". The kinds are what the default
    # collection says each name is (:func:`~rewriting._people.kinds_of`);
    # one the conversation said is a person is one ("Who was Paris?").
    # ``within``: ``old`` is where a person-only thing happened ("died in
    # World War II"), so ``new`` must be such a where too, by a kind both
    # share other than a person's ("Paris" and "London"), or both events
    # by their words (:func:`_an_event`): a war for a war, not "Japan",
    # "Hitler" or the "Korean Peninsula" for the "Korean War".
    old_name = without_possessive(old.group())
    new_kinds = frozenset(["person"]) if _said_to_be_a_person(new, history) else kinds_of(new)
    old_kinds = kinds_of(old_name)
    if within:
        if _an_event(old_name) or _an_event(new):
            return not (_an_event(old_name) and _an_event(new))
        return not (new_kinds & old_kinds) - {"person"}
    # A people or a tongue for what is none ("And Spanish?" after Brazil's
    # language), or a known name of another kind for one ("And China?"
    # after Spanish's speakers). A name the collection does not know may
    # follow a people's word ("Georgian architecture": "And Victorian?").
    new_speech, old_speech = _a_people_or_a_language(new, new_kinds), _a_people_or_a_language(old_name, old_kinds)
    if peoples_word(new) and not peoples_word(old_name) or new_speech != old_speech and (new_speech or new_kinds):
        return True
    # Both known: another kind whatever the answer says, save a place people
    # live in for another whose size is asked ("And Japan?" after Tokyo's
    # population).
    if new_kinds and old_kinds:
        return not (new_kinds & old_kinds or _size_of_a_place(previous, old, new, new_kinds, old_kinds))
    # One unknown: the new name is of the kind the answer is, a thing of the
    # kind asked for ("Paris." for a capital, so "And London?" names one).
    bare = re.sub(r"(?i)^\s*(?:the|an?)\s+|[\s.!]+$", "", answer)
    return bool(new_kinds & kinds_of(bare))


# A place's own size asked right before its bare name: its people or its
# area ("How many people live in Tokyo?", "What is the population of
# Tokyo?", "How big is Tokyo?"); not a part of it, a thing of it or another
# area ("Tokyo's metro area", "downtown Tokyo", "France's army", "the
# metropolitan area of Tokyo").
_SIZE_BEFORE = re.compile(r"(?i)(?:\b(?:the|total)\s+population\s+of|\b(?:people|inhabitants|residents)\s+(?:live|lived)\s+(?:[a-z]+\s+)?in"
                          r"|\bhow\s+(?:big|large)\s+(?:is|was)|\b(?:the|total|land|surface)\s+area\s+of)\s+(?:the\s+)?$")
# What may follow the name: the question's end, or a when ("in 1900", "today").
_SIZE_AFTER = re.compile(r"(?i)\s*(?:(?:in|by)\s+\d{3,4}|today|now)?\s*\?")
# The kinds of a place people live in.
_PEOPLED = frozenset(("city", "land", "island"))


def _size_of_a_place(previous: str, old: re.Match[str], new: str, new_kinds: frozenset[str], old_kinds: frozenset[str]) -> bool:
    # Whether ``previous`` asks the size of ``old``, a place people live in,
    # which any other such place has: ``old`` bare (no possessive), right
    # after the size's words and ending the question, and no kind of place
    # named (the kernel's nouns: "Which city has the population of Tokyo?").
    # ``new`` such a place by an article of its name, not by one whose name
    # it cuts ("Solomon" of the Solomon Islands), and no person's ("Marshall").
    before, after = previous[: old.start()], previous[old.end():]
    if without_possessive(old.group()) != old.group() or not (_SIZE_BEFORE.search(before) and _SIZE_AFTER.fullmatch(after)):
        return False
    words = {porter_stem(word.lower()) for word in re.findall(r"[A-Za-z]+", previous)}
    whole = kinds_of(new, whole=True)
    return bool(whole & _PEOPLED and old_kinds & _PEOPLED and "person" not in new_kinds | whole and not words & _place_stems())


@lru_cache(maxsize=1)
def _place_stems() -> frozenset[str]:
    return frozenset(porter_stem(noun) for noun in KIND_NOUNS.keys() | PLACE_NOUNS)


def _a_people_or_a_language(name: str, kinds: frozenset[str]) -> bool:
    return peoples_word(name) or "language" in kinds


# What only a person has or does: asked of a place or a thing it is no question.
_ONLY_A_PERSON = re.compile(r"(?i)\b(?:born|birth|birthday|die|died|death|buried|married|marry|wife|husband|spouse|widow|widower"
                            r"|childhood|parents)\b")


# What only a person has or does, where it happened: "died in", "born at",
# "buried during the" right before a name.
_WITHIN = re.compile(_ONLY_A_PERSON.pattern + r"\s+(?:in|at|on|during)\s+(?:the\s+)?$")


# The last word of an event's name ("World War II", "the Russian Revolution",
# "the Boston Massacre"), a number after it aside. Not "Fire" ("Arcade Fire"),
# "Day" ("Doris Day") nor "Battle" ("Kathleen Battle"): other things and
# people end with those.
_EVENT_WORDS = frozenset(("war", "revolution", "rebellion", "uprising", "revolt", "massacre", "genocide", "famine", "siege",
                          "earthquake", "pandemic", "epidemic", "crusade"))
_NUMBER = re.compile(r"(?i)(?:[IVX]+|\d+(?:st|nd|rd|th)?)$")


def _an_event(name: str) -> bool:
    # A name of two words or more whose last word, or the last before a
    # number ("World War II"), says an event.
    words = name.split()
    if len(words) > 2 and _NUMBER.fullmatch(words[-1]):
        words = words[:-1]
    return len(words) > 1 and words[-1].lower() in _EVENT_WORDS


def _said_to_be_a_person(name: str, history: Sequence[str]) -> bool:
    # Asked "Who is/was NAME?", or a he or a she given to it.
    words = _person_words(name)
    for earlier, _ in turns(history):
        found = _NAMED.fullmatch(earlier)
        if found and found["asked"] and found["asked"].lower() == "who" and words <= _person_words(found["defined"]):
            return True
    return bool(_gender_of(name, history))


def _names_in(text: str) -> set[str]:
    # The words of the names ``text`` holds (not its opening word's: "Where").
    return _person_words(" ".join(word for run in name_runs(text) for word in run if _typed_name(word)))


def asked_again(history: Sequence[str]) -> tuple[str, str]:
    """``(old, new)`` where the latest question of ``history`` (as
    rewritten) that was its previous question asked again of another name
    ("How many people live in London?", then "… in Berlin?") was not
    followed by a question naming another than the new one; ``("", "")``
    otherwise.

    >>> asked_again(["How many people live in London?", "9 million", "How many people live in Berlin?", "3.7 million"])
    ('London', 'Berlin')
    >>> asked_again(["When was Plato born?", "428 BC", "When was Aristotle born?", "384 BC", "Where did Aristotle teach?", "Athens"])
    ('Plato', 'Aristotle')
    >>> asked_again(["When was Plato born?", "428 BC", "When was Aristotle born?", "384 BC", "Who was Kant?", "A philosopher"])
    ('', '')
    >>> asked_again(["Who was Ada Lovelace?", "A mathematician.", "Who was Charles Babbage?", "A polymath."])
    ('', '')
    """
    asked = [earlier for earlier, _ in turns(history) if not asks_nothing(earlier)]
    for index in range(len(asked) - 1, 0, -1):
        new, old = _the_one_name(asked[index]), _the_one_name(asked[index - 1])
        # "Who was Charles Babbage?" after "Who was Ada Lovelace?" brings in a
        # new subject (since_new_person's): a later "she" is still Ada.
        if new is None or old is None or names_new_subject(asked[index]):
            continue
        new_name, old_name = without_possessive(new.group()), without_possessive(old.group())
        rest = asked[index][: new.start()] + asked[index][new.end():]
        if same_name(new_name, old_name) or rest.lower() != (asked[index - 1][: old.start()] + asked[index - 1][old.end():]).lower():
            continue
        words = _person_words(new_name)
        if all(_names_in(later) <= words for later in asked[index + 1:]):
            return old_name, new_name
        return "", ""
    return "", ""


def for_the_new_name(question: str, history: Sequence[str], rewrite: str) -> str:
    """``rewrite`` with the new name put back where it named the old one of
    the question asked again (:func:`asked_again`) and ``question`` named
    neither ("" when there is nothing to change): after "How many people
    live in Berlin?" re-asked of London's, "Which state surrounds it?" is
    about Berlin; the trained model took the name the conversation had
    named most often. Only for a he, she, it or "there" of ``question``,
    and not where the old name is a word of a longer name ("London Eye",
    "Tower of London"; before a place's name, other than a kind of place's
    word, "University College London") or owns a work ("Plato's Republic"),
    is written twice, stands beside what no turn since the new name says
    of it ("London, England"), or is written for the kin or the teacher a
    "his" of ``question`` owns ("Leopold Mozart" for "his father").

    >>> history = ["What is London?", "The capital of England.", "How many people live in London?", "9 million",
    ...            "How many people live in Berlin?", "3.7 million"]
    >>> for_the_new_name("Which state surrounds it?", history, "Which state surrounds London?")
    'Which state surrounds Berlin?'
    >>> for_the_new_name("What is its oldest building?", history, "What is London's oldest building?")
    "What is Berlin's oldest building?"
    >>> for_the_new_name("Who founded its school?", history, "Who founded University College London?")
    ''
    >>> mozart = ["When did Mozart die?", "1791", "When did Beethoven die?", "1827"]
    >>> for_the_new_name("Where was he born?", mozart, "Where was Wolfgang Mozart born?")
    'Where was Beethoven born?'
    >>> [for_the_new_name(q, history, r) for q, r in [("Which is bigger?", "Which is bigger, London or Berlin?"),
    ...                                                ("Back to London: who founded it?", "Who founded London?")]]
    ['', '']
    """
    old, new = asked_again(history)
    # Only a he, an it or a "there" the model resolved: a noun the user wrote
    # ("the wheel", "the Republic") names what may be a longer name's.
    if not old or not (_REFERRING.search(question) or _THERE.search(question)):
        return ""
    if _names_in(question) & (_person_words(old) | _person_words(new)) or _person_words(new) <= _names_in(rewrite):
        return ""
    words = _person_words(old)
    # "Where was Mozart born and where did Mozart die?": one of two is no
    # rewrite; which one the he meant, the model said no better.
    if sum(words <= _person_words(" ".join(run)) for run in name_runs(rewrite)) > 1:
        return ""
    # "When did his teacher die?" asks of the new one's teacher: only where
    # the model wrote the old one's ("When did Plato's teacher die?"), not
    # its kin by name ("When did Plato die?", "Who was Leopold Mozart?").
    role = _OWNED_ROLE.search(question)
    if role and not re.search(owned_kin(rf"(?<![\w'’]){re.escape(without_possessive(old))}['’]s?", role["role"].lower(), 2), rewrite):
        return ""
    # The whole name the model wrote it in goes: "Wolfgang Mozart" is no
    # "Wolfgang Beethoven", nor "Albert Einstein" an "Albert Bohr". Only
    # where the words it adds come before the old name's: "London Eye",
    # "Apple Records" or "Tower of London" is no "Berlin Eye".
    last = without_possessive(old).rstrip(".").split()[-1]
    for run in name_runs(rewrite):
        if not words <= _person_words(" ".join(run)):
            continue
        found = re.search(r"(?<![\w'’])" + r"\W+".join(re.escape(word) for word in run) + r"(?!\w)", rewrite)
        if found is None or not same_name_word(without_possessive(run[-1]).rstrip(".").lower(), last.lower()):
            return ""
        # "Tower of London"; "University College London" for "its university".
        added = name_words(" ".join(run)) - words
        if _OF_A_NAME.search(rewrite[: found.start()]) or added & set(_words(question)):
            return ""
        # Words before a person's name are theirs (a first name, a title); before
        # a place's or a thing's (an it, its or there) they name another one
        # ("University College London" for "its school", "Greater London"),
        # a kind of place aside ("Mount Everest" is Everest).
        if added and not _ANY_PRONOUN.search(question) and not added <= PLACE_NAME_WORDS:
            return ""
        written = without_possessive(found.group())
        end = found.start() + len(written)
        # "London, England", "London, UK", "the capital of England", "the
        # country Georgia": what the model wrote of the old one, no text of
        # the new one's turns says of the new ("Berlin, England").
        if (re.match(r",\s*[A-Z]", rewrite[end:]) or re.search(r"\bthe\s+[a-z]+\s+$", rewrite[: found.start()])
                or _names_said_beside(rewrite[: found.start()] + rewrite[end:], question, history, new)):
            return ""
        # An abbreviation's dot ("Apple Inc.") goes with the name it ends.
        if old.endswith(".") and rewrite[end: end + 1] == ".":
            end += 1
        # "Plato's Republic", "Mozart's Requiem", "Plato's allegory of the
        # cave" asked as "the allegory": the old one's work, not the new one's
        # (a "CEO" or "GDP" is anyone's).
        following = re.match(r"\W+([\w’']+)", rewrite[found.end():]) if written != found.group() else None
        if following and ((following[1][:1].isupper() and not following[1].isupper())
                          or re.search(rf"(?i:\bthe\s+{re.escape(following[1])}\b)", question)):
            return ""
        return rewrite[: found.start()] + new + rewrite[end:]
    return ""


_THERE = re.compile(r"(?i)\bthere\b")
# A kin's or a role's word that a his, her or its owns ("his father", "her
# eldest son", "his most famous teacher").
_ROLES = "teacher|teachers|student|students|pupil|pupils|mentor|tutor|master|disciple|disciples|successor|predecessor|rival|friend|partner|patron"
_OWNED_ROLE = re.compile(rf"(?i)\b(?:his|her|its|their)\s+(?:[a-z]+\s+){{0,2}}?(?P<role>{'|'.join(sorted(set(' '.join(KIN_BY_GENDER.values()).split())))}|{_ROLES})\b")


def _names_said_beside(text: str, question: str, history: Sequence[str], new: str) -> bool:
    # Whether ``text`` names what neither ``question`` nor the turns since
    # the question asked of ``new`` name: an acronym or a capitalised name.
    pairs = list(turns(history))
    since = max((index for index, (asked, _) in enumerate(pairs) if _person_words(new) <= _names_in(asked)), default=0)
    said = name_words(question).union(*(name_words(text) for pair in pairs[since:] for text in pair))
    return any(not name_words(word) <= said for run in name_runs(text) for word in run if word not in NAME_PARTICLES)
# "Tower of London", "University of London": a capitalised name's "of" before it.
_OF_A_NAME = re.compile(r"[A-Z][\w’'.]*\s+of\s+(?:the\s+)?$")


def _asks_for_the_doer(question: str) -> bool:
    # "Who founded Apple?", "Which team won Wimbledon?": the name is the
    # object of what the question asks for, not whom it asks about; an
    # auxiliary after "who" or "what N" ("Who was …", "What school did …")
    # leaves the name the subject.
    words = re.findall(r"[\w'’]+", question.lower())
    if len(words) < 3 or words[0] not in ("who", "what", "which") or words[1] in AUXILIARY_VERBS:
        return False
    return words[0] == "who" or words[2] not in AUXILIARY_VERBS


def _the_one_name(text: str) -> re.Match | None:
    # Where the one name ``text`` holds is written, a possessive and an
    # abbreviation's dot on it included ("Apple Inc.?"), when it stands alone:
    # None where ``text`` names more than one, or the name is a word of a
    # longer capitalised title ("The Lord of the Rings").
    runs = [run for run in name_runs(text) if any(_typed_name(word) for word in run)]
    if len(runs) != 1:
        return None
    # The first word only says that the sentence began ("Did Plato …").
    opening = re.match(r"\S*", text).end()
    found = re.search(r"(?<!\w)" + r"\W+".join(re.escape(word) for word in runs[0]) + r"(?!\w)", text)
    spans = [span for span in re.finditer(_FULL_NAME, " " * opening + text[opening:]) if found and span.start() == found.start()]
    if not spans:
        return None
    whole = _TRAILING_LINKS.sub("", spans[0].group())
    if whole.rstrip(".") != found.group().rstrip("."):
        return None
    # A dot the sentence ends with is no abbreviation's ("Tell me about Plato.").
    if whole.endswith(".") and re.match(r"\s*(?:$|[A-Z])", text[found.start() + len(whole):]):
        whole = whole[:-1]
    return re.compile(re.escape(whole)).match(text, found.start())


def since_new_person(history: Sequence[str]) -> list[str]:
    """``history`` from its latest turn that named a new person (asked who
    a name is, or opened with the name) on: a follow-up after "Who was
    Vasco da Gama?" is about him, and the turns before it were about
    someone else (the model took "he" for the person they named more often).

    >>> since_new_person(["Who was Ada?", "A mathematician.", "Who was Byron?", "A poet.", "When did he die?", "1824."])
    ['Who was Byron?', 'A poet.', 'When did he die?', '1824.']
    """
    history = list(history)
    starts = [2 * index for index, (question, _) in enumerate(turns(history)) if _NEW_PERSON.fullmatch(question)]
    return history[starts[-1]:] if starts else history


# Emoji: the pictographs of plane 1 (faces, flags, skin tones, the
# Supplemental Symbols and Pictographs), and elsewhere (the Miscellaneous
# Symbols, the Dingbats, the enclosed letters and ideographs, the mahjong
# tiles) only what Unicode shows as emoji by default (Emoji_Presentation) or
# what a variation selector asks to be shown as one: those blocks hold text
# symbols too, a chess piece, the signs of "\u2642 or \u2640?", a star rating
# or a check mark, which a question asks about. A rewrite is a search query
# and the self-contained question shown for the turn: emoji ask nothing
# there. The model copied the question's ("Who is she?" and a smiley), moved
# them, or brought in one of the history's, and each emoji variant of one
# reading counted as a reading of its own in the candidates' consensus. The
# user's own turn keeps them.
_PRESENTED = ("\u231A\u231B\u23E9-\u23EC\u23F0\u23F3\u25FD\u25FE\u2614\u2615\u2648-\u2653\u267F\u2693\u26A1\u26AA\u26AB"
              "\u26BD\u26BE\u26C4\u26C5\u26CE\u26D4\u26EA\u26F2\u26F3\u26F5\u26FA\u26FD\u2705\u270A\u270B\u2728\u274C\u274E"
              "\u2753-\u2755\u2757\u2795-\u2797\u27B0\u27BF\u2B1B\u2B1C\u2B50\u2B55\U0001F004\U0001F0CF\U0001F18E"
              "\U0001F191-\U0001F19A\U0001F201\U0001F21A\U0001F22F\U0001F232-\U0001F236\U0001F238-\U0001F23A\U0001F250\U0001F251")
_PICTOGRAPHS = "\U0001F1E6-\U0001F1FF\U0001F300-\U0001F6FF\U0001F7E0-\U0001F7FF\U0001F900-\U0001F9FF\U0001FA70-\U0001FAFF"
# The symbols of those blocks a following emoji selector (U+FE0F) shows as
# emoji ("\u2764\ufe0f"); letterlike signs and arrows ("\u00a9\ufe0f", "\u2194\ufe0f")
# keep their meaning in a question and stay.
_SELECTABLE = "\u2300-\u23FF\u25A0-\u27BF\u2B1B-\u2B55\u3030\u303D\u3297\u3299\U0001F000-\U0001F2FF"
# What builds an emoji sequence: the selectors, a keycap's mark, a flag's
# tags, a skin tone. Left alone they are deleted, not spaced: a keycap's
# digit stays, and a year typed in keycaps reads as its digits.
_MARKS = "\uFE0E\uFE0F\u20E3\U000E0020-\U000E007F"
_ONE = f"(?:[{_PICTOGRAPHS}{_PRESENTED}]|[{_SELECTABLE}]\uFE0F)[{_MARKS}\U0001F3FB-\U0001F3FF]*"
# A zero-width joiner is part of an emoji only next to a pictograph (a
# family): inside an Indic word (Sinhala's "Sri", a Malayalam chillu) it
# shapes the letters and stays. Emoji go with the spaces around them.
_RUN = f"\u200D*{_ONE}(?:\u200D*{_ONE})*\u200D*"
_EMOJI = re.compile(f"(?P<emoji>\\s*{_RUN}(?:\\s*{_RUN})*\\s*)|[{_MARKS}]+")
# Where emoji stood between two words a space stays; before the punctuation
# that closes a clause or a bracket, after a bracket that opens one, and at
# either end, nothing: "Who is he \U0001F914, really?" is "Who is he, really?",
# not "Who is he , really?". A dot or comma going on into a word (".NET",
# "1,000") closes nothing, nor does a smiley (":)", ":-)"); marks close
# before an end, a space, a closing quote or bracket. A straight quote opens
# after a space and closes before an end or a space, closing marks aside
# (not "'n'", a possessive's "'s", nor '"(really)"', '"..."' or '"\u00bfQu\u00e9?"'). An
# emoji after them is dropped too, so it ends nothing either.
_SPACE_OR_EMOJI = f"$|[\\s{_PICTOGRAPHS}{_PRESENTED}{_SELECTABLE}{_MARKS}\u200D]"
_CLOSES = re.compile(rf"(?![:;][)\]}}])[,.;:?!\u2026]+(?={_SPACE_OR_EMOJI}|[\"'\u2019\u201d\u00bb)\]}}])|[)\]}}\u201d\u00bb]"
                     rf"|[\"'](?=[,.;:?!\u2026)\]}}]*(?:{_SPACE_OR_EMOJI}))")
_OPENS = re.compile(r"[(\[{\u201c\u00ab\u00bf\u00a1]|(?:^|(?<=\s))[\"']")


def _dropped(found: re.Match) -> str:
    if not found["emoji"]:
        return ""
    text, start, end = found.string, found.start(), found.end()
    between = 0 < start and end < len(text) and not _OPENS.match(text, start - 1) and not _CLOSES.match(text, end)
    return " " if between else ""


def without_emoji(text: str) -> str:
    """``text`` without emoji, its spaces closed up (none left before the
    punctuation an emoji stood before): what the rewriter reads of a
    question or an earlier turn, and what it writes.

    >>> without_emoji("Who is she? \U0001F60A"), without_emoji("Is 30 \u00b0C hot \U0001F44D\U0001F3FD?"), without_emoji("C\u266f  minor")
    ('Who is she?', 'Is 30 \u00b0C hot?', 'C\u266f  minor')
    >>> without_emoji("What happened in 1\ufe0f\u20e39\ufe0f\u20e35\ufe0f\u20e34\ufe0f\u20e3?"), without_emoji("Which piece is \u265e?")
    ('What happened in 1954?', 'Which piece is \u265e?')
    >>> without_emoji("Who is he \U0001F914, really?")
    'Who is he, really?'
    """
    if text.isascii() or not _EMOJI.search(text):  # most texts, the first test the faster
        return text
    return " ".join(_EMOJI.sub(_dropped, text).split())


def clean_output(text: str) -> str:
    """First line of the model's output, without quotes, a leading label or emoji.

    >>> clean_output('Rewrite: "Who is Ada Lovelace? \U0001F60A"')
    'Who is Ada Lovelace?'
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[0] if lines else ""
    line = re.sub(r"^(rewrite|rewritten question|question)\s*:\s*", "", line, flags=re.IGNORECASE)
    line = without_emoji(line)
    if len(line) >= 2 and line[0] == line[-1] and line[0] in "\"'":
        line = line[1:-1].strip()
    return line


def refuse_non_text(question: str, history: Sequence[str]) -> None:
    """A lone surrogate (invalid UTF-8 read with errors="surrogateescape", or
    a broken character from an API) makes the tokenizer raise a TypeError;
    say what is wrong instead. A question that is not a string, or a history
    that is not a list of strings (a string is one, letter by letter), would
    be rewritten as its ``str()``: refused too."""
    if not isinstance(question, str):
        raise TypeError(f"the question must be a string, not {type(question).__name__}")
    check_history(history)
    for where, text in [("The question", question), *(("An earlier turn of the conversation", t) for t in history)]:
        try:
            str(text).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError(
                f"{where} contains characters that are not valid text (a lone surrogate, e.g. from invalid UTF-8); "
                "please type it again."
            ) from None


# "Who was her father?" then "When did he die?": the trained model put the
# woman's name in for "he", the name the conversation is about. A pronoun
# says its referent's gender, and the history often says a name's: the
# answer to a question about that person describes them ("X, Countess of
# Lovelace, was ...", "She was ..."). Where the two disagree and the history
# asked about the name's kin of the pronoun's gender, that kin is whom the
# pronoun means, and the answer to that question often names them.
_PRONOUNS = {"he": "he", "him": "he", "his": "he", "himself": "he",
             "she": "she", "her": "she", "hers": "she", "herself": "she"}
_ANY_PRONOUN = re.compile(r"\b(?:" + "|".join(_PRONOUNS) + r")\b", re.IGNORECASE)
# Sentence-initial pronouns only: inside a sentence "his" or "her" is as
# often someone else's than the subject's.
_OPENING_PRONOUN = re.compile(r"(?:^|[.!?]\s+)(He|His|Him|She|Her)\b")
# The kin and gendered words (owned by the kernel: the reader tells a
# parent's sex by them too).
_KIN = KIN_BY_GENDER
_GENDERED = GENDERED_WORDS
# A gendered word says the subject's gender only where it describes the
# subject: in the few words after "is/was a/an/the" ("was an American
# actress", "was the daughter of") or set beside the name after a comma
# ("Augusta Ada King, Countess of Lovelace"); elsewhere it is as often
# another person ("he had a son with a woman", "his mother"). A kin word
# describes the subject only before "of", and a word before a capitalised
# one is part of another name ("Lord Byron").
_DESCRIBING = re.compile(r"(?:\b(?:is|was)\s+(?:a|an|the)|,)((?:\s+[\w'’-]+){1,4})(?=\s+([\w'’-]+))?")
_KIN_WORDS = frozenset(" ".join(_KIN.values()).split())
_PIECES = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def _genders_said(answer: str) -> set[str]:
    """The genders ``answer``'s sentence-initial pronouns and gendered words
    (:data:`_DESCRIBING`) give.

    >>> sorted(_genders_said("Augusta Ada King, Countess of Lovelace, was the daughter of Lord Byron."))
    ['she']
    >>> sorted(_genders_said("Darin was reared by his maternal grandmother, whom he believed was his mother."))
    []
    >>> sorted(_genders_said("Angle revealed that he had a son with a woman he dated."))
    []
    """
    said = {_PRONOUNS[word.lower()] for word in _OPENING_PRONOUN.findall(answer)}
    for found in _DESCRIBING.finditer(answer):
        words = found.group(1).split()
        for word, after in zip(words, words[1:] + [found.group(2) or ""]):
            if word.lower() in _GENDERED and not after[:1].isupper() and (after == "of" or word.lower() not in _KIN_WORDS):
                said.add(_GENDERED[word.lower()])
    return said


def _gender_of(name: str, history: Sequence[str]) -> str:
    """"he" or "she" when the answers to the history's questions about
    ``name`` (not about its kin: "Ada's father") say that gender only
    (:func:`_genders_said`); "" otherwise."""
    about = re.compile(rf"(?<!\w){re.escape(name)}(?![\w'’])")
    seen: set[str] = set()
    for asked, answer in turns(history):
        if about.search(asked):
            seen |= _genders_said(answer)
    return seen.pop() if len(seen) == 1 else ""


# The answer to "Who was her father?" names him: a reader's span is often the
# name alone ("Lord Byron", "Lord Byron. He was a poet."), a sentence ties
# the kin word to it ("Her father was the poet Lord Byron.", "Lord Byron was
# her father.", "Her father, Lord Byron, ..."). Retrieval and the reader do
# better with that name than with "Ada Lovelace's father".
# Where the name ends: the clause's end, or "and"/"who" going on about him
# ("... Lord Byron and her mother was ...", not "Lord Byron and Lady Byron").
_CLAUSE_END = r"(?=\s*(?:[.,;:!?(]|$)|\s+(?:and|but|who|whom|whose)\s+(?![A-Z]))"
# The name an answer about someone opens with is theirs ("Ada King,
# Countess of Lovelace, was ..." after "Who was Ada Lovelace?") where a
# comma, a bracket or "was"/"is" goes on about that one.
_SUBJECT_OPENING = re.compile(rf"(?P<name>{_FULL_NAME})(?=\s*[,(]|\s+(?:is|was)\b)")


def _named_kin(answer: str, kin: str, pronoun: str, owner: str, owner_gender: str, aliases: Sequence[str] = ()) -> str:
    """The one name ``answer`` gives the ``kin`` ("father") of ``owner``
    (whose gender is ``owner_gender``; the history also calls them each of
    ``aliases``) whom ``pronoun`` means ("" unless exactly one person's
    name, of no other gender than the pronoun's, not the owner under any
    of their names, not two people joined by "and", not another's kin:
    "her father's friend", "her father-in-law").

    >>> _named_kin("Lord Byron.", "father", "he", "Ada Lovelace", "she"), _named_kin("Lady Byron.", "father", "he", "Ada Lovelace", "she")
    ('Lord Byron', '')
    >>> _named_kin("Lord Byron was Ada's father.", "father", "he", "Ada Lovelace", "she")
    'Lord Byron'
    >>> _named_kin("Zeus and Alcmene.", "father", "he", "Heracles", "he")
    ''
    >>> _named_kin("His father was a wealthy merchant in Florence.", "father", "he", "Dante", "he")
    ''
    >>> _named_kin("Her father was English.", "father", "he", "Ada Lovelace", "she")
    ''
    >>> _named_kin("Augusta Ada King", "father", "he", "Ada Lovelace", "she", ["Ada King"])
    ''
    >>> _named_kin("Lord Byron was her father's friend.", "father", "he", "Ada Lovelace", "she")
    ''
    """
    answer = " ".join(answer.split())
    kin = re.escape(kin)
    # Whose kin the answer says: the owner's, by a possessive of the owner's
    # gender or of a word of the owner's name ("her father", "Ada's father";
    # "his father" there is another man's).
    possessive = "his" if owner_gender == "he" else "her"
    owned = "|".join(re.escape(word) for word in owner.split())
    # The kin word whole (kernel.owned_kin): "her father's friend" is not her father.
    owner_kin = owned_kin(rf"(?:(?i:{possessive})|\b(?:{owned})['’]s)", kin)
    found: list[str] = []
    bare = re.match(rf"(?P<name>{_FULL_NAME})\s*(?:[.!]\s+(?=\S)|[.!]?$)", answer)
    if bare and not (_genders_said(answer) - {pronoun}):
        found.append(bare["name"])
    said = (rf"\b{owner_kin}\s+(?:is|was)\s+(?:(?i:the|a|an)\s+(?P<describing>(?:[\w'’-]+\s+){{0,4}}?))?"
            rf"(?P<name>{_FULL_NAME}){_CLAUSE_END}"
            rf"|(?:^|(?<=[.!?;]\s))(?:(?i:the)\s+(?:[a-z][\w'’-]*\s+){{1,3}})?(?P<subject>{_FULL_NAME})\s+(?:is|was)\s+{owner_kin}"
            rf"|\b{owner_kin},?\s+(?P<apposed>{_FULL_NAME}){_CLAUSE_END}")
    for match in re.finditer(said, answer):
        describing = (match["describing"] or "").split()
        if not any(word.lower() in DRIFT_STOPWORDS for word in describing):
            found.append(match["name"] or match["subject"] or match["apposed"])
    names = {_one_person(name, pronoun, [owner, *aliases]) for name in found}
    return names.pop() if len(names) == 1 else ""


def _one_person(name: str, pronoun: str, owners: Sequence[str]) -> str:
    """``name`` when it is one person's whom ``pronoun`` may mean, not a
    name of the one the history calls each of ``owners`` ("" otherwise).

    >>> [_one_person(name, "he", ["Indira Gandhi"]) for name in ("Indian", "Roman Catholic", "Jawaharlal Nehru")]
    ['', '', 'Jawaharlal Nehru']
    """
    # "Byron." at a sentence's end: _NAME keeps an initial's period.
    words = re.sub(r"\.$", "", name).split()
    while words and words[-1].lower() in _NAME_LINKS.split("|"):
        words.pop()
    lowered = [word.lower().rstrip(".") for word in words]
    if (not words or "and" in lowered or lowered[0] in DRIFT_STOPWORDS or lowered[0] in NOT_NAMES
            or any(_GENDERED.get(word, pronoun) != pronoun for word in lowered)
            or peoples_word(" ".join(words))):
        return ""
    if any(same_name(name, owner) for owner in owners):
        return ""
    return " ".join(words)


def _aliases(name: str, history: Sequence[str]) -> list[str]:
    """The names the answers to the history's questions about ``name``
    (not about its kin) open by calling that one ("Ada King" of "Ada King,
    Countess of Lovelace, was ..." after "Who was Ada Lovelace?").

    >>> _aliases("Ada Lovelace", ["Who was Ada Lovelace?", "Ada King, Countess of Lovelace, was a mathematician."])
    ['Ada King']
    """
    about = re.compile(rf"(?<!\w){re.escape(name)}(?![\w'’])")
    found = []
    for asked, answer in turns(history):
        if about.search(asked) and not _KIN_WORDS & set(re.findall(r"\w+", asked.lower())):
            opening = _SUBJECT_OPENING.match(" ".join(answer.split()))
            if opening and opening["name"] and name_word(opening["name"].split()[0]):
                found.append(opening["name"])
    return found


def kin_for_pronoun(question: str, history: Sequence[str], rewrite: str) -> str:
    """``rewrite`` with the kin a pronoun means put in for a name of the
    other gender ("" when it has none to change): the question's he/him/his
    (she/her/hers) became a name the history gives the other gender, and a
    history question asked about that name's father (mother, ...), named
    ("Ada Lovelace's father") or as asked ("her father"). The kin goes in by
    the name that question's answer gives ("Lord Byron"), or, where the
    answer names no one person clearly, as the kin of the name.

    >>> history = ["Who was Ada Lovelace?", "Ada King, Countess of Lovelace, was a mathematician, the daughter of Lord Byron.",
    ...            "Who was Ada Lovelace's father?", "Lord Byron."]
    >>> kin_for_pronoun("When did he die?", history, "When did Ada Lovelace die?")
    'When did Lord Byron die?'
    >>> kin_for_pronoun("What were his poems?", history, "What were Ada Lovelace's poems?")
    "What were Lord Byron's poems?"
    >>> kin_for_pronoun("When did she die?", history, "When did Ada Lovelace die?")
    ''
    >>> kin_for_pronoun("When did he die?", history[:2] + ["Who was her father?", "I could not find an answer."], "When did Ada Lovelace die?")
    "When did Ada Lovelace's father die?"

    A name whose possessive is a bare "'" (:func:`~assistant.kernel.without_possessive`)
    is found as the name:

    >>> davis = ["Who was Jefferson Davis?", "He was president of the Confederacy.", "Who was his wife?", "Varina Davis."]
    >>> kin_for_pronoun("What were her writings?", davis, "What were Jefferson Davis' writings?")
    "What were Varina Davis's writings?"

    The answer's name when it clearly names the kin (:func:`_named_kin`):

    >>> kin_for_pronoun("When did he die?", history[:2] + ["Who was her father?", "Her father was the poet Lord Byron."],
    ...                 "When did Ada Lovelace die?")
    'When did Lord Byron die?'
    """
    if not _ANY_PRONOUN.search(question):  # most questions: nothing to check
        return ""
    asked = [(m.group(), m.start(), m.end()) for m in _PIECES.finditer(question)]
    written = [(m.group(), m.start(), m.end()) for m in _PIECES.finditer(rewrite)]
    matcher = SequenceMatcher(None, [w.lower() for w, _, _ in asked], [w.lower() for w, _, _ in written], autojunk=False)
    for op, q_start, q_end, r_start, r_end in matcher.get_opcodes():
        pronoun = _PRONOUNS.get(asked[q_start][0].lower()) if op == "replace" and q_end - q_start == 1 else None
        if pronoun is None or not written[r_start][0][:1].isupper():
            continue
        start, end = written[r_start][1], written[r_end - 1][2]
        name = without_possessive(rewrite[start:end])
        gender = _gender_of(name, history)
        if gender not in {"", pronoun}:
            # "Ada Lovelace's father", or "her father" in a history as asked.
            owner = rf"(?<!\w)(?:{re.escape(name)}['’]s|(?i:{'his' if gender == 'he' else 'her'}))"
            kin = re.compile(rf"{owner}\s+((?i:{'|'.join(_KIN[pronoun].split())}))\b")
            for earlier, answer in reversed(turns(history)):
                found = kin.search(earlier)
                if found:
                    phrase = (_named_kin(answer, found.group(1).lower(), pronoun, name, gender, _aliases(name, history))
                              or f"{name}'s {found.group(1)}")
                    phrase += "'s" if name != rewrite[start:end] else ""
                    return rewrite[:start] + phrase + rewrite[end:]
    return ""


# "Which river is Paris on?" (the Seine), then "What is its nickname?": the
# trained model put the answer's name in for "its" ("the nickname of the river
# Seine"), and after "Where was Michelangelo born?" it took "Where was he
# mostly active?" for the conversation's first subject, Leonardo. The people
# who rewrote QReCC's and CANARD's training and dev turns took a follow-up's
# he/she/it for the name the previous question asked about far more often
# than for another the answer brought in (BENCHMARKS.md §10, session 41). The
# pronoun has to fit that name: he/she a person the history asked "Who
# is/was …?" of or gave that gender, it/its a thing it asked "What is/was …?"
# of and gave no gender. A "he" after a "Who …?" question other than "Who
# was X?" ("Who was Socrates's most famous student?", "Who discovered it?")
# is as often the person it asked for, whom the answer named.
_REFERS = {**_PRONOUNS, "it": "it", "its": "it", "itself": "it"}
_REFERRING = re.compile(r"\b(?:" + "|".join(_REFERS) + r")\b", re.IGNORECASE)
_ASKS_FOR_A_PERSON = re.compile(r"(?i:who|whom|whose)\b")


def previous_subject(question: str, history: Sequence[str]) -> str:
    """The name the latest earlier question (as rewritten) asked about, which
    a he/she/it of ``question`` means ("" where that does not apply: the
    question names someone itself or holds no such pronoun, or pronouns of two
    kinds; the latest question that asked something names no one or more
    than one, or asks about kin, or for a person, for a he/she; or the
    pronoun does not fit the name).

    >>> history = ["Who was Socrates?", "A Greek philosopher.", "Who was his most famous student?", "Plato"]
    >>> previous_subject("When was he accused of impiety?", history[:2] + ["Where did Socrates teach?", "Athens"])
    'Socrates'
    >>> previous_subject("When was he born?", history[:2] + ["Who was Socrates's most famous student?", "Plato"])
    ''
    >>> previous_subject("When was he accused of impiety?", history), previous_subject("When was Plato born?", history)
    ('', '')
    >>> paris = ["What is Paris?", "The capital of France.", "Which river is Paris on?", "The Seine."]
    >>> previous_subject("What is its nickname?", paris), previous_subject("Who was his wife?", paris)
    ('Paris', '')
    >>> previous_subject("When did he die?", ["Who was Marie Curie?", "A physicist.", "Who was Marie Curie's husband?", "Pierre."])
    ''

    A latest question that itself refers by a pronoun is about someone it
    does not name: its one name is not that one ("he" below is the player,
    not the club his answer gave a "He" beside).

    >>> previous_subject("What position did he play?", ["When did he join Dundee United?", "He signed for Dundee United in 1979."])
    ''
    """
    kinds = {_REFERS[word.lower()] for word in _REFERRING.findall(question)}
    if len(kinds) != 1 or any(_typed_name(word) for run in name_runs(question) for word in run):
        return ""
    asked = [earlier for earlier, _ in turns(history) if not asks_nothing(earlier)]
    if not asked:
        return ""
    latest = " ".join(asked[-1].split())
    if _REFERRING.search(latest):
        return ""
    runs = {" ".join(run) for run in name_runs(latest) if any(_typed_name(word) for word in run)}
    # After "Who was her husband?" the he is the husband (kin_for_pronoun's case).
    if len(runs) != 1 or _KIN_WORDS & set(re.findall(r"\w+", latest.lower())):
        return ""
    kind = kinds.pop()
    named = _NAMED.fullmatch(latest)
    if kind != "it" and _ASKS_FOR_A_PERSON.match(latest) and not (named and named["defined"]):
        return ""
    name = without_possessive(runs.pop())
    words = _person_words(name)
    if not words:
        return ""
    gender = _gender_of(name, history)
    # "Who were the Beatles?" asks about a group, no he/she/it.
    defined = {found["asked"].lower() for earlier in asked for found in [_NAMED.fullmatch(" ".join(earlier.split()))]
               if found and found["defined"] and found.group().split()[1].lower() in ("is", "was") and words <= _person_words(found["defined"])}
    fits = (gender == kind or (not gender and defined == {"who"})) if kind != "it" else (not gender and defined == {"what"})
    return name if fits else ""


def _names_put_in(question: str, candidate: str) -> set[str]:
    # The words of the capitalised names ``candidate`` holds and ``question`` does not.
    return _person_words(" ".join(word for run in name_runs(candidate) for word in run if _typed_name(word))) - name_words(question)


def strays_from(subject: str, question: str, candidate: str) -> bool:
    """Whether ``candidate`` put a name in for ``question``'s pronoun and
    named not ``subject`` (:func:`previous_subject`), nor a shorter form of
    it, but someone else.

    >>> strays_from("Paris", "What is its nickname?", "What is the nickname of the river Seine?")
    True
    >>> [strays_from("Paris", "What is its nickname?", c) for c in ("What is Paris's nickname?", "What is its nickname?")]
    [False, False]
    >>> strays_from("Leonardo da Vinci", "When did he die?", "When did Leonardo die?")
    False

    A name that shares a word with the subject, or a spelling of one, is
    the subject spelt otherwise (the model mends a name the previous rewrite
    mangled), or a part of it, unless a word of the subject's gave way to
    another: a relative, the same surname after another given name.

    >>> strays_from("Rocky Graz", "When was his next match?", "When was Rocky Graziano's next match?")
    False
    >>> [strays_from("Marie Curie", "What did she discover?", f"What did {name} discover?") for name in ("Curie", "Pierre Curie", "Mme Curie")]
    [False, True, False]
    """
    written = name_words(candidate)
    words = _person_words(subject)
    if not subject or not written - name_words(question) - NAME_PARTICLES or words <= written:
        return False
    put_in = _names_put_in(question, candidate)
    other = {word for word in put_in if not any(same_name_word(word, own) for own in words)}
    lost = [own for own in words if not any(same_name_word(word, own) for word in put_in)]
    return bool(other) and (other == put_in or bool(lost))


def names_only(subject: str, question: str, candidate: str) -> bool:
    """Whether ``candidate`` names ``subject`` and no name the question did
    not type beside it ("Where was Michelangelo mostly active?", not "Where
    was Michelangelo da Vinci mostly active?").

    >>> names_only("Michelangelo", "Where was he active?", "Where was Michelangelo active?")
    True
    >>> names_only("Michelangelo", "Where was he active?", "Where was Michelangelo da Vinci active?")
    False
    """
    words = _person_words(subject)
    added = _person_words(candidate) - name_words(question)
    return bool(words) and words <= added and added <= words


# Put in for a he/she where no candidate named the subject: a possessive takes
# the name's "'s"; "her" (his or hers, or him) is left alone. Not for it/its:
# "How long is it?" after "Which river is Paris on?" means the river the
# answer named, and the model said so.
_PUT_IN = {"he": "{}", "him": "{}", "she": "{}", "his": "{}'s"}


def with_subject(subject: str, question: str, history: Sequence[str], candidates: Sequence[str]) -> str:
    """``question`` with ``subject`` put in for its one pronoun, a he/she the
    history gives ``subject``'s gender for ("" where it holds another or more
    than one, or "her", which may be owning or owned, or where every one of
    the model's ``candidates`` named the same other name).

    >>> male = ["Who was Socrates?", "He was a philosopher.", "Where did Socrates teach?", "In Athens."]
    >>> with_subject("Socrates", "How was he put to death?", male, ["How was Plato put to death?", "How was he put to death?"])
    'How was Socrates put to death?'
    >>> with_subject("Socrates", "How was he put to death?", male, ["How was Plato put to death?"] * 2)
    ''
    >>> with_subject("Socrates", "How was he put to death?", male[:1] + ["A philosopher."] + male[2:], ["How was he put to death?"])
    ''
    >>> with_subject("Ada", "Who was her father?", [], []), with_subject("Paris", "What is its nickname?", [], [])
    ('', '')
    """
    found = list(_REFERRING.finditer(question))
    if len(found) != 1 or found[0].group().lower() not in _PUT_IN:
        return ""
    pronoun = found[0]
    if _gender_of(subject, history) != _REFERS[pronoun.group().lower()]:
        return ""
    named = {frozenset(_names_put_in(question, candidate)) for candidate in candidates}
    if len(named) == 1 and all(strays_from(subject, question, candidate) for candidate in candidates):
        return ""
    return question[: pronoun.start()] + _PUT_IN[pronoun.group().lower()].format(subject) + question[pronoun.end():]
