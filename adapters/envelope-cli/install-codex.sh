#!/usr/bin/env bash
# Install the apply_patch program of the npm package @openai/codex, pinned,
# into adapters/envelope-cli/codex/VERSION/ (a local node_modules; never
# global), and link it as codex/VERSION/bin/apply_patch: the codex binary
# acts as apply_patch when invoked under that name (argv[0]). Idempotent;
# needs node + npm.
#
#   install-codex.sh            # 0.169.0, the current release checked
#   install-codex.sh 0.25.0     # the oldest Rust release whose apply_patch works this way
#
# 0.25.0 is the oldest: releases 0.8.0 to 0.23.0 (the earlier Rust ones)
# start the TUI when invoked as apply_patch; 0.1.x were TypeScript.
set -euo pipefail
CODEX_VERSION=${1:-0.169.0}
here=$(cd "$(dirname "$0")" && pwd)
dest="$here/codex/$CODEX_VERSION"

if [ -x "$dest/bin/apply_patch" ] && [ -f "$dest/PYTHON" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$CODEX_VERSION" ]; then
  echo "@openai/codex $CODEX_VERSION already installed in $dest"
  exit 0
fi
command -v npm >/dev/null || { echo "install-codex.sh: npm is needed (Debian: apt-get install npm)" >&2; exit 1; }
mkdir -p "$dest"
[ -f "$dest/package.json" ] || echo '{"private": true}' > "$dest/package.json"
npm install --prefix "$dest" --no-audit --no-fund --save-exact --loglevel=error "@openai/codex@$CODEX_VERSION"
# Recent releases ship the binary in a platform package (an optional
# dependency), under vendor/<target triple>/bin/codex; older ones in the
# main package, as bin/codex-<target triple>.
bin=$(find "$dest/node_modules/@openai" \( -path '*/vendor/*/bin/codex' -o -name "codex-$(uname -m)-unknown-linux-musl" \) -type f | head -n 1)
[ -n "$bin" ] || { echo "install-codex.sh: no codex binary for this platform in $dest/node_modules/@openai" >&2; exit 1; }
chmod +x "$bin"
got=$("$bin" --version)
[ "$got" = "codex-cli $CODEX_VERSION" ] || { echo "install-codex.sh: expected codex-cli $CODEX_VERSION, got '$got'" >&2; exit 1; }
mkdir -p "$dest/bin"
ln -sfn "$bin" "$dest/bin/apply_patch"

# Smoke test: one Add File in a scratch directory.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && printf '*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n' | "$dest/bin/apply_patch" >/dev/null)
[ "$(cat "$tmp/a.txt")" = "hello" ] || { echo "install-codex.sh: the smoke test did not create a.txt" >&2; exit 1; }
# The interpreter for adapter.py, resolved once: a version-manager shim
# (pyenv) costs up to a second per start, and the executor starts per case.
"${PYTHON:-python3}" -c 'import sys; print(sys.executable)' > "$dest/PYTHON"
echo "$CODEX_VERSION" > "$dest/VERSION"
echo "installed @openai/codex $CODEX_VERSION: $dest/bin/apply_patch -> $bin"
