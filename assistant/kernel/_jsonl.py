"""Reading JSONL files with errors that name the file and the line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

from ._errors import DataFormatError

__all__ = ["json_lines"]


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
    path = Path(path)
    try:
        # Split at "\n" only: str.splitlines() also splits at U+2028/U+2029,
        # \x0b, \x0c, \x1c-\x1e and \x85, which json.dumps(ensure_ascii=False)
        # writes raw inside strings (pasted text, form feeds from PDFs).
        lines = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError as err:
        raise DataFormatError(f"{path}: no such file") from err
    except (OSError, UnicodeDecodeError) as err:
        raise DataFormatError(f"{path}: cannot read it as UTF-8 text ({err})") from err
    for number, line in enumerate(lines, 1):
        line = line.removesuffix("\r")  # a file written on Windows
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataFormatError(f"{where}: not valid JSON ({err.msg})") from err
        yield where, record
