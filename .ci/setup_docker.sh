#!/usr/bin/env bash
# Docker engine and the default sandbox image for tests/workspace_sim/test_sandbox_docker.py (idempotent; Debian, as root).
# Installs docker.io and busybox-static, starts dockerd in the background if no engine answers
# (falling back to settings that work inside containers and VMs), then builds the image offline.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log=/var/log/coworkenv-dockerd.log

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1 \
   || ! dpkg -s busybox-static >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq docker.io busybox-static >/dev/null
fi

engine_up() { docker info >/dev/null 2>&1; }

start_dockerd() {
  echo "starting dockerd $*"
  setsid dockerd "$@" >>"$log" 2>&1 </dev/null &
  local pid=$!
  for _ in $(seq 60); do
    engine_up && return 0
    kill -0 "$pid" 2>/dev/null || return 1   # it gave up (see the log)
    sleep 1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  return 1
}

if ! engine_up; then
  start_dockerd \
    || start_dockerd --iptables=false \
    || start_dockerd --iptables=false --storage-driver=vfs \
    || { echo "dockerd would not start; last lines of $log:" >&2; tail -n 30 "$log" >&2; exit 1; }
fi
docker version --format 'engine {{.Server.Version}} (API {{.Server.APIVersion}})'

py="$here/.venv/bin/python"
[ -x "$py" ] || py=python3
cli() { (cd "$here" && "$py" -c 'from coworkenv.cli import main; main()' "$@"); }
if ! docker image inspect coworkenv-sandbox:latest >/dev/null 2>&1; then
  cli sandbox build-image
fi
cli sandbox status
