"""Choosing a reader by name: the one place every entry point does it."""

from __future__ import annotations

from ..kernel import READER_NAMES, InvalidInputError, ReaderConfig
from ._sentence import Reader, SentenceReader

__all__ = ["READERS", "build_reader"]

# The names ``--reader`` and ``CONVQA_READER`` accept (the kernel owns the
# list, so that configs can be checked where they are read).
READERS = READER_NAMES


def build_reader(name: str = "sentence", config: ReaderConfig = ReaderConfig()) -> Reader:
    """A loaded reader by name: ``"sentence"`` (extractive, fast) or
    ``"generative"`` (a causal LM phrases the answer from the sentence
    reader's evidence); both read ``config`` (definitions and short answers
    included).
    Raises :class:`InvalidInputError` for another name."""
    if name == "sentence":
        return SentenceReader.from_pretrained(config=config)
    if name == "generative":
        from ._generative import GenerativeReader

        return GenerativeReader.from_pretrained(config=config)
    raise InvalidInputError(f"unknown reader {name!r}: choose one of {', '.join(READERS)}")
