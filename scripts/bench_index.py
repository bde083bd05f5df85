"""Index one collection with ours and with pyserini's CLI; compare cost and results.

    python scripts/gen_collection.py --out /tmp/coll --passages 1000000
    python scripts/bench_index.py --input /tmp/coll --threads 4 [--work /tmp/bench] [--json]

Runs, one after the other on the same JSONL folder:

* ours: ``python -m assistant.index --input DIR --index OUT --threads N``
  (streaming, checks duplicate ids and checksums after the build);
* pyserini: ``python -m pyserini.index.lucene -collection JsonCollection
  -input DIR -index OUT -threads N -storeRaw``.

For each: wall time, and peak RSS of the process tree (psutil polling every
0.1 s of the child and its descendants, summed; the JVM runs inside each
Python process). Then the time our checksum verification takes on our index
(``verify_index``) and whether both indexes return the same top-10 ids for a
fixed set of queries (each query's ranks compared as score groups, since
ties may come in either order with several threads). Prints a Markdown
table, or one JSON object with ``--json``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assistant.kernel import CommandParser, InvalidInputError, check_at_least, output_path, run_cli  # noqa: E402
from assistant.retrieval import BM25Retriever, import_pyserini, read_collection, verify_index  # noqa: E402

_QUERIES = 50
_K = 10


def run_measured(command: list[str], env: dict) -> dict:
    """Run ``command``; its wall time, peak summed RSS of its process tree, status."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    root = psutil.Process(process.pid)
    peak = 0
    while process.poll() is None:
        try:
            tree = [root] + root.children(recursive=True)
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.1)
    out, err = process.communicate()
    return {
        "command": " ".join(command),
        "wall_s": round(time.perf_counter() - start, 2),
        "peak_rss_mb": round(peak / 2**20, 1),
        "returncode": process.returncode,
        "stderr_tail": err.decode(errors="replace")[-600:] if process.returncode else "",
        "stdout_tail": out.decode(errors="replace")[-300:],
    }


def dir_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def sample_queries(collection: Path, count: int, seed: int = 0) -> list[str]:
    """``count`` queries: 2-4 words taken from passages spread over the collection."""
    rng = random.Random(seed)
    queries: list[str] = []
    for number, passage in enumerate(read_collection(collection)):
        if number % 997 == 0:
            words = passage["contents"].split()
            size = rng.randint(2, 4)
            start = rng.randrange(0, max(1, len(words) - size))
            queries.append(" ".join(words[start:start + size]).strip(".,"))
            if len(queries) == count:
                break
    return queries


def same_ranking(a: list[tuple[str, float]], b: list[tuple[str, float]], tolerance: float = 1e-4) -> bool:
    """Same scores at every rank, and the same ids within each group of tied
    scores (the last group may be cut at k, so there only scores count)."""
    if len(a) != len(b) or any(abs(x[1] - y[1]) > tolerance for x, y in zip(a, b)):
        return False
    groups_a, groups_b = _groups(a, tolerance), _groups(b, tolerance)
    return all(set(x) == set(y) for x, y in zip(groups_a[:-1], groups_b[:-1]))


def _groups(hits: list[tuple[str, float]], tolerance: float) -> list[list[str]]:
    groups: list[list[str]] = []
    last = None
    for doc_id, score in hits:
        if last is None or abs(score - last) > tolerance:
            groups.append([])
        groups[-1].append(doc_id)
        last = score
    return groups


def compare(ours: Path, theirs: Path, queries: list[str]) -> dict:
    lucene = import_pyserini()
    searcher = lucene.LuceneSearcher(str(theirs))
    ours_retriever = BM25Retriever.from_index(ours, verify=False)
    # Same BM25 parameters on both sides: ours as configured by default.
    searcher.set_bm25(*_bm25_params())
    mismatches = []
    for query in queries:
        a = [(p.id, p.score) for p in ours_retriever.search(query, _K)]
        b = [(h.docid, h.score) for h in searcher.search(query, k=_K)]
        if not same_ranking(a, b):
            mismatches.append({"query": query, "ours": [x[0] for x in a], "pyserini": [x[0] for x in b]})
    return {"queries": len(queries), "same_top10": len(queries) - len(mismatches), "mismatches": mismatches[:3]}


def _bm25_params() -> tuple[float, float]:
    from assistant.kernel import RetrieverConfig

    config = RetrieverConfig()
    return config.bm25_k1, config.bm25_b


def main(argv: list[str] | None = None) -> int:
    """The benchmark; a bad flag or a missing input is one ``error:`` line, exit 2."""
    return run_cli(_main, argv)


def _main(argv: list[str] | None) -> int:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, type=Path, help="a JSONL folder (scripts/gen_collection.py)")
    parser.add_argument("--threads", type=int, default=2, help="indexing threads of both indexers (default 2)")
    parser.add_argument("--work", type=Path, help="folder for both indexes (default: a temporary one, removed)")
    parser.add_argument("--keep", action="store_true", help="keep the indexes")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the Markdown table")
    args = parser.parse_args(argv)
    # Up front: pyserini's CLI exits 0 on a missing or empty folder, so the
    # table reported it as a success with 0 documents.
    check_at_least(threads=(args.threads, 1))
    if not args.input.is_dir() or not any(args.input.glob("*.jsonl")):
        raise InvalidInputError(f"--input {args.input} is not a folder of .jsonl files; "
                                "make one with scripts/gen_collection.py")
    # Both indexers run from the repository root (cwd=ROOT, where
    # `-m assistant.index` is found): a relative path given here is the
    # caller's, so it is made absolute first.
    args.input = args.input.absolute()
    args.work = args.work.absolute() if args.work is not None else None
    if args.work is not None:  # a file there ended in a FileExistsError traceback
        output_path(args.work, "--work", folder=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_index."))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # pyserini's CLI starts the JVM itself: give it the runtime ours found.
    import_pyserini("pyserini.pyclass")
    env.setdefault("JAVA_HOME", os.environ["JAVA_HOME"])
    env.setdefault("OPENAI_API_KEY", "unused")
    ours, theirs = work / "ours", work / "pyserini"
    for path in (ours, theirs):
        shutil.rmtree(path, ignore_errors=True)
    try:
        result = {"input": str(args.input), "threads": args.threads}
        result["ours"] = run_measured(
            [sys.executable, "-m", "assistant.index", "--input", str(args.input), "--index", str(ours),
             "--threads", str(args.threads), "--json"], env)
        result["pyserini"] = run_measured(
            [sys.executable, "-m", "pyserini.index.lucene", "-collection", "JsonCollection",
             "-input", str(args.input), "-index", str(theirs), "-threads", str(args.threads), "-storeRaw"], env)
        if result["ours"]["returncode"] == 0 and result["pyserini"]["returncode"] == 0:
            result["ours"]["index_mb"], result["pyserini"]["index_mb"] = dir_mb(ours), dir_mb(theirs)
            # Twice: the first pays class loading and JIT warm-up, as a
            # process's first open does; the second is the steady cost.
            result["verify_s"] = []
            for _ in range(2):
                start = time.perf_counter()
                verify_index(ours)
                result["verify_s"].append(round(time.perf_counter() - start, 3))
            result["comparison"] = compare(ours, theirs, sample_queries(args.input, _QUERIES))
    finally:
        if not args.keep:
            shutil.rmtree(work if args.work is None else ours, ignore_errors=True)
            if args.work is not None:
                shutil.rmtree(theirs, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"| indexer (threads {args.threads}) | wall s | peak RSS MB | index MB | exit |")
        print("|---|---|---|---|---|")
        for name in ("ours", "pyserini"):
            r = result[name]
            print(f"| {name} | {r['wall_s']} | {r['peak_rss_mb']} | {r.get('index_mb', '-')} | {r['returncode']} |")
            if r["returncode"]:
                print(f"\n{name} failed: {r['stderr_tail']}\n")
        if "comparison" in result:
            c = result["comparison"]
            print(f"\nverify_index on ours (first, second call): {result['verify_s']} s")
            print(f"same top-{_K}: {c['same_top10']}/{c['queries']} queries")
            for m in c["mismatches"]:
                print(f"  differs: {m}")
    ok = "comparison" in result and result["comparison"]["same_top10"] == result["comparison"]["queries"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
