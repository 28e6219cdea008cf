#!/usr/bin/env bash
# Install Debian's headless-capable `chromium` when it is missing, for the `slca report` browser test
# (the page must render, every image load, and the console stay clean in a real browser).
# Needs root (or passwordless sudo) and apt. Idempotent and safe to start twice: installs are
# serialised by a lock, and a chromium already on PATH is left as it is.
#
# usage: scripts/install_chromium.sh        prints the path of the chromium binary on success
set -euo pipefail

find_chromium() {
    command -v chromium || command -v chromium-browser || true
}

found=$(find_chromium)
if [ -n "$found" ]; then
    echo "$found"
    exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    else
        echo "install_chromium.sh: chromium is missing and installing it needs root (apt-get install chromium)" >&2
        exit 1
    fi
fi

LOCK=${TMPDIR:-/tmp}/slca-install-chromium.lock
exec 9>"$LOCK"
flock 9
found=$(find_chromium)  # another process may have installed it while we waited for the lock
if [ -z "$found" ]; then
    export DEBIAN_FRONTEND=noninteractive
    # apt's own lock serialises against other installers running on the machine at the same time.
    "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
    "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
    found=$(find_chromium)
fi
if [ -z "$found" ]; then
    echo "install_chromium.sh: apt-get finished but no chromium binary is on PATH" >&2
    exit 1
fi
echo "$found"
