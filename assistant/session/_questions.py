"""A question as the stages get it: what the user can see of what was sent."""

from __future__ import annotations

import re
import unicodedata

from ..pipeline import validate_question

# Control characters (Unicode Cc) but newline and tab, with the spaces around
# them: a NUL or an escape pasted from a terminal is no part of a question, and
# the tokenisers cut the text at a NUL. Each run counts as one space, so the
# words on either side stay apart.
_CONTROLS = re.compile(r" *[\x00-\x08\x0b-\x1f\x7f-\x9f]+ *")


def visible_text(question):
    """``question`` without control and format characters (Unicode Cc but
    newline and tab, and Cf: zero-width spaces and joiners, direction marks,
    soft hyphens), which show nothing; anything not text as it came.

    >>> visible_text("Who was Ada\\u0000 Lovelace?")
    'Who was Ada Lovelace?'
    >>> visible_text("\\u200b\\u200b\\u200b")
    ''
    """
    if not isinstance(question, str):
        return question
    question = _CONTROLS.sub(" ", question)
    return "".join(c for c in question if unicodedata.category(c) != "Cf")


def check_question(question, max_chars: int) -> str:
    """The question as the stages take it (:func:`visible_text`, stripped),
    or InvalidInputError saying what is wrong: a question with nothing
    visible is an empty one, and only what is visible counts towards
    ``max_chars``."""
    return validate_question(visible_text(question), max_chars)
