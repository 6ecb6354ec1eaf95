#!/usr/bin/env bash
# Install @openai/agents-core (pinned in package.json) into
# adapters/agents-core/node_modules (never globally) and smoke-test the
# adapter's CLI on it. Idempotent; needs node >= 18 + npm.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
want=$(sed -n 's/.*"@openai\/agents-core": "\(.*\)".*/\1/p' "$here/package.json")
if [ "$(cat "$here/node_modules/.patchspec-version" 2>/dev/null)" = "$want" ]; then
  echo "@openai/agents-core $want already installed in $here/node_modules"
  exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm is needed (Debian: apt-get install npm)" >&2; exit 1; }
npm install --prefix "$here" --no-audit --no-fund --no-save --loglevel=error
got=$(node "$here/agents-core-cli.js" --version)
[ "$got" = "$want" ] || { echo "install.sh: expected @openai/agents-core $want, got '$got'" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'a\n' > "$tmp/x.txt"
(cd "$tmp" && printf '*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch\n' | node "$here/agents-core-cli.js" >/dev/null)
[ "$(cat "$tmp/x.txt")" = "b" ] || { echo "install.sh: the smoke test did not edit x.txt" >&2; exit 1; }
command -v node > "$here/node_modules/.patchspec-node"
echo "$want" > "$here/node_modules/.patchspec-version"
echo "installed @openai/agents-core $want in $here/node_modules"
