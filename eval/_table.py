"""Every rewriter on the same held-out turns: the comparison table of BENCHMARKS.md.

The turns are those a training run held out (its ``split.json``), after the
first turn of their conversation (first turns are never rewritten), grouped
by source: QReCC, CANARD, CAsT 2020-22. A turn's key is ``"<file>#<id>"``:
ids are unique within a file only (the two QReCC files share some).
"""

from __future__ import annotations

import json
from collections import defaultdict
from itertools import takewhile
from pathlib import Path
from typing import Mapping, Sequence

from assistant.kernel import ConfigError, DataFormatError, json_lines
from rewriting.data import RewriteExample, load_examples, load_quretec

from ._validation import DIFFERENCE_RESAMPLES, conversation, mean_difference

__all__ = ["GROUPS", "read_split", "held_out_groups", "whole_conversations", "export_inputs", "read_rewrites", "read_alternatives", "read_outputs", "other_systems", "comparison_table"]

GROUPS = ("qrecc", "canard", "cast")
# QuReTeC's output for CAsT 2020 (the question plus the history terms it
# selected), relative to the shared data folder.
QURETEC_FILE = "cast2020/quretec/QuReTeC_QnA.tsv"


def _group(source: str) -> str:
    return "cast" if source.startswith("cast") else source


def read_split(split_path: str | Path) -> dict:
    """The ``split.json`` a run of ``rewriting.train`` wrote, checked to hold
    ``"dev"`` (the held-out ids, by file name), or a :class:`DataFormatError`
    saying what is wrong in words, not a Python exception's repr. (Its
    ``"files"``, the data files, is for the callers that need it to check.)"""
    try:
        split = json.loads(Path(split_path).read_text(encoding="utf-8"))
    except IsADirectoryError as err:  # as the other inputs say it ("Is a directory" gave no advice)
        raise DataFormatError(f"{split_path} is a folder; give the split.json in it") from err
    except OSError as err:
        raise DataFormatError(f"{split_path}: cannot read it ({err.strerror or err})") from err
    except ValueError as err:
        raise DataFormatError(f"{split_path}: not JSON; give the split.json that rewriting.train wrote") from err
    if not (isinstance(split, dict) and isinstance(split.get("dev"), dict)):
        raise DataFormatError(f"{split_path}: not a split.json written by rewriting.train (its \"dev\" object lists "
                              "the held-out ids by file name)")
    return split


def held_out_groups(split_path: str | Path, trained_on: bool = False, turns: int | None = None) -> dict[str, list[tuple[str, RewriteExample]]]:
    """``{group: [(key, example)]}``, the held-out turns after the first, in
    file order; with ``trained_on``, the split's other turns after the first
    instead (the ones training saw: for choosing settings without touching
    the held-out turns). ``turns`` keeps about that many of each group's
    first turns, in whole conversations (:func:`whole_conversations`): the
    turns training saw are too many to rewrite one at a time for every
    setting tried."""
    split = read_split(split_path)
    files, dev = split.get("files"), split["dev"]
    if not isinstance(files, list):
        raise DataFormatError(f"{split_path}: not a split.json written by rewriting.train (no \"files\" list of the data)")
    groups: dict[str, list] = defaultdict(list)
    for path in files:
        name = Path(path).name
        wanted = set(dev.get(name, ()))
        for example in load_examples(path):
            if (example.id in wanted) != trained_on and example.history:
                groups[_group(example.source)].append((f"{name}#{example.id}", example))
    if turns is None:
        return dict(groups)
    return {group: whole_conversations(items, turns) for group, items in groups.items()}


def whole_conversations(items: Sequence[tuple[str, RewriteExample]], turns: int) -> list[tuple[str, RewriteExample]]:
    """The first ``turns`` of ``items`` (keyed turns in file order), then the
    rest of the last one's conversation: a conversation is kept whole, so
    intervals that resample conversations see every turn of each.

    :class:`ConfigError` when ``turns`` is below 1.
    """
    if turns < 1:
        raise ConfigError(f"turns must be at least 1 (got {turns})")
    kept = list(items[:turns])
    if kept:
        last = conversation(kept[-1][0])
        kept += takewhile(lambda item: conversation(item[0]) == last, items[turns:])
    return kept


def export_inputs(groups: Mapping[str, Sequence[tuple[str, RewriteExample]]], directory: Path) -> dict[str, int]:
    """Write ``DIR/<group>.jsonl`` in the input format of ``rewriting.rewrite``; counts per group."""
    directory.mkdir(parents=True, exist_ok=True)
    for group, items in groups.items():
        with (directory / f"{group}.jsonl").open("w", encoding="utf-8") as out:
            for key, ex in items:
                out.write(json.dumps({"id": key, "question": ex.question, "history": list(ex.context)}, ensure_ascii=False) + "\n")
    return {group: len(items) for group, items in groups.items()}


def read_rewrites(path: str | Path) -> dict[str, str]:
    """``{id: rewrite}`` from a JSONL of ``{"id", "rewrite"}`` (what
    ``rewriting.rewrite`` writes); errors name the file and line."""
    rewrites: dict[str, str] = {}
    for where, record in json_lines(path):
        well_formed = isinstance(record, dict) and all(isinstance(record.get(k), str) for k in ("id", "rewrite"))
        if not well_formed:
            raise DataFormatError(f'{where}: expected {{"id": str, "rewrite": str}}')
        if record["id"] in rewrites:
            raise DataFormatError(f"{where}: id {record['id']!r} occurs twice")
        rewrites[record["id"]] = record["rewrite"]
    return rewrites


def read_alternatives(path: str | Path) -> dict[str, tuple[str, ...]]:
    """``{id: alternatives}`` for the lines of a rewrites JSONL that carry
    ``"alternatives"`` (the other candidates ``rewriting.rewrite
    --candidates`` weighed); errors name the file and line."""
    found: dict[str, tuple[str, ...]] = {}
    for where, record in json_lines(path):
        others = record.get("alternatives", []) if isinstance(record, dict) else []
        if not (isinstance(others, list) and all(isinstance(text, str) for text in others)):
            raise DataFormatError(f'{where}: "alternatives" must be a list of strings')
        if others:
            found[str(record.get("id"))] = tuple(others)
    return found


def read_outputs(directory: Path, group: str) -> dict[str, dict[str, str]]:
    """``{rewriter: {key: rewrite}}`` from every ``DIR/<group>.<rewriter>.jsonl``."""
    return {path.name[len(group) + 1 : -len(".jsonl")]: read_rewrites(path) for path in sorted(directory.glob(f"{group}.*.jsonl"))}


def other_systems(items: Sequence[tuple[str, RewriteExample]], data_dir: Path | None = None) -> dict[str, dict[str, str]]:
    """Other systems' real outputs by key: those in the data (CAsT's automatic
    rewrites) and, when ``data_dir`` holds it, QuReTeC's."""
    quretec_path = data_dir / QURETEC_FILE if data_dir is not None else None
    quretec = load_quretec(quretec_path) if quretec_path is not None and quretec_path.is_file() else {}
    found: dict[str, dict[str, str]] = defaultdict(dict)
    for key, ex in items:
        for system, text in ex.systems.items():
            found[system][key] = text
        if ex.id in quretec:
            found["quretec"][key] = quretec[ex.id]
    return dict(found)


def _mean(values: Sequence[float]) -> str:
    return f"{100 * sum(values) / len(values):.1f}" if values else ""


def comparison_table(groups, rewriters: Mapping[str, Mapping[str, Mapping[str, str]]], others, scorer, against: str | None = None,
                     turns_seen: bool = False) -> str:
    """Markdown: one row per rewriter on all turns of each group, then each
    other system on its own turns next to every rewriter on the same turns.

    ``rewriters`` and ``others`` map group -> system -> key -> rewrite; a
    rewriter is shown for a group only when it rewrote every turn of it. The
    original question is always a row. Cells are the scorer's metrics in
    percent, joined by " / ".

    ``against`` names a row: a last table then gives every other row minus
    it on the same turns, each metric's mean difference with its 95% paired
    bootstrap interval (:func:`mean_difference`), so that a difference can be
    told from the noise of a few hundred turns. :class:`ConfigError` when no
    row has that name. ``turns_seen`` says in the heading that the turns are
    ones training saw, not held-out ones.
    """
    scores: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(dict)  # system -> key -> metric values

    def score(system: str, items, outputs) -> None:
        keys = [key for key, _ in items if key in outputs]
        result = scorer.score_all([ex.rewrite for key, ex in items if key in outputs], [outputs[k] for k in keys], desc=system)
        for i, key in enumerate(keys):
            scores[system][key] = [float(result[m][i]) for m in scorer.names]

    def whole(group: str) -> dict[str, Mapping[str, str]]:
        """The group's rewriters that rewrote every turn of it: its rows."""
        items = groups.get(group, [])
        return {system: outputs for system, outputs in rewriters.get(group, {}).items()
                if all(key in outputs for key, _ in items)}

    names = list(dict.fromkeys(["original", *(system for group in GROUPS for system in whole(group))]))
    if against is not None and against not in names:  # before the scoring, which may take minutes
        raise ConfigError(f"no rewriter named {against!r} to compare against; the rows are: {', '.join(names)}")
    for group in GROUPS:
        items = groups.get(group, [])
        score("original", items, {key: ex.question for key, ex in items})
        for system, outputs in whole(group).items():
            score(system, items, outputs)
        for system, outputs in others.get(group, {}).items():
            score(system, items, outputs)

    def cell(system: str, keys: Sequence[str]) -> str:
        if not keys or any(k not in scores[system] for k in keys):
            return ""
        return " / ".join(_mean([scores[system][k][m] for k in keys]) for m in range(len(scorer.names)))

    every = {group: [key for key, _ in groups.get(group, [])] for group in GROUPS}
    lines = [
        f"{'Turns training saw' if turns_seen else 'Held-out turns'} after the first; {' / '.join(scorer.names)} in percent.",
        "",
        "| rewriter | " + " | ".join(f"{g} ({len(every[g])})" for g in GROUPS) + f" | all ({sum(map(len, every.values()))}) |",
        "|---" * (len(GROUPS) + 2) + "|",
    ]
    for system in names:
        cells = [cell(system, every[g]) for g in GROUPS] + [cell(system, [k for g in GROUPS for k in every[g]])]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    if against is not None:
        lines += _differences(against, names, every, scores, scorer.names)
    subsets = [(group, system, sorted(outputs)) for group in GROUPS for system, outputs in others.get(group, {}).items()]
    if subsets:
        lines += ["", "| turns | system | theirs | " + " | ".join(names) + " |", "|---" * (3 + len(names)) + "|"]
        for group, system, keys in subsets:
            lines.append(f"| {group} ({len(keys)}) | {system} | " + " | ".join(cell(s, keys) for s in [system, *names]) + " |")
    return "\n".join(lines)


def _differences(against: str, names: Sequence[str], every: Mapping[str, Sequence[str]], scores, metrics: Sequence[str]) -> list[str]:
    every = dict(every, all=[k for g in GROUPS for k in every[g]])

    def cell(system: str, keys: Sequence[str]) -> str:
        # A group one of the two has no rewrites for (a folder with only some groups' files) is left blank.
        if not keys or any(k not in scores[system] or k not in scores[against] for k in keys):
            return ""
        parts = []
        for m in range(len(metrics)):
            mean, lo, hi = (100 * v for v in mean_difference([scores[system][k][m] for k in keys], [scores[against][k][m] for k in keys],
                                                             clusters=[conversation(k) for k in keys]))
            parts.append(f"{mean:+.1f} [{lo:+.1f}, {hi:+.1f}]")
        return " / ".join(parts)

    lines = ["", f"Minus {against} on the same turns, with 95% paired bootstrap intervals ({DIFFERENCE_RESAMPLES:,} resamples "
             "of the conversations):", "",
             "| rewriter | " + " | ".join(f"{g} ({len(keys)})" for g, keys in every.items()) + " |", "|---" * (len(every) + 1) + "|"]
    lines += [f"| {system} | " + " | ".join(cell(system, keys) for keys in every.values()) + " |" for system in names if system != against]
    return lines
