"""Reading text and JSONL files with errors that name the file (and the line)."""

from __future__ import annotations

import codecs
import io
import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any, Iterator

from ._errors import DataFormatError

__all__ = ["ONE_JSON_DOCUMENT", "json_lines", "json_lines_with_text", "unicode_mark", "utf8_text"]


def utf8_text(raw: bytes, name: str) -> str:
    """``raw`` decoded as UTF-8, or :class:`DataFormatError` saying that the
    file ``name`` is not UTF-8 and what to do: the one check and message for
    a file read as text, by an upload, a collection being indexed or an
    evaluation's data (replacement characters would be indexed and shown
    instead). A leading byte order mark (Notepad's and PowerShell's UTF-8)
    is dropped: it is no text, and kept it hid a Markdown title and made
    JSON unreadable. A file that opens with a UTF-16 or UTF-32 byte order
    mark (what Windows PowerShell 5's ``>`` and Notepad's "Unicode" write)
    is read in that encoding: the mark says it, unless what it reads is no
    text (:func:`_misread`: an 8-bit file whose first letters are the
    mark's bytes). A NUL character is refused: a binary file's.

    >>> utf8_text("\ufeff# Title".encode("utf-8"), "notes.md")
    '# Title'
    >>> utf8_text("Dvořák, 1841".encode("utf-16"), "notes.txt")
    'Dvořák, 1841'
    >>> utf8_text("ÿþ café au lait, crème brûlée!".encode("latin-1"), "latin1.txt")
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.DataFormatError: latin1.txt begins as UTF-16 text but is not; save it as UTF-8 and try again.
    >>> utf8_text("ÿþHello, world".encode("latin-1"), "latin1.txt")
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.DataFormatError: latin1.txt begins as UTF-16 text but is not; save it as UTF-8 and try again.
    >>> utf8_text("café".encode("latin-1"), "latin1.txt")
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.DataFormatError: latin1.txt is not UTF-8 text; save it as UTF-8 and try again.
    """
    marked = unicode_mark(raw)
    if marked is not None:
        mark, encoding = marked
        try:
            text = raw[len(mark):].decode(encoding)
        except UnicodeDecodeError:
            raise DataFormatError(_not_as_marked(name, encoding)) from None
        return _checked_text(text, name, name, encoding)
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise DataFormatError(f"{name} is not UTF-8 text; save it as UTF-8 and try again.") from None
    return _checked_text(text, name, name)


def _checked_text(text: str, where: str, name: str, encoding: str | None = None, line: int | None = None) -> str:
    """``text`` (of the file ``name``; ``where`` names it, or its line) when
    it is text a person saved, else :class:`DataFormatError`: the one check
    for a file read as text (:func:`utf8_text`) and a JSONL line
    (:func:`json_lines`). A NUL character is a binary file's; ``encoding``
    (the one a byte order mark named) is refused when :func:`_misread`,
    naming the ``line`` that says so, if any. Whether a file is misread is
    the file's question, asked once: a JSONL reader passes ``encoding`` for
    its first line only (a later line's one odd character is no evidence
    against the whole file, and asking it of every line cost most of the
    reading)."""
    if "\0" in text:
        # Of such a JSONL line, JSON's message was "not valid JSON (Invalid control character at)".
        advice = (" (JSON holds a NUL only written as \\u0000)" if line is not None
                  else "; give a .txt, .md, .html or .pdf file, or save the text as UTF-8 and try again")
        raise DataFormatError(f"{where} looks like a binary file (it holds a NUL character), not text{advice}.")
    if encoding is not None and _misread(text, encoding):
        at = f" (line {line} reads as no text)" if line is not None else ""
        raise DataFormatError(_not_as_marked(name, encoding, at))
    return text


# Characters that no text a person saved holds, in bulk: private use, and
# unassigned in the Basic Multilingual Plane (a newer emoji beyond it may be
# unassigned to this Python). One alone is no evidence: Word's Symbol-font
# bullet and a Nerd Font glyph are private use, and a character newer than
# this Python's tables is unassigned to it. Not controls: no 8-bit text
# misread makes one (that takes a zero byte), and a UTF-16 log may hold
# terminal escapes.
_NO_TEXT = frozenset({"Co", "Cn"})
# The bytes of 8-bit text (Latin-1, Windows-1252): all but the controls
# other than tab and line breaks.
_EIGHT_BIT_TEXT = frozenset(b"\t\n\r") | frozenset(range(0x20, 0x7F)) | frozenset(range(0x80, 0x100))
_ASCII_TEXT = frozenset(b"\t\n\r") | frozenset(range(0x20, 0x7F))
# Two ASCII words of two letters or more: letters, a mark of punctuation or
# none, spaces or line breaks, a quote or none, letters. Single letters are
# too common among the bytes of a few ideographs ("在上海" is "(W\nNwm").
_TWO_WORDS = re.compile(rb"[A-Za-z]{2}[.,;:!?'\")]?[ \r\n]+[\"'(]?[A-Za-z]{2}")
# How much of a file's text is evidence enough: an 8-bit file misread says
# so from its first line on.
_EVIDENCE_CHARS = 1 << 16


def _misread(text: str, encoding: str) -> bool:
    """Whether ``text``, decoded in the ``encoding`` that its file's byte
    order mark named, is an 8-bit file that opens with the mark's bytes
    instead ("ÿþ" in Latin-1 is UTF-16's FF FE): decoded so, its letters
    pair into CJK-looking characters. Only its first ``_EVIDENCE_CHARS``
    are read.

    Only bytes that 8-bit text could be are suspect: none zero (every UTF-16
    text of a Latin letter, digit, space or line break has one), none a
    control other than tab and line breaks. Then the evidence, either of:
    characters no saved text holds, at least two and a quarter of those not
    spaces (an accented letter paired with the next byte falls among the
    private-use or unassigned characters); or bytes that read as ASCII text,
    four in five, and two words in them. Real UTF-16 text in Chinese or
    Japanese has full-width punctuation (。，、“”), whose bytes are controls
    in 8-bit text; a few ideographs with no punctuation at all can still
    read as ASCII words, and are then refused with the advice to save the
    file as UTF-8.

    >>> _misread("Hello world!".encode("latin-1").decode("utf-16-le"), "utf-16-le")
    True
    >>> _misread("Coffee is a drink.", "utf-16-le") or _misread("北京是中国的首都，人口众多。", "utf-16-le")
    False
    >>> _misread("在上海", "utf-16-le") or _misread("\uf0b7 first item", "utf-16-le") or _misread("\u2ffc", "utf-16-be")
    False
    """
    text = text[:_EVIDENCE_CHARS]
    raw = text.encode(encoding)
    if not raw or 0 in raw or not set(raw) <= _EIGHT_BIT_TEXT:
        return False
    odd = [c for c in set(text) if c <= "\uffff" and unicodedata.category(c) in _NO_TEXT]
    if odd:
        count = sum(text.count(c) for c in odd)
        if count >= 2 and 4 * count >= len("".join(text.split())):
            return True
    return 5 * sum(b in _ASCII_TEXT for b in raw) >= 4 * len(raw) and _TWO_WORDS.search(raw) is not None


# UTF-32's little-endian mark begins with UTF-16's, so it is tried first.
_UNICODE_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def unicode_mark(head: bytes) -> tuple[bytes, str] | None:
    """The UTF-16 or UTF-32 byte order mark that the bytes ``head`` (a
    file's first four at least) open with and the encoding it names, or
    None: how :func:`utf8_text` and :func:`json_lines` tell such a file.

    >>> unicode_mark("{}".encode("utf-16"))
    (b'\\xff\\xfe', 'utf-16-le')
    >>> unicode_mark(b'{"id": 1}') is None
    True
    """
    return next(((mark, encoding) for mark, encoding in _UNICODE_MARKS if head.startswith(mark)), None)


def _not_as_marked(name: str, encoding: str, at: str = "") -> str:
    return f"{name} begins as {encoding[:6].upper()} text but is not{at}; save it as UTF-8 and try again."


def json_lines(path: str | os.PathLike) -> Iterator[tuple[str, Any]]:
    r"""``(where, record)`` for each non-blank line of the JSONL file at
    ``path``; ``where`` ("FILE, line N") is for the caller's own messages.
    Raises :class:`DataFormatError` for an unreadable file or a line that is
    not JSON, or not text as :func:`utf8_text` checks it.

    >>> import json, tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
    ...     _ = f.write(json.dumps({"q": "a\u2028b\x0cc\x85d"}, ensure_ascii=False) + "\r\n\n")
    >>> [record for _, record in json_lines(f.name)]
    [{'q': 'a\u2028b\x0cc\x85d'}]
    """
    for where, record, _ in json_lines_with_text(path):
        yield where, record


def json_lines_with_text(path: str | os.PathLike) -> Iterator[tuple[str, Any, str]]:
    """:func:`json_lines` with each line's own text third (its line end
    stripped), for a caller that passes a valid line on unchanged (the
    indexer hands such lines to Lucene as they are). A byte order mark
    before the first line is no part of its record; it stays in its text."""
    path = Path(path)
    # Streamed line by line, so a file of any size costs one line of memory;
    # lines end at "\n" only (JSON strings may hold U+2028 and U+2029 raw).
    try:
        file = path.open("rb")
    except FileNotFoundError as err:
        raise DataFormatError(f"{path}: no such file") from err
    except IsADirectoryError as err:  # as rewriting.data and a replay say it: the OS's text repeated the path
        raise DataFormatError(f"{path} is a folder; give a file in it") from err
    except OSError as err:
        raise DataFormatError(f"{path}: cannot read it ({err.strerror or err})") from err
    with file:
        # A file that opens with a UTF-16 or UTF-32 mark (PowerShell 5's
        # ">") is read in the encoding it names, as utf8_text reads it: its
        # lines, read as UTF-8, were refused as "not UTF-8 text".
        marked = unicode_mark(file.peek(4)[:4])  # peeked, not read: a pipe cannot seek back
        if marked:
            file.read(len(marked[0]))
        lines = io.TextIOWrapper(file, marked[1], newline="\n") if marked else file
        checked = False  # whether the mark's encoding was checked, on the first non-blank line
        for number, raw in enumerate(_decoded(lines, path, marked), 1):
            where = f"{path}, line {number}"
            try:
                line = raw if marked else raw.decode("utf-8")
            except UnicodeDecodeError as err:
                # utf8_text's advice, not the codec's byte offsets (a binary file uploaded as .jsonl said them)
                raise DataFormatError(f"{where} is not UTF-8 text; save it as UTF-8 and try again.") from err
            if not line.strip():
                continue
            _checked_text(line, where, str(path), marked[1] if marked and not checked else None, number)
            checked = True
            try:
                record = json.loads(line.removeprefix("\ufeff") if number == 1 else line)
            except json.JSONDecodeError as err:
                raise DataFormatError(f"{where}: not valid JSON ({err.msg}){_spread_hint(number, line)}") from err
            yield where, record, line.rstrip("\r\n")


def _decoded(lines, path: Path, marked: tuple[bytes, str] | None) -> Iterator:
    # The wrapper decodes ahead of the line it gives, so a byte it cannot
    # decode is named for the file, as utf8_text names it.
    try:
        yield from lines
    except UnicodeDecodeError:
        raise DataFormatError(_not_as_marked(str(path), marked[1])) from None


def _spread_hint(number: int, line: str) -> str:
    # A pretty-printed .json file (QReCC's and CANARD's own files open with
    # a lone "[") fails on its first line, which said only "Expecting value"
    # of a file that is valid JSON, just not one object a line.
    opening = line.removeprefix("\ufeff").strip()  # Notepad's UTF-8 mark is no part of the opening
    if number == 1 and (opening == "{" or opening.startswith("[")):
        return "; " + ONE_JSON_DOCUMENT
    return ""


# Said of a file whose first line opens a .json document (a list, a
# spread object) where JSON Lines are wanted: by json_lines, and by a reader
# of JSON Lines whose first line parsed to a list (a .json on one line).
ONE_JSON_DOCUMENT = ("this looks like one JSON document (a .json file), where JSON Lines, "
                     "one JSON object on each line, is wanted")
