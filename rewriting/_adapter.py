"""Checking an adapter directory written by :mod:`rewriting.train` before loading it.

A damaged file (an interrupted copy, a bad merge, a Git LFS pointer instead
of the weights) would otherwise surface as a peft or safetensors traceback
deep inside loading, after the base model was read. Each check reads a file's
head only, so it costs nothing next to the load, and it names the file and
what to do.
"""

from __future__ import annotations

from pathlib import Path

from ._recipe import Recipe, damaged, read_json

__all__ = ["ADAPTER_CONFIG", "ADAPTER_WEIGHTS", "check_adapter"]

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
# Keys peft cannot load a LoRA adapter without.
_REQUIRED = ("peft_type", "r", "target_modules")


def check_adapter(directory: Path, recipe: Recipe | None) -> dict:
    """The adapter's config (``adapter_config.json``) once every file is
    whole; else :class:`ModelNotFoundError` naming the first damaged one."""
    config_path = directory / ADAPTER_CONFIG
    config = read_json(config_path)
    if not isinstance(config, dict):
        raise damaged(config_path, f"expected a JSON object, found {type(config).__name__}")
    missing = [key for key in _REQUIRED if key not in config]
    if missing:
        raise damaged(config_path, f"missing key(s) {', '.join(missing)}")
    check_weights(directory / ADAPTER_WEIGHTS)
    if recipe is not None and recipe.copy:
        from ._copy import COPY_HEAD_FILE

        check_weights(directory / COPY_HEAD_FILE)
    return config


def check_weights(path: Path) -> None:
    """A safetensors file whose header is whole and whose tensors the file covers."""
    from safetensors import SafetensorError, safe_open

    if not path.is_file():
        raise damaged(path, "missing")
    try:
        with safe_open(str(path), framework="pt") as handle:
            handle.keys()
    except SafetensorError as error:
        # e.g. "incomplete metadata, file not fully covered": a truncated copy.
        raise damaged(path, f"not a whole safetensors file: {error}") from error
    except OSError as error:
        raise damaged(path, f"unreadable: {error.strerror or error}") from error
