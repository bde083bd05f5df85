"""The one check of what a retriever's ``search(query, k)`` is given.

Every retriever of this package calls these before it does any work, so
that a caller's mistake gets the same message whichever retriever serves
it, and is never mistaken for a failure of the index: unchecked, Lucene
refused a ``k`` of 0 with an exception that reads as a damaged index.
"""

from __future__ import annotations

import numbers

from ..kernel import InvalidInputError

__all__ = ["search_query", "search_k"]


def search_query(query: object) -> str:
    """``query`` when it is a string with a word in it.

    >>> search_query("Who was Ada?")
    'Who was Ada?'
    >>> search_query("  ")
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.InvalidInputError: The query is empty.
    >>> search_query(None)
    Traceback (most recent call last):
    ...
    TypeError: the query must be a str, not NoneType
    """
    if not isinstance(query, str):
        raise TypeError(f"the query must be a str, not {type(query).__name__}")
    if not query.split():
        raise InvalidInputError("The query is empty.")
    return query


def search_k(k: object, name: str = "k") -> int:
    """``k`` (how many passages to return) as an int of at least 1.

    A bool is refused although it is an int: ``search(q, True)`` is a
    mistake, not a request for one passage.

    >>> search_k(3)
    3
    >>> search_k(0)
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.InvalidInputError: k must be at least 1, not 0
    >>> search_k("3")
    Traceback (most recent call last):
    ...
    TypeError: k must be an int, not str
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an int, not {type(k).__name__}")
    if k < 1:
        raise InvalidInputError(f"{name} must be at least 1, not {k}")
    return int(k)
