"""scripts/bench_index.py refuses an input it cannot benchmark before either indexer runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_index.py"


@pytest.mark.parametrize("make", ["missing", "empty folder"])
def test_an_input_without_jsonl_files_is_one_line_exit_2(tmp_path, make):
    # pyserini's CLI exits 0 on such an input: the table reported it as succeeded with 0 docs.
    collection = tmp_path / "coll"
    if make == "empty folder":
        collection.mkdir()
    out = subprocess.run([sys.executable, str(SCRIPT), "--input", str(collection), "--work", str(tmp_path / "work")],
                         capture_output=True, text=True, check=False, timeout=300)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr == (f"error: --input {collection} is not a folder of .jsonl files; "
                          "make one with scripts/gen_collection.py\n")
    assert not (tmp_path / "work").exists()


def test_relative_paths_are_the_callers(tmp_path, monkeypatch):
    # Both indexers run with cwd at the repository root: a relative --input
    # (as BENCHMARKS §9 writes it) was looked for there ("no such file or folder").
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_index_under_test", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    (tmp_path / "C").mkdir()
    (tmp_path / "C" / "a.jsonl").write_text('{"id": "a", "contents": "x"}\n')
    commands = []

    def measured(command, env):
        commands.append(command)
        return {"returncode": 1, "wall_s": 0, "peak_rss_mb": 0, "stderr_tail": ""}

    monkeypatch.setattr(bench, "run_measured", measured)
    monkeypatch.setattr(bench, "import_pyserini", lambda name: None)
    monkeypatch.setenv("JAVA_HOME", "/unused")
    monkeypatch.chdir(tmp_path)
    assert bench.main(["--input", "C", "--work", "W", "--json"]) == 1
    ours, theirs = commands
    assert ours[ours.index("--input") + 1] == str(tmp_path / "C")
    assert ours[ours.index("--index") + 1] == str(tmp_path / "W" / "ours")
    assert theirs[theirs.index("-input") + 1] == str(tmp_path / "C")
    assert theirs[theirs.index("-index") + 1] == str(tmp_path / "W" / "pyserini")


GENERATOR = SCRIPT.parent / "gen_collection.py"


@pytest.mark.parametrize("flags, message", [
    # Ended in a FileExistsError traceback.
    (["--out", "{file}"], "cannot write --out {file}: it is a file; give a folder path"),
    # One message named all three flags ("--passages and --shards must be >= 1, --vocab >= 10") after the usage.
    (["--out", "{dir}", "--passages", "0"], "--passages must be at least 1, not 0"),
    (["--out", "{dir}", "--vocab", "5"], "--vocab must be at least 10, not 5"),
])
def test_gen_collection_refuses_a_bad_flag_in_one_line(tmp_path, flags, message):
    places = {"file": tmp_path / "a-file", "dir": tmp_path / "coll"}
    places["file"].write_text("")
    out = subprocess.run([sys.executable, str(GENERATOR), *(f.format(**places) for f in flags)],
                         capture_output=True, text=True, check=False, timeout=300)
    assert (out.returncode, out.stderr) == (2, f"error: {message.format(**places)}\n")
    assert not places["dir"].exists()


def test_a_work_folder_that_is_a_file_is_one_line_before_either_indexer_runs(tmp_path):
    # Ended in a FileExistsError traceback, after pyserini's JVM had started.
    (tmp_path / "C").mkdir()
    (tmp_path / "C" / "a.jsonl").write_text('{"id": "a", "contents": "x"}\n')
    (tmp_path / "W").write_text("")
    out = subprocess.run([sys.executable, str(SCRIPT), "--input", str(tmp_path / "C"), "--work", str(tmp_path / "W")],
                         capture_output=True, text=True, check=False, timeout=300)
    assert (out.returncode, out.stderr) == (2, f"error: cannot write --work {tmp_path / 'W'}: it is a file; give a folder path\n")
