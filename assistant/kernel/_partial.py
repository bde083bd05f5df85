"""The work a long command has finished so far, kept beside its output so
that an interrupted run (Ctrl-C, SIGTERM, a crash) can go on from it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

__all__ = ["PartialOutput"]


class PartialOutput:
    """``OUTPUT.partial``: a header line with what made the work (``key``:
    the input's digest, the settings), then one JSON line per finished item,
    each with an ``"id"``, flushed to disk as it is written. A run with the
    same key goes on from it; another key's file is replaced. The command
    writes its real output only when complete, and then removes this file.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "run.jsonl"
    >>> saved = PartialOutput(out, {"input": "abc"})
    >>> saved.start([])
    >>> saved.add([{"id": "q1", "rewrite": "Who?"}])
    >>> saved.close()
    >>> PartialOutput(out, {"input": "abc"}).done()
    {'q1': {'id': 'q1', 'rewrite': 'Who?'}}
    >>> PartialOutput(out, {"input": "other"}).done()
    {}
    """

    def __init__(self, output: str | os.PathLike, key: dict) -> None:
        self.path = Path(f"{output}.partial")
        self.key = key
        self._file = None

    def done(self) -> dict[str, dict[str, Any]]:
        """The lines an earlier run with this key finished, by id; none when
        there is no such file, or it was made from another input or with
        other settings."""
        try:
            lines = self.path.read_text(encoding="utf-8").split("\n")
            if json.loads(lines[0]) != {"partial": self.key}:
                return {}
        except (OSError, ValueError, IndexError):
            return {}
        done = {}
        for text in lines[1:]:
            try:
                line = json.loads(text)
                done[line["id"]] = line
            except (ValueError, KeyError, TypeError):
                break  # a line the interruption cut (and nothing after it)
        return done

    def start(self, done: Iterable[dict]) -> None:
        """Begin the file afresh: the header, then the ``done`` lines kept."""
        self._file = self.path.open("w", encoding="utf-8")
        self._write([{"partial": self.key}, *done])

    def add(self, lines: Iterable[dict]) -> None:
        self._write(lines)

    def _write(self, lines: Iterable[dict]) -> None:
        for line in lines:
            self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
