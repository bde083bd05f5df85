"""Does a turn need rewriting at all? ``python scripts/study_skip_rewrite.py DIR``.

Learns, on the training split of the default adapter's ``split.json``,
whether a turn with a history is self-contained (its human rewrite has the
same words as its question), with a logistic regression on the question's
words and bigrams and a few counts (pronouns, length, capitalised words,
overlap with the history), and prints on the held-out turns how many are
self-contained, how many the classifier would skip at several thresholds
and how precisely, and how many self-contained turns the default rewriter
already leaves unchanged. ``DIR`` holds ``rewriting.rewrite`` outputs of
the held-out turns, ``<group>.trained.jsonl`` for qrecc, canard and cast
(``python -m eval.rewrites export --split SPLIT --dir DIR``, then
``python -m rewriting.rewrite --input DIR/<group>.jsonl --output DIR/<group>.trained.jsonl``).
Also writes ``DIR/<group>.skip<T>.jsonl``: those outputs with the question
itself where the classifier skips, for ``python -m eval.rewrites table``.
"""
import json
import re
import sys
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import LogisticRegression
from scipy.sparse import hstack, csr_matrix

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from assistant.kernel import CommandParser, run_cli  # noqa: E402
from study_history import SPLIT, check_inputs, split_examples  # noqa: E402  (beside this script, on the path a script runs with)

GROUP_NAMES = ("qrecc", "canard", "cast")

PRONOUNS = set("he she it they him her them his hers its their theirs this that these those there here such one ones".split())


def norm(t):
    return re.sub(r"[^\w\s]", " ", t.lower()).split()


def numeric(e):
    q = norm(e.question)
    hist = set(w for h in e.history for w in norm(h))
    content = [w for w in q if len(w) > 3]
    caps = re.findall(r"(?<!^)(?<![.?!] )\b[A-Z][a-z]+", e.question.strip())
    return [
        len(q), sum(w in PRONOUNS for w in q), float(any(w in PRONOUNS for w in q)),
        len(caps), float(len(q) <= 4),
        (sum(w in hist for w in content) / len(content)) if content else 0.0,
        float(bool(re.match(r"^(and|what about|how about|why|anything else|what else|tell me more)\b", e.question.strip().lower()))),
    ]


def main(argv: list[str] | None = None) -> int:
    """The command line; a missing input is one ``error:`` line, exit 2."""
    return run_cli(_main, argv)


def _main(argv: list[str] | None) -> int:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="holds <group>.trained.jsonl for qrecc, canard and cast")
    parser.add_argument("--split", type=Path, default=SPLIT, help="the adapter's split.json (default: the committed adapter's)")
    args = parser.parse_args(argv)
    # Every input before the classifier is trained, not a traceback after.
    check_inputs(args.dir, args.split, [f"{group}.trained.jsonl" for group in GROUP_NAMES])
    out = args.dir

    def rows(kind):
        return [(name, e) for name, e in split_examples(args.split, kind) if e.history]


    train, dev = rows("train"), rows("dev")
    vec = HashingVectorizer(n_features=2**14, ngram_range=(1, 2), alternate_sign=False, norm="l2")


    def features(items):
        texts = [e.question.lower() for _, e in items]
        return hstack([vec.transform(texts), csr_matrix(np.array([numeric(e) for _, e in items]))]).tocsr()


    def label(e):
        return int(norm(e.rewrite) == norm(e.question))  # 1: self-contained


    X, y = features(train), np.array([label(e) for _, e in train])
    model = LogisticRegression(max_iter=2000, C=1.0, class_weight=None).fit(X, y)
    p_dev = model.predict_proba(features(dev))[:, 1]
    y_dev = np.array([label(e) for _, e in dev])
    print(f"train {len(train)} turns ({y.sum()} self-contained, {y.mean():.1%}); dev {len(dev)} ({y_dev.sum()}, {y_dev.mean():.1%})")
    for t in (0.5, 0.7, 0.8, 0.9):
        skip = p_dev >= t
        precision = y_dev[skip].mean() if skip.any() else float("nan")
        print(f"  p >= {t}: skips {skip.mean():.1%} of dev turns, precision {precision:.1%}")

    table = out
    prob = {f"{name}#{e.id}": p for (name, e), p in zip(dev, p_dev)}
    question = {f"{name}#{e.id}": e.question for name, e in dev}
    for group in GROUP_NAMES:
        lines = [json.loads(l) for l in open(table / f"{group}.trained.jsonl")]
        for t in (0.7, 0.8, 0.9):
            kept = []
            for r in lines:
                if prob.get(r["id"], 0.0) >= t:
                    r = dict(r, rewrite=question[r["id"]])
                kept.append(r)
            (out / f"{group}.skip{int(t * 100)}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    missing = sum(1 for group in GROUP_NAMES for l in open(table / f"{group}.trained.jsonl") if json.loads(l)["id"] not in prob)
    print("held-out outputs without a probability (first turns):", missing)

    preds = {}
    for group in GROUP_NAMES:
        for l in open(table / f"{group}.trained.jsonl"):
            r = json.loads(l); preds[r["id"]] = r["rewrite"]
    sc = [(name, e) for (name, e) in dev if label(e)]
    same = sum(norm(preds[f"{name}#{e.id}"]) == norm(e.question) for name, e in sc)
    print(f"self-contained dev turns: {len(sc)}; the trained rewriter leaves {same} of them unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
