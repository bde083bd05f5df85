"""A training run's files: its folder, the resumable checkpoint, the step
log, and the finished adapter (weights, copy head, recipe)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

import torch

from assistant.kernel import ConfigError

from ._copy import COPY_HEAD_FILE
from ._recipe import Recipe, differences
from ._train_config import fixed_settings

__all__ = ["CHECKPOINT_FILE", "SPLIT_FILE", "LOG_FILE", "prepare_output", "write_replacing", "save_tensors", "save_checkpoint", "resume", "save_adapter", "last_losses"]

# The run's held-out and trained-on turn ids, written by rewriting.train.
SPLIT_FILE = "split.json"
CHECKPOINT_FILE = "checkpoint.pt"
LOG_FILE = "train_log.jsonl"


def prepare_output(output: Path) -> None:
    """Make the run's folder; :class:`ConfigError` when it cannot be written
    (found before any data is read or model loaded)."""
    try:
        output.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=output):
            pass
    except OSError as error:
        raise ConfigError(f"cannot write the output folder {output}: {error.strerror or error}; give a writable --output") from error


def write_replacing(path: Path, write) -> None:
    """``write(tmp)`` to a temporary sibling of ``path``, then renamed over
    it: a run killed while writing leaves the earlier file whole."""
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)


def save_tensors(tensors: dict, path: Path, metadata: dict | None = None) -> None:
    """safetensors' ``save_file``, made readable by all (0644) as the run's
    other files are: safetensors writes 0600, so an adapter shared or
    committed from a run's folder was unreadable to anyone else."""
    from safetensors.torch import save_file

    save_file(tensors, str(path), metadata=metadata)
    os.chmod(path, 0o644)


def save_checkpoint(run, step: int, config, elapsed_s: float, path: Path) -> None:
    """Everything a resumed run needs to take step ``step + 1`` as this one
    would have (:func:`write_replacing`: a run killed while saving keeps the
    previous checkpoint)."""
    from peft import get_peft_model_state_dict

    state = {
        "step": step,
        "config": asdict(config),
        "adapter": get_peft_model_state_dict(run.model),
        "copy_head": run.copy_head.state_dict() if run.copy_head else None,
        "optimizer": run.optimizer.state_dict(),
        "scheduler": run.scheduler.state_dict(),
        "torch_rng": torch.get_rng_state(),
        # Dropout on a GPU draws from that device's generator, not the CPU's.
        "cuda_rng": torch.cuda.get_rng_state(config.device) if config.device.startswith("cuda") else None,
        "elapsed_s": elapsed_s,
    }
    write_replacing(path, lambda tmp: torch.save(state, tmp))


def resume(run, config, path: Path) -> tuple[int, float]:
    """Load ``path`` into ``run`` if it exists: ``(steps done, seconds spent)``,
    ``(0, 0.0)`` for a fresh run. :class:`ConfigError` when it was written
    with other settings."""
    if not path.is_file():
        return 0, 0.0
    from peft import set_peft_model_state_dict

    # On the CPU first: a checkpoint written on a GPU resumes on a machine without one.
    state = torch.load(path, weights_only=False, map_location="cpu")
    written, now = fixed_settings(_as_written(state["config"], config)), fixed_settings(asdict(config))
    if written != now:
        raise ConfigError(f"{path} was written with other settings (the checkpoint's vs this run's: {differences(written, now)}); "
                          "give the checkpoint's settings to resume, another --output, or delete it to start over")
    set_peft_model_state_dict(run.model, state["adapter"])
    if run.copy_head is not None:
        run.copy_head.load_state_dict(state["copy_head"])
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["torch_rng"])
    if state.get("cuda_rng") is not None and config.device.startswith("cuda"):
        torch.cuda.set_rng_state(state["cuda_rng"], config.device)
    print(f"resuming from step {state['step']} of {config.steps}", file=sys.stderr)
    return state["step"], state["elapsed_s"]


def _as_written(written: dict, config) -> dict:
    """A checkpoint's settings with those added since it was written set as
    that run behaved: its split used the training seed, and newer options
    (e.g. name-swapped copies) are off at their defaults."""
    written = dict(written)
    written.setdefault("split_seed", written.get("seed", 0))
    return {**asdict(type(config)()), **written}


def save_adapter(model, copy_head, output: Path, config, end_token: str = "") -> None:
    """Write the adapter (float16: half the size, no measurable loss for LoRA deltas), head and
    recipe; ``end_token``: the token the training targets ended with."""
    from peft import get_peft_model_state_dict

    model.peft_config["default"].base_model_name_or_path = config.base
    model.save_pretrained(str(output))  # adapter_config.json + adapter_model.safetensors
    state = {k: v.detach().to("cpu", torch.float16).contiguous() for k, v in get_peft_model_state_dict(model).items()}
    save_tensors(state, output / "adapter_model.safetensors", metadata={"format": "pt"})
    if copy_head is not None:
        save_tensors({k: v.cpu().contiguous() for k, v in copy_head.state_dict().items()}, output / COPY_HEAD_FILE)
    Recipe(base=config.base, prompt_format="plain", prompt=config.prompt, copy=copy_head is not None, copy_dim=config.copy_dim,
           end_token=end_token).write(output)


def last_losses(output: Path, step: int, count: int = 20) -> float | None:
    """Mean loss of the ``count`` steps up to ``step``, from the log (it spans resumes)."""
    losses = {}
    for line in (output / LOG_FILE).read_text().splitlines():
        record = json.loads(line)
        losses[record["step"]] = record["loss"]  # a step re-run after a resume: the last one counts
    recent = [losses[s] for s in range(max(1, step - count + 1), step + 1) if s in losses]
    return round(sum(recent) / len(recent), 4) if recent else None
