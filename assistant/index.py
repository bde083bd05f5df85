"""Build a Lucene BM25 index: ``python -m assistant.index --input PATH --index DIR``.

The build streams the collection (memory stays bounded whatever its size),
indexes on ``--threads`` threads, shows progress with an ETA when
the passage count can be read cheaply (JSONL line counts) and the rate
otherwise, checks ids are unique and every file's checksum, and writes to a
temporary folder next to ``DIR`` that is renamed into place when complete,
so an interrupted build never leaves a half index that a later start would
take for a good one. SIGTERM (``timeout``, ``docker stop``, a scheduler)
stops a build as Ctrl-C does, so its staging folder is removed too; one
that a killed build leaves is removed by the next build of the same index.
"""

from __future__ import annotations

import json
import sys

from assistant.kernel import CommandParser, check_at_least, counted, output_path, run_cli
from assistant.retrieval import DOCUMENT_SUFFIXES, index_collection, skipped_files

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """The command line; an AssistantError ends it with one line and exit 2.
    SIGTERM raises KeyboardInterrupt, as Ctrl-C does, so that the build's
    cleanup runs (the default action ended the process at once, leaving
    its staging folder, a partial index as large as the collection's)."""
    return run_cli(_build, argv, interrupted="the index was not written (a previous one there is unchanged).")


def _build(argv: list[str] | None) -> int:
    parser = CommandParser(
        prog="python -m assistant.index",
        description="Build a BM25 index from JSONL (id, contents, title, url), a folder of .jsonl "
        "files (pyserini's JsonCollection, the QReCC paragraph collection), a folder of "
        ".txt/.md/.html/.pdf files, or the default Wikipedia collection.",
    )
    parser.add_argument("--input", help="collection path (default: the vital-article summaries)")
    parser.add_argument("--index", required=True, help="output index folder (replaced if it exists)")
    parser.add_argument(
        "--threads", type=int, default=1,
        help="indexing threads (default 1: documents keep collection order, so rebuilds are "
        "identical; more are faster on spare cores but tied hits may reorder; with 2 or more, "
        "JSONL lines that need no change are read by Anserini itself)",
    )
    parser.add_argument("--json", action="store_true", help='print {"index", "passages"} as JSON')
    args = parser.parse_args(argv)
    check_at_least(threads=(args.threads, 1))  # before the folder's skipped files are listed
    output_path(args.index, "--index", folder=True)  # before the collection is read
    _note_skipped(args.input)
    count = index_collection(args.input, args.index, threads=args.threads)
    if args.json:
        print(json.dumps({"index": args.index, "passages": count}))
    else:
        print(f"Indexed {counted(count, 'passage')} into {args.index}")
    return 0


def _note_skipped(path: str | None, shown: int = 5) -> None:
    # A folder's .docx (or any other file) was left out without a word: the
    # user read "Indexed 1 passage" and could not tell why their report was missing.
    skipped = skipped_files(path)
    if skipped:
        names = ", ".join(skipped[:shown]) + (", …" if len(skipped) > shown else "")
        kinds = "/".join((*DOCUMENT_SUFFIXES, ".jsonl", ".pdf"))
        verb = "is" if len(skipped) == 1 else "are"
        print(f"note: skipped {counted(len(skipped), 'file')} that {verb} not {kinds} ({names})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
