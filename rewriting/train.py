"""Fine-tune a causal LM into a question rewriter (QReCC's Transformer++ recipe).

    python -m rewriting.train --train FILE... --output DIR [--dev FILE] [--base NAME_OR_PATH]
        [--steps N] [--copy] [--seed N] [--device cpu|cuda] [--max-answer-tokens N] [--answer-turns N] ...

Input: the conversation history (as far back as fits) and the question, in
the plain format of :mod:`rewriting._prompt`; target: the human rewrite;
loss on the rewrite tokens only. LoRA adapters on every linear layer of the
base (default SmolLM2-135M-Instruct) rather than full fine-tuning: a few
percent of the parameters train (BENCHMARKS.md §3), so 2 CPU cores fit a
useful run in under an hour, the result is a few MB that the repo can
carry, and the base model's knowledge of names and spelling is left
intact. ``--copy`` adds the Transformer++ copy head (:mod:`rewriting._copy`).

Without ``--dev`` the training files are split by conversation
(:func:`rewriting.data.split_by_conversation`); the exact split is written
to ``DIR/split.json``. First turns (empty history) are left out of training
and dev loss: the rewriter never rewrites them.

The run checkpoints every ``--save-every`` steps to ``DIR/checkpoint.pt``,
and at the step reached on Ctrl-C (then exit status 130), and resumes from it
when started again with the same output directory.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

# torch's OpenMP worker threads spin for a while after each parallel region
# (libgomp's default) before they sleep. When several processes share 2 cores,
# that spinning starves the others: under load a LoRA step took several times
# longer with the default than with PASSIVE (no spinning). Training only:
# inference is a long chain of small ops, each a parallel region, and there
# PASSIVE's wake-ups cost more than they save (BENCHMARKS.md §3). It only
# takes effect if set before torch is first imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

from assistant.kernel import CommandParser, ConfigError, DataFormatError, check_at_least, run_cli  # noqa: E402

from ._batches import Batch, collate, encode_examples, make_batches  # noqa: E402
from ._checkpoint import CHECKPOINT_FILE, SPLIT_FILE, last_losses, prepare_output, resume, save_adapter  # noqa: E402
from ._loop import Interrupted, Run, run_steps  # noqa: E402
from ._loss import batch_loss, dev_loss  # noqa: E402
from ._prompt import PromptConfig  # noqa: E402
from ._train_config import TrainConfig  # noqa: E402
from .data import HISTORIES, load_examples, load_names, split_by_conversation, with_histories, with_repeats, with_swapped_names  # noqa: E402

__all__ = ["TrainConfig", "Batch", "collate", "make_batches", "encode_examples", "batch_loss", "dev_loss", "prepare_output", "train", "main"]

SUMMARY_FILE = "summary.json"


def train(train_examples, dev_examples, output: Path, config: TrainConfig, model=None, tokenizer=None, progress: bool = True) -> dict:
    """Train and write the adapter to ``output``; returns a summary dict.

    ``model``/``tokenizer`` may be given ready (tests pass a tiny GPT-2);
    otherwise ``config.base`` is loaded. A checkpoint in ``output`` is
    resumed (:class:`ConfigError` if its settings differ).
    """
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
    run = Run.start(model, config)
    start, elapsed_before = resume(run, config, output / CHECKPOINT_FILE)
    end = min(config.steps, config.stop_after) if config.stop_after > 0 else config.steps
    # batch_loss is looked up here, so a test can make a step fail by patching this module.
    seconds = run_steps(run, train_set, dev_set, pad_id, output, config, (start, end), elapsed_before, batch_loss, progress)
    summary = {
        "steps": max(start, end),
        "schedule_steps": config.steps,
        "train_examples": len(train_set),
        "dev_examples": len(dev_set),
        "final_train_loss_last20": last_losses(output, max(start, end)),
        # On the first eval_examples dev turns: the whole dev set costs minutes on 2 cores.
        # None (null) when not measured: no dev turns, or --eval-examples 0 (a loss of 0.0 would read as perfect).
        "dev_loss": round(dev_loss(run.model, dev_set[: config.eval_examples], pad_id, config, run.copy_head), 4) if dev_set and config.eval_examples else None,
        "train_seconds": round(seconds, 1),
    }
    # The targets end with the tokenizer's eos (encode_examples); inference must stop at that very token.
    save_adapter(run.model, run.copy_head, output, config, tokenizer.convert_ids_to_tokens(tokenizer.eos_token_id))
    (output / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n")
    return summary


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
    prompt = asdict(config.prompt)
    check_at_least(**{name: (prompt[name] if name in prompt else getattr(config, name), low) for name, low in at_least.items()})
    # A clip of 0 or below zeroes or flips every gradient (nothing would train); `not x > 0` also catches nan.
    for name in ("lr", "clip"):
        if not getattr(config, name) > 0:
            raise ConfigError(f"--{name} must be above 0, not {getattr(config, name)}")
    if config.lr == float("inf"):
        raise ConfigError("--lr must be a finite number, not inf")
    _check_device(config.device)
    for name in ("dev_fraction", "lora_dropout"):
        if not 0 <= getattr(config, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be within [0, 1), not {getattr(config, name)}")


def _check_device(device: str) -> None:
    """:class:`ConfigError` for a ``--device`` torch cannot train on here."""
    try:
        parsed = torch.device(device)
    except RuntimeError as error:
        raise ConfigError(f"--device {device!r} is not a torch device ({error}); give cpu, cuda or cuda:N") from None
    if parsed.type not in ("cpu", "cuda"):
        raise ConfigError(f"--device {device!r}: training runs on cpu or cuda[:N], not {parsed.type}")
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"--device {device!r}: torch {torch.__version__} sees no CUDA GPU on this machine; use --device cpu")
    if parsed.type == "cuda" and (parsed.index or 0) >= torch.cuda.device_count():
        raise ConfigError(f"--device {device!r}: this machine has {torch.cuda.device_count()} CUDA GPU(s), numbered from 0")


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
  split by conversation (dev fraction {config.dev_fraction}, seed {config.split_seed}); `split.json`
  lists the exact ids on each side.
- Train turns: {summary['train_examples']} ({counts(train_examples)}){f"; with name-swapped copies from `{config.swap_names}`" if config.swap_names else ""}{f"; repeated: {config.repeat}" if config.repeat else ""}.
- Held-out dev turns: {summary['dev_examples']} ({counts(dev_examples)}).
- Steps: {summary['steps']} of batch {config.batch_size}{"" if summary['steps'] == config.steps else f" (stopped early: the cosine schedule was for {config.steps})"}, lr {config.lr} (warm-up {config.warmup}, cosine to 10%),
  bf16 autocast: {config.bf16}, seed {config.seed}.
- Mean train loss over the last 20 steps: {summary['final_train_loss_last20']}; dev loss (rewrite tokens, first {min(config.eval_examples, summary['dev_examples'])} dev turns): {"not measured" if summary['dev_loss'] is None else summary['dev_loss']}.
- Training time: {summary['train_seconds']} s on {_device_name(config.device)}.
- Per-step losses: `train_log.jsonl`. Input format and budgets: `rewriter.json`.
"""


def _repeats(value: str, sources: set[str]) -> dict[str, int]:
    """``--repeat qrecc=2,cast2021=3`` as ``{"qrecc": 2, "cast2021": 3}``;
    :class:`ConfigError` for a malformed pair or a source with no training turns."""
    repeats = {}
    for pair in value.split(","):
        source, _, count = (part.strip() for part in pair.partition("="))
        if not count.isdigit() or int(count) < 1:
            raise ConfigError(f"--repeat {value!r}: give SOURCE=N pairs with N a whole number of at least 1, e.g. qrecc=2")
        if source not in sources:
            raise ConfigError(f"--repeat {value!r}: no training turns from {source!r}; the files hold {', '.join(sorted(sources))}")
        repeats[source] = int(count)
    return repeats


def _device_name(device: str) -> str:
    if device.startswith("cuda"):
        return f"the GPU ({torch.cuda.get_device_name(device)})"
    return f"this machine's CPU ({torch.get_num_threads()} threads)"


def _names_path(value: str) -> Path:
    """``--swap-names``: a file, or ``collection`` for the default collection's titles."""
    if value != "collection":
        return Path(value)
    from assistant.retrieval import default_collection_path

    return default_collection_path()


# One line of --help per flag set in a loop below; TrainConfig and PromptConfig say why each default.
_HELP = {
    "base": "base causal LM: smollm2 (packaged), a folder or a cached hub name",
    "steps": "optimiser steps of the schedule",
    "stop_after": "end after this many steps of the schedule; resume later to go on (0: run it all)",
    "batch_size": "training turns per step",
    "lora_r": "LoRA rank",
    "lora_alpha": "LoRA alpha (scale alpha/r)",
    "seed": "seed of the data order, LoRA init and dropout",
    "split_seed": "seed of the dev split by conversation",
    "save_every": "checkpoint every N steps (also at the end and on Ctrl-C)",
    "eval_every": "dev loss every N steps (0: only at the end)",
    "eval_examples": "dev turns the dev loss is measured on (0: not measured)",
    "warmup": "linear warm-up steps before the cosine decay",
    "copy_dim": "width of the copy head's projections (with --copy)",
    "lr": "peak learning rate",
    "dev_fraction": "share of conversations held out as dev without --dev",
    "lora_dropout": "dropout on the LoRA input, in [0, 1)",
    "clip": "gradient-norm clip, above 0",
    "max_input_tokens": "input budget in tokens: history, question and format",
    "max_answer_tokens": "longest answer kept in the history, in tokens",
    "answer_turns": "answers kept for this many most recent turns (0: none)",
    "max_question_tokens": "longest question kept, in tokens",
    "max_target_tokens": "longest training rewrite, in tokens (eos included)",
}


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; a user's error ends in one line and exit status 2."""
    return run_cli(_main, argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = CommandParser(prog="python -m rewriting.train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", nargs="+", required=True, metavar="FILE", help="QReCC, CANARD or TREC CAsT json files")
    parser.add_argument("--dev", metavar="FILE", help="held-out file (default: split --train files by conversation)")
    parser.add_argument("--output", required=True, type=Path, metavar="DIR",
                        help="the run's folder: adapter, card, split, log and checkpoint (the same folder resumes)")
    parser.add_argument("--format", choices=("qrecc", "canard", "cast"), help="format of every file (default: detected)")
    defaults = TrainConfig()
    parser.add_argument("--base", default=defaults.base, help=_HELP["base"] + " (default: %(default)s)")
    for name in ("steps", "stop_after", "batch_size", "lora_r", "lora_alpha", "seed", "split_seed", "save_every", "eval_every", "eval_examples", "warmup", "copy_dim"):
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=getattr(defaults, name), metavar="N", help=_HELP[name] + " (default: %(default)s)")
    for name in ("lr", "dev_fraction", "lora_dropout", "clip"):
        parser.add_argument("--" + name.replace("_", "-"), type=float, default=getattr(defaults, name), metavar="X", help=_HELP[name] + " (default: %(default)s)")
    prompt_defaults = PromptConfig()
    for name in asdict(prompt_defaults):  # the input format's token budgets, saved in rewriter.json
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=getattr(prompt_defaults, name), metavar="N",
                            help=_HELP[name] + " (default: %(default)s)")
    parser.add_argument("--copy", action="store_true", help="add the Transformer++ copy head")
    parser.add_argument("--no-titles", dest="titles", action="store_false", help="leave CANARD's article title out of the input")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast (CPUs with AMX/AVX512-BF16, or a GPU)")
    parser.add_argument("--device", default=defaults.device, help="where the steps run: cpu (default), cuda or cuda:N")
    parser.add_argument("--repeat", default=defaults.repeat, metavar="SOURCE=N[,SOURCE=N]",
                        help="train each turn of these sources N times in all (after the split, so the held-out turns stay), e.g. qrecc=2")
    parser.add_argument("--histories", choices=HISTORIES, default=defaults.histories,
                        help="earlier questions in training histories: as asked, as rewritten by the annotators, or both")
    parser.add_argument("--swap-names", default=defaults.swap_names, metavar="FILE|collection",
                        help="also train a copy of each turn with the name its rewrite resolves swapped for one of these "
                             "(a text file, one name per line, or 'collection': the default collection's titles)")
    args = parser.parse_args(argv)

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
        train_examples, dev_examples = split_by_conversation(examples, config.dev_fraction, config.split_seed)
    split = _split_record(args.train + ([args.dev] if args.dev else []), train_examples, dev_examples, from_file)
    # After the split, which it must not change: dev keeps the files' histories.
    train_examples = with_histories(train_examples, config.histories)
    if config.swap_names:
        train_examples = with_swapped_names(train_examples, load_names(_names_path(config.swap_names)), config.seed)
    if config.repeat:
        train_examples = with_repeats(train_examples, _repeats(config.repeat, {e.source for e in train_examples}))
    (args.output / SPLIT_FILE).write_text(json.dumps(split, indent=1) + "\n")
    try:
        summary = train(train_examples, dev_examples, args.output, config)
    except Interrupted as stop:
        # Ctrl-C is how a user ends a long run on purpose: the steps are saved, so one line, not a traceback.
        print(f"stopped at step {stop.step} of {config.steps}, saved in {stop.checkpoint}; run the same command again to resume", file=sys.stderr)
        return 130
    command = "python -m rewriting.train " + " ".join(sys.argv[1:] if argv is None else argv)
    (args.output / "README.md").write_text(_card(args.output, command, config, summary, train_examples, dev_examples))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
