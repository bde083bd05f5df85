"""The one way every command line ends on a user's error, and the one check
of the paths it will write."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from ._errors import AssistantError, ConfigError
from ._stop import do_nothing

__all__ = ["CommandParser", "run_cli", "output_path", "check_at_least", "current_umask", "Terminated",
           "sigterm_as_ctrl_c"]


def run_cli(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None, *,
            interrupted: str | None = None) -> int:
    """Run ``main(argv)``; an :class:`AssistantError` (bad input, a missing
    index or model, a setting out of range ...) becomes one line on stderr,
    ``error: <what to do>``, and exit status 2. Anything else is a bug and
    keeps its traceback.

    ``interrupted``: what an interruption leaves (nothing written, or where
    the work so far is kept). Given, Ctrl-C and SIGTERM end the command
    with one line, ``interrupted: <it>``, and exit status 130 (143 for
    SIGTERM), where they ended in a traceback from whatever model or search
    was running, saying nothing of what was lost. A command that knows more
    of what it kept by the time it was stopped raises the interruption
    again with that text as its message, which is then shown instead."""
    if interrupted is None:
        return _errors_in_one_line(main, argv)
    try:
        with sigterm_as_ctrl_c():
            return _errors_in_one_line(main, argv)
    except KeyboardInterrupt as stop:
        print(f"interrupted: {stop.args[0] if stop.args else interrupted}", file=sys.stderr)
        return 128 + (signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT)


def _errors_in_one_line(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None) -> int:
    try:
        return main(argv)
    except AssistantError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


class CommandParser(argparse.ArgumentParser):
    """argparse's parser, which names a flag it does not know before a
    required flag missing: argparse checked the required ones first, so
    ``python -m eval.qa --bogus`` said "the following arguments are
    required: --data" and nothing of the typo, and a user who then added
    --data met the typo only on the second try. Every command line builds
    its parser with this one (its subcommands' parsers are of its class).

    >>> parser = CommandParser(prog="demo")
    >>> _ = parser.add_argument("--data", required=True)
    >>> try:
    ...     parser.parse_args(["--bogus"])
    ... except SystemExit as exit_:
    ...     exit_.code
    2
    """

    # True while a parse only looks for unknown flags: an error then is left
    # to the real parse, which says it with the usage as written.
    _looking = False

    def parse_args(self, args=None, namespace=None):
        args = sys.argv[1:] if args is None else list(args)
        unknown = []
        with _only_looking(self):
            with contextlib.suppress(_Unparsed):
                _, unknown = self.parse_known_args(args, argparse.Namespace())
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")  # argparse's own words, first
        return super().parse_args(args, namespace)

    def error(self, message: str):
        if self._looking:
            raise _Unparsed(message)
        super().error(message)


class _Unparsed(Exception):
    """An error of the parse that only looks for unknown flags."""


@contextlib.contextmanager
def _only_looking(parser: CommandParser) -> Iterator[None]:
    """While it lasts, no flag, positional or group of ``parser`` and of its
    subcommands' parsers is required (argparse keeps the mark on each), and
    their errors raise :class:`_Unparsed` instead of ending the program."""
    marked, parsers, seen = [], [parser], []
    while parsers:
        current = parsers.pop()
        seen.append(current)
        current._looking = True
        for holder in (*current._actions, *current._mutually_exclusive_groups):
            if holder.required:
                marked.append(holder)
                holder.required = False
            if isinstance(holder, argparse._SubParsersAction):
                parsers.extend(holder.choices.values())
    try:
        yield
    finally:
        for holder in marked:
            holder.required = True
        for current in seen:
            current._looking = False


def check_at_least(**flags: tuple[int | float | None, int | float]) -> None:
    """Refuse a numeric flag below its least value, ``name=(value, least)``
    (``k=(args.k, 1)`` stands for ``--k``; a value of None is a flag not
    given), with a :class:`ConfigError` naming the flag. For a command line
    to call before it loads any model, so that a typo costs no loading time
    and is not first met as an empty slice or a score of 0.

    >>> check_at_least(k=(3, 1), limit=(None, 1))
    >>> check_at_least(k=(3, 1), history_turns=(-1, 0))
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.ConfigError: --history-turns must be at least 0, not -1
    """
    for name, (value, least) in flags.items():
        if value is not None and value < least:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least {least}, not {value}")


def output_path(path: str | os.PathLike, flag: str = "the output", *, folder: bool = False,
                inputs: Iterable[str | os.PathLike | None] = ()) -> Path:
    """``path`` made ready for a command line to write, before its work starts:
    missing parent folders are made (as ``rewriting.rewrite --output`` always
    did), and a path that cannot be written (a parent that is a file, a
    read-only folder, a folder where a file is wanted or the reverse) is
    refused with a :class:`ConfigError` naming ``flag``. Checked up front so
    that minutes of work are not lost to a typo in the last step.
    ``folder``: ``path`` is a folder, not a file; the command fills it, or
    makes (or replaces) it itself, as an index build does, so only its
    parent is made here. ``inputs``: the command's input files (None: one
    not given); ``path`` naming one of them, the same file by any name, is
    refused (``--predict coqa-dev.json`` beside ``--data coqa-dev.json``
    wrote the predictions over the data: a dataset lost to a typo).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> run = output_path(root / "new" / "run.trec", "--run")
    >>> run.parent.is_dir(), run.exists()
    (True, False)
    >>> _ = run.write_text("")
    >>> output_path(run / "x.qrels", "--qrels")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.ConfigError: cannot write --qrels ...: ... is not a folder; give a path in a writable folder
    >>> output_path(root / "new" / "." / "run.trec", "--out", inputs=[run, None])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.ConfigError: --out .../run.trec is an input of this command too; writing it would replace it: give another path
    """
    path = Path(path)

    def refuse(reason: str, hint: str = "give a path in a writable folder") -> ConfigError:
        return ConfigError(f"cannot write {flag} {path}: {reason}; {hint}")

    if folder and path.exists() and not path.is_dir():
        raise refuse("it is a file", "give a folder path")
    if not folder and path.is_dir():
        raise refuse("it is a folder", "give a file path")
    where = path if folder and path.is_dir() else path.parent
    # The nearest folder that exists: a file there (``a.txt/out.json``) is
    # named, rather than the "File exists" or "Not a directory" of mkdir.
    existing = where
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise refuse(f"{existing} is not a folder")
    try:
        where.mkdir(parents=True, exist_ok=True)
        # A file made and removed again: unlike os.access, this also finds a
        # read-only file system, and a read-only folder when run as root.
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as error:
        raise refuse(error.strerror or str(error)) from None
    if path.is_file() and not os.access(path, os.W_OK):
        raise refuse("the file is read-only")
    for given in inputs:
        if given is not None and path.exists() and Path(given).exists() and os.path.samefile(path, given):
            raise ConfigError(f"{flag} {path} is an input of this command too; writing it would replace it: give another path")
    return path


def current_umask() -> int:
    """The process's umask, for a file or folder made with a fixed private
    mode (``mkstemp``'s 0600, ``mkdtemp``'s 0700) that should end with the
    modes a plain ``open`` or ``mkdir`` gives. Read without setting it where
    Linux shows it: ``os.umask(0)`` would let a file another thread makes
    meanwhile be made world-writable."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o077)
    os.umask(umask)
    return umask


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as Ctrl-C is (:func:`sigterm_as_ctrl_c`)."""


@contextlib.contextmanager
def sigterm_as_ctrl_c(before: Callable[[], None] = do_nothing) -> Iterator[None]:
    """Within it, SIGTERM (``timeout``, ``docker stop``, a scheduler or a
    Space's restart) raises :class:`Terminated`, a KeyboardInterrupt, after
    ``before()`` (e.g. waiting for the work under way): its default action
    ended the process at once, and no cleanup (a build's staging folder,
    a server's upload copies) ran. The handler before it is put back at the
    end. Outside the main thread signals are not ours to take: it does nothing."""

    def terminate(signum, frame):
        before()
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except ValueError:  # not the main thread
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
