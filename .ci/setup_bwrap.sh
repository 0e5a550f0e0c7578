#!/usr/bin/env bash
# bubblewrap for run_python's sandbox (tests/workspace_sim/test_sandbox_python.py); idempotent, Debian, as root.
# Installs the bubblewrap package, then checks that a sandbox with new user, mount, PID, network
# and IPC namespaces starts here and that coworkenv's own probe offers run_python.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if ! command -v bwrap >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq bubblewrap >/dev/null
fi
bwrap --version

if ! bwrap --unshare-user --unshare-pid --unshare-net --unshare-ipc --unshare-uts --die-with-parent \
     --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin \
     --dev /dev --clearenv /usr/bin/true; then
  echo "bwrap cannot make user namespaces here; check kernel.unprivileged_userns_clone," >&2
  echo "user.max_user_namespaces and the container's seccomp/AppArmor profile" >&2
  exit 1
fi

py="${PYTHON:-$here/.venv/bin/python}"
[ -x "$py" ] || py=python3
# the same probe that decides whether a workspace offers run_python
(cd "$here" && PYTHONPATH="$here" "$py" -c '
from workspace_sim.sandboxes.python_sandbox import isolation_status
from workspace_sim.sandboxes.settings import SandboxSettings
ok, reason = isolation_status(SandboxSettings())
print("run_python: available" if ok else f"run_python: not offered ({reason})")
raise SystemExit(0 if ok else 1)')
