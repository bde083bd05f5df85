"""The optimisation: LoRA on the base model, AdamW with warm-up and cosine
decay, and the step loop that logs, evaluates and checkpoints."""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from ._batches import collate, make_batches
from ._checkpoint import CHECKPOINT_FILE, LOG_FILE, save_checkpoint
from ._copy import CopyHead
from ._loss import autocast, dev_loss

__all__ = ["Run", "Interrupted", "lr_factor", "run_steps"]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during the steps, after the checkpoint of the ``step`` steps
    done was saved: still a KeyboardInterrupt, so a caller that does not
    know it stops as before; the CLI says where it stopped in one line."""

    def __init__(self, step: int, checkpoint: Path):
        super().__init__(step, checkpoint)
        self.step, self.checkpoint = step, checkpoint


def lr_factor(step: int, config) -> float:
    """Linear warm-up over ``config.warmup`` steps, then cosine decay to 10%."""
    if step < config.warmup:
        return (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


@dataclass
class Run:
    """What the steps update: the LoRA-wrapped model, the copy head, the optimiser."""

    model: object
    copy_head: CopyHead | None
    params: list
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR

    @classmethod
    def start(cls, model, config) -> "Run":
        """LoRA adapters on every linear layer of ``model`` (in place), the copy
        head when ``config.copy``, and a fresh optimiser (draws from torch's RNG)."""
        from peft import LoraConfig, get_peft_model

        lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout, target_modules="all-linear", task_type="CAUSAL_LM")
        # Initialised on the CPU, then moved: a seed gives the same start on any device.
        model = get_peft_model(model, lora).to(config.device)
        copy_head = CopyHead(model.config.hidden_size, config.copy_dim).to(config.device) if config.copy else None
        params = [p for p in model.parameters() if p.requires_grad] + (list(copy_head.parameters()) if copy_head else [])
        optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=0.0)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_factor(step, config))
        return cls(model, copy_head, params, optimizer, scheduler)

    def train_mode(self) -> None:
        self.model.train()
        if self.copy_head is not None:
            self.copy_head.train()


def run_steps(run: Run, train_set, dev_set, pad_id: int, output: Path, config, span: tuple[int, int], elapsed_before: float,
              loss_fn: Callable, progress: bool = True) -> float:
    """Take steps ``span[0]`` to ``span[1]`` (exclusive) of the schedule; returns
    the run's seconds so far (resumes included).

    Each step is logged to ``LOG_FILE``; the dev loss every
    ``config.eval_every`` steps; a checkpoint every ``config.save_every``
    steps, after the last, and on Ctrl-C (then :class:`Interrupted` is
    raised) at the last step finished. ``loss_fn`` is :func:`batch_loss` (a test may
    pass one that fails mid-run).
    """
    from tqdm import tqdm

    start, end = span
    batches = make_batches(len(train_set), config.batch_size, config.steps, config.seed)
    run.train_mode()
    began = time.monotonic()
    losses: list[float] = []
    bar = tqdm(range(start, end), initial=start, total=end, desc="train", file=sys.stderr, disable=not progress)
    done = start
    # The RNG states as the last step done left them: Ctrl-C mid-step has
    # drawn some of that step's dropout masks, and the checkpoint must hold
    # the state a run that went on took the next step from.
    rng = _rng_states(config)
    try:
        with (output / LOG_FILE).open("a") as log:
            for step in bar:
                batch = collate([train_set[i] for i in batches[step]], pad_id, config.device)
                with autocast(config):
                    loss = loss_fn(run.model, batch, run.copy_head)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(run.params, config.clip)
                run.optimizer.step()
                run.scheduler.step()
                # From here the step is done: a Ctrl-C saves it, with the RNG as it now is.
                # (Between optimizer.step() and here a Ctrl-C keeps the moved weights as the step before's:
                # a few microseconds in a step of seconds.)
                done, rng = step + 1, _rng_states(config)
                run.optimizer.zero_grad(set_to_none=True)
                # detached: float() of the graph's loss warns "Converting a tensor with requires_grad=True" every run.
                losses.append(loss.detach().item())
                record = {"step": done, "loss": round(losses[-1], 4), "lr": run.scheduler.get_last_lr()[0], "elapsed_s": round(elapsed_before + time.monotonic() - began, 1)}
                bar.set_postfix(loss=f"{sum(losses[-20:]) / len(losses[-20:]):.3f}")
                if dev_set and config.eval_every and config.eval_examples and done % config.eval_every == 0 and done < end:
                    record["dev_loss"] = round(dev_loss(run.model, dev_set[: config.eval_examples], pad_id, config, run.copy_head), 4)
                    tqdm.write(f"step {done}: dev loss {record['dev_loss']}", file=sys.stderr)
                log.write(json.dumps(record) + "\n")
                log.flush()
                if done % config.save_every == 0 or done == end:
                    save_checkpoint(run, done, config, elapsed_before + time.monotonic() - began, output / CHECKPOINT_FILE)
    except KeyboardInterrupt:
        bar.close()
        if done > start:
            _set_rng_states(config, rng)
            save_checkpoint(run, done, config, elapsed_before + time.monotonic() - began, output / CHECKPOINT_FILE)
        raise Interrupted(done, output / CHECKPOINT_FILE) from None
    return elapsed_before + time.monotonic() - began


def _rng_states(config) -> tuple:
    """torch's CPU generator state, and the GPU's when the steps run there."""
    return torch.get_rng_state(), torch.cuda.get_rng_state(config.device) if config.device.startswith("cuda") else None


def _set_rng_states(config, states: tuple) -> None:
    torch.set_rng_state(states[0])
    if states[1] is not None:
        torch.cuda.set_rng_state(states[1], config.device)
