"""Fine-tune a causal LM into a question rewriter (QReCC's Transformer++ recipe).

    python -m rewriting.train --train FILE... --output DIR [--dev FILE] [--base NAME_OR_PATH]
        [--steps N] [--copy] [--seed N] [--max-answer-tokens N] [--answer-turns N] ...

Input: the conversation history (as far back as fits) and the question, in
the plain format of :mod:`rewriting._prompt`; target: the human rewrite;
loss on the rewrite tokens only. LoRA adapters on every linear layer of the
base (default SmolLM2-135M-Instruct) rather than full fine-tuning: ~3% of the
parameters train, so 2 CPU cores fit a useful run in under an hour, the
result is a few MB that the repo can carry, and the base model's knowledge
of names and spelling is left intact. ``--copy`` adds the Transformer++ copy
head (:mod:`rewriting._copy`).

Without ``--dev`` the training files are split by conversation
(:func:`rewriting.data.split_by_conversation`); the exact split is written
to ``DIR/split.json``. First turns (empty history) are left out of training
and dev loss: the rewriter never rewrites them.

The run checkpoints every ``--save-every`` steps to ``DIR/checkpoint.pt`` and
resumes from it when started again with the same output directory.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

# torch's OpenMP worker threads spin for ~3 ms after each parallel region
# (libgomp's default) before they sleep. When several processes share 2 cores,
# that spinning starves the others: a LoRA step measured 40-50 s with the
# default and 12 s with PASSIVE (no spinning) on this machine under load.
# Training only: inference is a long chain of small ops, each a parallel
# region, and there PASSIVE's wake-ups cost 1.8x (BENCHMARKS.md §3). It only
# takes effect if set before torch is first imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

from assistant.kernel import ConfigError, DataFormatError, run_cli  # noqa: E402

from ._copy import COPY_HEAD_FILE, CopyHead  # noqa: E402
from ._prompt import IGNORE_INDEX, PromptConfig, encode_example  # noqa: E402
from ._recipe import Recipe  # noqa: E402

__all__ = ["TrainConfig", "Batch", "make_batches", "encode_examples", "batch_loss", "train", "main"]

CHECKPOINT_FILE = "checkpoint.pt"
SPLIT_FILE = "split.json"
LOG_FILE = "train_log.jsonl"


@dataclass(frozen=True)
class TrainConfig:
    """One training run; every field is also a command-line flag."""

    # Base causal LM: "smollm2" (the packaged SmolLM2-135M-Instruct), a path or a cached hub name.
    base: str = "smollm2"
    # Optimiser steps. 400 x 8 examples is ~0.8 epoch of our ~4k turns, ~45 min on 2 cores.
    steps: int = 400
    # Examples per step: 8 x ~150 tokens keeps a step at a few seconds on 2 cores.
    batch_size: int = 8
    # Peak learning rate: LoRA tolerates ~10x full fine-tuning's; 4e-4 is the usual upper range.
    lr: float = 4e-4
    # Linear warm-up steps, then cosine decay to 10% of the peak.
    warmup: int = 20
    # LoRA rank: 16 matched a first run that reached ROUGE-1 R 85 (issue 3).
    lora_r: int = 16
    # LoRA scale alpha/r = 2, the common choice.
    lora_alpha: int = 32
    # Dropout on the LoRA input: mild regularisation for a ~4k-example set.
    lora_dropout: float = 0.05
    # Give the rewriter CANARD's article title as a first turn
    # (RewriteExample.context), as evaluation does. False (--no-titles) shows
    # the turns only, as the committed default adapter was trained.
    titles: bool = True
    # Train the Transformer++ copy head too.
    copy: bool = False
    # Width of the copy head's query/key projections.
    copy_dim: int = 128
    # Gradient-norm clip: guards the first steps of a freshly initialised copy head.
    clip: float = 1.0
    # Seed of the data order, LoRA init and dropout.
    seed: int = 0
    # Share of conversations held out as dev when no --dev file is given.
    dev_fraction: float = 0.2
    # Checkpoint period in steps (a resume loses at most this many).
    save_every: int = 25
    # Dev-loss period in steps (0: only at the end), on the first eval_examples dev turns.
    eval_every: int = 100
    eval_examples: int = 128
    # Matmuls in bfloat16 (autocast) where the CPU has native support (AMX/AVX512-BF16): ~2x faster steps.
    bf16: bool = False
    # Token budgets of the input format (saved with the weights for inference).
    prompt: PromptConfig = field(default_factory=PromptConfig)
    # End after this many steps of the `steps`-long schedule (0: run it all).
    # For a shared machine slower than planned: a run may be resumed with a
    # different value, and the card says where it stopped.
    stop_after: int = 0


# Settings that may change when a run is resumed (they do not alter what the
# steps already taken computed).
_RESUMABLE = {"stop_after", "eval_every", "eval_examples", "save_every"}


def _fixed(settings: dict) -> dict:
    return {k: v for k, v in settings.items() if k not in _RESUMABLE}


@dataclass
class Batch:
    """Right-padded tensors of one step; labels are IGNORE_INDEX except on rewrite tokens."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor


def collate(encoded: Sequence[tuple[list[int], list[int]]], pad_id: int) -> Batch:
    width = max(len(ids) for ids, _ in encoded)
    input_ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    labels = torch.full((len(encoded), width), IGNORE_INDEX, dtype=torch.long)
    for row, (ids, labs) in enumerate(encoded):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        mask[row, : len(ids)] = 1
        labels[row, : len(labs)] = torch.tensor(labs)
    return Batch(input_ids, mask, labels)


def make_batches(count: int, batch_size: int, steps: int, seed: int) -> list[list[int]]:
    """Example indices for each of ``steps`` steps: reshuffled every epoch, seeded.

    A pure function of its arguments, so a resumed run continues with exactly
    the batches the interrupted one would have seen.

    >>> make_batches(5, 2, 3, 0) == make_batches(5, 2, 3, 0)
    True
    >>> [len(b) for b in make_batches(5, 2, 4, 0)]
    [2, 2, 2, 2]
    """
    order: list[int] = []
    epoch = 0
    while len(order) < steps * batch_size:
        epoch_order = list(range(count))
        random.Random(seed * 1_000_003 + epoch).shuffle(epoch_order)
        order += epoch_order
        epoch += 1
    return [order[i * batch_size : (i + 1) * batch_size] for i in range(steps)]


def batch_loss(model, batch: Batch, copy_head: CopyHead | None = None) -> torch.Tensor:
    """Mean negative log-likelihood of the rewrite tokens.

    Logits are computed only where a rewrite token is predicted: the LM head
    over 49k words at every prompt position would cost as much as the body.
    """
    out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_hidden_states=True, logits_to_keep=1)
    hidden = out.hidden_states[-1]
    targets = batch.labels[:, 1:]
    predicting = targets != IGNORE_INDEX  # position t predicts token t + 1
    counts = predicting.sum(dim=1)
    width = int(counts.max())
    # Gather each row's predicting positions into a (B, width) block, padded.
    order = torch.argsort((~predicting).to(torch.int8), dim=1, stable=True)[:, :width]
    valid = torch.arange(width)[None, :] < counts[:, None]
    picked = torch.gather(hidden[:, :-1], 1, order[..., None].expand(-1, -1, hidden.shape[-1]))
    gold = torch.gather(targets, 1, order).masked_fill(~valid, 0)
    logits = model.get_output_embeddings()(picked)
    if copy_head is None:
        log_probs = torch.log_softmax(logits.float(), dim=-1)
    else:
        source_mask = (batch.labels == IGNORE_INDEX) & batch.attention_mask.bool()
        log_probs = copy_head.log_probs(picked, logits, copy_head.keys(hidden), batch.input_ids, source_mask)
    nll = -log_probs.gather(2, gold[..., None])[..., 0]
    return (nll * valid).sum() / valid.sum()


def encode_examples(tokenizer, examples, config: TrainConfig) -> list[tuple[list[int], list[int]]]:
    """``(input_ids, labels)`` of every example after its conversation's first
    turn (first turns are never rewritten, so never trained on)."""
    return [
        encode_example(tokenizer, e.question, e.context if config.titles else e.history, e.rewrite, config.prompt)
        for e in examples
        if e.history
    ]


def _lr_factor(step: int, config: TrainConfig) -> float:
    if step < config.warmup:
        return (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def _autocast(config: TrainConfig):
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=config.bf16)


@torch.no_grad()
def dev_loss(model, encoded, pad_id, config: TrainConfig, copy_head=None) -> float:
    """Token-weighted mean rewrite NLL over ``encoded`` (model left in train mode after)."""
    model.eval()
    total, tokens = 0.0, 0
    for start in range(0, len(encoded), config.batch_size):
        chunk = encoded[start : start + config.batch_size]
        batch = collate(chunk, pad_id)
        count = int((batch.labels[:, 1:] != IGNORE_INDEX).sum())
        with _autocast(config):
            total += float(batch_loss(model, batch, copy_head)) * count
        tokens += count
    model.train()
    return total / max(1, tokens)


def _atomic_save(obj, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _save_weights(model, copy_head, output: Path, config: TrainConfig) -> None:
    """Write the adapter (float16: half the size, no measurable loss for LoRA deltas), head and recipe."""
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    model.peft_config["default"].base_model_name_or_path = config.base
    model.save_pretrained(str(output))  # adapter_config.json + adapter_model.safetensors
    state = {k: v.detach().to(torch.float16).contiguous() for k, v in get_peft_model_state_dict(model).items()}
    save_file(state, str(output / "adapter_model.safetensors"), metadata={"format": "pt"})
    if copy_head is not None:
        save_file({k: v.contiguous() for k, v in copy_head.state_dict().items()}, str(output / COPY_HEAD_FILE))
    Recipe(base=config.base, prompt_format="plain", prompt=config.prompt, copy=copy_head is not None, copy_dim=config.copy_dim).write(output)


def prepare_output(output: Path) -> None:
    """Make the run's folder; :class:`ConfigError` when it cannot be written
    (found before any data is read or model loaded)."""
    try:
        output.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=output):
            pass
    except OSError as error:
        raise ConfigError(f"cannot write the output folder {output}: {error.strerror or error}; give a writable --output") from error


def train(train_examples, dev_examples, output: Path, config: TrainConfig, model=None, tokenizer=None, progress: bool = True) -> dict:
    """Train and write the adapter to ``output``; returns a summary dict.

    ``model``/``tokenizer`` may be given ready (tests pass a tiny GPT-2);
    otherwise ``config.base`` is loaded.
    """
    from peft import (
        LoraConfig,
        get_peft_model,
        get_peft_model_state_dict,
        set_peft_model_state_dict,
    )
    from tqdm import tqdm

    from ._models import load_causal_lm

    prepare_output(output)
    torch.manual_seed(config.seed)
    if model is None:
        model, tokenizer = load_causal_lm(config.base)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    train_set = encode_examples(tokenizer, train_examples, config)
    dev_set = encode_examples(tokenizer, dev_examples, config)
    if not train_set:
        raise DataFormatError("no training examples with a history (first turns are not trained on); give files with later turns")

    lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout, target_modules="all-linear", task_type="CAUSAL_LM")
    model = get_peft_model(model, lora)
    copy_head = CopyHead(model.config.hidden_size, config.copy_dim) if config.copy else None
    params = [p for p in model.parameters() if p.requires_grad] + (list(copy_head.parameters()) if copy_head else [])
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: _lr_factor(step, config))
    batches = make_batches(len(train_set), config.batch_size, config.steps, config.seed)

    start, elapsed_before = 0, 0.0
    checkpoint = output / CHECKPOINT_FILE
    if checkpoint.is_file():
        state = torch.load(checkpoint, weights_only=False)
        if _fixed(state["config"]) != _fixed(asdict(config)):
            raise ConfigError(f"{checkpoint} was written with other settings; use another --output or delete it to start over")
        set_peft_model_state_dict(model, state["adapter"])
        if copy_head is not None:
            copy_head.load_state_dict(state["copy_head"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        start, elapsed_before = state["step"], state["elapsed_s"]
        print(f"resuming from step {start} of {config.steps}", file=sys.stderr)

    model.train()
    if copy_head is not None:
        copy_head.train()
    log = (output / LOG_FILE).open("a")
    began = time.monotonic()
    losses: list[float] = []
    end = min(config.steps, config.stop_after) if config.stop_after > 0 else config.steps
    bar = tqdm(range(start, end), initial=start, total=end, desc="train", file=sys.stderr, disable=not progress)
    for step in bar:
        batch = collate([train_set[i] for i in batches[step]], pad_id)
        with _autocast(config):
            loss = batch_loss(model, batch, copy_head)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, config.clip)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach().item())
        record = {"step": step + 1, "loss": round(float(loss), 4), "lr": scheduler.get_last_lr()[0], "elapsed_s": round(elapsed_before + time.monotonic() - began, 1)}
        bar.set_postfix(loss=f"{sum(losses[-20:]) / len(losses[-20:]):.3f}")
        done = step + 1
        if dev_set and config.eval_every and done % config.eval_every == 0 and done < end:
            record["dev_loss"] = round(dev_loss(model, dev_set[: config.eval_examples], pad_id, config, copy_head), 4)
            tqdm.write(f"step {done}: dev loss {record['dev_loss']}", file=sys.stderr)
        log.write(json.dumps(record) + "\n")
        log.flush()
        if done % config.save_every == 0 or done == end:
            _atomic_save(
                {
                    "step": done,
                    "config": asdict(config),
                    "adapter": get_peft_model_state_dict(model),
                    "copy_head": copy_head.state_dict() if copy_head else None,
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                    "torch_rng": torch.get_rng_state(),
                    "elapsed_s": elapsed_before + time.monotonic() - began,
                },
                checkpoint,
            )
    log.close()
    summary = {
        "steps": max(start, end),
        "schedule_steps": config.steps,
        "train_examples": len(train_set),
        "dev_examples": len(dev_set),
        "final_train_loss_last20": _last_losses(output, max(start, end)),
        # On the first eval_examples dev turns: the whole dev set costs minutes on 2 cores.
        "dev_loss": round(dev_loss(model, dev_set[: config.eval_examples], pad_id, config, copy_head), 4) if dev_set else None,
        "train_seconds": round(elapsed_before + time.monotonic() - began, 1),
    }
    _save_weights(model, copy_head, output, config)
    (output / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _last_losses(output: Path, step: int, count: int = 20) -> float | None:
    """Mean loss of the ``count`` steps up to ``step``, from the log (it spans resumes)."""
    losses = {}
    for line in (output / LOG_FILE).read_text().splitlines():
        record = json.loads(line)
        losses[record["step"]] = record["loss"]  # a step re-run after a resume: the last one counts
    recent = [losses[s] for s in range(max(1, step - count + 1), step + 1) if s in losses]
    return round(sum(recent) / len(recent), 4) if recent else None


def _split_record(files, train_examples, dev_examples, from_file) -> dict:
    def by_file(examples):
        grouped: dict[str, list[str]] = {}
        for example in examples:
            grouped.setdefault(from_file[id(example)], []).append(example.id)
        return grouped

    return {"files": [str(f) for f in files], "train": by_file(train_examples), "dev": by_file(dev_examples)}


def _check_ranges(config: TrainConfig) -> None:
    """:class:`ConfigError` for a flag outside its range (not a traceback later)."""
    at_least = {name: 1 for name in ("steps", "batch_size", "lora_r", "lora_alpha", "save_every", "copy_dim")}
    at_least.update({name: 0 for name in ("warmup", "eval_every", "eval_examples", "stop_after")})
    at_least.update({name: 0 if "answer" in name else 1 for name in asdict(config.prompt)})  # answers may be left out
    for name, low in at_least.items():
        value = getattr(config.prompt, name) if name in asdict(config.prompt) else getattr(config, name)
        if value < low:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least {low}, not {value}")
    if not config.lr > 0:
        raise ConfigError(f"--lr must be above 0, not {config.lr}")
    for name in ("dev_fraction", "lora_dropout"):
        if not 0 <= getattr(config, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be within [0, 1), not {getattr(config, name)}")


def _card(output: Path, command: str, config: TrainConfig, summary: dict, train_examples, dev_examples) -> str:
    from collections import Counter

    def counts(examples):
        c = Counter(e.source for e in examples if e.history)
        return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))

    return f"""# Question-rewriting adapter: {output.name}

LoRA adapter (r={config.lora_r}, alpha={config.lora_alpha}, all linear layers) for `{config.base}`,
trained by `rewriting.train` to rewrite a conversational question into a self-contained one.
Copy head (Transformer++): {"yes" if config.copy else "no"}.

Reproduce (same data, same seed; resumes if interrupted):

    {command}

- Data: turns after the first (first turns are never rewritten) of the files in `split.json`,
  split by conversation (dev fraction {config.dev_fraction}, seed {config.seed}); `split.json`
  lists the exact ids on each side.
- Train turns: {summary['train_examples']} ({counts(train_examples)}).
- Held-out dev turns: {summary['dev_examples']} ({counts(dev_examples)}).
- Steps: {summary['steps']} of batch {config.batch_size}{"" if summary['steps'] == config.steps else f" (stopped early: the cosine schedule was for {config.steps})"}, lr {config.lr} (warm-up {config.warmup}, cosine to 10%),
  bf16 autocast: {config.bf16}, seed {config.seed}.
- Mean train loss over the last 20 steps: {summary['final_train_loss_last20']}; dev loss (rewrite tokens, first {min(config.eval_examples, summary['dev_examples'])} dev turns): {summary['dev_loss']}.
- Training time: {summary['train_seconds']} s on this machine's CPU ({torch.get_num_threads()} threads).
- Per-step losses: `train_log.jsonl`. Input format and budgets: `rewriter.json`.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; a user's error ends in one line and exit status 2."""
    return run_cli(_main, argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rewriting.train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", nargs="+", required=True, metavar="FILE", help="QReCC, CANARD or TREC CAsT json files")
    parser.add_argument("--dev", metavar="FILE", help="held-out file (default: split --train files by conversation)")
    parser.add_argument("--output", required=True, type=Path, metavar="DIR")
    parser.add_argument("--format", choices=("qrecc", "canard", "cast"), help="format of every file (default: detected)")
    defaults = TrainConfig()
    parser.add_argument("--base", default=defaults.base)
    for name in ("steps", "stop_after", "batch_size", "lora_r", "lora_alpha", "seed", "save_every", "eval_every", "eval_examples", "warmup", "copy_dim"):
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=getattr(defaults, name))
    for name in ("lr", "dev_fraction", "lora_dropout", "clip"):
        parser.add_argument("--" + name.replace("_", "-"), type=float, default=getattr(defaults, name))
    prompt_defaults = PromptConfig()
    for name in asdict(prompt_defaults):  # the input format's token budgets, saved in rewriter.json
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=getattr(prompt_defaults, name))
    parser.add_argument("--copy", action="store_true", help="add the Transformer++ copy head")
    parser.add_argument("--no-titles", dest="titles", action="store_false", help="leave CANARD's article title out of the input")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast (CPUs with AMX/AVX512-BF16)")
    args = parser.parse_args(argv)

    from rewriting.data import load_examples, split_by_conversation

    fields = {k: getattr(args, k) for k in asdict(defaults) if k != "prompt" and hasattr(args, k)}
    config = TrainConfig(**fields, prompt=PromptConfig(**{k: getattr(args, k) for k in asdict(prompt_defaults)}))
    _check_ranges(config)
    prepare_output(args.output)
    from_file: dict[int, str] = {}
    examples = []
    for path in args.train:
        loaded = load_examples(path, args.format)
        from_file.update({id(e): Path(path).name for e in loaded})
        examples += loaded
    if args.dev:
        train_examples = examples
        dev_examples = load_examples(args.dev, args.format)
        from_file.update({id(e): Path(args.dev).name for e in dev_examples})
    else:
        train_examples, dev_examples = split_by_conversation(examples, config.dev_fraction, config.seed)
    split = _split_record(args.train + ([args.dev] if args.dev else []), train_examples, dev_examples, from_file)
    (args.output / SPLIT_FILE).write_text(json.dumps(split, indent=1) + "\n")
    summary = train(train_examples, dev_examples, args.output, config)
    command = "python -m rewriting.train " + " ".join(sys.argv[1:] if argv is None else argv)
    (args.output / "README.md").write_text(_card(args.output, command, config, summary, train_examples, dev_examples))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
