#!/usr/bin/env bash
# Install codex-apply-patch (pinned in requirements.txt; a binary wheel with
# the Rust code) into adapters/codex-apply-patch-pypi/.venv (never globally)
# and smoke-test both modes the columns use. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/.venv"
want=$(sed -n 's/^codex-apply-patch==//p' "$here/requirements.txt")
py=${PYTHON:-python3}
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/VERSION" 2>/dev/null)" = "$want" ]; then
  echo "codex-apply-patch $want already installed in $venv"
  exit 0
fi
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'a\n' > "$tmp/x.txt"
(cd "$tmp" && printf '*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch\n' | "$venv/bin/python" "$here/disk_cli.py" >/dev/null)
[ "$(cat "$tmp/x.txt")" = "b" ] || { echo "install.sh: the on-disk smoke test did not edit x.txt" >&2; exit 1; }
"$venv/bin/python" - "$here" "$tmp" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import adapter
from codex_apply_patch import apply_patch_in_memory
out = adapter.apply(apply_patch_in_memory, sys.argv[2], "*** Begin Patch\n*** Update File: x.txt\n@@\n-b\n+c\n*** End Patch\n")
assert open(sys.argv[2] + "/x.txt").read() == "c\n", out
print("codex-apply-patch: both modes pass the smoke test")
PY
echo "$want" > "$venv/VERSION"
echo "installed codex-apply-patch $want in $venv"
