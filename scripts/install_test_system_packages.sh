#!/usr/bin/env bash
# Install the Debian packages the real-engine tests run, when missing, in one apt transaction before the
# suite starts (`make test` calls this): slurm-wlm and munge (the one-node SLURM test cluster) and chromium
# (the report's browser test). The tests' own scripts (slurm_test_cluster.sh, install_chromium.sh) still
# install what they need when called alone; here the work is paid once, outside the timed tests.
#
# Needs root (or passwordless sudo) and apt when something is missing; idempotent, serialised by a lock.
set -euo pipefail

missing() {
    local packages=()
    { command -v slurmctld >/dev/null && command -v munged >/dev/null; } || packages+=(slurm-wlm munge)
    { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; } || packages+=(chromium fonts-dejavu-core)
    echo "${packages[@]}"
}

[ -z "$(missing)" ] && exit 0

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    else
        echo "install_test_system_packages.sh: $(missing) missing and installing them needs root (apt-get install)" >&2
        exit 1
    fi
fi

exec 9>"${TMPDIR:-/tmp}/slca-install-test-packages.lock"
flock 9
read -r -a packages <<<"$(missing)"  # another process may have installed some while we waited
[ ${#packages[@]} -eq 0 ] && exit 0

start=$(date +%s)
log=$(mktemp -t slca-apt.XXXXXX)
export DEBIAN_FRONTEND=noninteractive
# apt's own lock serialises against other installers on the machine; the package lists are refreshed
# only when the install fails without them (a fresh machine's lists may be empty or stale).
apt_install() { "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${packages[@]}" >>"$log" 2>&1; }
if ! apt_install; then
    "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 update -q >>"$log" 2>&1
    apt_install || { tail -n 20 "$log" >&2; echo "install_test_system_packages.sh: apt-get install ${packages[*]} failed (log: $log)" >&2; exit 1; }
fi
rm -f "$log"
echo "installed ${packages[*]} in $(( $(date +%s) - start )) s"
