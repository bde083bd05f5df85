"""Build a Lucene BM25 index: ``python -m assistant.index --input PATH --index DIR``.

The index is written to a temporary folder next to ``DIR`` and renamed into
place when complete, so an interrupted build never leaves a half index that
a later start would take for a good one.
"""

from __future__ import annotations

import argparse
import sys

from assistant.kernel import AssistantError
from assistant.retrieval import build_index, read_collection

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m assistant.index",
        description="Build a BM25 index from JSONL (id, contents, title, url), a folder of "
        ".txt/.md/.html files, or the default Wikipedia collection.",
    )
    parser.add_argument("--input", help="collection path (default: the vital-article summaries)")
    parser.add_argument("--index", required=True, help="output index folder (replaced if it exists)")
    args = parser.parse_args(argv)
    try:
        passages = list(read_collection(args.input))
        count = build_index(passages, args.index, total=len(passages))
    except AssistantError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"Indexed {count} passages into {args.index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
