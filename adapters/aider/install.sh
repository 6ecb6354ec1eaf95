#!/usr/bin/env bash
# Install aider-chat (pinned in requirements.txt) into adapters/aider/.venv
# (never globally) with --no-deps: the adapter runs patch_coder.py alone
# (aider_cli.py stubs its two aider imports), so none of aider's ~100
# dependencies is needed. Smoke-tests the CLI. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/.venv"
want=$(sed -n 's/^aider-chat==//p' "$here/requirements.txt")
py=${PYTHON:-python3}
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/VERSION" 2>/dev/null)" = "$want" ]; then
  echo "aider-chat $want already installed in $venv"
  exit 0
fi
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$here/requirements.txt"
got=$("$venv/bin/python" "$here/aider_cli.py" --version)
[ "$got" = "$want" ] || { echo "install.sh: expected aider-chat $want, got '$got'" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'a\n' > "$tmp/x.txt"
(cd "$tmp" && printf '*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch\n' | "$venv/bin/python" "$here/aider_cli.py" >/dev/null 2>&1)
[ "$(cat "$tmp/x.txt")" = "b" ] || { echo "install.sh: the smoke test did not edit x.txt" >&2; exit 1; }
echo "$want" > "$venv/VERSION"
echo "installed aider-chat $want (--no-deps) in $venv"
