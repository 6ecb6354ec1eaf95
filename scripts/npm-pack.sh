#!/usr/bin/env bash
# Packs the npm packages with `npm pack`: patchspec (the launcher and the
# TypeScript executor kit) and patchspec-linux-x64 (this machine's binary,
# from scripts/dist-binary.sh). Prints the two tarballs' paths on stdout.
#
#   scripts/npm-pack.sh [OUT_DIR]     (default dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist}")
mkdir -p "$out"
[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] \
  || { echo "npm-pack: only patchspec-linux-x64 is built here (this is $(uname -s)-$(uname -m))" >&2; exit 1; }
binary=$(scripts/dist-binary.sh)
mkdir -p npm/patchspec-linux-x64/bin
install -m 755 "$binary" npm/patchspec-linux-x64/bin/patchspec
for package in patchspec-linux-x64 patchspec; do
  file=$(cd "npm/$package" && npm pack --silent --pack-destination "$out")
  echo "$out/$file"
done
