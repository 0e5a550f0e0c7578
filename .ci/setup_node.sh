#!/usr/bin/env bash
# Node.js and the official MCP TypeScript SDK for tests/test_mcp_node.py (idempotent; Debian, as root).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

need_node=0
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  need_node=1
elif [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 18 ]; then
  need_node=1
fi
if [ "$need_node" = 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq nodejs npm >/dev/null
fi
node -e 'if (+process.versions.node.split(".")[0] < 18) { console.error("Node >= 18 needed, have " + process.version); process.exit(1) }'

cd "$here/tests/node"
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi
node -e 'import("@modelcontextprotocol/sdk/client/index.js").then(() => console.log("MCP TypeScript SDK ready"))'
