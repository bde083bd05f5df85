"""N-best candidates of the trained rewriter: ``python scripts/study_nbest.py DIR --greedy NAME [--model ADAPTER] [--beams N]``.

Issue 14's lever "N-best candidates re-ranked by a small scorer", measured
before any scorer is built: how much is there to gain among the candidates?
For each held-out turn that ``python -m eval.rewrites export --split SPLIT
--dir DIR`` wrote to ``DIR/<group>.jsonl``, the rewriter's prompt is built as
the app builds it (each earlier question replaced by its rewrite, here the
greedy rewrites in ``DIR/<group>.<NAME>.jsonl``, which
``scripts/study_history.py`` wrote with the same model) and decoded by the
rewriter's own beam search (``nbest_batch``) into N candidates. Each
candidate goes through the rewriter's own cleaning and drift guard; the
greedy rewrite is a candidate too. Written
beside, in the format ``eval.rewrites table`` scores:

* ``<group>.<NAME>-beam.jsonl``: the beam's best candidate;
* ``<group>.<NAME>-mbr.jsonl``: the candidate closest to all the others
  (``rewriting.consensus``: the highest summed unigram F1 against them,
  minimum Bayes risk decoding, a reranker that needs no training turns;
  what ``RewriterConfig.candidates`` makes the rewrite), with the others as
  ``"alternatives"``, as ``rewriting.rewrite --candidates`` writes them;
* ``<group>.<NAME>-oracle.jsonl``: the candidate with the highest ROUGE-1
  recall against the human rewrite. It reads the reference, so it is the
  ceiling of any reranker of these candidates, not a system.

and every turn's candidates in ``DIR/candidates/<group>.<NAME>.jsonl``.
Existing files are kept.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.kernel import CommandParser, check_at_least, json_lines, run_cli  # noqa: E402
from eval.metrics import rouge1_recall  # noqa: E402
from rewriting import TRAINED_INPUT_TOKENS, consensus, load_rewriter  # noqa: E402
from rewriting.data import with_rewritten_questions  # noqa: E402
from study_history import SPLIT, check_inputs, exported_turns  # noqa: E402


def beam_candidates(rewriter, turns: list[tuple[str, list[str]]], beams: int) -> list[list[str]]:
    """The rewriter's N-best by its own beam search (``nbest_batch``) for each
    ``(question, history)``: the texts, best first, each finished (cleaned,
    drift-guarded) as ``rewrite_batch`` finishes its greedy output."""
    return [[rewrite.text for rewrite in found] for found in rewriter.nbest_batch(turns, beams)]


def sampled_candidates(rewriter, turns: list[tuple[str, list[str]]], count: int, temperature: float, seed: int) -> list[list[str]]:
    """``count`` rewrites of each turn drawn from the model's own distribution
    at ``temperature`` (``model.generate``, seeded, no top-k or top-p cut),
    finished as ``beam_candidates`` finishes beams. A study of what sampled
    candidates give minimum Bayes risk; the rewriter has no sampling of its own."""
    import torch

    prompts = [rewriter.prompt_ids(question, history) for question, history in turns]
    width, pad = max(map(len, prompts)), rewriter.tokenizer.pad_token_id
    input_ids = torch.full((len(prompts), width), pad, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, ids in enumerate(prompts):
        input_ids[row, width - len(ids):] = torch.tensor(ids)
        mask[row, width - len(ids):] = 1
    torch.manual_seed(seed)
    with torch.inference_mode():
        out = rewriter.model.generate(
            input_ids=input_ids, attention_mask=mask, do_sample=True, temperature=temperature, top_k=0, top_p=1.0,
            num_return_sequences=count, max_new_tokens=rewriter.config.max_new_tokens, eos_token_id=sorted(rewriter.eos_ids),
            pad_token_id=pad,
        )
    found: list[list[str]] = [[] for _ in turns]
    for n, row in enumerate(out[:, width:].tolist()):
        question, history = turns[n // count]
        cut = next((i for i, token in enumerate(row) if token in rewriter.eos_ids), None)
        ids, ended = (row, False) if cut is None else (row[:cut], True)
        found[n // count].append(rewriter.finish(question, history, ids, ended).text)
    return found


def arguments(description: str, batch: int) -> argparse.ArgumentParser:
    """The options this script and ``study_rerank.py`` share."""
    parser = CommandParser(description=description)
    parser.add_argument("dir", type=Path, help="the folder eval.rewrites export wrote (DIR/<group>.jsonl)")
    parser.add_argument("--greedy", required=True, help="NAME of DIR/<group>.<NAME>.jsonl: the model's greedy rewrites")
    parser.add_argument("--split", default=SPLIT, help="the adapter's split.json (default: the committed adapter's)")
    parser.add_argument("--groups", nargs="+", default=["qrecc", "canard", "cast"], help="sources (default: all three)")
    parser.add_argument("--model", default="trained", help="load_rewriter's name or an adapter folder (default: trained)")
    parser.add_argument("--budget", type=int, default=TRAINED_INPUT_TOKENS,
                        help=f"prompt tokens (default {TRAINED_INPUT_TOKENS}, the app's: rewriting.TRAINED_INPUT_TOKENS)")
    parser.add_argument("--beams", type=int, default=4, help="candidates a turn (default 4)")
    parser.add_argument("--batch", type=int, default=batch, help=f"turns decoded together (default {batch})")
    parser.add_argument("--sample", type=float, metavar="TEMPERATURE",
                        help="draw --beams candidates by sampling at this temperature instead of beam search (outputs tagged -sT)")
    parser.add_argument("--seed", type=int, default=0, help="with --sample: the sampling seed (default 0)")
    return parser


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """:func:`arguments`' values (and the caller's own), each count checked
    before any model loads: --batch 0 loaded SmolLM2, then ended in a
    traceback (a range of step 0)."""
    args = parser.parse_args(argv)
    check_at_least(beams=(args.beams, 1), batch=(args.batch, 1), budget=(args.budget, 1),
                   train_turns=(getattr(args, "train_turns", None), 1))
    return args


def held_out_with_greedy(directory: Path, group: str, greedy_name: str, split: str) -> tuple[list, dict, dict]:
    """The group's exported turns ``[(key, example)]``, the greedy rewrites
    ``{key: text}``, and ``{(source, conversation, turn): text}``: each
    turn as the app shows it in a later turn's history (a first turn as
    asked, every other as the model rewrote it)."""
    items = exported_turns(directory, group, split)
    greedy = {record["id"]: record["rewrite"] for _, record in json_lines(directory / f"{group}.{greedy_name}.jsonl")}
    done = {}
    for key, ex in items:
        done[(ex.source, ex.conversation_id, ex.turn)] = greedy[key]
        if ex.history:
            done[(ex.source, ex.conversation_id, 1)] = ex.history[0]
    return items, greedy, done


def main(argv: list[str] | None = None) -> int:
    """The command line; a missing input is one ``error:`` line, exit 2."""
    return run_cli(_main, argv)


def _main(argv: list[str] | None) -> int:
    args = parse(arguments(__doc__.splitlines()[0], batch=8), argv)
    # The exported turns and the greedy rewrites, before SmolLM2 loads.
    check_inputs(args.dir, args.split, [f"{group}{name}.jsonl" for group in args.groups for name in ("", f".{args.greedy}")])
    rewriter = load_rewriter(args.model)
    rewriter.config = dataclasses.replace(rewriter.config, max_input_tokens=args.budget)
    (args.dir / "candidates").mkdir(exist_ok=True)
    for group in args.groups:
        tag = "" if args.sample is None else f"-s{args.sample:g}"
        outputs = {kind: args.dir / f"{group}.{args.greedy}{tag}-{kind}.jsonl" for kind in ("beam", "mbr", "oracle")}
        kept = args.dir / "candidates" / f"{group}.{args.greedy}{tag}.jsonl"
        if all(p.exists() for p in outputs.values()) and kept.exists():
            continue
        items, greedy, done = held_out_with_greedy(args.dir, group, args.greedy, args.split)
        picks = {kind: {} for kind in outputs}
        pools = {}
        records = []
        began = time.monotonic()
        for start in range(0, len(items), args.batch):
            chunk = items[start : start + args.batch]
            turns = [(ex.question, list(with_rewritten_questions(ex, done).context)) for _, ex in chunk]
            drawn = (beam_candidates(rewriter, turns, args.beams) if args.sample is None
                     else sampled_candidates(rewriter, turns, args.beams, args.sample, args.seed + start))
            for (key, ex), beam in zip(chunk, drawn):
                pool = list(dict.fromkeys([greedy[key], *beam]))
                pools[key] = pool
                picks["beam"][key] = beam[0]
                picks["mbr"][key] = pool[consensus(pool)]
                picks["oracle"][key] = max(pool, key=lambda c: rouge1_recall(ex.rewrite, c))
                records.append({"id": key, "greedy": greedy[key], "beam": beam})
            print(f"{group}: {start + len(chunk)}/{len(items)} turns, {time.monotonic() - began:.0f} s", file=sys.stderr)
        for kind, path in outputs.items():
            lines = []
            for k, _ in items:
                line = {"id": k, "rewrite": picks[kind][k]}
                if kind == "mbr":  # as rewriting.rewrite --candidates writes it, for eval.retrieval's search
                    line["alternatives"] = [c for c in pools[k] if c != picks[kind][k]]
                lines.append(json.dumps(line, ensure_ascii=False) + "\n")
            path.write_text("".join(lines), encoding="utf-8")
        kept.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
