"""Command-line values more than one evaluation command reads."""

from __future__ import annotations

from assistant.kernel import ConfigError

__all__ = ["mu_list", "number_list"]


def number_list(text: str, flag: str, number: type[int] | type[float] = float) -> list:
    """A flag's value: one ``number`` (int or float) or a comma-separated
    list of them, in the order given; anything else is a :class:`ConfigError`
    naming ``flag`` and what it takes.

    >>> number_list("4", "--k", int), number_list("2, 4,8", "--k", int)
    ([4], [2, 4, 8])
    >>> number_list("2,x", "--k", int)
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.ConfigError: --k must be a whole number or a comma-separated list, not '2,x'
    """
    try:
        return [number(x) for x in text.split(",")]
    except ValueError:
        what = "a whole number" if number is int else "a number"
        raise ConfigError(f"{flag} must be {what} or a comma-separated list, not {text!r}") from None


def mu_list(text: str) -> list[float]:
    """A ``--mu`` value: one interpolation weight from 0 to 1, or a
    comma-separated list of them (a sweep), in the order given.

    >>> mu_list("0.7"), mu_list("0,0.5, 1")
    ([0.7], [0.0, 0.5, 1.0])
    >>> mu_list("0.5,x")
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.ConfigError: --mu must be a number or a comma-separated list, not '0.5,x'
    """
    mus = number_list(text, "--mu")
    if not all(0 <= mu <= 1 for mu in mus):  # NaN too
        raise ConfigError(f"--mu must be from 0 to 1 (each, in a list), not {text!r}")
    return mus
