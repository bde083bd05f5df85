"""Benchmark the assistant end to end on this machine.

    python scripts/bench_chat.py [--rewriter trained] [--reader sentence] [--json]

Measures (1) the first start: indexing the default collection into a fresh
cache folder, and encoding its passages when the hits are rescored
(``CONVQA_DENSE_WEIGHT`` above 0); (2) the warm start: loading index,
passage vectors, encoders and rewriter; (3)
per-stage latency, median and p95, over a scripted 20-turn conversation
(four topics of five turns, each topic a new conversation). Prints a
Markdown table (or JSON) for BENCHMARKS.md.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Run as a file (python scripts/bench_chat.py): the repository root is not on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant.encoders import load_minilm  # noqa: E402
from assistant.kernel import CommandParser, Conversation, load_configs, percentile, run_cli  # noqa: E402
from assistant.pipeline import build_assistant  # noqa: E402
from assistant.retrieval import BM25Retriever, build_index, passage_vectors, read_collection  # noqa: E402

SCRIPT = [
    ["Who was Ada Lovelace?", "What did she write about?", "Who was her father?",
     "Which machine did she work on?", "When did she die?"],
    ["What is the Eiffel Tower?", "How tall is it?", "Who designed it?",
     "When was it built?", "In which city is it?"],
    ["What is photosynthesis?", "Where does it take place?", "What does it produce?",
     "Which organisms use it?", "Why is it important?"],
    ["Who was Napoleon?", "Where was he born?", "Which battles did he win?",
     "Where was he exiled?", "When did he die?"],
]


def main(argv=None) -> int:
    """The benchmark; a bad flag or setting is one ``error:`` line, exit 2."""
    return run_cli(_main, argv, interrupted="nothing was measured")


def _main(argv) -> int:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rewriter", default="trained", help="as the app's --rewriter (default: trained)")
    parser.add_argument("--reader", default="sentence", help="as the app's --reader (default: sentence)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the Markdown table")
    args = parser.parse_args(argv)
    # The settings as build_assistant will read them, checked before the
    # minutes of indexing: a mistyped --reader was a traceback after them.
    dense_weight = load_configs(rewriter=args.rewriter, reader=args.reader)[1].dense_weight

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        passages = list(read_collection())
        build_index(passages, Path(tmp) / "index", total=len(passages))
        if dense_weight > 0:
            passage_vectors(BM25Retriever.from_index(Path(tmp) / "index"), load_minilm())
        first_start = time.perf_counter() - start

        start = time.perf_counter()
        # The one builder every entry point uses (defaults, CONVQA_*, then
        # these flags), on the index just built in the temporary folder.
        assistant = build_assistant(rewriter=args.rewriter, reader=args.reader, index_dir=str(Path(tmp) / "index"))
        warm_start = time.perf_counter() - start

        stages: dict[str, list[float]] = {"rewrite": [], "retrieve": [], "read": [], "total": []}
        transcript = []
        for topic in SCRIPT:
            conversation = Conversation()
            for question in topic:
                turn = assistant.ask(question, conversation)
                conversation.add(turn)
                for stage in stages:
                    stages[stage].append(turn.timings_ms[stage])
                transcript.append({"question": question, "rewrite": turn.rewrite.text, "answer": turn.answer.text})

    result = {
        "rewriter": args.rewriter,
        "reader": args.reader,
        "passages": len(passages),
        "first_start_s": round(first_start, 1),
        "warm_start_s": round(warm_start, 1),
        "turns": len(stages["total"]),
        "latency_ms": {
            stage: {"median": round(statistics.median(v), 1), "p95": round(percentile(v, 0.95), 1)}
            for stage, v in stages.items()
        },
        "transcript": transcript,
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"first start (index and encode {result['passages']} passages): {result['first_start_s']} s; "
          f"warm start (load everything): {result['warm_start_s']} s\n")
    print(f"| stage ({args.rewriter} rewriter, {args.reader} reader) | median ms | p95 ms |\n|---|---|---|")
    for stage, figures in result["latency_ms"].items():
        print(f"| {stage} | {figures['median']} | {figures['p95']} |")
    print()
    for row in transcript:
        print(f"- {row['question']} -> {row['rewrite']} -> {row['answer'][:80]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
