"""Command-line values more than one evaluation command reads."""

from __future__ import annotations

from assistant.kernel import InvalidInputError

__all__ = ["mu_list"]


def mu_list(text: str) -> list[float]:
    """A ``--mu`` value: one interpolation weight from 0 to 1, or a
    comma-separated list of them (a sweep), in the order given.

    >>> mu_list("0.7"), mu_list("0,0.5, 1")
    ([0.7], [0.0, 0.5, 1.0])
    >>> mu_list("0.5,x")
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.InvalidInputError: --mu must be a number or a comma-separated list, not '0.5,x'
    """
    try:
        mus = [float(x) for x in text.split(",")]
    except ValueError:
        raise InvalidInputError(f"--mu must be a number or a comma-separated list, not {text!r}") from None
    if not all(0 <= mu <= 1 for mu in mus):  # NaN too
        raise InvalidInputError(f"--mu must be from 0 to 1 (each, in a list), not {text!r}")
    return mus
