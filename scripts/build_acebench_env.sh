#!/usr/bin/env bash
# Build ACEBench's own environment (docs/eval.md#checking-the-checker-against-acebench): a venv holding the pinned
# PyPI packages ACEBench's evaluation code imports (third_party/acebench/slca-requirements.txt:
# pandas and openpyxl, which slca's environment does not carry). The vendored ACEBench code is run
# from the repository (never installed, never imported by slca) to check slca's checker against it.
#
# usage: scripts/build_acebench_env.sh [ENV_DIR] [PYTHON]
#   ENV_DIR defaults to .cache/acebench-env; PYTHON (default python3) is the interpreter the venv is made from.
# Idempotent and safe to start twice: builds are serialised by a lock beside ENV_DIR; an environment
# whose marker holds the current inputs' digest is left as it is, any other one is built again.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ENV_DIR=$(realpath -m "${1:-.cache/acebench-env}")
PYTHON=${2:-python3}
VENDORED="$ROOT/third_party/acebench"
REQUIREMENTS="$VENDORED/slca-requirements.txt"
MARKER="$ENV_DIR/.built"

DIGEST=$(cat "$0" "$REQUIREMENTS" | sha256sum | cut -d' ' -f1)

mkdir -p "$(dirname "$ENV_DIR")"
exec 9>"$ENV_DIR.lock"
flock 9
if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$DIGEST" ]; then
    exit 0
fi

start=$(date +%s)
rm -rf "$ENV_DIR"
"$PYTHON" -m venv "$ENV_DIR"
"$ENV_DIR/bin/python" -m pip install -q --only-binary=:all: -r "$REQUIREMENTS"
# A smoke import of ACEBench's evaluation entry point: a broken environment fails here, not in a test.
if ! (cd "$VENDORED" && "$ENV_DIR/bin/python" -c "import eval_main") >/dev/null 2>"$ENV_DIR/smoke.log"; then
    tail -n 20 "$ENV_DIR/smoke.log" >&2
    exit 1
fi
echo "$DIGEST" > "$MARKER"
echo "acebench environment built in $(( $(date +%s) - start )) s: $ENV_DIR/bin/python"
