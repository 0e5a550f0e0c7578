#!/usr/bin/env bash
# Chromium for the report screenshot test (tests/trainers/test_report_screenshot.py); idempotent, Debian, as root.
# Installs Debian's chromium package, then checks that headless Chromium writes a screenshot here.
set -euo pipefail

if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi
chromium --version

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '<html><body><h1>chromium check</h1></body></html>' >"$tmp/page.html"
# --no-sandbox: CI runs as root in a container, where Chromium's own sandbox cannot start
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=400,300 \
  --screenshot="$tmp/shot.png" "file://$tmp/page.html" >/dev/null 2>&1
test -s "$tmp/shot.png" || { echo "headless chromium wrote no screenshot" >&2; exit 1; }
echo "chromium: headless screenshots work"
