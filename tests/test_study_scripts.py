"""The study scripts' command lines: --help, and missing inputs refused in
one line before any model loads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    # From another working directory: the scripts must not read paths relative to it.
    return subprocess.run([sys.executable, str(SCRIPTS / script), *args], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=300)


def test_study_skip_rewrite_help_prints_usage_and_runs_nothing(tmp_path):
    out = _run("study_skip_rewrite.py", "--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage:") and "--split" in out.stdout


@pytest.mark.parametrize("script, extra", [
    ("study_skip_rewrite.py", []),
    # A model that does not exist: were it loaded before the folder is checked, that would be the error.
    ("study_history.py", ["--model", "/no/such/model"]),
    ("study_nbest.py", ["--greedy", "x", "--model", "/no/such/model"]),
    ("study_rerank.py", ["--greedy", "x", "--model", "/no/such/model"]),
])
def test_a_missing_folder_is_one_line_before_any_model_loads(tmp_path, script, extra):
    missing = tmp_path / "missing"
    out = _run(script, str(missing), *extra, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: ") and str(missing) in out.stderr and out.stderr.count("\n") == 1


def test_study_nbest_needs_the_greedy_rewrites_before_the_model_loads(tmp_path):
    (tmp_path / "qrecc.jsonl").write_text("")
    out = _run("study_nbest.py", str(tmp_path), "--greedy", "x", "--groups", "qrecc", "--model", "/no/such/model",
               cwd=tmp_path)
    assert out.returncode == 2 and out.stderr == f"error: {tmp_path / 'qrecc.x.jsonl'} is missing; write it first (see --help)\n"
