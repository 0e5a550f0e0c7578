#!/usr/bin/env bash
# Ray for tests/trainers/test_ray_episodes.py: make sure ray[default] is in the venv and a local Ray can start
# and stop (the tests start their own private local Ray; nothing is left running). Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$here/.venv/bin/python"
if ! "$py" -c 'import ray' >/dev/null 2>&1; then
  "$here/.venv/bin/pip" install -q 'ray[default]>=2.40'
fi
"$py" - <<'PY'
import ray
ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
assert ray.get(ray.remote(lambda: 42).remote()) == 42
ray.shutdown()
print("ray", ray.__version__, "starts and runs a task")
PY
