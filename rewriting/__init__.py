"""Question rewriters: turn a conversational question into a self-contained one.

>>> load_rewriter("original").rewrite("What did she write?", ["Who was Ada?", "A mathematician."]).text
'What did she write?'
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from assistant.kernel import ModelNotFoundError, close_name

from ._base import OriginalRewriter, Rewriter
from ._batching import BatchingRewriter
from ._config import RewriterConfig
from ._consensus import consensus, unigram_f1
from ._prompt import (
    IGNORE_INDEX,
    PromptConfig,
    chat_prompt,
    encode_example,
    plain_prompt_ids,
    turns,
)
from ._recipe import RECIPE_FILE, Recipe
from ._rules import asks_nothing, drift_reason

__all__ = [
    "Rewriter",
    "OriginalRewriter",
    "BatchingRewriter",
    "CausalLMRewriter",
    "RewriterConfig",
    "Decoding",
    "load_rewriter",
    "load_causal_lm",
    "smollm2_gguf",
    "gguf_special_ids",
    "pin_special_tokens",
    "REWRITERS",
    "TRAINED_ADAPTER",
    "TRAINED_INPUT_TOKENS",
    "RECIPE_FILE",
    "Recipe",
    "drift_reason",
    "asks_nothing",
    "inference_dtype",
    "lookup_draft",
    "consensus",
    "unigram_f1",
    "PackedLinear",
    "pack_linears",
    "can_pack",
    "Int8Linear",
    "can_quantize",
    "FusedLlama",
    "FusedCache",
    "FusedPrompts",
    "FusedRows",
    "PromptConfig",
    "chat_prompt",
    "plain_prompt_ids",
    "encode_example",
    "turns",
    "IGNORE_INDEX",
    "CopyHead",
    "COPY_HEAD_FILE",
    "map_on_ray",
    "import_ray",
    "add_ray_arguments",
    "check_ray_arguments",
]

# Names that pull in torch and transformers (seconds to import), imported on first use so
# that "original" and the data readers stay light.
_LAZY = {
    "CausalLMRewriter": "_causal",
    "Decoding": "_causal",
    "inference_dtype": "_causal",
    "lookup_draft": "_causal",
    "load_causal_lm": "_models",
    "smollm2_gguf": "_models",
    "gguf_special_ids": "_models",
    "pin_special_tokens": "_models",
    "PackedLinear": "_packing",
    "pack_linears": "_packing",
    "can_pack": "_packing",
    "Int8Linear": "_packing",
    "can_quantize": "_packing",
    "FusedLlama": "_fused",
    "FusedCache": "_fused",
    "FusedPrompts": "_fused",
    "FusedRows": "_fused",
    "CopyHead": "_copy",
    "COPY_HEAD_FILE": "_copy",
    # Ray itself is imported only when a --ray run calls map_on_ray.
    "map_on_ray": "_ray",
    "import_ray": "_ray",
    "add_ray_arguments": "_ray",
    "check_ray_arguments": "_ray",
}

# The adapter the app uses by default, committed with the repo (see its README.md).
TRAINED_ADAPTER = Path(__file__).resolve().parent / "adapters" / "smollm2-qr"
# The committed adapter's prompt budget at inference (RewriterConfig.max_input_tokens):
# session 13's adapter, trained on 160-token prompts, rewrote better with 256
# on every held-out group, for a little more prefill; since session 21 the
# adapter is trained on 256 too, so this equals its recipe (BENCHMARKS.md §10).
# Other adapters keep their recipe's budget: only this one was measured.
TRAINED_INPUT_TOKENS = 256
# Names load_rewriter knows besides a model path or an adapter directory.
REWRITERS = ("trained", "prompted", "original")


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'rewriting' has no attribute {name!r}")


def load_rewriter(name: str = "trained", dtype: str = "auto", pack_weights: bool = True, candidates: int = 0,
                  fused_forward: bool = True, second_look: int | None = None, second_look_below: float | None = None,
                  int8_weights: bool = False) -> Rewriter:
    """A ready rewriter by name.

    ``"original"``: the question as asked. ``"prompted"``: SmolLM2-135M-Instruct
    with a two-example prompt. ``"trained"``: SmolLM2 with the committed LoRA
    adapter. Anything else: an adapter directory written by
    :mod:`rewriting.train`, or a causal LM path / cached hub name.
    ``dtype`` is the model's weights' (see ``RewriterConfig.dtype``);
    ``pack_weights=False`` keeps plain bfloat16 weights and
    ``fused_forward=False`` transformers' forward for one question, to compare;
    ``int8_weights=True`` int8 weights for one question's passes
    (``RewriterConfig.int8_weights``);
    ``candidates`` adds an N-best search (``RewriterConfig.candidates``);
    ``second_look`` sets the beams searched for a follow-up left as asked
    (``RewriterConfig.second_look``; None: its default, 0: never), and
    ``second_look_below`` the probability under which a changed rewrite's
    token sends it to the second look too (``RewriterConfig.second_look_below``).
    Raises :class:`ModelNotFoundError` when it cannot be loaded.
    """
    if not isinstance(name, str):
        raise TypeError(f"the rewriter's name must be a string ({', '.join(REWRITERS)} or a path), not {type(name).__name__}")
    key = name.strip()
    near = _near_name(key)
    if near is not None:
        # Else it went on to the model loader, whose "cannot load model 'Trained'
        # offline (OSError ...)" read as a download problem.
        raise ModelNotFoundError(f"unknown rewriter '{key}': did you mean '{near}'? The rewriters: "
                                 f"{', '.join(REWRITERS)}, or an adapter directory or a model path or hub name")
    if key == "original":
        return OriginalRewriter()
    from ._causal import CausalLMRewriter

    config = RewriterConfig(dtype=dtype, pack_weights=pack_weights, candidates=candidates, fused_forward=fused_forward,
                            int8_weights=int8_weights)
    if second_look is not None:
        config = replace(config, second_look=second_look)
    if second_look_below is not None:
        config = replace(config, second_look_below=second_look_below)
    if key == "prompted":
        return CausalLMRewriter.from_pretrained("smollm2", config=config)
    if key == "trained":
        if not (TRAINED_ADAPTER / "adapter_config.json").is_file():
            raise ModelNotFoundError(
                f"the trained adapter is missing from {TRAINED_ADAPTER}; restore it from git, "
                "retrain it (see its README.md), or use --rewriter prompted"
            )
        return _from_adapter(TRAINED_ADAPTER, replace(config, max_input_tokens=TRAINED_INPUT_TOKENS))
    path = Path(key).expanduser()
    if (path / "adapter_config.json").is_file():
        return _from_adapter(path, config)
    try:
        return CausalLMRewriter.from_pretrained(key, config=config)
    except ModelNotFoundError as error:
        if path.exists():
            raise
        # A mistyped name ("traned") is more likely than a hub model that was never downloaded.
        raise ModelNotFoundError(f"no rewriter '{key}': use {', '.join(REWRITERS)}, an adapter directory written by "
                                 f"rewriting.train, or a causal LM path or cached hub name ({error})") from error


def _near_name(key: str) -> str | None:
    """The rewriter's name ``key`` is a misspelling of (equal in another case,
    or close by difflib), or None: for a known name, an existing path, and a
    text with a slash (a hub model's id or a path), which are the loader's.

    >>> _near_name("Trained"), _near_name("trianed"), _near_name("trained"), _near_name("gpt2")
    ('trained', 'trained', None, None)
    >>> _near_name("org/trained") is None
    True
    """
    if key in REWRITERS or "/" in key or "\\" in key or Path(key).expanduser().exists():
        return None
    return close_name(key, REWRITERS)


def _from_adapter(directory: Path, config) -> Rewriter:
    from ._causal import CausalLMRewriter

    recipe = Recipe.read(directory) or Recipe()  # no file: an adapter of the default base
    return CausalLMRewriter.from_pretrained(recipe.base, adapter=directory, config=config)
