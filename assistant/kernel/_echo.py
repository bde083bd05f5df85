"""A refused question as every entry point sends it back."""

from __future__ import annotations

__all__ = ["ECHO_CHARS", "echoed_question"]

# Characters of a refused question sent back with its error: enough to
# recognise it; a 20,000-character paste need not come back whole.
ECHO_CHARS = 200


def echoed_question(question) -> str | None:
    r"""``question`` as it can be sent back in JSON with its error (the app's
    API, the terminal chat): its first :data:`ECHO_CHARS` characters, valid
    UTF-8 (bytes that were not UTF-8, read with ``surrogateescape``, shown as
    ``\xff``; any other lone surrogate as ``?``); None for anything not text.

    >>> echoed_question("x" * 5000) == "x" * ECHO_CHARS
    True
    >>> echoed_question("Who was \udcff\udcfe?"), echoed_question("Who was \ud800 Ada?"), echoed_question(42)
    ('Who was \\xff\\xfe?', 'Who was ? Ada?', None)
    """
    if not isinstance(question, str):
        return None
    shown = question[:ECHO_CHARS]
    try:
        return shown.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte made
        return shown.encode("utf-8", "replace").decode("utf-8")
