"""``--ray`` of ``eval.rewrites score`` and ``eval.qa``: ray is imported only
with --ray, and (where ray is installed) a local Ray instance prints what the
single-process run prints; a worker without the index names its node."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ADA = "Who was Ada Lovelace?"
# A tiny QReCC file (official layout) whose questions the tiny index (conftest) can answer.
QRECC = [
    {"Context": [], "Question": ADA, "Rewrite": ADA, "Answer": "An English mathematician and writer.",
     "Conversation_no": 1, "Turn_no": 1},
    {"Context": [ADA, "An English mathematician and writer."], "Question": "Who was her father?",
     "Rewrite": "Who was Ada Lovelace's father?", "Answer": "the poet Lord Byron", "Conversation_no": 1, "Turn_no": 2},
    {"Context": [ADA, "An English mathematician and writer.", "Who was her father?", "the poet Lord Byron"],
     "Question": "What did he write?", "Rewrite": "What did Lord Byron write?", "Answer": "poems",
     "Conversation_no": 1, "Turn_no": 3},
    {"Context": [], "Question": "What is the capital of France?", "Rewrite": "What is the capital of France?",
     "Answer": "Paris", "Conversation_no": 2, "Turn_no": 1},
    {"Context": ["What is the capital of France?", "Paris"], "Question": "What stands there?",
     "Rewrite": "What stands in Paris?", "Answer": "The Eiffel Tower", "Conversation_no": 2, "Turn_no": 2},
]
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="missing prerequisite: ray (pip install -r requirements-ray.txt)")


@pytest.fixture
def qrecc_file(tmp_path):
    path = tmp_path / "qrecc.json"
    path.write_text(json.dumps(QRECC))
    return path


def many_turns(path: Path, copies: int) -> Path:
    """QRECC ``copies`` times over, as conversations of their own: enough
    turns for several chunks (eval.qa: 16 turns, score: 64), so both actors
    work and the rows come back out of order."""
    records = [{**r, "Conversation_no": r["Conversation_no"] + 10 * copy} for copy in range(copies) for r in QRECC]
    path.write_text(json.dumps(records))
    return path


def test_without_ray_flag_no_ray_module_is_imported(qrecc_file, tiny_index, tmp_path):
    # A fresh interpreter runs both commands, then lists the ray modules it loaded.
    script = textwrap.dedent(f"""
        import sys
        from eval import qa, rewrites
        assert rewrites.main(["score", "--data", {str(qrecc_file)!r}, "--rewriter", "original",
                              "--index", {str(tiny_index)!r}, "--metrics", "rouge1_recall,r_at_10", "--json"]) == 0
        assert qa.main(["--data", {str(qrecc_file)!r}, "--setting", "human-rewrite", "--index", {str(tiny_index)!r},
                        "--json"]) == 0
        print(sorted(m for m in sys.modules if m == "ray" or m.startswith("ray.")), file=sys.stderr)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert out.stderr.rstrip().endswith("[]"), out.stderr[-500:]


def test_with_ray_flag_a_missing_ray_is_one_line(qrecc_file, tmp_path):
    fake = tmp_path / "fake"
    (fake / "ray").mkdir(parents=True)
    (fake / "ray" / "__init__.py").write_text('raise ImportError("the stand-in ray was imported")\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), str(ROOT)])}
    for argv in (["eval.rewrites", "score", "--data", str(qrecc_file), "--rewriter", "original", "--metrics", "bleu", "--ray"],
                 ["eval.qa", "--data", str(qrecc_file), "--setting", "human-rewrite", "--index", "x", "--ray"]):
        out = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 2
        assert out.stderr.startswith("error: --ray needs the ray package (the stand-in ray was imported)"), out.stderr
        assert out.stderr.count("\n") == 1


@needs_ray
def test_an_unreachable_ray_address_is_one_line(qrecc_file, tiny_index, tmp_path, monkeypatch, capsys):
    # Before the local-instance tests: the check comes before ray.init. Ray
    # itself retried an address where nothing listens for minutes.
    import socket

    from eval import qa, rewrites

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"  # nothing listens once it is closed
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    for module, argv in ((rewrites, ["score", "--data", str(qrecc_file), "--rewriter", "original", "--metrics", "bleu"]),
                         (qa, ["--data", str(qrecc_file), "--setting", "human-rewrite", "--index", str(tiny_index)])):
        assert module.main([*argv, "--ray", address, "--actors", "1"]) == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.startswith(f"error: cannot reach the Ray cluster at {address} (--ray): ") and "ray start --head" in err


@needs_ray
@pytest.mark.skipif(not sys.platform.startswith("linux") or os.uname().machine not in ("x86_64", "aarch64"),
                    reason="reads the SIGSEGV handler's address from Linux's struct sigaction (x86_64, aarch64)")
def test_a_ray_run_leaves_the_jvm_its_crash_signal_handlers(qrecc_file, tiny_index):
    # ray.init put Ray's failure handler in place of the JVM's SIGSEGV and
    # SIGBUS handlers (pyserini's JVM, started by the command's own searches
    # first), and ray.shutdown set SIGSEGV to its default: the JVM takes
    # SIGSEGV in its normal running, and a search after a --ray run killed
    # the process now and then ("Fatal Python error: Segmentation fault").
    # ray.init also turned on Python's fault handler (off outside pytest)
    # in place of the JVM's. A fresh interpreter: Ray makes its choice when
    # it is imported, and the fault handler is off, as in a command.
    script = textwrap.dedent(f"""
        import ctypes, faulthandler, os, signal, sys
        from eval import rewrites

        faulthandler.disable()  # as in a command run without -X faulthandler

        def owner(signum):  # the file whose code handles signum now
            action = ctypes.create_string_buffer(256)  # struct sigaction, its handler first
            assert ctypes.CDLL(None, use_errno=True).sigaction(signum, None, action) == 0
            address = ctypes.c_void_p.from_buffer(action).value or 0
            for line in open("/proc/self/maps"):
                low, high = (int(x, 16) for x in line.split()[0].split("-"))
                if low <= address < high:
                    return os.path.basename(line.split()[-1])
            return hex(address)

        common = ["score", "--data", {str(qrecc_file)!r}, "--rewriter", "original", "--index", {str(tiny_index)!r},
                  "--metrics", "r_at_10", "--json"]
        assert rewrites.main(common) == 0  # the JVM starts
        before = [owner(s) for s in (signal.SIGSEGV, signal.SIGBUS)]
        assert rewrites.main([*common, "--ray", "--actors", "1"]) == 0
        import ray
        after_run = [owner(s) for s in (signal.SIGSEGV, signal.SIGBUS)]
        ray.shutdown()
        print(before, after_run, [owner(s) for s in (signal.SIGSEGV, signal.SIGBUS)], file=sys.stderr)
    """)
    env = {key: value for key, value in os.environ.items() if key not in ("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "PYTHONFAULTHANDLER")}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**env, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    jvm = str(["libjvm.so"] * 2)
    assert out.stderr.rstrip().splitlines()[-1] == f"{jvm} {jvm} {jvm}", out.stderr[-2000:]


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the module's tests (the commands start it), shut down after."""
    yield
    import ray

    if ray.is_initialized():
        ray.shutdown()


def _json(capsys, module, argv):
    assert module.main(argv) == 0
    return json.loads(capsys.readouterr().out)


@needs_ray
def test_score_on_ray_prints_the_single_process_scores(local_ray, qrecc_file, tiny_index, tmp_path, capsys):
    from eval import rewrites

    data = many_turns(tmp_path / "many.json", 30)  # 150 turns: 3 chunks
    common = ["score", "--data", str(data), "--index", str(tiny_index), "--metrics", "rouge1_recall,bleu,r_at_10", "--json"]
    for source, n in ((["--rewriter", "original"], 150), (["--rewrites", str(_rewrites_file(tmp_path))], 3)):
        single = _json(capsys, rewrites, [*common, *source])
        on_ray = _json(capsys, rewrites, [*common, *source, "--ray", "--actors", "2"])
        assert on_ray == single  # the same numbers, not just close: the same per-turn scores, summed in the same order
        assert single["n"] == n and 0 < single["r_at_10"] < 100


def _rewrites_file(tmp_path) -> Path:
    # Rewrites that differ from the human ones, so R@10 searches for them.
    path = tmp_path / "rw.jsonl"
    lines = [{"id": "qrecc:1:2", "rewrite": "Who was the father of Ada?"}, {"id": "qrecc:2:2", "rewrite": "Eiffel Tower"},
             {"id": "qrecc:1:3", "rewrite": "the the"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# Timings are the workers' own: everything else must be the single-process run's.
_TIMINGS = ("read_ms_median", "read_ms_p95", "turns_per_s")


@needs_ray
def test_qa_on_ray_prints_the_single_process_metrics(local_ray, tmp_path, tiny_index, capsys):
    from eval import qa

    data = many_turns(tmp_path / "many.json", 4)  # 20 turns: 2 chunks
    common = ["--data", str(data), "--index", str(tiny_index), "--rewriter", "original", "--mu", "0.7,1.0", "--json"]
    single = _json(capsys, qa, common)
    on_ray = _json(capsys, qa, [*common, "--ray", "--actors", "2"])
    strip = [{k: v for k, v in s.items() if k not in _TIMINGS} for s in single]
    assert [{k: v for k, v in s.items() if k not in _TIMINGS} for s in on_ray] == strip
    assert [s["mu"] for s in on_ray] == [0.7, 1.0] and single[0]["n"] == 20 and single[0]["mrr"] > 0


def _scai(path: Path, passages: list[list[str]]) -> Path:
    """Known-context turns (SCAI's layout) asking of Byron, with these Truth_passages."""
    path.write_text(json.dumps([
        {"Conversation_no": 7 + n // 4, "Turn_no": n % 4 + 1, "Question": "Who was Byron?", "Truth_rewrite": "Who was Byron?",
         "Truth_answer": "an English poet", "Truth_passages": ids, "NewContext": ["q", "a"] * (n % 4)}
        for n, ids in enumerate(passages)]))
    return path


@needs_ray
def test_qa_on_ray_notes_truth_passages_the_index_lacks_as_the_single_process_run(local_ray, tmp_path, tiny_index,
                                                                                 monkeypatch, capsys):
    # Each worker checked its own chunk (16 turns) for Truth_passages in the
    # index: the second chunk's, all missing, stopped the whole run, which
    # as one process reads them as nothing and counts them in a note.
    from eval import qa

    monkeypatch.setenv("CONVQA_DENSE_WEIGHT", "0")  # known-context searches nothing
    data = _scai(tmp_path / "scai.json", [["byron"]] * 16 + [[f"qrecc_p{n}"] for n in range(4)])
    common = ["--data", str(data), "--index", str(tiny_index), "--setting", "known-context", "--rewriter", "original", "--json"]
    runs = []
    for extra in ([], ["--ray", "--actors", "2"]):
        assert qa.main([*common, *extra]) == 0, capsys.readouterr().err[-2000:]
        out, err = capsys.readouterr()
        runs.append(([{k: v for k, v in s.items() if k not in _TIMINGS} for s in json.loads(out)],
                     [line for line in err.splitlines() if line.startswith("note:")]))
    assert runs[1] == runs[0]
    assert runs[0][1] == ["note: 4 of the turns' 20 Truth_passages are not in the index (e.g. 'qrecc_p0' of turn 11/1): "
                          "4 of 20 turns read none of theirs, 0 only some"]
    assert runs[0][0][0]["n"] == 20 and runs[0][0][0]["f1"] > 0
    # An index with none of them is refused as one run refuses it: before any worker starts.
    none = _scai(tmp_path / "none.json", [[f"qrecc_p{n}"] for n in range(20)])
    errors = []
    for extra in ([], ["--ray", "--actors", "2"]):
        assert qa.main([*common[:1], str(none), *common[2:], *extra]) == 2
        errors.append(capsys.readouterr().err.strip().splitlines()[-1])
    assert errors[1] == errors[0] == ("error: none of the turns' 20 Truth_passages (e.g. 'qrecc_p0') is in the index: give "
                                      "--index of their passages (eval.qa --write-collection, then assistant.index)")


@needs_ray
def test_a_worker_without_the_index_names_its_node(local_ray, qrecc_file, tmp_path, capsys):
    import ray

    from eval import qa, rewrites

    missing = tmp_path / "no-index"
    assert qa.main(["--data", str(qrecc_file), "--index", str(missing), "--setting", "human-rewrite", "--ray", "--actors", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    node = ray.util.get_node_ip_address()  # a local instance: the driver's node is the workers'
    assert err.startswith(f"error: on Ray node {node} (id ") and f"No Lucene index at {missing}" in err
    assert "put it on a shared folder or copy it to each node" in err
    argv = ["score", "--data", str(qrecc_file), "--rewriter", "original", "--index", str(missing), "--metrics", "r_at_10",
            "--ray", "--actors", "1"]
    assert rewrites.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"error: on Ray node {node} (id ") and f"No Lucene index at {missing}" in err


@needs_ray
def test_qa_on_ray_encodes_the_passage_vectors_once_in_the_driver(local_ray, qrecc_file, tiny_index, tmp_path,
                                                                  monkeypatch, capsys):
    import shutil

    from assistant.retrieval import VECTORS_FILE
    from eval import qa

    # A copy without vectors. Copied, not built: Lucene's index writer can
    # crash the JVM in a process where Ray has started.
    index = tmp_path / "index"
    shutil.copytree(tiny_index, index, ignore=shutil.ignore_patterns(VECTORS_FILE, "write.lock"))
    encoded = []
    real = qa.passage_vectors

    def spy(retriever, encoder, **kwargs):
        encoded.append(str(retriever.index_dir))
        return real(retriever, encoder, **kwargs)

    monkeypatch.setattr(qa, "passage_vectors", spy)
    argv = ["--data", str(qrecc_file), "--index", str(index), "--rewriter", "original", "--json", "--ray", "--actors", "2"]
    assert qa.main(argv) == 0
    # Before the workers start: each of them reads the kept file.
    assert encoded == [str(index)] and (index / VECTORS_FILE).exists()
    assert "Encoding the 5 passages" in capsys.readouterr().err


def test_a_local_ray_instance_starts_without_ray_s_token_authentication_notice(monkeypatch, caplog):
    # Every --ray run without an address printed "Token authentication is
    # enabled for this Ray cluster. Set RAY_AUTH_MODE=disabled to opt out":
    # Ray's notice of its default for a local instance, which is kept.
    import logging
    import types

    from rewriting import map_on_ray

    class Started(Exception):
        pass

    def init(**kwargs):
        # As ray.init (2.5x-2.6x) gives it, from its authentication module's logger.
        logging.getLogger("ray._private.authentication.authentication_token_setup").warning(
            "Token authentication is enabled for this Ray cluster.")
        logging.getLogger("ray.other").warning("another warning of Ray's")
        raise Started

    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False
    fake.init = init
    fake.data = types.ModuleType("ray.data")
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with caplog.at_level(logging.WARNING), pytest.raises(Started):
        map_on_ray([1], object, {}, chunk=1, address=None, actors=1)
    assert [record.getMessage() for record in caplog.records] == ["another warning of Ray's"]


def _on_workers_here(items, worker, settings, *, chunk, **_):
    """map_on_ray's contract without Ray: the worker built in this process,
    as each actor builds it, so that its index can be made to fail here."""
    built = worker(settings)
    return [row for start in range(0, len(items), chunk) for row in built(items[start:start + chunk])]


def _worker_error(capsys, qrecc_file, index_dir, monkeypatch) -> str:
    from eval import qa

    monkeypatch.setattr("rewriting.map_on_ray", _on_workers_here)
    monkeypatch.setenv("CONVQA_DENSE_WEIGHT", "0")  # else the driver opens the index first, for its vectors
    assert qa.main(["--data", str(qrecc_file), "--index", str(index_dir), "--setting", "human-rewrite", "--ray",
                    "--actors", "1"]) == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_a_worker_s_index_errors_each_get_their_own_advice(qrecc_file, tiny_index, tmp_path, monkeypatch, capsys):
    # Every index error a worker met got the advice for an index its node
    # cannot see: an index rebuilt while it was opened ("try again") and a
    # damaged one too ("put it on a shared folder or copy it to each node").
    shared = "put it on a shared folder or copy it to each node"
    missing = _worker_error(capsys, qrecc_file, tmp_path / "no-index", monkeypatch)
    assert f"No Lucene index at {tmp_path / 'no-index'}" in missing and shared in missing

    index_dir = tmp_path / "idx"
    shutil.copytree(tiny_index, index_dir)
    target = next(index_dir.glob("*.tim"))
    target.write_bytes(target.read_bytes()[:-8] + b"\0" * 8)  # its checksum
    damaged = _worker_error(capsys, qrecc_file, index_dir, monkeypatch)
    assert f"the index at {index_dir} is damaged (" in damaged and shared not in damaged
    assert damaged.endswith("; rebuild it with `python -m assistant.index --input COLLECTION --index "
                            f"{index_dir}`. A node that holds a copy of its own needs the rebuilt one.")

    shutil.rmtree(index_dir)
    shutil.copytree(tiny_index, index_dir)
    real = importlib.import_module("pyserini.search.lucene").LuceneSearcher

    def rebuilt_while_opened(path, *args, **kwargs):
        # Java finds the old commit's segments_N, not the files it names: a
        # rebuild's removal under way, at each open; then the new index is
        # renamed in (an unchanged folder that fails is damaged).
        for file in index_dir.iterdir():
            if not file.name.startswith("segments_"):
                file.unlink()
        try:
            return real(path, *args, **kwargs)
        finally:
            shutil.copytree(tiny_index, tmp_path / "staging")
            shutil.rmtree(index_dir)
            (tmp_path / "staging").rename(index_dir)

    monkeypatch.setattr("pyserini.search.lucene.LuceneSearcher", rebuilt_while_opened)
    changed = _worker_error(capsys, qrecc_file, index_dir, monkeypatch)
    assert changed == f"error: the index at {index_dir} changed while it was opened (rebuilt?); try again"


@pytest.mark.parametrize("ray", [False, True])
def test_known_context_rescores_a_document_as_deep_as_convqa_rescore_depth(tmp_path, monkeypatch, capsys, ray):
    # eval.qa rescored a document's first 100 hits (the setting's default)
    # whatever CONVQA_RESCORE_DEPTH the app was given, in one process and
    # on Ray's workers alike: the setting measured what no app served.
    from assistant.kernel import Answer
    from assistant.retrieval import DenseRescorer
    from eval import qa

    class FirstPassage:
        def read(self, question, passages):
            return Answer(passages[0].text if passages else "", 1.0, found=bool(passages))

    pools = []

    class Spy:
        def rescore(self, question, passages, k, alternatives=()):
            pools.append(len(passages))
            return list(passages)[:k]

    page = ("Beauty and the Beast ( 2017 film ) - wikipedia <H1> Beauty and the Beast ( 2017 film ) </H1> "
            + "<P> The film was released in March . </P> " * 200)
    path = tmp_path / "nq.jsonl"
    path.write_text(json.dumps({"input": page, "instructions": ["when was the film released"],
                                "outputs": ["March"]}) + "\n")
    monkeypatch.setattr(DenseRescorer, "for_document", classmethod(lambda cls, *args, **kwargs: Spy()))
    monkeypatch.setattr(qa, "build_readers", lambda *args, **kwargs: [FirstPassage()])
    monkeypatch.setattr("rewriting.map_on_ray", _on_workers_here)
    flags = ["--data", str(path), "--setting", "known-context", "--read-k", "1", "--rewriter", "original", "--json",
             *(["--ray", "--actors", "1"] if ray else [])]
    assert qa.main(flags) == 0
    assert pools and pools[0] > 2  # the default's depth: every hit of this page
    pools.clear()
    monkeypatch.setenv("CONVQA_RESCORE_DEPTH", "2")
    assert qa.main(flags) == 0
    assert pools == [2]
    capsys.readouterr()
