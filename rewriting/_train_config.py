"""The settings of one training run (:mod:`rewriting.train`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._prompt import PromptConfig

__all__ = ["TrainConfig", "RESUMABLE", "fixed_settings"]


@dataclass(frozen=True)
class TrainConfig:
    """One training run; every field is also a command-line flag."""

    # Base causal LM: "smollm2" (the packaged SmolLM2-135M-Instruct), a path or a cached hub name.
    base: str = "smollm2"
    # Optimiser steps. 400 x 8 examples is ~0.8 epoch of our ~4k turns.
    steps: int = 400
    # Examples per step: 8 x ~150 tokens keeps a step at a few seconds on 2 cores.
    batch_size: int = 8
    # Peak learning rate: LoRA tolerates ~10x full fine-tuning's; 4e-4 is the usual upper range.
    lr: float = 4e-4
    # Linear warm-up steps, then cosine decay to 10% of the peak.
    warmup: int = 20
    # LoRA rank: that of the first run that rewrote well (issue 3), kept since.
    lora_r: int = 16
    # LoRA scale alpha/r = 2, the common choice.
    lora_alpha: int = 32
    # Dropout on the LoRA input: mild regularisation for a ~4k-example set.
    lora_dropout: float = 0.05
    # Give the rewriter CANARD's article title as a first turn
    # (RewriteExample.context), as evaluation does. False (--no-titles) shows
    # the turns only, as the committed default adapter was trained.
    titles: bool = True
    # Earlier questions in a training turn's history: "asked" (as the file
    # has them), "rewritten" (their human rewrites, as the app's history
    # holds its own rewrites) or "both" (each turn twice). See
    # rewriting.data.with_histories.
    histories: str = "asked"
    # Add a copy of each training turn whose rewrite brings a name in from the
    # conversation, with that name swapped for another (rewriting.data.
    # with_swapped_names): a names file, "collection" (the default
    # collection's titles) or "" (off, as the committed adapter was trained).
    swap_names: str = ""
    # Repeat each training turn of a source this many times in all, after the
    # split and the copies above ("qrecc=2,cast2021=3"; "" off): weight for the
    # data furthest from its goal without moving the held-out turns.
    repeat: str = ""
    # Train the Transformer++ copy head too.
    copy: bool = False
    # Width of the copy head's query/key projections.
    copy_dim: int = 128
    # Gradient-norm clip: guards the first steps of a freshly initialised copy head.
    clip: float = 1.0
    # Seed of the data order, LoRA init and dropout.
    seed: int = 0
    # Seed of the dev split by conversation, apart from `seed`: a run with
    # another seed then holds out the same turns, so two seeds compare (and
    # can be averaged) on one dev set. 0 is the committed adapter's split.
    split_seed: int = 0
    # Share of conversations held out as dev when no --dev file is given.
    dev_fraction: float = 0.2
    # Checkpoint period in steps (a resume loses at most this many).
    save_every: int = 25
    # Dev-loss period in steps (0: only at the end), on the first eval_examples dev turns.
    eval_every: int = 100
    # Dev turns the dev loss is measured on (the whole dev set costs minutes
    # on 2 cores). 0: not measured, and dev_loss is null in summary.json.
    eval_examples: int = 128
    # Matmuls in bfloat16 (autocast) where the CPU has native support (AMX/AVX512-BF16): faster steps.
    bf16: bool = False
    # Where the steps run: "cpu", or "cuda" / "cuda:N" on a machine with an
    # NVIDIA GPU (a run of minutes instead of hours). The adapter is saved the
    # same either way and loads on a CPU.
    device: str = "cpu"
    # Token budgets of the input format (saved with the weights for inference).
    prompt: PromptConfig = field(default_factory=PromptConfig)
    # End after this many steps of the `steps`-long schedule (0: run it all).
    # For a shared machine slower than planned: a run may be resumed with a
    # different value, and the card says where it stopped.
    stop_after: int = 0


# Settings that may change when a run is resumed (they do not alter what the
# steps already taken computed).
RESUMABLE = frozenset({"stop_after", "eval_every", "eval_examples", "save_every", "device"})


def fixed_settings(settings: dict) -> dict:
    """The settings a resumed run must share with the checkpoint's."""
    return {k: v for k, v in settings.items() if k not in RESUMABLE}
