#!/usr/bin/env bash
# Installs what the browser tests (tests/browser/test_browser.py) need from Debian:
# Chromium, which they drive with Playwright because Playwright's own browser download
# cannot reach its servers here, and libatomic1, whose libatomic.so.1 Playwright's
# bundled driver (a node binary inside the wheel) loads; Chromium's dependencies do not
# pull it in, and without it every browser test errors with "Connection closed while
# reading from the driver". Idempotent: does nothing when both are present. CI runs as
# root on a machine with only Python.
set -euo pipefail

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

needed=()
# Fonts: the cards' ranks and the docs page need a sans and a monospace face.
[ -x "$CHROMIUM" ] || needed+=(chromium fonts-dejavu-core fonts-liberation)
# grep without -q reads all of ldconfig's output: with -q it may stop at the first match
# and SIGPIPE ldconfig, which pipefail would report as the library missing.
/sbin/ldconfig -p 2>/dev/null | grep 'libatomic\.so\.1 ' >/dev/null || needed+=(libatomic1)
[ ${#needed[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-browser: need root to install ${needed[*]} (apt-get), or set CHROMIUM to a Chromium binary" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Other setup scripts may run apt at the same time: wait for dpkg's lock, don't fail.
apt_opts=(-q -o DPkg::Lock::Timeout=600)
apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y "${needed[@]}"
[ -x "$CHROMIUM" ]
/sbin/ldconfig -p | grep 'libatomic\.so\.1 ' >/dev/null
