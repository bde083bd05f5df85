"""Reading JSONL files with errors that name the file and the line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

from ._errors import DataFormatError

__all__ = ["json_lines"]


def json_lines(path: str | os.PathLike) -> Iterator[tuple[str, Any]]:
    """``(where, record)`` for each non-blank line of the JSONL file at
    ``path``; ``where`` ("FILE, line N") is for the caller's own messages.
    Raises :class:`DataFormatError` for an unreadable file or a line that is
    not JSON."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as err:
        raise DataFormatError(f"{path}: no such file") from err
    except (OSError, UnicodeDecodeError) as err:
        raise DataFormatError(f"{path}: cannot read it as UTF-8 text ({err})") from err
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataFormatError(f"{where}: not valid JSON ({err.msg})") from err
        yield where, record
