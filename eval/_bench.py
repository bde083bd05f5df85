"""Warm latency of each rewrite metric for one rewrite (``python -m eval.rewrites bench``)."""

from __future__ import annotations

import os
import statistics
import time
from typing import Sequence

from assistant.kernel import percentile

from ._scoring import Scorer

__all__ = ["bench_metrics"]

# Untimed runs first: they warm the encoders' and the JVM's caches up.
WARMUP = 5


def bench_metrics(scorer: Scorer, names: Sequence[str], repeat: int) -> str:
    """Times each metric of ``names`` (and all together) ``repeat`` times
    with ``scorer``'s models; the report as text: median and p95 wall time,
    median CPU time, and the load average before and after."""
    reference = "When was Ada Lovelace born and who were her parents?"
    # wall and CPU (process) seconds per run; CPU time also counts the JVM's
    # search threads, and unlike wall time it hardly moves with other load.
    timings: dict[str, list[tuple[float, float]]] = {name: [] for name in [*names, "all"]}
    load_before = os.getloadavg()[0]
    for i in range(repeat + WARMUP):
        # Fresh texts each run, so neither the R@10 cache nor an encoder's hides any work.
        ref, candidate = f"{reference} {i}", f"When was she born {i} and who were her parents?"
        for name in [*names, "all"]:
            single = Scorer(
                names if name == "all" else (name,), use=scorer.use, minilm=scorer.minilm, retriever=scorer.retriever
            )
            wall, cpu = time.perf_counter(), time.process_time()
            single.score([ref], [candidate])
            timings[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    lines = [
        f"one rewrite, warm, {repeat} runs; load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores",
        f"{'metric':<15}{'median ms':>10}{'p95 ms':>10}{'CPU ms':>10}",
    ]
    for name, runs in timings.items():
        walls = sorted(w for w, _ in runs[WARMUP:])
        p95 = percentile(walls, 0.95)
        cpu = statistics.median(c for _, c in runs[WARMUP:])
        lines.append(f"{name:<15}{1000 * statistics.median(walls):>10.1f}{1000 * p95:>10.1f}{1000 * cpu:>10.1f}")
    return "\n".join(lines)
