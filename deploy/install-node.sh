#!/usr/bin/env bash
# Installs Node.js and npm from Debian when either is missing: `make clients` and
# `make contract-lint` run the TypeScript generator, tsc, Redocly CLI and Spectral with
# them (Debian 12 ships Node 18 and npm 9, which clients/package.json is pinned for).
# Idempotent: does nothing when both are present. CI runs as root on a machine with only Python.
set -euo pipefail

needed=()
command -v node >/dev/null 2>&1 || needed+=(nodejs)
command -v npm >/dev/null 2>&1 || needed+=(npm)
[ ${#needed[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-node: need root to install ${needed[*]} (apt-get)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Other setup scripts may run apt at the same time: wait for dpkg's lock, don't fail.
apt_opts=(-q -o DPkg::Lock::Timeout=600)
apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y --no-install-recommends "${needed[@]}"
command -v node >/dev/null && command -v npm >/dev/null
