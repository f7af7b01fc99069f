#!/usr/bin/env bash
# Proves that `make run` and `make test` pass on a bare Debian 12: a base image made with
# debootstrap (--variant=minbase plus make, curl and CA certificates, nothing else), a
# fresh clone of one commit, and only the project's own scripts to install what the
# commands need (the Makefile's venv recipe, deploy/install-*.sh).
#
# Usage (as root):  deploy/bare-debian-check.sh [COMMIT [REPO]]
#   COMMIT  what to check out (default HEAD); REPO the repository to clone (default the
#           one this script lives in).
# Environment:
#   CACHE_DIR  where the base image and Docker's data stay between runs
#              (default /var/cache/bare-debian-check); REBUILD=1 makes the image anew.
#   MIRROR     the Debian mirror (default: the one for bookworm in apt's sources).
#   PORT       the loopback port `make run` serves on in the check (default: a free one).
#   OVERLAY    paths (space-separated) copied from REPO's work tree over the clone, to
#              try uncommitted changes before they are committed; empty by default.
#   KEEP_LOGS  a directory to copy the container's logs (run.log, test.log) into.
#
# Why this way: no image registry is reachable here, so the base image is built with
# debootstrap and imported. The script runs its own dockerd (own socket, data and exec
# roots) with no bridge, no iptables rules and no masquerading, and the container shares
# the host's network (`--network host`), so all traffic stays on loopback or goes where
# the host's own apt and pip go. The clone is made on the host (a bare machine has no
# git; CI gets its clone from outside too) and mounted into the container.
#
# What it checks, in the container: `make run` serves (GET /healthz answers 200 and
# POST /v1/games/penguin/deals deals deal 1) and, sent TERM, drains and exits 0; then
# `make test` passes. It prints the closing lines of each and exits non-zero when either
# fails. A rerun takes about as long as the two commands (the image is cached).
set -euo pipefail
# One block, so bash reads the whole script before running any of it: editing the file
# while a check runs cannot change that run.
{
SUITE=bookworm
IMAGE=bare-debian:$SUITE-minbase
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
COMMIT=${1:-HEAD}
REPO=${2:-$(git -C "$HERE" rev-parse --show-toplevel)}
CACHE_DIR=${CACHE_DIR:-/var/cache/bare-debian-check}
RUN_DIR=/run/bare-debian-check.$$
SOCK=unix://$RUN_DIR/docker.sock
CONTAINER=bare-debian-check-$$
started=$(date +%s)

say() { printf '[bare-debian-check %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "run as root (debootstrap and dockerd need it)"
WORK=$(mktemp -d /tmp/bare-debian-check.XXXXXX)

# --- host tools --------------------------------------------------------------------
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-q -o DPkg::Lock::Timeout=600)
needed=()
command -v debootstrap >/dev/null 2>&1 || needed+=(debootstrap)
command -v dockerd >/dev/null 2>&1 || needed+=(docker.io)
if [ ${#needed[@]} -gt 0 ]; then
    say "installing ${needed[*]} on the host"
    apt-get "${apt_opts[@]}" update >/dev/null
    apt-get "${apt_opts[@]}" install -y --no-install-recommends "${needed[@]}" >/dev/null
fi
# Prefer Debian's client next to Debian's dockerd over any other `docker` on PATH.
DOCKER_BIN=$( [ -x /usr/bin/docker ] && echo /usr/bin/docker || command -v docker )
docker() { "$DOCKER_BIN" --host "$SOCK" "$@"; }

# The URI of the first apt source (one-line or deb822) that carries $SUITE itself.
debian_mirror() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        awk -v suite="$SUITE" '
            function flush() { if (uri != "" && (" " suites " ") ~ (" " suite " ")) { print uri; found = 1; exit } uri = ""; suites = "" }
            /^[[:space:]]*#/ { next }
            /^deb[[:space:]]/ { sub(/\[[^]]*\]/, ""); if ($3 == suite) { print $2; found = 1; exit } next }
            /^URIs:/ { uri = $2; next }
            /^Suites:/ { $1 = ""; suites = $0; next }
            /^[[:space:]]*$/ { flush() }
            END { if (!found) flush() }' "$f"
    done | head -n 1
}

cleanup() {
    local rc=$?
    set +e
    say "cleaning up: the container, then dockerd"
    if [ -S "$RUN_DIR/docker.sock" ]; then
        docker rm -f "$CONTAINER" >/dev/null 2>&1
    fi
    if [ -n "${DOCKERD_PID:-}" ] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
        kill -TERM "$DOCKERD_PID"
        for _ in $(seq 1 30); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 1; done
        kill -0 "$DOCKERD_PID" 2>/dev/null && kill -KILL "$DOCKERD_PID"
        wait "$DOCKERD_PID" 2>/dev/null
    fi
    # What dockerd left mounted under its exec root (its network namespace), innermost first.
    awk -v dir="$RUN_DIR/" 'index($2, dir) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n 1 umount -l
    [ -n "${KEEP_LOGS:-}" ] && mkdir -p "$KEEP_LOGS" && cp "$WORK/dockerd.log" "$KEEP_LOGS/" 2>/dev/null
    rm -rf "$RUN_DIR" "$WORK"
    say "done in $(( $(date +%s) - started )) s, exit $rc"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the clone ---------------------------------------------------------------------
sha=$(git -C "$REPO" rev-parse --verify "$COMMIT^{commit}") || fail "no commit $COMMIT in $REPO"
git clone -q --no-hardlinks "$REPO" "$WORK/src"
git -C "$WORK/src" checkout -q --detach "$sha"
for path in ${OVERLAY:-}; do
    [ -e "$REPO/$path" ] || fail "OVERLAY: no $path in $REPO"
    mkdir -p "$(dirname "$WORK/src/$path")"
    cp -a "$REPO/$path" "$WORK/src/$path"
    say "overlay from the work tree: $path"
done
say "checking $sha ($(git -C "$WORK/src" log -1 --format=%s | cut -c1-70))"

# --- our own dockerd ---------------------------------------------------------------
mkdir -p "$RUN_DIR" "$CACHE_DIR/docker"
dockerd --bridge=none --iptables=false --ip-masq=false --ip6tables=false \
    --data-root "$CACHE_DIR/docker" --exec-root "$RUN_DIR/exec" \
    --pidfile "$RUN_DIR/dockerd.pid" --host "$SOCK" >"$WORK/dockerd.log" 2>&1 &
DOCKERD_PID=$!
for _ in $(seq 1 60); do docker version >/dev/null 2>&1 && break; sleep 1; done
docker version >/dev/null 2>&1 || { tail -n 20 "$WORK/dockerd.log"; fail "dockerd did not start"; }

# --- the base image: debootstrap minbase + make, curl, CA certificates -------------
if [ "${REBUILD:-0}" = 1 ]; then
    docker image rm -f "$IMAGE" >/dev/null 2>&1 || true
    rm -f "$CACHE_DIR/$SUITE-minbase.tar"
fi
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
    if [ ! -s "$CACHE_DIR/$SUITE-minbase.tar" ]; then
        mirror=${MIRROR:-$(debian_mirror)}
        [ -n "$mirror" ] || fail "no $SUITE source in apt's sources list; set MIRROR"
        say "debootstrap $SUITE minbase from $mirror"
        rootfs=$WORK/rootfs
        debootstrap --variant=minbase --include=make,curl,ca-certificates \
            "$SUITE" "$rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 \
            || { tail -n 20 "$WORK/debootstrap.log"; fail "debootstrap"; }
        # The host's CA bundle (and any local CAs it adds), so HTTPS from the container
        # trusts what the host trusts; the same files in the same places.
        cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
        if compgen -G '/usr/local/share/ca-certificates/*' >/dev/null; then
            cp -r /usr/local/share/ca-certificates/. "$rootfs/usr/local/share/ca-certificates/"
        fi
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        tar -C "$rootfs" -cf "$CACHE_DIR/$SUITE-minbase.tar.tmp" .
        mv "$CACHE_DIR/$SUITE-minbase.tar.tmp" "$CACHE_DIR/$SUITE-minbase.tar"
        rm -rf "$rootfs"
    fi
    docker import "$CACHE_DIR/$SUITE-minbase.tar" "$IMAGE" >/dev/null
fi
say "image $IMAGE ready"

# --- the check, inside the container -----------------------------------------------
if [ -z "${PORT:-}" ]; then
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
mkdir -p "$WORK/out"
cat >"$WORK/out/inside.sh" <<'INSIDE'
#!/bin/bash
# Runs in the container, in the fresh clone (/src); logs go to /out.
set -u
say() { printf '[inside %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
cd /src
t0=$(date +%s)
setsid make run PORT="$PORT" >/out/run.log 2>&1 &
run=$!
healthz=fail
for _ in $(seq 1 1200); do
    if curl -fsS "http://127.0.0.1:$PORT/healthz" >/out/healthz.json 2>/dev/null; then healthz=ok; break; fi
    kill -0 "$run" 2>/dev/null || break
    sleep 1
done
deal=fail
if [ "$healthz" = ok ] && curl -fsS "http://127.0.0.1:$PORT/v1/games/penguin/deals" \
        -H 'Content-Type: application/json' -d '{"deal": 1}' >/out/deal.json \
        && grep -q '"legal_moves"' /out/deal.json; then
    deal=ok
fi
# Stop it as an operator would: TERM to gunicorn's master (make's child; minbase has no
# pgrep, so read /proc), which drains and exits, and make exits with its status.
master=$(awk -v parent="$run" '$4 == parent { print $1 }' /proc/[0-9]*/stat 2>/dev/null | head -n 1)
kill -TERM "${master:-$run}" 2>/dev/null
for _ in $(seq 1 60); do kill -0 "$run" 2>/dev/null || break; sleep 1; done
kill -0 "$run" 2>/dev/null && kill -KILL -- "-$run" 2>/dev/null
wait "$run"
run_rc=$?
say "make run: GET /healthz $healthz ($(head -c 80 /out/healthz.json 2>/dev/null)), POST /v1/games/penguin/deals $deal ($(head -c 60 /out/deal.json 2>/dev/null)...); after TERM to gunicorn, make exited $run_rc; $(( $(date +%s) - t0 )) s"
if [ "$healthz" != ok ] || [ "$deal" != ok ] || [ "$run_rc" -ne 0 ]; then
    tail -n 30 /out/run.log
fi
t1=$(date +%s)
make test >/out/test.log 2>&1
test_rc=$?
say "make test: exit $test_rc, $(( $(date +%s) - t1 )) s; closing lines:"
tail -n 15 /out/test.log
[ "$healthz" = ok ] && [ "$deal" = ok ] && [ "$run_rc" -eq 0 ] && [ "$test_rc" -eq 0 ]
INSIDE
chmod +x "$WORK/out/inside.sh"

say "running make run and make test in the container (port $PORT; logs in $WORK/out while it runs)"
rc=0
docker run --name "$CONTAINER" --network host -e PORT="$PORT" \
    -v "$WORK/src:/src" -v "$WORK/out:/out" "$IMAGE" /out/inside.sh || rc=$?
if [ -n "${KEEP_LOGS:-}" ]; then
    mkdir -p "$KEEP_LOGS" && cp "$WORK"/out/*.log "$KEEP_LOGS"/ && say "logs kept in $KEEP_LOGS"
fi
if [ "$rc" -eq 0 ]; then
    say "PASS: make run and make test on bare Debian $SUITE ($sha)"
else
    say "FAIL: exit $rc on bare Debian $SUITE ($sha)"
fi
exit "$rc"
}
