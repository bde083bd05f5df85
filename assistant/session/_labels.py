"""Feedback labels from the app: one JSON line per judged rewrite.

The lines are in the format ``python -m eval.rewrites validate`` reads
(:mod:`eval.labels`)::

    {"id", "history", "question", "rewrite", "reference", "label": 0 | 1, ...}

plus the extra keys ``source`` ("app"), ``reference_kind`` and ``time``.
Many browser sessions (threads of one server, or several servers) append to
one file, so an append is made safe three ways:

* an exclusive ``fcntl`` lock on a side file ``<labels>.lock`` serialises
  writers (the lock file, not the labels file, so that readers and rotation
  never hold it);
* the whole line goes out in a single ``os.write`` on an ``O_APPEND``
  descriptor, so even a writer that ignored the lock could not interleave
  bytes inside our line;
* ``fsync`` of the file (and of its folder when the file was just created)
  before :meth:`LabelStore.append` returns, so a judgement the UI has
  acknowledged survives a crash or restart.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Sequence
from pathlib import Path

from ..kernel import InvalidInputError, LabelledRewrite, default_labels_path, json_lines
from ._storage import server_storage

__all__ = ["MAX_LABELS_BYTES", "LabelStore"]

# The labels file's size past which judgements are refused: any visitor can
# append to it, a script thousands of lines a second, and it is on the
# server's disk. Far above what people judging by hand write.
MAX_LABELS_BYTES = 100 * 2**20


class LabelStore:
    """Appends judged rewrites to the labels file at ``path``, refusing
    (InvalidInputError) a line that would take it past ``max_bytes``."""

    def __init__(self, path: str | os.PathLike | None = None, max_bytes: int = MAX_LABELS_BYTES):
        self.path = Path(path) if path is not None else default_labels_path()
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.max_bytes = max_bytes

    def append(
        self,
        *,
        id: str,
        history: Sequence[str],
        question: str,
        rewrite: str,
        reference: str,
        label: int,
        reference_kind: str,
    ) -> str:
        """Append one judgement durably and return the line written."""
        if label not in (0, 1) or isinstance(label, bool):
            raise InvalidInputError(f"A label is 1 (correct) or 0 (incorrect), not {label!r}.")
        if not reference.strip():
            # eval.rewrites validate rejects the whole file at such a line.
            raise InvalidInputError("A judgement needs a reference rewrite to compare the system's rewrite with.")
        item = LabelledRewrite(
            id=id,
            history=tuple(history),
            question=question,
            rewrite=rewrite,
            reference=reference,
            label=label,
            extra={"source": "app", "reference_kind": reference_kind, "time": round(time.time(), 3)},
        )
        line = item.to_json()
        # One line per record: json.dumps escapes newlines inside strings.
        data = (line + "\n").encode("utf-8")
        with server_storage("This judgement was not recorded"):
            self._append(data)
        return line

    def _append(self, data: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                created = not self.path.exists()
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    if os.fstat(fd).st_size + len(data) + 1 > self.max_bytes:
                        raise InvalidInputError(
                            f"The server's labels file {self.path.name} is full ({self.max_bytes / 2**20:g} MB): this "
                            "judgement was not recorded. Its owner can move the file away to collect more.")
                    _repair_tail(fd)
                    written = os.write(fd, data)
                    if written != len(data):  # a full disk: never leave half a line
                        os.ftruncate(fd, os.fstat(fd).st_size - written)
                        raise OSError(errno.ENOSPC, f"only {written} of {len(data)} bytes written to {self.path}")
                    os.fsync(fd)
                finally:
                    os.close(fd)
                if created:
                    _fsync_dir(self.path.parent)
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def read(self) -> list[dict]:
        """Every line of the file as a dict (for tests and the UI's count)."""
        if not self.path.exists():
            return []
        return [record for _, record in json_lines(self.path)]


def _repair_tail(fd: int) -> None:
    # A process killed by the OS mid-write (power loss before fsync) can leave
    # a last line without its newline; start ours on a fresh line so that at
    # most the torn line is bad, never ours too.
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
