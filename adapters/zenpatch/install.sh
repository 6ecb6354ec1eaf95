#!/usr/bin/env bash
# Build the zenpatch harness (crates.io zenpatch, pinned in Cargo.toml and
# Cargo.lock) into adapters/zenpatch/.build/ (gitignored; cargo's own
# target folder for it is .build/target), and smoke-test the adapter on it.
# Idempotent: a build whose VERSION matches the pin is kept. Needs cargo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="$here/.build"
want=$(sed -n 's/^zenpatch = "=\(.*\)"/\1/p' "$here/Cargo.toml")
if [ -x "$build/zenpatch-vfs" ] && [ "$(cat "$build/VERSION" 2>/dev/null)" = "$want" ]; then
  echo "zenpatch $want already built in $build"
  exit 0
fi
command -v cargo >/dev/null || { echo "install.sh: cargo is needed" >&2; exit 1; }
mkdir -p "$build"
CARGO_TARGET_DIR="$build/target" cargo build --release --locked -q --manifest-path "$here/Cargo.toml"
cp "$build/target/release/zenpatch-vfs" "$build/zenpatch-vfs"
got=$(cargo metadata --format-version 1 --locked --manifest-path "$here/Cargo.toml" 2>/dev/null \
  | python3 -c 'import json,sys; print([p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "zenpatch"][0])')
[ "$got" = "$want" ] || { echo "install.sh: expected zenpatch $want, the lock has '$got'" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'a\n' > "$tmp/x.txt"
python3 - "$here" "$tmp" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import adapter
adapter.apply(sys.argv[1] + "/.build/zenpatch-vfs", sys.argv[2], "*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch\n")
assert open(sys.argv[2] + "/x.txt").read() == "b\n", "the smoke test did not edit x.txt"
print("zenpatch: the smoke test passes")
PY
echo "$want" > "$build/VERSION"
echo "installed zenpatch $want: $build/zenpatch-vfs"
