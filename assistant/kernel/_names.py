"""The names a user typed: the one reading of which words of a text are names.

The rewriter's drift guard asks which names a question typed, to keep them
in its rewrite, and which names the history gave. It reads a name as
capitalised words (with "da", "van" between them, a possessive ending
one), a sentence's first word only saying that the sentence began. The
reader's ``question_names`` is another, cheaper idea (every capitalised
word after the question's first, to keep apart from what is asked) and
does not use it.
"""

from __future__ import annotations

import re

from ._words import DRIFT_STOPWORDS, NOT_NAMES, name_words

__all__ = ["NAME_PARTICLES", "SHORT_TITLES", "NAME_PIECE", "POSSESSIVE_END", "bare_piece", "name_word", "name_runs",
           "names_numeral_one", "without_possessive"]

# The particles inside a name ("Leonardo da Vinci", "Ludwig van Beethoven").
NAME_PARTICLES = frozenset("da de del della di du la le van von der bin ibn al".split())
# The abbreviated titles, written before a name with a dot that ends no
# sentence ("Mrs. Thatcher", "Dr. Fauci").
SHORT_TITLES = "Mr Mrs Ms Dr Prof St Mt Gen Col Lt Capt Sgt Rev Sen Rep Gov Pres Jr Sr".split()
# A text's pieces: its words, an inner or ending dot, hyphen or apostrophe
# kept on them ("U.S.", "Twain's", "Brooks'"), and each other mark alone.
NAME_PIECE = re.compile(r"\w[\w'’.-]*|[^\w\s]")
_SENTENCE_END = re.compile(r"[.!?:]$")
# A title's or an initial's dot ("Mrs. Thatcher", "J. K. Rowling") ends no sentence.
_ABBREVIATION = re.compile(rf"(?:(?:[A-Z]\.)+|(?:{'|'.join(SHORT_TITLES)})\.)$")
# A possessive ending a word: "Twain's", "Brooks'". It matches the mark
# alone (the "'" of "Brooks'", not its "s"), so that taking it off leaves
# the name (:func:`without_possessive`).
POSSESSIVE_END = re.compile(r"['’]s$|(?<=s)['’]$")
# The capitalised words that name no one: "The", "When", "I".
_NO_NAME = NOT_NAMES | DRIFT_STOPWORDS


def bare_piece(piece: str) -> str:
    """A :data:`NAME_PIECE` without the dot or colon that may end a sentence.

    >>> bare_piece("Twain."), bare_piece("U.S.")
    ('Twain', 'U.S')
    """
    return piece.rstrip(".:")


def without_possessive(name: str) -> str:
    """``name`` without the possessive that ends it: the "'s" of "Twain's",
    the "'" after the "s" of "Davis'" (whose "s" is the name's own).

    >>> without_possessive("Twain's"), without_possessive("Davis'"), without_possessive("Paris’s"), without_possessive("Davis")
    ('Twain', 'Davis', 'Paris', 'Davis')
    """
    return POSSESSIVE_END.sub("", name)


def name_word(word: str) -> bool:
    """Whether ``word`` (a bare piece) may be a word of a name: it is
    capitalised and no function word ("The", "When", "I").

    >>> name_word("Twain"), name_word("The"), name_word("twain")
    (True, False, False)
    """
    return word[:1].isupper() and word.lower() not in _NO_NAME and bool(name_words(word))


# The numeral "I" as a piece, possessive or not.
_NUMERAL_ONE = re.compile(r"I(?:['’]s|['’])?")
# The verbs the pronoun "I" takes (and "is", "are", "has" it does not):
# "Rome I mean the city", "Paris I think", "Einstein I wonder" hold the
# pronoun after a name, not the name's numeral. Not "do" or "have", which
# follow a numeral in a question as often ("What did Napoleon I do?",
# "Did Elizabeth I have children?").
_PRONOUN_VERBS = frozenset(
    "am was can could will would shall should may might must wasn't don't didn't haven't hadn't "
    "can't couldn't won't wouldn't shouldn't think thought mean meant guess guessed wonder wondered know knew "
    "believe believed remember remembered recall recalled suppose supposed say said saw see read heard hear "
    "want wanted like liked love loved hope hoped feel felt told asked".split())


def names_numeral_one(text: str) -> bool:
    """Whether ``text`` holds the Roman numeral "I" of a name, as
    :func:`name_runs` reads it (a sentence's first word may be the name
    here: "Elizabeth I's reign"): "World War I", not the pronoun ("When I
    was", "Rome I mean the city"). Lower-cased, it is the pronoun's "i",
    which every stop-word list drops, and "World War I" reads as "World War II".

    >>> [names_numeral_one(t) for t in ("When did World War I begin?", "Who was Henry I of England?",
    ...                                 "Elizabeth I's reign", "When I was young", "Can I ask? I'm here",
    ...                                 "Ask Mark Twain. I read him.", "Tell me about Rome I mean the city",
    ...                                 "As Churchill I remember wrote")]
    [True, True, True, False, False, False, False, False]
    """
    return any(_NUMERAL_ONE.fullmatch(word) for run in name_runs(text, first=True) for word in run[1:])


def name_runs(text: str, first: bool = False) -> list[list[str]]:
    """The runs of name words in ``text`` (lists of :func:`bare_piece`
    words as written), in order. A run is capitalised words
    (:func:`name_word`), with the particles between them
    (:data:`NAME_PARTICLES`), ended by a possessive ("Mark Twain's") or a
    sentence's end ("Lord Byron. Babbage called her"). A sentence's first
    word is a name only with ``first`` (the names the history gives, where
    "Byron. Babbage called her" names two); without it, capitalised, it
    only says that the sentence began.

    >>> name_runs("Where was Michelangelo Leonardo da Vinci born? Ask Mark Twain's editor.")
    [['Michelangelo', 'Leonardo', 'da', 'Vinci'], ['Mark', "Twain's"]]
    >>> name_runs("Lord Byron. Babbage called her", first=True)
    [['Lord', 'Byron'], ['Babbage']]
    >>> name_runs("And World War I? Was Elizabeth I's heir James I? So I asked Architect I. M. Pei.")
    [['World', 'War', 'I'], ['Elizabeth', "I's"], ['James', 'I'], ['Architect'], ['M', 'Pei']]
    >>> name_runs("Tell me about Rome I mean the city. Did Paris I think win?")
    [['Rome'], ['Paris']]
    """
    runs: list[list[str]] = [[]]
    opening = True
    pieces = NAME_PIECE.findall(text)
    for at, piece in enumerate(pieces):
        word = bare_piece(piece)
        named = (first or not opening) and name_word(word)
        ends = bool(_SENTENCE_END.search(piece)) and not _ABBREVIATION.match(piece)
        # A capital "I" right after a name word is the name's numeral
        # ("World War I", "Elizabeth I's"), not the pronoun.
        # An initial's "I." ("I. M. Pei") is none, nor is the pronoun
        # before its verb ("Rome I mean the city").
        numeral = (bool(runs[-1]) and runs[-1][-1] not in NAME_PARTICLES and bool(_NUMERAL_ONE.fullmatch(piece))
                   and (at + 1 == len(pieces) or pieces[at + 1].lower() not in _PRONOUN_VERBS))
        if named or numeral or (runs[-1] and word in NAME_PARTICLES):
            runs[-1].append(word)
            # A possessive or a sentence's end closes the name ("Lord Byron. Babbage called her").
            if POSSESSIVE_END.search(word) or ends:
                runs.append([])
        elif runs[-1]:
            runs.append([])
        opening = ends or (opening and not piece[:1].isalnum())
    for run in runs:
        while run and run[-1] in NAME_PARTICLES:
            run.pop()
    return [run for run in runs if run]
