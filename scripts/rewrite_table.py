"""The rewriter comparison of BENCHMARKS.md §3: every system on the same held-out turns.

The turns are those a training run held out (its ``split.json``), after the
first turn of their conversation, grouped by source: QReCC, CANARD, CAsT
2020-22. Three steps:

    # 1. the inputs: DIR/{qrecc,canard,cast}.jsonl, ids "<file>#<id>"
    python scripts/rewrite_table.py export --split rewriting/adapters/smollm2-qr/split.json --dir runs/table
    # 2. the rewrites of each rewriter NAME, as `python -m rewriting.rewrite` writes them
    python -m rewriting.rewrite --input runs/table/qrecc.jsonl --output runs/table/qrecc.NAME.jsonl --model NAME
    # 3. the table: every DIR/GROUP.NAME.jsonl, the original question, and the
    #    other systems shipped in the data on the turns where they exist
    python scripts/rewrite_table.py table --split rewriting/adapters/smollm2-qr/split.json --dir runs/table

Scores are ROUGE-1 recall / USE cosine / R@10 on the default index (a
local-index proxy for the paper's web search), in percent, by the metrics of
``eval.rewrites``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval.rewrites import Scorer  # noqa: E402
from rewriting.data import load_examples, load_quretec  # noqa: E402

GROUPS = ("qrecc", "canard", "cast")
METRICS = ("rouge1_recall", "use", "r_at_10")
# QuReTeC's output for CAsT 2020: the question plus the history terms it selected.
QURETEC = "cast2020/quretec/QuReTeC_QnA.tsv"


def _group(source: str) -> str:
    return "cast" if source.startswith("cast") else source


def held_out(split_path: str) -> dict[str, list[tuple[str, object]]]:
    """``{group: [(key, example)]}``: the held-out turns after the first."""
    split = json.loads(Path(split_path).read_text(encoding="utf-8"))
    groups: dict[str, list] = defaultdict(list)
    for path in split["files"]:
        name = Path(path).name
        dev = set(split["dev"].get(name, ()))
        for example in load_examples(path):
            if example.id in dev and example.history:
                groups[_group(example.source)].append((f"{name}#{example.id}", example))
    return groups


def export(split_path: str, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for group, items in held_out(split_path).items():
        with (directory / f"{group}.jsonl").open("w", encoding="utf-8") as out:
            for key, ex in items:
                out.write(json.dumps({"id": key, "question": ex.question, "history": list(ex.history)}, ensure_ascii=False) + "\n")
        print(f"{directory / group}.jsonl: {len(items)} turns", file=sys.stderr)


def _read(path: Path) -> dict[str, str]:
    return {r["id"]: r["rewrite"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def _others(split_path: str, items) -> dict[str, dict[str, str]]:
    """Other systems' real outputs by key: the data's own (CAsT automatic) and QuReTeC's."""
    found: dict[str, dict[str, str]] = defaultdict(dict)
    data = Path(json.loads(Path(split_path).read_text(encoding="utf-8"))["files"][0]).parents[1]
    quretec = load_quretec(data / QURETEC) if (data / QURETEC).is_file() else {}
    for key, ex in items:
        for system, text in ex.systems.items():
            found[system][key] = text
        if ex.id in quretec:
            found["quretec"][key] = quretec[ex.id]
    return found


def table(split_path: str, directory: Path, index: str | None) -> str:
    names = list(METRICS) if index != "none" else ["rouge1_recall", "use"]
    scorer = Scorer.from_defaults(names, None if index in (None, "none") else index)
    groups = held_out(split_path)
    rows: dict[str, dict[str, dict]] = defaultdict(dict)  # system -> group -> scores
    subsets = []  # (group, system, keys): other systems on their own turns
    for group in GROUPS:
        items = groups.get(group, [])
        references = {key: ex.rewrite for key, ex in items}
        systems = {"original": {key: ex.question for key, ex in items}}
        for path in sorted(directory.glob(f"{group}.*.jsonl")):
            systems[path.name[len(group) + 1 : -len(".jsonl")]] = _read(path)
        for system, outputs in _others(split_path, items).items():
            systems[system] = outputs
            subsets.append((group, system, sorted(outputs)))
        for system, outputs in systems.items():
            keys = [k for k in references if k in outputs]
            scores = scorer.score_all([references[k] for k in keys], [outputs[k] for k in keys], desc=f"{group}/{system}")
            rows[system][group] = {"n": len(keys), **{m: dict(zip(keys, scores[m])) for m in names}}
    lines = ["| rewriter | " + " | ".join(f"{g} ({len(groups.get(g, []))})" for g in GROUPS) + " | all |", "|---" * (len(GROUPS) + 2) + "|"]
    for system, by_group in rows.items():
        if any(s == system for _, s, _ in subsets):
            continue
        cells, pooled = [], defaultdict(list)
        for group in GROUPS:
            block = by_group.get(group)
            cells.append(_cell(block, names, None))
            for m in names:
                pooled[m] += list(block[m].values()) if block else []
        cells.append(" / ".join(f"{100 * sum(v) / len(v):.1f}" for v in (pooled[m] for m in names)) if pooled[names[0]] else "")
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    if subsets:
        lines += ["", "| turns | system | theirs | " + " | ".join(s for s in rows if not any(s == o for _, o, _ in subsets)) + " |"]
        lines.append("|---" * (3 + sum(1 for s in rows if not any(s == o for _, o, _ in subsets))) + "|")
        for group, system, keys in subsets:
            ours = [s for s in rows if not any(s == o for _, o, _ in subsets)]
            cells = [_cell(rows[s][group], names, keys) for s in [system] + ours]
            lines.append(f"| {group} ({len(keys)}) | {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(block: dict | None, names, keys) -> str:
    if not block:
        return ""
    keys = keys if keys is not None else list(block[names[0]])
    if not keys or any(k not in block[names[0]] for k in keys):
        return ""
    return " / ".join(f"{100 * sum(block[m][k] for k in keys) / len(keys):.1f}" for m in names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("export", "table"))
    parser.add_argument("--split", required=True, help="a training run's split.json")
    parser.add_argument("--dir", required=True, type=Path, help="where the inputs and rewrites are")
    parser.add_argument("--index", help="BM25 index for R@10 (default: the default collection's; 'none': no R@10)")
    args = parser.parse_args()
    if args.command == "export":
        export(args.split, args.dir)
    else:
        print(table(args.split, args.dir, args.index))
    return 0


if __name__ == "__main__":
    sys.exit(main())
