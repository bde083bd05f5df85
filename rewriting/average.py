"""Average trained adapters into one: ``python -m rewriting.average --output DIR ADAPTER ADAPTER...``.

Two runs of :mod:`rewriting.train` on the same base and split (another
``--seed``, other training copies) make different mistakes on unseen turns;
the mean of their weights keeps what they agree on ("model soups", Wortsman
et al. 2022). LoRA factors cannot be averaged one by one (``B @ A`` is not
linear in the pair), but they can be stacked: with ``A = [A_1; ...; A_K]``
and ``B = [c_1 B_1, ..., c_K B_K]``, ``c_i = s_i / (K s)``, the adapter's
delta ``s B A`` is exactly the mean of the members' deltas ``s_i B_i A_i``
(``s = alpha / r``). The result is a plain LoRA adapter of rank ``sum(r_i)``
that :func:`rewriting.load_rewriter` loads like any other; it is merged into
the weights on loading, so a rewrite costs what it did.

Members must share the recipe (base and prompt budgets), the split
(``split.json``: their held-out turns are the result's) and the adapted
layers; copy heads are not averaged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Sequence

from assistant.kernel import CommandParser, ConfigError, check_at_least, output_path, run_cli

from ._adapter import ADAPTER_CONFIG, ADAPTER_WEIGHTS, check_adapter
from ._checkpoint import CHECKPOINT_FILE, LOG_FILE, SPLIT_FILE, prepare_output, save_tensors, write_replacing
from ._recipe import RECIPE_FILE, Recipe, differences

__all__ = ["average_adapters", "main"]

# peft settings that change how a factor pair becomes a delta: stacking is
# only exact for plain LoRA (delta = alpha / r * B @ A, one rank everywhere).
_PLAIN = {"use_rslora": False, "use_dora": False, "rank_pattern": {}, "alpha_pattern": {}}


def _member(directory: Path) -> tuple[dict, Recipe]:
    if not (directory / ADAPTER_CONFIG).is_file():
        raise ConfigError(f"{directory} is not an adapter written by rewriting.train ({ADAPTER_CONFIG} missing)")
    recipe = Recipe.read(directory) or Recipe()
    config = check_adapter(directory, recipe)
    if recipe.copy:
        raise ConfigError(f"{directory} has a copy head, which is not averaged; average adapters trained without --copy")
    for key, plain in _PLAIN.items():
        if config.get(key) not in (plain, None):
            raise ConfigError(f"{directory}: {key} = {config[key]!r}; only plain LoRA adapters can be averaged exactly")
    return config, recipe


# Files that make a folder an adapter or a training run: writing the average
# there would replace its weights and leave its other files describing them.
_RUN_FILES = (ADAPTER_CONFIG, ADAPTER_WEIGHTS, RECIPE_FILE, CHECKPOINT_FILE, LOG_FILE)


def _check_output(output: Path, sources: Sequence[Path]) -> None:
    """:class:`ConfigError` for an ``output`` that is one of ``sources`` or
    already holds an adapter or a run: found before any weights are read."""
    if any(output.resolve() == source.resolve() for source in sources):
        raise ConfigError(f"--output {output} is one of the adapters being averaged; give a new folder for the average")
    held = [name for name in _RUN_FILES if (output / name).exists()]
    if held:
        raise ConfigError(f"--output {output} already holds an adapter or a training run ({', '.join(held)}); give a new folder, or delete that one first")


def average_adapters(sources: Sequence[str | Path], output: str | Path, rank: int | None = None) -> dict:
    """Write the mean of ``sources``' adapters to ``output`` (adapter, recipe,
    split); returns ``{"members", "rank"}``. :class:`ConfigError` says which
    member differs from the first and how.

    ``rank``: keep only the top ``rank`` singular directions of each layer's
    mean delta (a truncated SVD: the closest adapter of that rank), for a
    file the size of one member's; None keeps the exact mean."""
    import torch
    from safetensors.torch import load_file

    sources = [Path(s) for s in sources]
    if len(sources) < 2:
        raise ConfigError("give at least two adapters to average")
    _check_output(Path(output), sources)
    members = [_member(s) for s in sources]
    first_config, recipe = members[0]
    splits = [(s / SPLIT_FILE).read_bytes() if (s / SPLIT_FILE).is_file() else None for s in sources]
    for source, (config, other), split in zip(sources[1:], members[1:], splits[1:]):
        if other != recipe:
            raise ConfigError(
                f"{source} was trained with another recipe (rewriter.json) than {sources[0]}: {differences(recipe.to_json(), other.to_json())}; "
                "average members trained with the same settings"
            )
        if sorted(config["target_modules"]) != sorted(first_config["target_modules"]):
            raise ConfigError(f"{source} adapts other layers than {sources[0]} (target_modules)")
        if split != splits[0]:
            raise ConfigError(f"{source} holds out other turns than {sources[0]} ({SPLIT_FILE} differs); train both with the same --split-seed")
    total = sum(config["r"] for config, _ in members)
    # Checked on the members' configs, before their weights are read.
    if rank is not None and not 1 <= rank <= total:
        raise ConfigError(f"--rank must lie between 1 and the members' summed rank {total}, not {rank}")
    weights = [load_file(str(s / ADAPTER_WEIGHTS)) for s in sources]
    if any(set(w) != set(weights[0]) for w in weights[1:]):
        raise ConfigError(f"the adapters' tensors differ in name: not adapters of the same base layers ({', '.join(map(str, sources))})")
    scales = [config["lora_alpha"] / config["r"] for config, _ in members]
    scale = scales[0]
    stacked = {}
    for key in weights[0]:
        if ".lora_A." in key:
            stacked[key] = torch.cat([w[key] for w in weights], dim=0)
        elif ".lora_B." in key:
            stacked[key] = torch.cat([(w[key].float() * (s / (len(weights) * scale))).to(w[key].dtype) for w, s in zip(weights, scales)], dim=1)
        else:
            raise ConfigError(f"{key} in {sources[0]} is neither a LoRA A nor B factor; only LoRA adapters can be averaged")
    if rank is not None:
        stacked = _truncated(stacked, rank)
    else:
        rank = total
    output = Path(output)
    prepare_output(output)
    # The weights are the long write: one interrupted leaves the earlier ones whole.
    write_replacing(output / ADAPTER_WEIGHTS, lambda tmp: save_tensors({k: v.contiguous() for k, v in stacked.items()}, tmp))
    config = dict(first_config, r=rank, lora_alpha=scale * rank)
    (output / ADAPTER_CONFIG).write_text(json.dumps(config, indent=2) + "\n")
    recipe.write(output)
    if splits[0] is not None:
        (output / SPLIT_FILE).write_bytes(splits[0])
    return {"members": [str(s) for s in sources], "rank": rank}


def _truncated(stacked: dict, rank: int) -> dict:
    """Each layer's ``B @ A`` cut to its top ``rank`` singular directions (singular values go to B)."""
    import torch

    cut = {}
    for key_a in [k for k in stacked if ".lora_A." in k]:
        key_b = key_a.replace(".lora_A.", ".lora_B.")
        a, b = stacked[key_a], stacked[key_b]
        u, sv, vh = torch.linalg.svd(b.float() @ a.float(), full_matrices=False)
        cut[key_b] = (u[:, :rank] * sv[:rank]).to(b.dtype)
        cut[key_a] = vh[:rank].to(a.dtype)
    return cut


def _card(summary: dict, command: str) -> str:
    members = "\n".join(f"- `{m}`" for m in summary["members"])
    return f"""# Averaged question-rewriting adapter

The mean of {len(summary["members"])} adapters' weights (rank {summary["rank"]}: their LoRA factors
stacked, so the delta is the mean of theirs; cut by a truncated SVD if the rank is below the
members' summed rank), by `rewriting.average`:

    {command}

Members:

{members}

Held-out turns: the members' `split.json`, copied here.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; a user's error ends in one line and exit status 2."""
    return run_cli(_main, argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = CommandParser(prog="python -m rewriting.average", description=__doc__.split("\n\n")[0])
    parser.add_argument("adapters", nargs="+", metavar="ADAPTER", help="adapter directories written by rewriting.train")
    parser.add_argument("--output", required=True, type=Path, metavar="DIR",
                        help="a new folder for the average (not a member, nor a folder that holds an adapter or a run)")
    parser.add_argument("--rank", type=int, metavar="N", help="cut the mean to rank N by a truncated SVD (default: exact, the summed rank)")
    args = parser.parse_args(argv)
    check_at_least(rank=(args.rank, 1))
    output = output_path(args.output, "--output", folder=True)
    summary = average_adapters(args.adapters, output, args.rank)
    command = "python -m rewriting.average " + " ".join(sys.argv[1:] if argv is None else argv)
    (output / "README.md").write_text(_card(summary, command))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
