"""How a trained rewriter must be prompted: ``rewriter.json`` next to its weights.

:mod:`rewriting.train` writes it; :class:`CausalLMRewriter.from_pretrained`
and :func:`rewriting.load_rewriter` read it. The file's layout is unchanged
from before this type existed, so adapters trained earlier still load and
are written back byte for byte; a run since session 21 also names its end
token (the committed adapter does).

>>> Recipe(base="smollm2").to_json()["prompt"]["max_input_tokens"]
160
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from assistant.kernel import ModelNotFoundError

from ._prompt import PromptConfig

__all__ = ["Recipe", "RECIPE_FILE", "damaged", "differences"]

# Written by rewriting.train next to the weights: how the model was trained to be prompted.
RECIPE_FILE = "rewriter.json"


def damaged(path: str | Path, what: str) -> ModelNotFoundError:
    """The one-line error for a damaged file of an adapter directory, saying what to do."""
    return ModelNotFoundError(
        f"{path} is damaged ({what}); restore it from git (git checkout -- {path}), "
        "retrain the adapter (python -m rewriting.train), or use --rewriter prompted"
    )


_FORMATS = ("plain", "chat")


def differences(first: dict, other: dict) -> str:
    """The settings that differ, as ``name first vs other`` (nested ones by
    their dotted name): a refusal that names them says which run to redo.

    >>> differences({"base": "x", "prompt": {"max_input_tokens": 160}, "seed": 0}, {"base": "y", "prompt": {"max_input_tokens": 99}, "seed": 0})
    "base 'x' vs 'y', prompt.max_input_tokens 160 vs 99"
    """
    mine, theirs = _flat(first), _flat(other)
    return ", ".join(f"{key} {mine.get(key)!r} vs {theirs.get(key)!r}" for key in sorted(mine.keys() | theirs.keys()) if mine.get(key) != theirs.get(key))


def _flat(record: dict, prefix: str = "") -> dict:
    """``{"prompt": {"max_input_tokens": 160}}`` as ``{"prompt.max_input_tokens": 160}``."""
    flat = {}
    for key, value in record.items():
        if isinstance(value, dict):
            flat |= _flat(value, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def read_json(path: Path):
    """The JSON in ``path``, or a :func:`damaged` error saying why it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise damaged(path, f"unreadable: {error.strerror or error}") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise damaged(path, f"not JSON: {error}") from error


@dataclass(frozen=True)
class Recipe:
    """What training fixed and inference must repeat."""

    # Base model the adapter was trained on: "smollm2" (the packaged
    # SmolLM2-135M-Instruct), a path or a cached hub name. "smollm2" is the
    # only base the repo can load offline without a user's own model.
    base: str = "smollm2"
    # The input format; rewriting.train only trains the plain one.
    prompt_format: str = "plain"
    # The plain format's token budgets used in training; inference must use
    # the same, or the model sees inputs cut differently from what it learned.
    prompt: PromptConfig = field(default_factory=PromptConfig)
    # Whether a Transformer++ copy head (copy_head.safetensors) was trained.
    copy: bool = False
    # Width of the copy head's projections; CopyHead's own default when the
    # file does not say (it only says when copy is on).
    copy_dim: int = 128
    # The token each training target ended with (the tokenizer's eos when
    # training ran), at which inference stops. Another transformers version
    # can convert the base's tokenizer with another eos, and a model that ends
    # its rewrites with a token inference does not stop at runs on into
    # chat-template tokens. "" (files written before it was saved): the
    # tokenizer's eos, as before.
    end_token: str = ""

    def to_json(self) -> dict:
        """The file's layout: ``copy_head`` appears only with a copy head, ``end_token`` only when known."""
        record = {"base": self.base, "prompt_format": self.prompt_format, "prompt": asdict(self.prompt), "copy": self.copy}
        if self.copy:
            record["copy_head"] = {"copy_dim": self.copy_dim}
        if self.end_token:
            record["end_token"] = self.end_token
        return record

    def write(self, directory: str | Path) -> Path:
        """Write ``directory/rewriter.json``; returns its path."""
        path = Path(directory) / RECIPE_FILE
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        return path

    @classmethod
    def from_json(cls, record: object, where: str = RECIPE_FILE) -> "Recipe":
        """Check and convert a parsed file; :class:`ModelNotFoundError` names what is wrong."""

        def bad(what: str) -> ModelNotFoundError:
            return damaged(where, what)

        if not isinstance(record, dict):
            raise bad(f"expected a JSON object, found {type(record).__name__}")
        known = {"base", "prompt_format", "prompt", "copy", "copy_head", "end_token"}
        if set(record) - known:
            raise bad(f"unknown key(s) {', '.join(sorted(set(record) - known))}")
        base = record.get("base", cls.base)
        if not isinstance(base, str) or not base.strip():
            raise bad("'base' must be a model name or path")
        prompt_format = record.get("prompt_format", cls.prompt_format)
        if prompt_format not in _FORMATS:
            raise bad(f"'prompt_format' must be one of {', '.join(_FORMATS)}, not {prompt_format!r}")
        budgets = record.get("prompt", {})
        names = {f.name for f in fields(PromptConfig)}
        if not isinstance(budgets, dict) or set(budgets) - names:
            raise bad(f"'prompt' must be an object with keys among {', '.join(sorted(names))}")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in budgets.values()):
            raise bad("'prompt' budgets must be whole numbers of tokens")
        copy = record.get("copy", False)
        if not isinstance(copy, bool):
            raise bad("'copy' must be true or false")
        head = record.get("copy_head", {})
        copy_dim = head.get("copy_dim", cls.copy_dim) if isinstance(head, dict) else None
        if not isinstance(copy_dim, int) or isinstance(copy_dim, bool) or copy_dim < 1 or (isinstance(head, dict) and set(head) - {"copy_dim"}):
            raise bad("'copy_head' must be {\"copy_dim\": a positive whole number}")
        end_token = record.get("end_token", cls.end_token)
        if not isinstance(end_token, str):
            raise bad("'end_token' must be the token a rewrite ends with, as text")
        return cls(base=base, prompt_format=prompt_format, prompt=PromptConfig(**budgets), copy=copy, copy_dim=copy_dim, end_token=end_token)

    @classmethod
    def read(cls, directory: str | Path) -> "Recipe | None":
        """The recipe saved in ``directory``; None when there is none (a plain
        model directory, not one written by rewriting.train)."""
        path = Path(directory) / RECIPE_FILE
        if not path.is_file():
            return None
        return cls.from_json(read_json(path), str(path))
