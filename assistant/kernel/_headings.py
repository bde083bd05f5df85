"""Headings: which lines of a plain-text document name what follows
instead of saying something.

A document's heading ("Ada Lovelace", "Early life") or label ("Career:")
on a line of its own is no sentence, yet a document's paragraphs were
packed into passages with spaces between them, and "Ada Lovelace Augusta
Ada King … was an English mathematician" became its lead sentence. The
passage cutter keeps such a line apart (``assistant.retrieval.chunk_text``)
and the sentence reader reads it as a heading, never as an answer while a
sentence is there (``assistant.readers``): one rule for both.
"""

from __future__ import annotations

import re
from typing import Sequence

__all__ = ["HEADING_WORDS", "heading_lines", "ends_as_sentence"]

# Words of a heading at most: a longer line without a full stop is a
# sentence's part (a hard-wrapped line, a list's long item).
HEADING_WORDS = 8
# A line ending as a sentence does, or with the colon a label ends with.
_SENTENCE_END = re.compile(r"[.!?…][\"'’”)\]]*$")
_LABEL_END = re.compile(r":$")
# A line ending mid-phrase, which the next line goes on with.
_MID_PHRASE = re.compile(r"(?:[,;(&/–—-]|\b(?i:and|or|nor|but|of|the|a|an|to|in|on|at|by|for|with|from|as|than|"
                         r"that|which|who|is|was|are|were))$")
# A line a heading may come before: one that begins as a sentence or another heading does.
_BEGINS = re.compile(r"^[\"'“‘(\[]?[A-Z0-9]")
# Lower-case words a title-cased heading keeps ("Lord of the Rings").
_MINOR = frozenset("a an and as at but by for from in into nor of on or the to with".split())
# A heading in sentence case ("Early life", "See also") is a word or a few.
_FEW_WORDS = 3


def _titled(words: Sequence[str]) -> bool:
    return all(word[0].isupper() or word[0].isdigit() or word in _MINOR for word in words)


def heading_lines(lines: Sequence[str]) -> list[bool]:
    """Per line of ``lines`` (one paragraph's or one passage's, in order),
    whether it is a heading or a label: at most :data:`HEADING_WORDS` words,
    beginning with a capital or a digit, ending as no sentence does nor in
    the middle of a phrase, with no quotation in it, and title-cased, of a
    few words or ending with a colon; after a line that ended (a sentence,
    a label, a heading: never in the middle of a hard-wrapped sentence) and
    before one that begins as a sentence or a heading does. A line alone
    (no line after it) is no heading: nothing follows that it names.

    >>> heading_lines(["Ada Lovelace", "Augusta Ada King was an English mathematician.", "Early life", "She was born in London."])
    [True, False, True, False]
    >>> heading_lines(["Career:", "She translated an article."])
    [True, False]
    >>> heading_lines(["The treaty was signed between France", "Germany and Spain in 1815."])
    [False, False]
    >>> heading_lines(["It was signed.", "between France", "Germany and Spain."]), heading_lines(["Ada Lovelace"])
    ([False, False, False], [False])
    >>> heading_lines(["It rained.", '"Yes," he said', "They left."]), heading_lines(["It rained.", "The", "Rain stopped."])
    ([False, False, False], [False, False, False])
    """
    marks: list[bool] = []
    for at, line in enumerate(lines):
        line = line.strip()
        words = line.split()
        after = lines[at + 1].strip() if at + 1 < len(lines) else ""
        before = lines[at - 1].strip() if at else ""
        ended = not before or marks[-1] or ends_as_sentence(before) or bool(_LABEL_END.search(before))
        marks.append(
            bool(words) and len(words) <= HEADING_WORDS and ended
            and bool(_BEGINS.match(line) and _BEGINS.match(after))
            and not ends_as_sentence(line) and not _MID_PHRASE.search(line) and not re.search(r"[\"“”]", line)
            and (_titled(words) or len(words) <= _FEW_WORDS or bool(_LABEL_END.search(line)))
        )
    return marks


def ends_as_sentence(text: str) -> bool:
    """Whether ``text`` ends as a sentence does: a full stop, a question or
    an exclamation mark, a closing quotation or bracket after it.

    >>> ends_as_sentence("She left."), ends_as_sentence('He said "no!"'), ends_as_sentence("Early life")
    (True, True, False)
    """
    return bool(_SENTENCE_END.search(text.rstrip()))
