"""Terminal chat: ``python -m assistant.chat [--json]``, one question per line on stdin.

Each line is a turn of one conversation. Plain output shows the rewrite, the
answer and the top source; ``--json`` prints one object per turn::

    {"question", "rewrite", "answer", "sources": [{"id", "title", "score", "text"}],
     "timings_ms": {"rewrite", "retrieve", "read", "total"}}

(a source of the default collection also has its ``"description"``, where
an answer such as a year of birth may come from: plain output then says so)

and ``"notice"`` when the question does not look like English (the app's
notice: the collection and the models are English only).

A turn that cannot be answered (empty line, too long ...) prints
``{"question", "error"}`` (or the message) and the conversation goes on.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import Iterator

from .kernel import AssistantError, CommandParser, Conversation, Turn, echoed_question, run_cli
from .pipeline import build_assistant, turn_to_json
from .readers import READERS
from .retrieval import use_serving_java
from .session import language_notice

__all__ = ["main"]


def _plain(turn: Turn, rescored: bool = False, notice: str = "") -> str:
    """A turn as plain text. ``rescored``: the sources' scores are the
    rescorer's mix of min-max scaled BM25 and the MiniLM cosine
    (:class:`~assistant.retrieval.DenseRescorer`), not BM25's own, and are
    labelled so. ``notice``: :func:`~assistant.session.language_notice`'s."""
    lines = [f"rewrite: {turn.rewrite.text}"]
    if turn.rewrite.note:
        lines.append(f"  note: {turn.rewrite.note}")
        if turn.rewrite.rejected:
            lines.append(f"  the model had said: {turn.rewrite.rejected}")
    for text in turn.rewrite.alternatives:
        lines.append(f"  also searched with: {text}")
    lines.append(f"answer:  {turn.answer.text}")
    used = next((p for p in turn.sources if turn.answer.found and p.id == turn.answer.source_id), None)
    if used is not None and used.description and turn.answer.evidence == used.description:
        # A year read from a description is in no source's text: say where it is.
        lines.append(f"  from the description of {used.title or used.id}: {used.description}")
    if notice:
        lines.append(f"  note: {notice}")
    if turn.sources:
        top = turn.sources[0]
        score = f"score {top.score:.2f}, BM25 mixed with MiniLM" if rescored else f"BM25 {top.score:.2f}"
        lines.append(f"source:  {top.title or top.id} ({score})")
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    # Flags default to None, "not given": the CONVQA_* settings (and then the
    # configs' defaults) apply, as in the app.
    parser = CommandParser(prog="python -m assistant.chat", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per turn")
    parser.add_argument("--index", dest="index_dir", help="Lucene index folder (env CONVQA_INDEX_DIR)")
    parser.add_argument("-k", type=int, help="passages retrieved per turn (env CONVQA_K; 10)")
    parser.add_argument("--rewriter", help="trained | prompted | original | model path (env CONVQA_REWRITER)")
    parser.add_argument("--reader", choices=READERS, help="answer reader (env CONVQA_READER; sentence)")
    return parser


def _lines(stream) -> Iterator[str]:
    """Input lines; bytes that are not UTF-8 become lone surrogates, which the
    pipeline refuses with a message, instead of ending the chat."""
    reader = io.TextIOWrapper(stream.buffer, encoding="utf-8", errors="surrogateescape") if hasattr(stream, "buffer") else stream
    for line in reader:
        yield line.rstrip("\n")


def _prompted(lines: Iterator[str], typed: bool) -> Iterator[str]:
    """``lines``, with a "> " prompt on stderr before each when ``typed`` (a terminal)."""
    while True:
        if typed:
            sys.stderr.write("> ")
            sys.stderr.flush()
        line = next(lines, None)
        if line is None:
            if typed:
                sys.stderr.write("\n")  # the shell's prompt on a line of its own
            return
        yield line


def _say(args, question: str, message: str) -> None:
    # The refused question is echoed as the app's API echoes it: cut short,
    # its undecodable bytes shown as \x.., so the JSON line stays valid UTF-8.
    sys.stdout.write(json.dumps({"question": echoed_question(question), "error": message}) + "\n" if args.json else f"error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    """The chat; a bad setting, index or model ends it with one line, exit 2."""
    return run_cli(_chat, argv)


def _chat(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    options = {"index_dir": args.index_dir, "k": args.k, "rewriter": args.rewriter, "reader": args.reader}
    use_serving_java()  # a chat searches for as long as it runs
    assistant = build_assistant(**options)
    # The chat builds its rescorer before the first turn (no background
    # encoding), so every turn's scores are mixed when there is one.
    rescored = assistant.rescorer is not None
    conversation = Conversation()
    # Typed at a terminal, the chat said nothing once loaded: no sign that it
    # waits for a question, nor how to end it. On stderr, so stdout stays the turns.
    typed = sys.stdin.isatty()
    if typed:
        sys.stderr.write("Ready: type a question and press Enter; Ctrl-D (Ctrl-Z, Enter on Windows) ends the chat.\n")
    for question in _prompted(_lines(sys.stdin), typed):
        try:
            turn = assistant.ask(question, conversation)
        except AssistantError as error:
            # A bad question or a damaged index: say so, and the conversation goes on.
            _say(args, question, str(error))
        else:
            conversation.add(turn)
            # The app tells a question that is not English why its answer
            # may be poor; the terminal's "could not find" said nothing.
            notice = language_notice(turn.question)
            found = dict(turn_to_json(turn), **({"notice": notice} if notice else {}))
            sys.stdout.write(json.dumps(found, ensure_ascii=False) + "\n" if args.json else _plain(turn, rescored, notice))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
