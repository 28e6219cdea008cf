#!/usr/bin/env bash
# Build LLaMA-Factory's own environment (its pins clash with slca's: transformers <= 5.6.0, peft,
# datasets, trl). CPU torch goes in first and a constraint keeps it through every later install, so
# pip never swaps in a CUDA build. torchvision is left out (its wheels are CUDA builds whose ops fail
# to register next to CPU torch; LLaMA-Factory's text path never imports it) and gradio too (web UI
# only). torchaudio, which LLaMA-Factory's data package imports unconditionally, goes in without its
# dependencies, so it cannot pull another torch, and without its CUDA-linked extensions (below).
#
# usage: scripts/build_llamafactory_env.sh [ENV_DIR] [PYTHON]
#   ENV_DIR defaults to .cache/llamafactory-env, PYTHON (the interpreter the venv is made from) to python3.
# Idempotent and safe to start twice: builds are serialised by a lock beside ENV_DIR; an environment
# whose marker holds this script's digest (its pins are in it) is left as it is, any other one (an
# interrupted build, older pins) is built again.
set -euo pipefail

ENV_DIR=${1:-.cache/llamafactory-env}
PYTHON=${2:-python3}
TORCH=torch==2.13.0
LLAMAFACTORY=llamafactory==0.9.5
TORCHAUDIO=torchaudio==2.11.1
MARKER="$ENV_DIR/.built"

# The environment is current when it was built by this very script, pins included.
DIGEST=$(sha256sum "$0" | cut -d' ' -f1)

mkdir -p "$(dirname "$ENV_DIR")"
exec 9>"$ENV_DIR.lock"
flock 9
if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$DIGEST" ]; then
    exit 0
fi

start=$(date +%s)
rm -rf "$ENV_DIR"
"$PYTHON" -m venv "$ENV_DIR"
PIP=("$ENV_DIR/bin/python" -m pip install -q)
"${PIP[@]}" "$TORCH"
CONSTRAINTS="$ENV_DIR/constraints.txt"
echo "$TORCH" > "$CONSTRAINTS"
"${PIP[@]}" -c "$CONSTRAINTS" packaging
"${PIP[@]}" --no-deps "$LLAMAFACTORY" "$TORCHAUDIO"
# torchaudio's compiled extensions on PyPI link against CUDA torch (libc10_cuda.so) and fail to load
# next to CPU torch. Without them torchaudio imports its pure-Python part (it treats missing
# extension files as "not built"), which is all LLaMA-Factory's text SFT path touches.
TA_LIB=$("$ENV_DIR/bin/python" -c "import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec('torchaudio').origin).parent / 'lib')")
rm -f "$TA_LIB"/*.so
# LLaMA-Factory's own requirement pins, read from its installed metadata, less the packages above.
"$ENV_DIR/bin/python" - > "$ENV_DIR/requirements.txt" <<'PY'
from importlib.metadata import requires
from packaging.requirements import Requirement
skip = {"torch", "torchvision", "torchaudio", "gradio"}
for line in requires("llamafactory"):
    req = Requirement(line)
    if req.marker is None and req.name.lower() not in skip:
        print(req)
PY
"${PIP[@]}" -c "$CONSTRAINTS" -r "$ENV_DIR/requirements.txt"
# A smoke import of the trainer's entry point: a broken environment fails here, not in a test.
"$ENV_DIR/bin/python" -c "import llamafactory.train.tuner, torchaudio"
echo "$DIGEST" > "$MARKER"
echo "LLaMA-Factory environment built in $(( $(date +%s) - start )) s: $ENV_DIR/bin/llamafactory-cli"
