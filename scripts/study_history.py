"""What history the trained rewriter is given: ``python scripts/study_history.py DIR [--groups qrecc cast] [--variants ...] [--model ADAPTER]``.

Two of issue 14's levers, measured on the held-out turns without retraining:

* ``rewrites``: the app knows each earlier turn's rewrite, and QReCC's own
  context holds rewrites; here each earlier question of the history is
  replaced by the rewriter's own rewrite of that turn, made first, turn by
  turn, as a chat would have made it (a first turn's rewrite is its question);
* ``budget=N``: a prompt of N tokens instead of the app's
  (``rewriting.TRAINED_INPUT_TOKENS``, which the committed adapter is trained
  with since session 21; session 13's, which these variants were first run
  on, was trained with 160): more earlier turns fit, prefill costs more;
* ``answers=N``: answers kept for the last N turns instead of 2;
* ``answer_tokens=N``: each kept answer cut at N tokens instead of 24;
* ``look=N``: N beams searched again for a follow-up left as asked
  (``RewriterConfig.second_look``; 0: never);
* ``turns=N``: only the last N question/answer pairs of the history, as the
  app hands over (``AssistantConfig.history_turns``; ``Assistant.history_window``).

Variants combine with ``+``, e.g. ``rewrites+budget=160``; ``base`` is the
app's default (the variants were first measured with a 160-token base, as
BENCHMARKS.md §10 reports). The turns are those ``python -m eval.rewrites export --split SPLIT
--dir DIR`` wrote to ``DIR/<group>.jsonl`` (run it first). For every group and
variant this writes ``DIR/<group>.<variant>.jsonl``
in the format ``rewriting.rewrite`` writes (ids as ``eval.rewrites export``
gives them), so that ``python -m eval.rewrites table --split SPLIT --dir DIR``
scores them side by side and ``python -m eval.retrieval --rewrites
DIR/cast.<variant>.jsonl`` searches with them. Existing files are kept, each
named in a note (remove one to make it again).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.kernel import CommandParser, InvalidInputError, json_lines, run_cli  # noqa: E402
from rewriting import load_rewriter  # noqa: E402
from rewriting.data import load_examples, with_rewritten_questions  # noqa: E402
from rewriting.rewrite import write_rewrites  # noqa: E402

# Beside this checkout, not the working directory: the scripts run from anywhere.
ROOT = Path(__file__).resolve().parent.parent
SPLIT = str(ROOT / "rewriting/adapters/smollm2-qr/split.json")


def parse_variant(text: str) -> dict:
    """``{"rewrites": bool, "budget", "answers", "answer_tokens", "look", "turns": int | None}``."""
    found = {"rewrites": False, "budget": None, "answers": None, "answer_tokens": None, "look": None, "turns": None}
    for part in text.split("+"):
        name, _, value = part.partition("=")
        if name == "base" and not value:
            continue
        if name == "rewrites" and not value:
            found["rewrites"] = True
        elif name in ("budget", "answers", "answer_tokens", "look", "turns") and value.isdigit():
            found[name] = int(value)
        else:
            raise InvalidInputError(
                f"unknown variant part {part!r} (base, rewrites, budget=N, answers=N, answer_tokens=N, look=N, turns=N)")
    return found


def with_rewrites(example, done: dict[tuple[str, str, int], str]) -> tuple[str, ...]:
    """The example's context with each earlier question replaced by its rewrite."""
    return with_rewritten_questions(example, done).context


def window(history, turns: int | None) -> list[str]:
    """The last ``turns`` question/answer pairs of ``history`` (None: all of it).

    >>> window(["Q1", "A1", "Q2", "A2", "Q3", "A3"], 2), window(["Q1", "A1", "Q2", "A2"], 3), window(["Q1", "A1"], 0)
    (['Q2', 'A2', 'Q3', 'A3'], ['Q1', 'A1', 'Q2', 'A2'], [])
    """
    history = list(history)
    return history if turns is None else history[-2 * turns:] if turns else []


def rewrite_group(rewriter, items, use_rewrites: bool, turns: int | None = None) -> dict:
    """``{key: Rewrite}``; with ``use_rewrites``, turn by turn across
    conversations; with ``turns``, each history cut to its last ``turns`` pairs."""
    if not use_rewrites:
        results = rewriter.rewrite_batch([(ex.question, window(ex.context, turns)) for _, ex in items])
        return {key: r for (key, _), r in zip(items, results)}
    by_turn: dict[int, list] = defaultdict(list)
    for key, ex in items:
        by_turn[ex.turn].append((key, ex))
    # A conversation's first turn is never rewritten (and not among the items).
    done = {(ex.source, ex.conversation_id, 1): ex.history[0] for _, ex in items if ex.history}
    out: dict = {}
    for turn in sorted(by_turn):
        batch = by_turn[turn]
        results = rewriter.rewrite_batch([(ex.question, window(with_rewrites(ex, done), turns)) for _, ex in batch])
        for (key, ex), r in zip(batch, results):
            out[key] = r
            done[(ex.source, ex.conversation_id, ex.turn)] = r.text
        print(f"  turn {turn}: {len(batch)} rewritten", file=sys.stderr)
    return out


def split_examples(split: str | Path, side: str | None = None) -> list:
    """``[(file name, RewriteExample)]`` of the data files a ``split.json``
    names, in their order; with ``side`` ("train" or "dev"), only the turns
    it puts on that side. The study scripts' one reader of a split: its
    files are relative to the checkout (../shared/data/...), not the working
    directory."""
    data = json.loads(Path(split).read_text(encoding="utf-8"))
    found = []
    for path in data["files"]:
        name = Path(path).name
        wanted = None if side is None else set(data[side][name])
        found += [(name, ex) for ex in load_examples(ROOT / path) if wanted is None or ex.id in wanted]
    return found


def exported_turns(directory: Path, group: str, split: str) -> list:
    """``[(key, RewriteExample)]`` of the turns ``eval.rewrites export`` wrote
    to ``DIR/<group>.jsonl`` (keys ``<file>#<id>``), read back from the data
    files the split names: the conversation and turn number come with them."""
    examples = {f"{name}#{ex.id}": ex for name, ex in split_examples(split)}
    return [(record["id"], examples[record["id"]]) for _, record in json_lines(directory / f"{group}.jsonl")]


def check_inputs(directory: Path, split: str | Path, names: list[str]) -> None:
    """Refuse a missing ``DIR``, split or ``DIR/<name>`` before a model
    loads: otherwise SmolLM2 was loaded (or converted) first and the missing
    folder was then a traceback."""
    if not directory.is_dir():
        raise InvalidInputError(f"{directory} is not a folder; give the DIR that eval.rewrites export wrote")
    if not Path(split).is_file():
        raise InvalidInputError(f"--split {split} is not a file; give the adapter's split.json")
    for name in names:
        if not (directory / name).is_file():
            raise InvalidInputError(f"{directory / name} is missing; write it first (see --help)")


def main(argv: list[str] | None = None) -> int:
    """The command line; a missing input is one ``error:`` line, exit 2."""
    return run_cli(_main, argv)


def _main(argv: list[str] | None) -> int:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="the folder eval.rewrites export wrote (DIR/<group>.jsonl)")
    parser.add_argument("--split", default=SPLIT, help="the adapter's split.json (default: the committed adapter's)")
    parser.add_argument("--groups", nargs="+", default=["qrecc", "cast", "canard"], help="sources to rewrite (default: all three)")
    parser.add_argument("--variants", nargs="+", default=["base", "rewrites", "budget=160", "rewrites+budget=160"],
                        help="what history to give, parts joined by + (see the module docstring); default: base, "
                        "rewrites, budget=160, rewrites+budget=160; BENCHMARKS.md's held-out table, as the app rewrites: "
                        "rewrites+budget=256+look=4")
    parser.add_argument("--model", default="trained",
                        help="the rewriter (load_rewriter's name or an adapter directory; a directory's base "
                        "budget is its rewriter.json's, so give budget=N to match the app's; default: trained)")
    args = parser.parse_args(argv)
    variants = {v: parse_variant(v) for v in args.variants}
    check_inputs(args.dir, args.split, [f"{group}.jsonl" for group in args.groups])
    # An earlier run's file was kept without a word: re-run after a change of
    # code, the table scored the old rewrites as if they were new.
    wanted = [(group, name) for group in args.groups for name in variants]
    kept = [args.dir / f"{group}.{name}.jsonl" for group, name in wanted if (args.dir / f"{group}.{name}.jsonl").exists()]
    for path in kept:
        print(f"note: {path} exists and is kept, not made again (remove it to rewrite its turns)", file=sys.stderr)
    if len(kept) == len(wanted):
        return 0
    rewriter = load_rewriter(args.model)
    base = rewriter.config
    for group in args.groups:
        items = exported_turns(args.dir, group, args.split)
        for name, v in variants.items():
            path = args.dir / f"{group}.{name}.jsonl"
            if path in kept:
                continue
            prompt = base.prompt
            if v["answers"] is not None:
                prompt = dataclasses.replace(prompt, answer_turns=v["answers"])
            if v["answer_tokens"] is not None:
                prompt = dataclasses.replace(prompt, max_answer_tokens=v["answer_tokens"])
            budget = base.max_input_tokens if v["budget"] is None else v["budget"]
            look = base.second_look if v["look"] is None else v["look"]
            rewriter.config = dataclasses.replace(base, prompt=prompt, max_input_tokens=budget, second_look=look)
            print(f"{group} {name}: {len(items)} turns", file=sys.stderr)
            # rewriting.rewrite's writer: atomic, and the alternatives go to eval.retrieval's search as the app's.
            found = rewrite_group(rewriter, items, v["rewrites"], v["turns"])
            write_rewrites([{"id": key} for key, _ in items], lambda: [found[key] for key, _ in items], path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
