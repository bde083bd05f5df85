"""Reading text and JSONL files with errors that name the file (and the line)."""

from __future__ import annotations

import codecs
import io
import json
import os
import re
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
    is read in that encoding: the mark says it, so nothing is guessed.

    >>> utf8_text("\ufeff# Title".encode("utf-8"), "notes.md")
    '# Title'
    >>> utf8_text("Dvořák, 1841".encode("utf-16"), "notes.txt")
    'Dvořák, 1841'
    >>> utf8_text("ÿþ café au lait, crème brûlée!".encode("latin-1"), "latin1.txt")
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
        if _PRIVATE_USE.search(text):
            # A Latin-1 file that happens to open with "ÿþ" (FF FE) reads
            # as UTF-16 gibberish: its accented letters, paired with the
            # next byte, fall among the private-use characters, which no
            # text a person saved holds.
            raise DataFormatError(_not_as_marked(name, encoding))
        return text
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise DataFormatError(f"{name} is not UTF-8 text; save it as UTF-8 and try again.") from None


# The Basic Multilingual Plane's private-use characters.
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")

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


def _not_as_marked(name: str, encoding: str) -> str:
    return f"{name} begins as {encoding[:6].upper()} text but is not; save it as UTF-8 and try again."


def json_lines(path: str | os.PathLike) -> Iterator[tuple[str, Any]]:
    r"""``(where, record)`` for each non-blank line of the JSONL file at
    ``path``; ``where`` ("FILE, line N") is for the caller's own messages.
    Raises :class:`DataFormatError` for an unreadable file or a line that is
    not JSON.

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
        for number, raw in enumerate(_decoded(lines, path, marked), 1):
            where = f"{path}, line {number}"
            try:
                line = raw if marked else raw.decode("utf-8")
            except UnicodeDecodeError as err:
                # utf8_text's advice, not the codec's byte offsets (a binary file uploaded as .jsonl said them)
                raise DataFormatError(f"{where} is not UTF-8 text; save it as UTF-8 and try again.") from err
            if not line.strip():
                continue
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
