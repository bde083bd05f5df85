"""A notice for questions that are probably not English."""

from __future__ import annotations

import re

from ..kernel import ENGLISH_FUNCTION_WORDS, TOKEN_PATTERNS, composed_text

NOT_ENGLISH = (
    "This does not look like English. The collection and the models are English only, "
    "so the answer may be poor: try asking in English."
)

# A web address's words (https, www, org, wiki, a page name) are no language;
# one with a scheme or "www.", or a dotted host with a path.
_ADDRESSES = re.compile(r"(?:\b[a-z][a-z0-9+.-]*://|\bwww\.)\S+|\b[\w-]+(?:\.[\w-]+)+/\S*", re.IGNORECASE)


def language_notice(text: str) -> str:
    """A notice when ``text`` is probably not English, else "". Web
    addresses in it are left out: only the words around them are judged.

    >>> language_notice("Who was Ada Lovelace?")
    ''
    >>> language_notice("Wer war die Tochter von Lord Byron?") == NOT_ENGLISH
    True
    >>> language_notice("阿达·洛芙莱斯是谁？") == NOT_ENGLISH
    True
    >>> language_notice("Who is Владимир Путин?"), language_notice("Antonín Dvořák Bedřich Smetana")
    ('', '')
    >>> language_notice("https://en.wikipedia.org/wiki/Ada_Lovelace")
    ''
    """
    # Full-width "\uff37\uff48\uff4f" is English typed on an East Asian keyboard.
    text = _ADDRESSES.sub(" ", composed_text(text))
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return ""
    words = TOKEN_PATTERNS["letters"].findall(text)
    lowered = [word.lower() for word in words]
    latin = sum(c.isascii() or "\u00c0" <= c <= "\u024f" for c in letters)
    # An English question may name someone in their own script, whose
    # letters then outnumber its own ("Who is Владимир Путин?"); it still
    # opens in English.
    if latin / len(letters) < 0.5 and not ENGLISH_FUNCTION_WORDS.intersection(lowered[:1]):
        return NOT_ENGLISH
    # Several words with no English function word are another language,
    # unless every one is capitalised: a list of names is no language.
    if len(words) >= 4 and not ENGLISH_FUNCTION_WORDS.intersection(lowered) and not all(w[0].isupper() for w in words):
        return NOT_ENGLISH
    return ""
