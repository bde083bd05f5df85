"""A notice for questions that are probably not English."""

from __future__ import annotations

from ..kernel import ENGLISH_FUNCTION_WORDS, tokens

NOT_ENGLISH = (
    "This does not look like English. The collection and the models are English only, "
    "so the answer may be poor: try asking in English."
)


def language_notice(text: str) -> str:
    """A notice when ``text`` is probably not English, else "".

    >>> language_notice("Who was Ada Lovelace?")
    ''
    >>> language_notice("Wer war die Tochter von Lord Byron?") == NOT_ENGLISH
    True
    >>> language_notice("阿达·洛芙莱斯是谁？") == NOT_ENGLISH
    True
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return ""
    latin = sum(c.isascii() or "\u00c0" <= c <= "\u024f" for c in letters)
    if latin / len(letters) < 0.5:
        return NOT_ENGLISH
    words = tokens(text, "letters")
    if len(words) >= 4 and not ENGLISH_FUNCTION_WORDS.intersection(words):
        return NOT_ENGLISH
    return ""
