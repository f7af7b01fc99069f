#!/usr/bin/env bash
# Installs what the load-balancer test and the HTTP benchmark need from Debian: HAProxy
# (the balancer with active health checks) and wrk (the load generator). Idempotent:
# does nothing when both are present. CI runs as root on a machine with only Python.
set -euo pipefail

needed=()
command -v haproxy >/dev/null 2>&1 || needed+=(haproxy)
command -v wrk >/dev/null 2>&1 || needed+=(wrk)
[ ${#needed[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-test-deps: need root to install ${needed[*]} (apt-get)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Other setup scripts may run apt at the same time: wait for dpkg's lock, don't fail.
apt_opts=(-q -o DPkg::Lock::Timeout=600)
apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y --no-install-recommends "${needed[@]}"
command -v haproxy >/dev/null && command -v wrk >/dev/null
