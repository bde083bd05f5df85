"""Plots of the rewrite metrics: each metric's score distribution per label."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np

from assistant.kernel import ConfigError, LabelledRewrite

__all__ = ["check_plot_format", "plot_distributions"]


def check_plot_format(out: str | os.PathLike, flag: str = "--plot") -> None:
    """Refuse ``out`` whose suffix names no format matplotlib writes, before
    the work whose result it plots (savefig found it only at the end, with a
    traceback). A name without a suffix is written as PNG."""
    import matplotlib
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = Path(out).suffix.lower().lstrip(".")
    formats = set(FigureCanvasBase.get_supported_filetypes())
    if shutil.which(matplotlib.rcParams["pgf.texsystem"]) is None:
        # matplotlib lists .pgf, but writes it through a TeX system: without
        # one, savefig failed ("'xelatex' not found") after all the scoring.
        formats.discard("pgf")
    if suffix and suffix not in formats:
        raise ConfigError(f"{flag} {out}: cannot plot to a .{suffix} file; give a name ending in one of "
                          f"{', '.join('.' + name for name in sorted(formats))} (e.g. .png)")


def plot_distributions(labels: Sequence[LabelledRewrite], scores: dict[str, np.ndarray], out: str) -> None:
    """One histogram panel per metric: its scores for correct vs incorrect rewrites."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers or in CI
    import matplotlib.pyplot as plt

    y = np.array([item.label for item in labels])
    cols = min(3, len(scores))
    rows = math.ceil(len(scores) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    bins = np.linspace(0.0, 1.0, 21)
    for ax, (name, values) in zip(axes.flat, scores.items()):
        values = np.clip(np.asarray(values, dtype=float), 0.0, 1.0)
        ax.hist(values[y == 1], bins=bins, alpha=0.6, label=f"correct ({(y == 1).sum()})", color="tab:green")
        ax.hist(values[y == 0], bins=bins, alpha=0.6, label=f"incorrect ({(y == 0).sum()})", color="tab:red")
        ax.set_title(name)
        ax.set_xlabel("score")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(scores) :]:
        ax.axis("off")
    fig.tight_layout()
    # A format named, so that a name without a suffix is written as named
    # (matplotlib would add ".png" to it, and the "wrote" line would be wrong).
    fig.savefig(out, dpi=100, format=Path(out).suffix.lower().lstrip(".") or "png")
    plt.close(fig)
