#!/usr/bin/env bash
# Install openai-agents (pinned in requirements.txt) into
# adapters/openai-agents/.venv (never globally) and check that the adapter
# loads the same apply_diff with and without the package import. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/.venv"
want=$(sed -n 's/^openai-agents==//p' "$here/requirements.txt")
py=${PYTHON:-python3}
if [ -x "$venv/bin/python" ] && [ "$("$venv/bin/python" -c 'from importlib.metadata import version; print(version("openai-agents"))' 2>/dev/null)" = "$want" ]; then
  echo "openai-agents $want already installed in $venv"
  exit 0
fi
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
# Smoke test: the standalone load and the package import give the same function.
"$venv/bin/python" - "$here" <<'PY'
import inspect, sys
sys.path.insert(0, sys.argv[1])
import adapter
standalone = adapter.load_apply_diff(False)
packaged = adapter.load_apply_diff(True)
assert inspect.getsource(standalone) == inspect.getsource(packaged), "two different apply_diff functions"
assert standalone("a\n", "@@\n-a\n+b\n") == "b\n", "apply_diff smoke test"
print("apply_diff loads standalone and through the package: same source")
PY
echo "installed openai-agents $want in $venv"
