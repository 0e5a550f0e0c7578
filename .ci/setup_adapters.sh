#!/usr/bin/env bash
# verifiers for tests/trainers/adapters/test_adapters_verifiers.py. verifiers 0.3.1 declares mcp<2 and 0.4.0 declares mcp==2.0.0
# and openai<3, while coworkenv needs mcp>=2.3 (and the venv has openai 3); pip cannot resolve either with
# ours. verifiers imports mcp only in its optional MCPEnv, which coworkenv does not use, so we install 0.3.1
# without its dependency metadata; its real runtime dependencies come from the `verifiers` extra in
# pyproject.toml (installed by `.[dev]`). `pip check` will list the mcp pin; that is expected. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$here/.venv/bin/python"
if [ "$("$py" -c 'import importlib.metadata as m; print(m.version("verifiers"))' 2>/dev/null)" != "0.3.1" ]; then
  "$here/.venv/bin/pip" install -q --no-deps 'verifiers==0.3.1'
fi
"$py" -c 'import verifiers as vf; vf.MultiTurnEnv; import mcp; print("verifiers", vf.__version__, "with mcp", mcp.__version__ if hasattr(mcp, "__version__") else "")'
