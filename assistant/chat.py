"""Terminal chat: ``python -m assistant.chat [--json]``, one question per line on stdin.

Each line is a turn of one conversation. Plain output shows the rewrite, the
answer and the top source; ``--json`` prints one object per turn::

    {"question", "rewrite", "answer", "sources": [{"id", "title", "score", "text"}],
     "timings_ms": {"rewrite", "retrieve", "read", "total"}}

A turn that cannot be answered (empty line, too long ...) prints
``{"question", "error"}`` (or the message) and the conversation goes on.
"""

from __future__ import annotations

import argparse
import json
import sys

from .kernel import (
    AssistantConfig,
    AssistantError,
    Conversation,
    InvalidInputError,
    ReaderConfig,
    RetrieverConfig,
    Turn,
    from_env,
)
from .pipeline import Assistant, turn_to_json
from .retrieval import ensure_index

__all__ = ["main"]


def _plain(turn: Turn) -> str:
    lines = [f"rewrite: {turn.rewrite.text}"]
    if turn.rewrite.note:
        lines.append(f"  note: {turn.rewrite.note}")
        if turn.rewrite.rejected:
            lines.append(f"  the model had said: {turn.rewrite.rejected}")
    lines.append(f"answer:  {turn.answer.text}")
    if turn.sources:
        top = turn.sources[0]
        lines.append(f"source:  {top.title or top.id} (BM25 {top.score:.2f})")
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    defaults, retrieval = from_env(AssistantConfig()), from_env(RetrieverConfig())
    parser = argparse.ArgumentParser(prog="python -m assistant.chat", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per turn")
    parser.add_argument("--index", default=retrieval.index_dir, help="Lucene index folder (env CONVQA_INDEX_DIR)")
    parser.add_argument("-k", type=int, default=retrieval.k, help="passages retrieved per turn (env CONVQA_K)")
    parser.add_argument(
        "--rewriter", default=defaults.rewriter, help="trained | prompted | original | model path (env CONVQA_REWRITER)"
    )
    parser.add_argument("--reader", default=defaults.reader, choices=["sentence", "generative"], help="answer reader")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        index = ensure_index(args.index)
        assistant = Assistant.from_config(
            AssistantConfig(rewriter=args.rewriter, reader=args.reader),
            RetrieverConfig(index_dir=str(index), k=args.k),
            from_env(ReaderConfig()),
        )
    except AssistantError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    conversation = Conversation()
    for line in sys.stdin:
        question = line.rstrip("\n")
        try:
            turn = assistant.ask(question, conversation)
        except InvalidInputError as error:
            out = json.dumps({"question": question, "error": str(error)}) + "\n" if args.json else f"error: {error}\n"
            sys.stdout.write(out)
            sys.stdout.flush()
            continue
        conversation.add(turn)
        sys.stdout.write(json.dumps(turn_to_json(turn), ensure_ascii=False) + "\n" if args.json else _plain(turn))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
