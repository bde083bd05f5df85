"""A small learned reranker of the rewriter's N-best: ``python scripts/study_rerank.py DIR --greedy NAME [--train-turns N]``.

Issue 14's lever as AdaRewriter frames it, small: a scorer that picks among
the model's own candidates. ``scripts/study_nbest.py`` showed the ceiling
(the best of greedy + 4 beams); this learns to approach it without the
held-out turns:

1. ``candidates``: N training turns of the adapter's split (a seeded
   sample, turns after the first), each earlier question replaced by its
   human rewrite (the history the app gives, with the model's rewrites, is
   closest to that), rewritten greedily and by 4-beam search; written to
   ``DIR/candidates/train.jsonl`` with each turn's human rewrite. The
   adapter trained on these turns, so its candidates are better than on
   unseen ones; the features below describe a candidate relative to its
   pool, not the turn, to carry over.
2. ``fit``: gradient-boosted trees (scikit-learn's
   ``HistGradientBoostingRegressor``, its defaults, seed 0) predict each
   candidate's ROUGE-1 recall (``--target f1``: F1; ``use``: USE cosine) minus its pool's mean from the features of
   :func:`features`; the pick is the candidate with the highest prediction.
   Fixed before any held-out turn was scored: no setting is chosen on them.
3. ``apply``: picks among ``DIR/candidates/<group>.<NAME>.jsonl`` (what
   ``study_nbest.py`` kept for the held-out turns) and writes
   ``DIR/<group>.<NAME>-learned[-f1|-use].jsonl`` (by ``--target``) for ``eval.rewrites table``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from assistant.kernel import json_lines, run_cli, tokens  # noqa: E402
from eval.metrics import rouge1_recall  # noqa: E402
from rewriting import load_rewriter, unigram_f1  # noqa: E402
from rewriting.data import with_rewritten_questions  # noqa: E402
from study_history import check_inputs, split_examples  # noqa: E402
from study_nbest import arguments, beam_candidates, held_out_with_greedy, parse  # noqa: E402

FEATURES = ["greedy", "beam_rank", "votes", "consensus", "words", "added", "kept", "from_history", "new_words",
            "capitals_added", "unchanged"]


def features(question: str, history: list[str], greedy: str, beam: list[str]) -> tuple[list[str], np.ndarray]:
    """The pool (greedy first, then the beams, duplicates merged) and one row
    of :data:`FEATURES` per candidate."""
    pool = list(dict.fromkeys([greedy, *beam]))
    asked = set(tokens(question, "rouge"))
    seen = {w for turn in history for w in tokens(turn, "rouge")}
    rows = []
    for candidate in pool:
        words = tokens(candidate, "rouge")
        added = [w for w in words if w not in asked]
        others = [o for o in pool if o != candidate]
        capitals = [w for w in candidate.split() if w[:1].isupper()]
        rows.append([
            float(candidate == greedy),
            float(beam.index(candidate)) if candidate in beam else float(len(beam)),
            float([greedy, *beam].count(candidate)),
            float(np.mean([unigram_f1(candidate, o) for o in others])) if others else 1.0,
            float(len(words)),
            float(len(added)),
            len(asked & set(words)) / max(1, len(asked)),
            float(sum(w in seen for w in added)),
            float(sum(w not in seen for w in added)),
            float(sum(w.strip("?,.'’s").lower() not in asked for w in capitals)),
            float(candidate.split() == question.split()),
        ])
    return pool, np.array(rows)


def training_turns(split: str, count: int, seed: int = 0) -> list:
    """A seeded sample of ``count`` training turns after the first."""
    examples = [ex for _, ex in split_examples(split, "train") if ex.turn > 1]
    return random.Random(seed).sample(examples, min(count, len(examples)))


def make_candidates(args, path: Path) -> None:
    """Step 1: the training turns' candidates, written to ``path``."""
    rewriter = load_rewriter(args.model)
    rewriter.config = dataclasses.replace(rewriter.config, max_input_tokens=args.budget)
    human = {(ex.source, ex.conversation_id, ex.turn): ex.rewrite for _, ex in split_examples(args.split)}
    turns = training_turns(args.split, args.train_turns)
    began, records = time.monotonic(), []
    for start in range(0, len(turns), args.batch):
        chunk = turns[start : start + args.batch]
        items = [(ex.question, list(with_rewritten_questions(ex, human).context)) for ex in chunk]
        greedy = rewriter.rewrite_batch(items)
        for ex, (question, history), g, beam in zip(chunk, items, greedy, beam_candidates(rewriter, items, args.beams)):
            records.append({"id": ex.id, "question": question, "history": history, "rewrite": ex.rewrite,
                            "greedy": g.text, "beam": beam})
        print(f"train: {start + len(chunk)}/{len(turns)} turns, {time.monotonic() - began:.0f} s", file=sys.stderr)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


TARGETS = ("recall", "f1", "use")


def target_scores(pairs: list[tuple[str, str]], target: str) -> np.ndarray:
    """Each ``(human rewrite, candidate)``'s score under ``target``: ROUGE-1
    recall, unigram F1, or USE cosine (encoded in batches, each text once)."""
    if target == "use":
        from assistant.encoders import load_use
        from eval.metrics import embedding_similarities

        return embedding_similarities(load_use(), [h for h, _ in pairs], [c for _, c in pairs])
    score = {"recall": rouge1_recall, "f1": unigram_f1}[target]
    return np.array([score(h, c) for h, c in pairs])


def fit(records: list[dict], target: str = "recall"):
    """Step 2: the trees, taught the ``target`` score minus the pool's mean."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, pairs, sizes = [], [], []
    for r in records:
        pool, rows = features(r["question"], r["history"], r["greedy"], r["beam"])
        X.append(rows)
        pairs += [(r["rewrite"], c) for c in pool]
        sizes.append(len(pool))
    scores = np.split(target_scores(pairs, target), np.cumsum(sizes)[:-1])
    y = np.concatenate([pool_scores - pool_scores.mean() for pool_scores in scores])
    return HistGradientBoostingRegressor(random_state=0).fit(np.vstack(X), y)


def main(argv: list[str] | None = None) -> int:
    """The command line; a missing input is one ``error:`` line, exit 2."""
    return run_cli(_main, argv)


def _main(argv: list[str] | None) -> int:
    parser = arguments(__doc__.splitlines()[0], batch=16)
    parser.add_argument("--train-turns", type=int, default=1000,
                        help="turns training saw whose candidates the trees learn from (default 1000)")
    parser.add_argument("--target", choices=TARGETS, default="recall",
                        help="what the trees learn of a candidate against the human rewrite: ROUGE-1 recall (run "
                        "first), ROUGE-1 F1, which does not reward length (run second, after recall's picks "
                        "were seen to grow longer), or USE cosine (session 15, judged on the measures it is not taught); default: recall")
    args = parse(parser, argv)
    # study_nbest's outputs, before the training turns' candidates load SmolLM2.
    check_inputs(args.dir, args.split, [name for group in args.groups for name in (
        f"{group}.jsonl", f"{group}.{args.greedy}.jsonl", f"candidates/{group}.{args.greedy}.jsonl")])
    train_path = args.dir / "candidates" / "train.jsonl"
    if not train_path.exists():
        make_candidates(args, train_path)
    model = fit([r for _, r in json_lines(train_path)], args.target)
    for group in args.groups:
        items, _, done = held_out_with_greedy(args.dir, group, args.greedy, args.split)
        items = dict(items)
        picks = {}
        for _, r in json_lines(args.dir / "candidates" / f"{group}.{args.greedy}.jsonl"):
            ex = items[r["id"]]
            pool, rows = features(ex.question, list(with_rewritten_questions(ex, done).context), r["greedy"], r["beam"])
            picks[r["id"]] = pool[int(np.argmax(model.predict(rows)))]
        out = args.dir / f"{group}.{args.greedy}-learned{'' if args.target == 'recall' else '-' + args.target}.jsonl"
        out.write_text("".join(json.dumps({"id": k, "rewrite": picks[k]}, ensure_ascii=False) + "\n" for k in items),
                       encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
