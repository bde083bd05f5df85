"""The one way every command line ends on a user's error."""

from __future__ import annotations

import sys
from typing import Callable, Sequence

from ._errors import AssistantError

__all__ = ["run_cli"]


def run_cli(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """Run ``main(argv)``; an :class:`AssistantError` (bad input, a missing
    index or model, a setting out of range ...) becomes one line on stderr,
    ``error: <what to do>``, and exit status 2. Anything else is a bug and
    keeps its traceback."""
    try:
        return main(argv)
    except AssistantError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
