"""Rewrite a file of conversational questions in batches.

    python -m rewriting.rewrite --input IN.jsonl --output OUT.jsonl [--model NAME_OR_PATH] [--batch-size N] [--latency]
        [--candidates BEAMS] [--second-look BEAMS] [--ray [ADDRESS] [--actors N]]

Input lines: ``{"id", "question", "history"}`` with ``history`` the earlier
turns' texts, question and answer alternating, oldest first (QReCC's
``Context``). Output lines: ``{"id", "rewrite"}``, in input order, plus
``"note"`` when the rewriter kept the original question, and ``"rejected"``, the model's output it did not use. The output is
written to a temporary file and renamed when complete, so an interrupted run
never leaves a truncated file behind; meanwhile the rewrites finished so far
are kept in ``OUTPUT.partial`` (flushed a chunk at a time, with ``--ray``
too), and the same command run again (same input file and settings, with or
without ``--ray``) goes on from them. ``--model`` takes what
:func:`rewriting.load_rewriter` takes (default: the trained rewriter).
It prints the throughput; with ``--latency`` it rewrites one question at a
time after a warm-up call and prints the median and p95 latency of the
questions that have a history (first turns skip the model).
``--candidates BEAMS`` adds a beam search to each rewrite and writes the
consensus of the greedy rewrite and the beams' (``RewriterConfig.candidates``),
with the other distinct candidates as ``"alternatives"`` (a list), which
``python -m eval.retrieval --rewrites`` adds to the search as the app does.
``--second-look BEAMS`` sets how many beams are searched for a follow-up
whose greedy rewrite left it as asked (``RewriterConfig.second_look``; 0: never);
``--second-look-below P`` searches a changed rewrite too when one of its tokens
had a probability under P (``RewriterConfig.second_look_below``; 0: never).
``--ray`` runs the rewrites on a Ray cluster through a pool of ``--actors``
rewriter copies (:mod:`rewriting._ray`; needs ``pip install 'ray[data]'``)
and writes the same file; without it, ray is never imported.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

from assistant.kernel import (
    CommandParser,
    ConfigError,
    DataFormatError,
    ONE_JSON_DOCUMENT,
    PartialOutput,
    counted,
    current_umask,
    json_lines,
    output_path,
    percentile,
    run_cli,
)

from ._ray import add_ray_arguments, check_ray_arguments  # the flags only: ray itself is imported by a --ray run

__all__ = ["read_requests", "rewrite_file", "resume_rewrites", "write_rewrites", "configure", "main"]


def _is_text(value: str) -> bool:
    """False for a lone surrogate (a JSON escape such as "\\ud800"): no model
    or output file can take it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_requests(path: str | os.PathLike) -> list[dict]:
    """Parse and check the input file; errors name the file and the line."""
    requests, seen = [], set()
    for number, (where, record) in enumerate(json_lines(path), 1):
        if not isinstance(record, dict):
            # A .json list on one line parses as line 1: said what it is.
            spread = f"; {ONE_JSON_DOCUMENT}" if number == 1 and isinstance(record, list) else ""
            raise DataFormatError(f'{where}: expected an object {{"id", "question", "history"}}{spread}')
        if "id" not in record and {"Question", "Context"} <= record.keys():
            # QReCC's own record was told "'id' must be a string or an integer".
            raise DataFormatError(
                f'{where}: this is a QReCC record; each line here is {{"id", "question", "history"}}: "id" one of '
                'your own (e.g. Conversation_no and Turn_no, "1_2"), "question" its Question, "history" its Context')
        if not isinstance(record.get("id"), (str, int)) or isinstance(record.get("id"), bool):
            raise DataFormatError(f"{where}: 'id' must be a string or an integer")
        if not isinstance(record.get("question"), str) or not record["question"].strip():
            raise DataFormatError(f"{where}: 'question' must be a non-empty string")
        history = record.get("history", [])
        if not isinstance(history, list) or not all(isinstance(t, str) for t in history):
            raise DataFormatError(f"{where}: 'history' must be a list of strings (question and answer alternating)")
        if not all(_is_text(t) for t in [record["question"], *history]):
            raise DataFormatError(f"{where}: a text holds a lone surrogate (e.g. \\ud800), which is not valid Unicode text")
        if record["id"] in seen:
            raise DataFormatError(f"{where}: id {record['id']!r} occurs twice")
        seen.add(record["id"])
        requests.append({"id": record["id"], "question": record["question"], "history": history})
    if not requests:
        # It wrote an empty output and "wrote 0 rewrites", exit status 0: a wrong or unfinished input went unnoticed.
        raise DataFormatError(f'{path} holds no questions; give a JSONL of {{"id", "question", "history"}} lines')
    return requests


def rewrite_file(
    rewriter, requests: Sequence[dict], output: str | os.PathLike, batch_size: int = 8, progress: bool = True,
    latencies: list | None = None, resume_key: dict | None = None,
) -> int:
    """Rewrite ``requests`` and write the output file atomically; returns the count.

    Rewriters without ``rewrite_batch`` (e.g. the original-question
    baseline) are called one question at a time. When ``latencies`` is a
    list, every question is rewritten alone and the seconds each call took
    (questions with a history only) are appended to it.

    ``resume_key`` (what made the rewrites: the input's hash, the settings)
    keeps the rewrites finished so far in ``OUTPUT.partial``, a chunk at a
    time, and a later run with the same key goes on from them: an
    interrupted run of thousands of turns (Ctrl-C, SIGTERM, a crash) lost
    everything, as the output is written only when complete.
    """
    if resume_key is None:
        return write_rewrites(requests, lambda: _rewrite_all(rewriter, requests, batch_size, progress, latencies), output)
    return resume_rewrites(requests, output, resume_key,
                           lambda todo, keep: _rewrite_all(rewriter, todo, batch_size, progress, None, chunk_done=keep))


def resume_rewrites(requests: Sequence[dict], output: str | os.PathLike, resume_key: dict,
                    run: Callable[[Sequence[dict], Callable[[Sequence[dict], list], None]], object]) -> int:
    """Rewrite ``requests`` with ``run`` into ``output``, keeping the rewrites
    finished so far in ``OUTPUT.partial`` and going on from those a run with
    the same ``resume_key`` left there; returns the count.

    ``run(todo, keep)`` rewrites the requests not done yet, calling
    ``keep(chunk, rewrites)`` as each chunk is finished (in any order): the
    single-process loop and the Ray pool both. The output is written,
    atomically, only when every request has its rewrite.
    """
    output_path(output)  # an unwritable output fails before the work
    saved = PartialOutput(output, resume_key)
    done = saved.done()
    todo = [r for r in requests if r["id"] not in done]
    if done:
        print(f"resuming: {len(requests) - len(todo)} of {len(requests)} rewrites were made by an interrupted run "
              f"({saved.path.name})", file=sys.stderr)

    def keep(chunk: Sequence[dict], results: list) -> None:
        lines = [_line(r["id"], x) for r, x in zip(chunk, results, strict=True)]
        saved.add(lines)
        done.update((line["id"], line) for line in lines)

    saved.start(done.values())
    try:
        if todo:
            run(todo, keep)
    finally:
        saved.close()
    count = _write_lines([done[r["id"]] for r in requests], output)
    saved.path.unlink(missing_ok=True)
    return count


def _rewrite_all(rewriter, requests: Sequence[dict], batch_size: int, progress: bool, latencies: list | None,
                 chunk_done: Callable[[Sequence[dict], list], None] | None = None) -> list:
    from tqdm import tqdm

    results = []
    batch = None if latencies is not None else getattr(rewriter, "rewrite_batch", None)
    with tqdm(total=len(requests), desc="rewriting", unit="q", file=sys.stderr, disable=not progress) as bar:
        # Chunks of several batches: the rewriter groups similar lengths within
        # a chunk (less padding) while the bar still moves often.
        step = batch_size * 4
        for start in range(0, len(requests), step):
            chunk = requests[start : start + step]
            items = [(r["question"], r["history"]) for r in chunk]
            if batch:
                made = batch(items)
            else:
                made = []
                for question, history in items:
                    began = time.perf_counter()
                    made.append(rewriter.rewrite(question, history))
                    if latencies is not None and history:
                        latencies.append(time.perf_counter() - began)
            results += made
            if chunk_done is not None:
                chunk_done(chunk, made)
            bar.update(len(chunk))
    return results


def _line(request_id: str, result) -> dict:
    line = {"id": request_id, "rewrite": result.text}
    if result.note:
        line["note"] = result.note
    if result.rejected:
        line["rejected"] = result.rejected
    if result.alternatives:
        line["alternatives"] = list(result.alternatives)
    return line


def write_rewrites(requests: Sequence[dict], produce: Callable[[], list], output: str | os.PathLike) -> int:
    """Write ``produce()``'s rewrites (one per request, in order) to ``output``
    atomically; returns the count. ``output`` is checked before ``produce``
    runs, so an unwritable path fails before the work."""
    output_path(output)
    results = produce()
    return _write_lines([_line(r["id"], x) for r, x in zip(requests, results, strict=True)], output)


def _write_lines(lines: Sequence[dict], output: str | os.PathLike) -> int:
    """Write ``lines`` to ``output`` through a temporary file renamed when
    complete; returns the count."""
    output = Path(output)
    handle, tmp = _temporary_beside(output)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            handle = None
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        try:
            os.replace(tmp, output)
        except OSError as error:
            raise ConfigError(f"cannot write the output {output}: {error.strerror or error}; give a file path in a writable folder") from error
    finally:
        if handle is not None:
            os.close(handle)
        Path(tmp).unlink(missing_ok=True)
    return len(lines)


def _temporary_beside(output: Path) -> tuple[int, str]:
    """An open temporary file in ``output``'s folder (made if missing), for an
    atomic rename once complete; :class:`ConfigError` when it cannot be written."""
    if output.is_dir():
        raise ConfigError(f"cannot write the output {output}: it is a folder; give a file path")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=output.name + ".", suffix=".tmp", dir=output.parent)
    except OSError as error:
        raise ConfigError(f"cannot write the output {output}: {error.strerror or error}; give a file path in a writable folder") from error
    os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp's 0600 would otherwise survive the rename
    return handle, tmp


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; a user's error ends in one line and exit status 2,
    Ctrl-C or SIGTERM in one line saying what was kept, and 130 or 143."""
    return run_cli(_main, argv, interrupted="nothing was written")


def configure(rewriter, batch_size: int, draft_tokens: int | None, max_input_tokens: int | None = None, candidates: int | None = None,
              second_look: int | None = None, second_look_below: float | None = None):
    """``rewriter`` with the command line's batch size, draft length, prompt
    budget, N-best beams and second-look beams and threshold, where it has
    them (None: its own)."""
    changes = {"batch_size": batch_size, "draft_tokens": draft_tokens, "max_input_tokens": max_input_tokens, "candidates": candidates,
               "second_look": second_look, "second_look_below": second_look_below}
    config = getattr(rewriter, "config", None)
    if config is not None:
        known = {name: value for name, value in changes.items() if value is not None and hasattr(config, name)}
        rewriter.config = dataclasses.replace(config, **known)
    return rewriter


def _main(argv: Sequence[str] | None) -> int:
    parser = CommandParser(prog="python -m rewriting.rewrite", description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", required=True, help='JSONL: {"id", "question", "history"} per line')
    parser.add_argument("--output", required=True, help='JSONL: {"id", "rewrite"} per line')
    parser.add_argument("--model", default="trained", help="trained (default) | prompted | original | adapter dir | model path or name")
    parser.add_argument("--batch-size", type=int, default=8, help="questions per model call (default 8)")
    parser.add_argument("--latency", action="store_true", help="one question at a time after a warm-up; print median/p95 latency")
    parser.add_argument("--dtype", choices=("auto", "float32", "bfloat16"), default="auto",
                        help="model weights' dtype (auto: bfloat16 where the CPU has native bf16, else float32)")
    parser.add_argument("--no-packing", action="store_true",
                        help="keep plain bfloat16 weights instead of laying them out once for oneDNN (to compare; same output)")
    parser.add_argument("--no-fused", action="store_true",
                        help="one question at a time through transformers' forward instead of the fused one (to compare; same output)")
    parser.add_argument("--int8", action="store_true",
                        help="one question's passes with int8 copies of the weights (faster on one core; rewrites may differ)")
    parser.add_argument("--draft-tokens", type=int, help="prompt-lookup draft length for one question at a time (0: off; default 8)")
    parser.add_argument("--max-input-tokens", type=int,
                        help="a trained rewriter's prompt budget in tokens (default: the rewriter's own)")
    parser.add_argument("--candidates", type=int, metavar="BEAMS",
                        help="beams of an N-best search after the greedy rewrite; the rewrite is their consensus (0: off, the default)")
    parser.add_argument("--second-look", type=int, metavar="BEAMS",
                        help="beams searched again for a follow-up the greedy rewrite left as asked (0: never; default: the rewriter's)")
    parser.add_argument("--second-look-below", type=float, metavar="P",
                        help="search a changed rewrite again too when one of its tokens had a probability under P "
                        "(0: never; default: the rewriter's)")
    add_ray_arguments(parser)
    args = parser.parse_args(argv)
    check_ray_arguments(args)
    if args.batch_size < 1:
        parser.exit(2, "error: --batch-size must be at least 1\n")
    if args.draft_tokens is not None and args.draft_tokens < 0:
        parser.exit(2, "error: --draft-tokens must be 0 or more\n")
    if args.candidates is not None and args.candidates < 0:
        parser.exit(2, "error: --candidates must be 0 or more\n")
    if args.second_look is not None and args.second_look < 0:
        parser.exit(2, "error: --second-look must be 0 or more\n")
    if args.second_look_below is not None and not 0 <= args.second_look_below <= 1:
        parser.exit(2, "error: --second-look-below is a probability, from 0 to 1\n")
    if args.max_input_tokens is not None and args.max_input_tokens < 32:
        parser.exit(2, "error: --max-input-tokens must be at least 32 (the question and the format need them)\n")
    if args.ray is not None and args.latency:
        parser.exit(2, "error: --ray takes no --latency (it times one question at a time in this process)\n")

    requests = read_requests(args.input)
    output_path(args.output, "--output", inputs=[args.input])  # fail before the model loads, not after the work
    began = time.perf_counter()  # with --ray, the actors' model loads count too
    settings = {"model": args.model, "dtype": args.dtype, "batch_size": args.batch_size, "draft_tokens": args.draft_tokens,
                "max_input_tokens": args.max_input_tokens, "candidates": args.candidates, "pack_weights": not args.no_packing,
                "fused_forward": not args.no_fused, "int8_weights": args.int8, "second_look": args.second_look,
                "second_look_below": args.second_look_below}
    # A latency run times each call afresh; any other run (on Ray or not: the
    # same rewrites) can go on from an interrupted one with the same input and settings.
    key = None if args.latency else {"input": hashlib.sha256(Path(args.input).read_bytes()).hexdigest(), **settings}
    if args.ray is not None:
        from ._ray import rewrite_with_ray  # ray is imported only here

        try:
            count = resume_rewrites(requests, args.output, key, lambda todo, keep: rewrite_with_ray(
                todo, settings, args.ray or None, args.actors, chunk_done=keep))
        except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM (main's run_cli takes both): said with what was kept
            raise type(stop)(f"the Ray run stopped; {args.output} is as it was; the same command goes on from "
                             f"{args.output}.partial") from None
        latencies = None
    else:
        from rewriting import load_rewriter

        rewriter = load_rewriter(args.model, dtype=args.dtype, pack_weights=not args.no_packing, fused_forward=not args.no_fused,
                                 int8_weights=args.int8)
        rewriter = configure(rewriter, args.batch_size, args.draft_tokens, args.max_input_tokens, args.candidates, args.second_look,
                             args.second_look_below)
        latencies = None
        if args.latency:
            latencies = []
            warm = next((r for r in requests if r["history"]), None)
            if warm:  # first call pays one-off costs (allocations, kernel selection)
                rewriter.rewrite(warm["question"], warm["history"])
        began = time.perf_counter()  # the model's load and warm-up are not the throughput's
        try:
            count = rewrite_file(rewriter, requests, args.output, args.batch_size, latencies=latencies, resume_key=key)
        except KeyboardInterrupt as stop:
            kept = f"; the same command goes on from {args.output}.partial" if key else ""
            raise type(stop)(f"{args.output} is as it was{kept}") from None
    seconds = time.perf_counter() - began
    print(f"wrote {counted(count, 'rewrite')} to {args.output} in {seconds:.1f} s ({count / seconds:.2f} rewrites/s)")
    if latencies:
        ms = sorted(1000 * t for t in latencies)
        p95 = percentile(ms, 0.95)
        print(f"latency over {len(ms)} questions with a history: median {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
