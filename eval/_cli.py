"""What the evaluation commands share as command lines: an output path that
is none of their inputs, and an interruption that ends in one line."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Callable, Iterable, Sequence

from assistant.kernel import ConfigError, Terminated, output_path, run_cli, sigterm_as_ctrl_c

__all__ = ["output_apart", "run_interruptible"]


def run_interruptible(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None, kept: str) -> int:
    """:func:`assistant.kernel.run_cli`, where Ctrl-C (or SIGTERM) ends the
    command with one line, ``interrupted: <kept>`` (what the interruption
    left: nothing written, or where the work so far is), and exit status
    130 (143): it ended in a Python traceback from whatever model or search
    was running, and said nothing of what was lost."""
    try:
        with sigterm_as_ctrl_c():
            return run_cli(main, argv)
    except KeyboardInterrupt as stop:
        print(f"interrupted: {kept}", file=sys.stderr)
        return 128 + (signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT)


def output_apart(path: str | os.PathLike, flag: str, inputs: Iterable[str | os.PathLike | None]) -> Path:
    """:func:`assistant.kernel.output_path`, and a :class:`ConfigError` when
    ``path`` is one of ``inputs`` (the same file by any name; None: an input
    not given): ``--predict coqa-dev.json`` beside ``--data coqa-dev.json``
    wrote the predictions over the data, and a dataset was lost to a typo.

    >>> import tempfile
    >>> data = Path(tempfile.mkdtemp()) / "data.json"
    >>> _ = data.write_text("{}")
    >>> output_apart(data.parent / "out.json", "--out", [data, None]).name
    'out.json'
    >>> output_apart(data.parent / "." / "data.json", "--out", [data])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.ConfigError: --out .../data.json is an input of this command too; writing it would replace it: give another path
    """
    out = output_path(path, flag)
    for given in inputs:
        if given is not None and out.exists() and Path(given).exists() and os.path.samefile(out, given):
            raise ConfigError(f"{flag} {path} is an input of this command too; writing it would replace it: give another path")
    return out
