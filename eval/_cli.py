"""An output path that is none of the command's inputs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from assistant.kernel import ConfigError, output_path

__all__ = ["output_apart"]


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
