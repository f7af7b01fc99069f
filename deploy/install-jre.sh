#!/usr/bin/env bash
# Installs a Java runtime from Debian when `java` is missing: openapi-generator (the jar in
# the PyPI package openapi-generator-cli, in clients/.venv) runs on it for `make clients`
# and `make contract-lint-generator`. Debian 12's default-jre-headless is OpenJDK 17;
# openapi-generator 7 needs Java 11 or later.
# Idempotent: does nothing when `java` is present. CI runs as root on a machine with only Python.
set -euo pipefail

command -v java >/dev/null 2>&1 && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-jre: need root to install default-jre-headless (apt-get)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Other setup scripts may run apt at the same time: wait for dpkg's lock, don't fail.
apt_opts=(-q -o DPkg::Lock::Timeout=600)
apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y --no-install-recommends default-jre-headless
command -v java >/dev/null
