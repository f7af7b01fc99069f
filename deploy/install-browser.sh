#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (tests/browser/test_browser.py), which drive
# it with Playwright: Playwright's own browser download cannot reach its servers here.
# Idempotent: does nothing when /usr/bin/chromium is present. CI runs as root on a
# machine with only Python.
set -euo pipefail

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-browser: need root to install chromium (apt-get), or set CHROMIUM to a Chromium binary" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Other setup scripts may run apt at the same time: wait for dpkg's lock, don't fail.
apt_opts=(-q -o DPkg::Lock::Timeout=600)
apt-get "${apt_opts[@]}" update
# Fonts: the cards' ranks and the docs page need a sans and a monospace face.
apt-get "${apt_opts[@]}" install -y chromium fonts-dejavu-core fonts-liberation
[ -x "$CHROMIUM" ]
