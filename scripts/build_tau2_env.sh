#!/usr/bin/env bash
# Build τ²-bench's own environment (docs/tau2.md#setup): a Python >= 3.12 venv holding the vendored
# package (third_party/tau2-bench, installed editable so its data and source stay in the repository)
# and the pinned PyPI packages its run path imports (third_party/tau2-bench/slca-requirements.txt;
# litellm among them, whose pins clash with slca's own environment).
#
# usage: scripts/build_tau2_env.sh [ENV_DIR] [PYTHON]
#   ENV_DIR defaults to .cache/tau2-env. PYTHON is the interpreter the venv is made from; by default
#   the first of python3.12, python3.13, pyenv's 3.12.x/3.13.x installs and /usr/bin/python3.12
#   that runs and is at least 3.12.
# Idempotent and safe to start twice: builds are serialised by a lock beside ENV_DIR; an environment
# whose marker holds the current inputs' digest is left as it is, any other one is built again.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ENV_DIR=${1:-.cache/tau2-env}
VENDORED="$ROOT/third_party/tau2-bench"
REQUIREMENTS="$VENDORED/slca-requirements.txt"
PDM_BACKEND=pdm-backend==2.5.0
MARKER="$ENV_DIR/.built"

is_312() {
    "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

find_python() {
    local candidate
    for candidate in python3.12 python3.13 "$HOME"/.pyenv/versions/3.12*/bin/python "$HOME"/.pyenv/versions/3.13*/bin/python \
                     /root/.pyenv/versions/3.12*/bin/python /usr/bin/python3.12 /usr/local/bin/python3.12; do
        if is_312 "$candidate"; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if [ $# -ge 2 ]; then
    PYTHON=$2
    is_312 "$PYTHON" || { echo "build_tau2_env.sh: $PYTHON is not a Python >= 3.12 (τ²-bench needs one)" >&2; exit 1; }
else
    PYTHON=$(find_python) || { echo "build_tau2_env.sh: no Python >= 3.12 found (tried python3.12, python3.13, ~/.pyenv/versions/3.12*); pass one as the second argument" >&2; exit 1; }
fi

# The environment is current when it was built from these exact inputs.
DIGEST=$(cat "$0" "$REQUIREMENTS" "$VENDORED/pyproject.toml" | sha256sum | cut -d' ' -f1)

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
"${PIP[@]}" -r "$REQUIREMENTS" "$PDM_BACKEND"
# The vendored package alone: its upstream dependency list (plotting, Redis, Langfuse, pytest, ...) is
# replaced by the pinned requirements above.
"${PIP[@]}" --no-deps --no-build-isolation -e "$VENDORED"
# A smoke import of everything the driver touches: a broken environment fails here, not in a test.
if ! TAU2_DATA_DIR="$VENDORED/data" LITELLM_LOCAL_MODEL_COST_MAP=True "$ENV_DIR/bin/python" -c \
    "import tau2.registry, tau2.evaluator.evaluator, tau2.orchestrator.orchestrator, tau2.domains.retail.tools" \
    >/dev/null 2>"$ENV_DIR/smoke.log"; then
    tail -n 20 "$ENV_DIR/smoke.log" >&2
    exit 1
fi
echo "$DIGEST" > "$MARKER"
echo "tau2 environment built in $(( $(date +%s) - start )) s with $("$ENV_DIR/bin/python" --version): $ENV_DIR/bin/python"
