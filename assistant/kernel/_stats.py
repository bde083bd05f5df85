"""The one percentile every latency figure uses."""

from __future__ import annotations

import math
from typing import Sequence

__all__ = ["percentile"]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0 <= q <= 1) of ``values``, by linear interpolation
    between the two nearest ranks: NumPy's default method and
    ``statistics.quantiles(..., method="inclusive")``. ``percentile(v, 0.95)``
    is the p95 of every benchmark figure in BENCHMARKS.md.

    >>> percentile([1, 2, 3, 4], 0.5)
    2.5
    >>> percentile(list(range(1, 21)), 0.95)
    19.05
    >>> percentile([7.0], 0.95)
    7.0
    """
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 1:
        raise ValueError(f"q must lie in [0, 1], got {q}")
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
