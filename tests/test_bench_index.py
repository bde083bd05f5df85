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
